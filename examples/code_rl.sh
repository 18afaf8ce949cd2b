#!/usr/bin/env bash
# RL with the code environment: a tiny policy writes a function, reads the failing test and tries
# again, on a CPU (about 20 minutes on 2 cores: SFT 12 min, RL 6-9 min):
#
#   bash examples/code_rl.sh
#
#   The task (`--data functions`, verifiers.tasks.FunctionTask): `write g(x,y)` -> a program such as
#   `def g(x,y):return x*y`, checked by three hidden asserts (`assert g(3, 4) == 12`); the prompt
#   does not say which of + - * the function uses, so a first try is a guess and the failing test
#   the environment returns says which one it is.
#
#   1. warm start: the shipped default policy, its vocabulary widened with the characters of code
#      (`--add-chars tools`), 800 SFT steps on the task's rows with `retry=67`: a third of them a first try
#      (always `+`), two thirds a second try whose prompt holds a wrong first program, the end of
#      that turn and the environment's feedback (`<feedback>test 1/1: AssertionError at test line 1:
#      assert g(3, 4) == 12</feedback>`);
#   2. 40 RL steps with the code environment (`--env code --max-turns 2`, lr 5e-5: at the default
#      2e-4 RL was unstable on this task, see docs/training.md): each message is run against the
#      row's tests in the sandbox; a failing one gets the feedback (environment tokens: in the
#      sequence, out of the loss) and one more try; the reward is the final try's (1: every test
#      passes).
#
# OUT (default runs/code) must not exist yet. SEED (default 0) seeds RL. The last lines are rl's own
# `held-out greedy accuracy` (right after the last try) and `right at the first turn` lines.
set -euo pipefail
OUT=${OUT:-runs/code}
SEED=${SEED:-0}
THREADS=${THREADS:-1}   # torch threads for SFT (1: the same weights on any machine with this torch)
if [ -e "$OUT" ]; then
  echo "code_rl.sh: $OUT exists; remove it or set OUT=another/folder" >&2
  exit 2
fi
mkdir -p "$OUT"
log() { echo "== $*" >&2; }

POLICY=$(python3 -c "from training.policy import default_policy_path; print(default_policy_path())" | tail -n 1)
log "warm start: SFT from the default policy on first tries and second tries that read the feedback"
rewardlab sft --model "$POLICY" --add-chars tools --data "functions:retry=67" --steps 800 --lr 1e-3 \
  --max-new-tokens 32 --seed 0 --cpu-threads "$THREADS" --output-dir "$OUT/sft"
log "RL with the code environment"
rewardlab rl --model "$OUT/sft/model" --data functions --env code --max-turns 2 --max-new-tokens 32 --steps 40 --lr 5e-5 \
  --prompts-per-step 16 --eval-every 20 --eval-size 300 --probe-size 64 --seed "$SEED" --output-dir "$OUT/rl-code" | tee "$OUT/rl-code.log"
grep "held-out greedy accuracy .* -> \|held-out right at the first turn" "$OUT/rl-code.log"
