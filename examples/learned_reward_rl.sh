#!/usr/bin/env bash
# A learned reward that teaches, end to end on a CPU: warm start -> the policy's own samples
# labelled by the verifier -> a reward model on the policy's own backbone -> RL with that reward
# model as the ONLY reward (the verifier only measures held-out accuracy).
#
#   bash examples/learned_reward_rl.sh          # Bradley-Terry RM on the default task (3-digit sums)
#   bash examples/learned_reward_rl.sh qrm      # quantile RM: mean, then CVaR(0.1), on the default task
#   bash examples/learned_reward_rl.sh prm      # process RM on worked arithmetic: raw, clip, delta, clip-delta
#
# OUT (default runs/learned-reward-KIND) must not exist yet. The last line is rl's own
# `rl: held-out greedy accuracy A% -> B% (+C points)` (for qrm and prm: of the last run).
# SEED (default 0) seeds the RM data, the RM and RL; the warm start is the same for every seed.
# qrm with BT_FROM=<the OUT of a finished bt run of the same SEED> reuses its data.
# `python bench/learned_rewards.py --recipe KIND --seeds 0,1,2` runs it over seeds and prints the
# mean and spread; the numbers in docs/training.md#learned-rewards-that-teach come from it.
# The RM's data is drawn from the task's reward-model prompt pools, disjoint from RL's prompts
# and held-out set (verifiers/tasks.py); rl prints the overlap it measured (0.0%).
set -euo pipefail
KIND=${1:-bt}
OUT=${OUT:-runs/learned-reward-$KIND}
SEED=${SEED:-0}
THREADS=${THREADS:-1}   # torch threads for RM training. 1: the documented numbers were made with one thread, and
                        # another count sums floats in another order, so the RM (and all after it) comes out
                        # different (the seed-0 PRM: the same bits to step 150, then apart); it also keeps a busy
                        # 2-core machine off the thread cliff. The RL loop uses 1 (tiny models gain nothing from more).
case "$KIND" in bt|qrm|prm) ;; *) echo "learned_reward_rl.sh: unknown kind '$KIND'; use bt, qrm or prm" >&2; exit 2 ;; esac
if [ -e "$OUT" ]; then
  echo "learned_reward_rl.sh: $OUT exists; remove it or set OUT=another/folder" >&2
  exit 2
fi
mkdir -p "$OUT"
log() { echo "== $*" >&2; }

if [ "$KIND" = prm ]; then
  # worked arithmetic: the policy writes steps `97+5=102 102+41=143`, separated by a space
  TASK="arithmetic:digits=2,n_terms=3,worked=1"
  log "warm start: SFT on worked arithmetic"
  rewardlab sft --data "$TASK" --lr 1e-3 --steps 600 --output-dir "$OUT/sft"
  POLICY="$OUT/sft/model"
  log "the policy's own samples, each step checked"
  rewardlab rm-data --model "$POLICY" --data "$TASK" --max-new-tokens 21 --n-prompts 10000 --step-labels check \
    --seed "$SEED" --output-dir "$OUT/data"
  log "process RM on the policy's backbone"
  rewardlab train-rm --kind prm --backbone "$POLICY" --data "$OUT/data/train/stepwise.jsonl" \
    --eval-data "$OUT/data/test/stepwise.jsonl" --step-separator " " --steps 3000 --batch-size 256 --lr 2e-3 \
    --warmup-steps 100 --stop-at step_auroc=0.9 --save-every 500 --cpu-threads "$THREADS" --seed "$SEED" --output "$OUT/rm"
  # each refinement with --rollback-on-alarm (its gold budget: the 256 probe prompts whose gold answers pick the
  # policy kept); then Clip-Delta twice more with no gold in any decision: 100 steps whatever happens, and
  # stopped at the first gold-free alarm (completion length or PRM step count drift) with the policy it has then.
  # (The probe is still measured in those two, for the curves; nothing reads it.)
  for arm in raw clip delta clip-delta clip-delta:no-rollback clip-delta:gold-free; do
    refine=${arm%%:*}
    case "$arm" in
      *:no-rollback) guard=(); name=$refine-no-rollback ;;
      *:gold-free) guard=(--gold-alarm false --stop-on-alarm); name=$refine-gold-free ;;
      *) guard=(--rollback-on-alarm); name=$refine ;;
    esac
    log "RL with prm:$refine alone (token-level returns: reinforce_pp) ${guard[*]}"
    rewardlab rl --model "$POLICY" --data "$TASK" --reward "prm:$OUT/rm/final:$refine" --estimator reinforce_pp \
      --max-new-tokens 21 --group-size 8 --prompts-per-step 64 --lr 5e-5 --steps 100 "${guard[@]}" \
      --seed "$SEED" --output-dir "$OUT/rl-$name" \
      | tee "$OUT/rl-$name.log"
  done
  log "the oracle beside them: RL with the verifier's outcome reward (gold answers in the reward), same recipe"
  rewardlab rl --model "$POLICY" --data "$TASK" --reward verifier:math --estimator reinforce_pp \
    --max-new-tokens 21 --group-size 8 --prompts-per-step 64 --lr 5e-5 --steps 100 \
    --seed "$SEED" --output-dir "$OUT/rl-verifier" | tee "$OUT/rl-verifier.log"
  grep "held-out greedy accuracy .* -> " "$OUT/rl-clip-delta.log"
  exit 0
