#!/usr/bin/env bash
# GPU smoke check (a few minutes): a few RL steps with bf16, the HF backend and, when vLLM is
# installed, the vLLM backend; prints throughput (s/step, tokens/s) and peak GPU memory.
#
#   bash bench/gpu_smoke.sh                       # default tiny policy (no download needed)
#   MODEL=Qwen/Qwen2.5-0.5B-Instruct DATA=data/gsm8k_train.jsonl bash bench/gpu_smoke.sh
#
# Needs an NVIDIA GPU; run from the repository root after `bash scripts/install.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
export TOKENIZERS_PARALLELISM=false
STEPS=${STEPS:-5}
OUT=${OUT:-/tmp/rewardlab-gpu-smoke}
MODEL_ARGS=()
[ -n "${MODEL:-}" ] && MODEL_ARGS=(--model "$MODEL")
DATA_ARGS=()
[ -n "${DATA:-}" ] && DATA_ARGS=(--data "$DATA" --chat-template true --max-new-tokens "${MAX_NEW_TOKENS:-256}" --prompts-per-step "${PROMPTS:-16}")

nvidia-smi -L || { echo "gpu_smoke: no NVIDIA GPU visible"; exit 1; }
python3 -c "import torch; assert torch.cuda.is_available(), 'torch has no CUDA'; print('torch', torch.__version__, torch.cuda.get_device_name(0), 'bf16:', torch.cuda.is_bf16_supported())"

run() {  # $1 = backend
  local dir="$OUT/$1"
  rm -rf "$dir"
  python3 -m rewardlab rl "${MODEL_ARGS[@]}" "${DATA_ARGS[@]}" --backend "$1" --mixed-precision bf16 \
    --steps "$STEPS" --eval-every 0 --eval-size 64 --checkpoint-every 0 --report false --output-dir "$dir"
  python3 - "$dir" "$1" <<'PY'
import json, sys, torch
rows = [json.loads(x) for x in open(sys.argv[1] + "/metrics.jsonl")]
rows = rows[1:] or rows  # the first step includes warm-up (CUDA kernels, vLLM graphs)
sps = sum(r["time/step"] for r in rows) / len(rows)
tps = sum(r["tokens_per_s"] for r in rows) / len(rows)
gen = sum(r["time/generate"] for r in rows) / len(rows)
train = sum(r["time/train"] for r in rows) / len(rows)
print(f"gpu_smoke[{sys.argv[2]}]: {sps:.3f} s/step (generate {gen:.3f}, train {train:.3f}), {tps:.0f} tokens/s, "
      f"reward {rows[0]['reward/mean']:.3f} -> {rows[-1]['reward/mean']:.3f}, peak GPU memory {rows[-1].get('gpu_peak_gb', 0):.1f} GB")
PY
}

run hf
if python3 -c "import vllm" 2>/dev/null; then
  run vllm
else
  echo "gpu_smoke: vllm not installed (pip install 'rewardlab[vllm]'); skipped the vLLM backend"
fi
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv
