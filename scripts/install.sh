#!/usr/bin/env bash
# Install rewardlab with everything its tests, CLI and service need.
# torch: an existing install (e.g. your CUDA build) is left alone; otherwise the CPU build
# (torch==2.13.0) is taken on a machine without an NVIDIA GPU, and the default CUDA build on one
# with a GPU. Override with TORCH_SPEC="torch==X.Y.Z" (and PIP_EXTRA_INDEX_URL as usual).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if "$PY" -c "import torch" >/dev/null 2>&1; then
  echo "install: keeping torch $("$PY" -c 'import torch; print(torch.__version__)')"
else
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    spec=${TORCH_SPEC:-torch}
  else
    spec=${TORCH_SPEC:-torch==2.13.0}
  fi
  echo "install: $spec"
  "$PY" -m pip install -q "$spec"
fi
echo "install: rewardlab[dev] (editable)"
"$PY" -m pip install -q --disable-pip-version-check -e ".[dev]" 2>&1 | grep -v "Running pip as the 'root' user" || true
"$PY" -c "import rewardlab, verifiers, rewards, reward_models, training, eval" # fail here, not later
if [ "$(uname -s)" = Linux ]; then  # the code sandbox's syscall filter: pyseccomp (a dependency) needs libseccomp
  "$PY" -c "from verifiers.sandbox import seccomp_filter; import sys; sys.exit(seccomp_filter()[1])" ||
    echo "install: warning: the code sandbox will run without its seccomp filter; install libseccomp (apt-get install libseccomp2)"
fi
command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
echo "install: done"