fi

log "warm start: the default policy (shipped with the project, copied to the cache)"
POLICY=$(python3 -c "from training.policy import default_policy_path; print(default_policy_path())" | tail -n 1)
DATA="$OUT/data"
if [ -n "${BT_FROM:-}" ] && [ "$KIND" = qrm ]; then
  # the data of a finished `bt` run of the same SEED: the same command, so the same files
  DATA="$BT_FROM/data"
  log "reusing $BT_FROM/data (a bt run of seed $SEED)"
else
  log "the policy's own samples, labelled by the verifier (+ the gold answer where no sample is right)"
  rewardlab rm-data --model "$POLICY" --gold-completions answer --seed "$SEED" --output-dir "$DATA"
fi
if [ "$KIND" = bt ]; then
  log "Bradley-Terry RM on the policy's backbone"
  rewardlab train-rm --kind bt --backbone "$POLICY" --data "$DATA/train/preference.jsonl" \
    --eval-data "$DATA/test/samples.jsonl" --steps 1500 --batch-size 256 --lr 2e-3 --warmup-steps 100 \
    --eval-every 500 --save-every 1500 --cpu-threads "$THREADS" --seed "$SEED" --output "$OUT/rm"
  log "RL with the RM as the only reward"
  rewardlab rl --model "$POLICY" --reward "rm:$OUT/rm/final" --seed "$SEED" --output-dir "$OUT/rl" | tee "$OUT/rl.log"
  grep "held-out greedy accuracy .* -> " "$OUT/rl.log"
  exit 0
fi

log "quantile RM on the policy's backbone (ranking on the verifier's correct, graded as a second attribute)"
# the recipe measured in docs/reward_models.md#what-a-quantile-rm-needs-measured: BT's settings; `correct` first (the
# attribute the ranking term reads), `graded` (1 right, 0.5 x closeness wrong) for the spread
rewardlab train-rm --kind qrm --backbone "$POLICY" --data "$DATA/train/scored.jsonl" \
  --score-columns correct graded --eval-data "$DATA/test/samples.jsonl" --steps 1500 --batch-size 256 --lr 2e-3 \
  --warmup-steps 100 --eval-every 500 --save-every 1500 --cpu-threads "$THREADS" --seed "$SEED" --output "$OUT/rm"
for utility in mean cvar=0.1; do
  log "RL with qrm:$utility alone"
  rewardlab rl --model "$POLICY" --reward "qrm:$OUT/rm/final:$utility" --seed "$SEED" --output-dir "$OUT/rl-${utility%%=*}" \
    | tee "$OUT/rl-${utility%%=*}.log"
done
grep "held-out greedy accuracy .* -> " "$OUT/rl-cvar.log"
