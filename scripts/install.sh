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
# the code kind's languages (verifiers/code_languages.py): compilers and runtimes. As root on Debian/Ubuntu the
# missing ones are installed with apt-get; otherwise the packages to install are printed.
missing=()
for pair in "g++:g++" "gcc:gcc" "javac:openjdk-17-jdk-headless" "node:nodejs" "go:golang-go" "rustc:rustc"; do
  tool=${pair%%:*}
  command -v "$tool" >/dev/null 2>&1 || [ -x "$HOME/.cargo/bin/$tool" ] || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "install: code toolchains: ${missing[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null ||
      echo "install: warning: apt-get could not install ${missing[*]}; the code kind reports these languages as missing"
  else
    echo "install: the code kind's languages need: ${missing[*]} (e.g. sudo apt-get install ${missing[*]}); the tests skip the others"
  fi
fi
command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
echo "install: done"
