"""`rewardlab rm-data`: reward-model data from a policy's own samples, labelled by a gold reward.

For each prompt of a task or dataset, sample N completions from the policy, label each with a
gold reward (a verifier: `verifier:math` against the `answer` column), and write the data in the
shapes `rewardlab train-rm` reads (the standard proxy/gold set-up of Gao et al. 2022: a gold
checker labels data for a learned proxy):

    OUT/train/samples.jsonl     one line per prompt: its columns, `samples`, `gold` (reward), `correct`
    OUT/train/preference.jsonl  {prompt, chosen, rejected}: a correct and a wrong completion of one prompt
    OUT/train/scored.jsonl      {prompt, response, graded, correct, closeness, near_miss, from_gold}
    OUT/train/stepwise.jsonl    {prompt, completions (steps), labels, soft_labels, near_miss, from_gold}
    OUT/test/...                the same for held-out prompts (--eval-data, or for a task its rm_eval pool:
                                the reward model's own validation, never RL's held-out set)

For a task, training prompts come from its `rm` pool and held-out ones from its `rm_eval` pool
(`verifiers.tasks`): disjoint from the prompts `rl` trains on and from RL's held-out set, so a
reward model is never shown (or early-stopped on) RL's own prompts.
    OUT/summary.json            label balance, settings, the step separator

- `near_misses`: a wrong completion is also made from a correct one by changing its final number
  (+-1, +-10, +-100, two digits swapped) and, for tasks with steps, by cutting it after an earlier
  step (an early stop), kept only where the gold reward says it is wrong: the negatives a reward
  model must tell apart from the right answer (training prompts only).
- `gold_completions` (a column, e.g. `answer`): on training prompts where no sample is right, the
  column's text - a correct completion in the policy's own format - is added as a correct sample
  (once the gold reward agrees), and near misses are made from it. Without it, a reward model
  never sees a right answer to the prompts the policy always gets wrong and cannot rank there.
- `closeness` (`verifiers.closeness`) = 1 - min(|pred - gold| / max(|gold|, 1) / 0.1, 1): 1 when right,
  0 when off by 10% or more ("badly wrong") or unreadable.
- `graded` = 1 if correct, else 0.5 x closeness: the gold reward with partial credit (at most half)
  for near answers and 0 for badly wrong ones; the target for quantile reward models, whose lower
  quantiles (CVaR) then measure the risk of a badly wrong answer. Measured: a quantile RM on the
  0/1 `correct` column (or on 1 / 0 / -1) did not learn to rank in 1,500 steps (pairwise 0.57), on
  `closeness` it did (0.90) but RL against it taught near answers (exact accuracy fell).
- Step labels (`training/step_labels.py`): `check` (each `a+b=c` verified), `mc` (Monte-Carlo
  completions from each step's prefix, Math-Shepherd), `auto` (check where every step is an
  equation, else mc; none for a task answered directly, or when every completion is one step), `none`.

Sampling goes in shards of `shard_prompts` prompts, each seeded by its index and appended to
samples.jsonl when done, so `--resume` continues a killed run and gives the same files as an
uninterrupted one.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from rewardlab.config import check_fields, opt, save_config
from rewardlab.runtime import RuntimeConfig
from training.data import DataConfig
from training.rollout import DecodingConfig
from verifiers.closeness import closeness

STEP_LABELS = ("auto", "check", "mc", "none")
SEPARATOR_NAMES = {"space": " ", "newline": "\n", "tab": "\t"}


# the pieces, listed last to first: a dataclass puts the fields of its last base first (--help's order)
@dataclass(frozen=True)
class RMDataConfig(RuntimeConfig, DecodingConfig, DataConfig):
    """rm-data: prompts (`DataConfig`), sampling (`DecodingConfig`), seed, threads and precision
    (`RuntimeConfig`; `--mixed-precision` defaults to `no`, fp32: the samples, and so the data the
    demo's reward models train on, stay the documented ones), and how samples become reward-model data."""

    model: str | None = opt(None, "policy: a local folder or hub name; default: the project's default warm start")
    gold: str = opt("verifier:math", "gold reward spec that labels the samples (a verifier)")
    correct_threshold: float = opt(1.0, "a sample is correct when its gold reward is >= this")
    output_dir: Path = opt(Path("runs/rm-data"), "output folder (train/, test/, summary.json)")
    n_prompts: int = opt(20000, "training prompts to sample", gt=0)
    eval_prompts: int = opt(500, "held-out prompts to sample (0: none)", ge=0)
    samples: int = opt(8, "completions per prompt (N)", gt=0)
    near_misses: int = opt(4, "wrong variants made from a correct completion's final number, per prompt (training prompts only)", ge=0)
    gold_completions: str = opt("", "a column holding a correct completion in the policy's format, added where no sample is right (empty: off; docs/training.md)")
    max_pairs: int = opt(0, "preference pairs per prompt at most (0: every correct x wrong pair)", ge=0)
    step_labels: str = opt("auto", "stepwise labels: auto, check (verify each a+b=c), mc (Monte-Carlo completions), none", choices=STEP_LABELS)
    step_separator: str = opt("auto", "what separates steps in a completion: auto (the task's), space, newline, or the text itself")
    mc_rollouts: int = opt(8, "Monte-Carlo step labels: completions from each step's prefix", gt=0)
    shard_prompts: int = opt(256, "prompts per shard (unit of progress and of --resume)", gt=0)
    resume: bool = opt(False, "continue a killed run in --output-dir")

    def __post_init__(self) -> None:
        self.check_data()
        self.check_decoding()
        self.check_runtime()
        check_fields(self, RMDataConfig)
        if self.temperature == 0 and self.samples > 1:
            raise ValueError("--temperature 0 gives every sample of a prompt the same text; use > 0 (e.g. 1.0)")
        if not self.step_separator:
            raise ValueError("--step-separator is empty; use space, newline, or the separator text")


def resolve_separator(value: str, task: Any) -> str:
    """The step separator: a name (space / newline / tab), `auto` (the task's), or the text."""
    if value == "auto":
        return getattr(task, "step_separator", "\n") if task is not None else "\n"
    if value in SEPARATOR_NAMES:
        return SEPARATOR_NAMES[value]
    return value.encode().decode("unicode_escape") if "\\" in value else value


# ---------------------------------------------------------------- labels
_LAST_NUMBER = r"-?\d+"


def truncated_variants(completion: str, separator: str) -> list[str]:
    """The completion cut after each of its steps but the last, as if it ended there (an early
    stop: for a PRM reading the last step at EOS, the negative a policy finds when it learns to stop
    after one sure step).

    >>> truncated_variants("12+34=46 46+56=102", " ")
    ['12+34=46']
    """
    from training.step_labels import split_steps

    steps = split_steps(completion, separator)[0]
    return [separator.join(steps[: k + 1]) for k in range(len(steps) - 1)]


def near_miss_variants(completion: str, rng: random.Random, k: int) -> list[str]:
    """Up to `k` copies of `completion` with its last integer changed by +-1, +-10, +-100 or by
    swapping two adjacent digits (distinct, non-negative when the original is).

    >>> sorted(near_miss_variants("12+3=15", random.Random(0), 10))
    ['12+3=115', '12+3=14', '12+3=16', '12+3=25', '12+3=5', '12+3=51']
    """
    import re

    spans = list(re.finditer(_LAST_NUMBER, completion))
    if not spans or k == 0:
        return []
    m = spans[-1]
    value, text = int(m.group()), m.group().lstrip("-")
    candidates = {value + d for d in (1, -1, 10, -10, 100, -100)}
    for i in range(len(text) - 1):
        swapped = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
        candidates.add(int(swapped) * (-1 if value < 0 else 1))
    candidates = sorted(c for c in candidates if c != value and (c >= 0 or value < 0))
    rng.shuffle(candidates)
    return [completion[: m.start()] + str(c) + completion[m.end() :] for c in candidates[:k]]


def gold_rewards(gold_fn: Any, prompts: Sequence[str], completions: Sequence[str], columns: dict[str, list]) -> list[float | None]:
    from training.reward_calls import score

    return score(gold_fn, prompts, completions, columns).totals


# ---------------------------------------------------------------- sampling
@dataclass
class Sampler:
    """The policy with its sampling settings: `complete(prompts, n)` -> n texts per prompt."""

    model: Any
    tokenizer: Any
    config: RMDataConfig

    def complete(self, prompts: Sequence[str], n: int) -> list[list[str]]:
        from rewardlab.runtime import autocast
        from training.rollout import sample

        c = self.config
        device = next(self.model.parameters()).device.type
        out: list[list[str]] = []
        per_call = max(1, 512 // n)  # completions per batch
        for start in range(0, len(prompts), per_call):
            chunk = list(prompts[start : start + per_call])
            with autocast(c.precision(device), device):  # the sampling softmax runs in fp32 (training/rollout.py)
                r = sample(self.model, self.tokenizer, chunk, n, c.max_new_tokens, c.temperature, c.top_p, c.top_k, c.stop or None)
            out += [r.texts[i * n : (i + 1) * n] for i in range(len(chunk))]
        return out


def label_shard(rows: list[dict], sampler: Sampler, gold_fn: Any, cfg: RMDataConfig, separator: str,
                step_mode: str, near_misses: int, rng: random.Random, gold_completions: str = "") -> list[dict]:
    """Sample, label and (optionally) step-label one shard of prompts: one record per prompt."""
    from training.rollout import render_prompt
    from training.step_labels import check_steps, checkable, mc_labels, mc_prefixes, split_steps

    prompts = [render_prompt(sampler.tokenizer, r["prompt"], cfg.chat_template) for r in rows]
    texts = sampler.complete(prompts, cfg.samples)
    keys = [k for k in rows[0] if k != "prompt"]
    flat_p = [p for p, t in zip(prompts, texts) for _ in t]
    flat_c = [c for t in texts for c in t]
    cols = {k: [r.get(k) for r, t in zip(rows, texts) for _ in t] for k in keys}
    gold = gold_rewards(gold_fn, flat_p, flat_c, cols)
    records = []
    for i, row in enumerate(rows):
        g = gold[i * cfg.samples : (i + 1) * cfg.samples]
        rec = {**row, "samples": texts[i], "gold": g, "correct": [v is not None and v >= cfg.correct_threshold for v in g]}
        records.append(rec)
    if gold_completions:
        add_gold_completions(records, prompts, gold_fn, cfg, gold_completions)
    if near_misses:
        add_near_misses(records, prompts, gold_fn, cfg, near_misses, rng, separator if step_mode != "none" else None)
    if step_mode != "none":
        for rec in records:
            rec["steps"] = [split_steps(c, separator)[0] for c in rec["samples"]]
        mode = step_mode
        if mode == "auto":
            multi = any(len(s) > 1 for rec in records for s in rec["steps"])
            mode = "check" if multi and all(checkable(s) for rec in records for s in rec["steps"] if s) else "mc" if multi else "none"
        if mode == "check":
            for rec in records:
                rec["step_labels"] = [check_steps(str(rec["prompt"]), s, str(rec.get("answer", ""))) for s in rec["steps"]]
                rec["step_soft_labels"] = [[float(x) for x in lab] for lab in rec["step_labels"]]
        elif mode == "mc":
            add_mc_labels(records, prompts, sampler, gold_fn, cfg, separator)
        for rec in records:
            rec["step_label_source"] = mode
            if mode == "none":
                del rec["steps"]
    return records


def add_gold_completions(records: list[dict], prompts: list[str], gold_fn: Any, cfg: RMDataConfig, column: str) -> None:
    """Append the text of `column` (a correct completion in the policy's format) to each prompt on
    which no sample is right, where the gold reward says it is right (`from_gold` flags it)."""
    todo = [i for i, rec in enumerate(records) if not any(rec["correct"]) and str(rec.get(column) or "").strip()]
    texts = [str(records[i][column]) for i in todo]
    keys = [key for key in records[0] if key not in ("prompt", "samples", "gold", "correct", "from_gold")]
    gold = gold_rewards(gold_fn, [prompts[i] for i in todo], texts, {key: [records[i].get(key) for i in todo] for key in keys})
    for i, text, g in zip(todo, texts, gold):
        if g is not None and g >= cfg.correct_threshold:
            rec = records[i]
            rec["from_gold"] = flags(rec, "from_gold") + [True]
            rec["samples"].append(text), rec["gold"].append(g), rec["correct"].append(True)


def flags(rec: dict, key: str) -> list[bool]:
    """A per-sample flag list of a record (`near_miss`, `from_gold`), False where it was not set."""
    have = list(rec.get(key, []))
    return have + [False] * (len(rec["samples"]) - len(have))


def add_near_misses(records: list[dict], prompts: list[str], gold_fn: Any, cfg: RMDataConfig, k: int, rng: random.Random,
                    separator: str | None = None) -> None:
    """Append verified-wrong variants of each prompt's first correct sample (`near_miss` flags
    them): its final number changed, and - for tasks with steps (`separator`) - the solution cut
    after an earlier step, as if it ended there."""
    cand_idx, cand = [], []
    for i, rec in enumerate(records):
        good = next((c for c, ok in zip(rec["samples"], rec["correct"]) if ok), None)
        if good is None:
            continue
        early = truncated_variants(good, separator) if separator else []
        for v in dict.fromkeys(near_miss_variants(good, rng, k) + early):
            if v not in rec["samples"]:
                cand_idx.append(i)
                cand.append(v)
    if not cand:
        for rec in records:
            rec["near_miss"] = [False] * len(rec["samples"])
        return
    keys = [key for key in records[0] if key not in ("prompt", "samples", "gold", "correct", "from_gold")]
    cols = {key: [records[i].get(key) for i in cand_idx] for key in keys}
    gold = gold_rewards(gold_fn, [prompts[i] for i in cand_idx], cand, cols)
    for rec in records:
        rec["near_miss"] = [False] * len(rec["samples"])
    for i, text, g in zip(cand_idx, cand, gold):
        if g is not None and g < cfg.correct_threshold:  # the gold reward agrees it is wrong
            rec = records[i]
            rec["samples"].append(text), rec["gold"].append(g), rec["correct"].append(False), rec["near_miss"].append(True)


def add_mc_labels(records: list[dict], prompts: list[str], sampler: Sampler, gold_fn: Any, cfg: RMDataConfig, separator: str) -> None:
    """Math-Shepherd labels: cfg.mc_rollouts completions from every step prefix, judged by gold."""
    from training.step_labels import mc_labels, mc_prefixes

    jobs = []  # (record, sample index, prefix index, prefix text)
    for r, rec in enumerate(records):
        for j, steps in enumerate(rec["steps"]):
            for k, prefix in enumerate(mc_prefixes(steps, separator)):
                jobs.append((r, j, k, prefix))
    outs = sampler.complete([prompts[r] + prefix for r, _, _, prefix in jobs], cfg.mc_rollouts)
    texts = [prefix + cont for (_, _, _, prefix), conts in zip(jobs, outs) for cont in conts]
    keys = [key for key in records[0] if key not in ("prompt", "samples", "gold", "correct", "steps", "near_miss", "from_gold")]
    cols = {key: [records[r].get(key) for r, _, _, _ in jobs for _ in range(cfg.mc_rollouts)] for key in keys}
    gold = gold_rewards(gold_fn, [prompts[r] for r, _, _, _ in jobs for _ in range(cfg.mc_rollouts)], texts, cols) if jobs else []
    success: dict[tuple[int, int], list[list[bool]]] = {}
    for n, (r, j, k, _) in enumerate(jobs):
        hits = [g is not None and g >= cfg.correct_threshold for g in gold[n * cfg.mc_rollouts : (n + 1) * cfg.mc_rollouts]]
        success.setdefault((r, j), []).append(hits)
    for r, rec in enumerate(records):
        hard, soft = [], []
        for j, steps in enumerate(rec["steps"]):
            h, s = mc_labels(success.get((r, j), []), rec["correct"][j]) if steps else ([], [])
            hard.append(h), soft.append(s)
        rec["step_labels"], rec["step_soft_labels"] = hard, soft


# ---------------------------------------------------------------- derived files
def derive_rows(records: list[dict], separator: str, max_pairs: int, rng: random.Random) -> dict[str, list[dict]]:
    """preference / scored / stepwise rows from sample records (distinct completions per prompt)."""
    out: dict[str, list[dict]] = {"preference": [], "scored": [], "stepwise": []}
    for rec in records:
        seen: dict[str, int] = {}
        for j, text in enumerate(rec["samples"]):
            seen.setdefault(text, j)
        good = [t for t, j in seen.items() if rec["correct"][j]]
        bad = [t for t, j in seen.items() if not rec["correct"][j] and rec["gold"][j] is not None]
        pairs = [(g, b) for g in good for b in bad]
        if max_pairs and len(pairs) > max_pairs:
            pairs = rng.sample(pairs, max_pairs)
        out["preference"] += [{"prompt": rec["prompt"], "chosen": g, "rejected": b} for g, b in pairs]
        near, made = flags(rec, "near_miss"), flags(rec, "from_gold")
        for text, j in seen.items():
            if rec["gold"][j] is None:
                continue
            close = closeness(text, rec.get("answer", ""))
            out["scored"].append({"prompt": rec["prompt"], "response": text,
                                  "graded": 1.0 if rec["correct"][j] else 0.5 * close,
                                  "correct": float(rec["correct"][j]), "closeness": close, "near_miss": near[j],
                                  "from_gold": made[j]})
            if "step_labels" in rec and rec["steps"][j]:
                out["stepwise"].append({"prompt": rec["prompt"], "completions": rec["steps"][j], "labels": rec["step_labels"][j],
                                        "soft_labels": rec["step_soft_labels"][j], "near_miss": near[j], "from_gold": made[j]})
    return out


def balance(records: list[dict], rows: dict[str, list[dict]]) -> dict[str, Any]:
    """Label balance of one split (rates over the policy's own samples: near misses and gold
    completions left out)."""
    def own(rec: dict) -> list[bool]:
        return [not (n or g) for n, g in zip(flags(rec, "near_miss"), flags(rec, "from_gold"))]

    policy_rows = [x for x in rows["scored"] if not (x["near_miss"] or x["from_gold"])]
    n = sum(sum(own(r)) for r in records)
    correct = sum(c for r in records for c, mine in zip(r["correct"], own(r)) if mine)
    none = sum(g is None for r in records for g in r["gold"])
    out = {
        "prompts": len(records), "samples": n, "correct_rate": correct / max(n, 1), "gold_none": none,
        "prompts_all_wrong": sum(not any(c for c, mine in zip(r["correct"], own(r)) if mine) for r in records),
        "prompts_all_correct": sum(all(c for c, mine in zip(r["correct"], own(r)) if mine) for r in records),
        "near_misses": sum(sum(flags(r, "near_miss")) for r in records),
        "gold_completions": sum(sum(flags(r, "from_gold")) for r in records),
        "preference_pairs": len(rows["preference"]), "scored_rows": len(rows["scored"]),
        "badly_wrong_rate": sum(x["closeness"] == 0 for x in policy_rows) / max(len(policy_rows), 1),
    }
    steps = [lab for x in rows["stepwise"] if not (x["near_miss"] or x["from_gold"]) for lab in x["labels"]]
    if steps:
        n_policy = sum(not (x["near_miss"] or x["from_gold"]) for x in rows["stepwise"])
        out.update(stepwise_rows=len(rows["stepwise"]), steps=len(steps), step_correct_rate=sum(steps) / len(steps),
                   steps_per_solution=len(steps) / max(n_policy, 1))
    return out


# ---------------------------------------------------------------- the command
def prompt_splits(cfg: RMDataConfig) -> dict[str, list[dict[str, Any]]]:
    """The prompts to sample on: {"train": rows, "test": rows}. For a task they come from its
    reward-model pools (`rm`, `rm_eval`: verifiers.tasks), never a prompt that RL trains or is
    evaluated on; for a dataset, --data and --eval-data as given."""
    from training.data import load_prompt_rows, parse_task

    columns = {"prompt_column": cfg.prompt_column, "answer_column": cfg.answer_column}
    splits = {"train": load_prompt_rows(cfg.data, split="train", limit=cfg.n_prompts, seed=cfg.seed, pool="rm", **columns)}
    if parse_task(cfg.data) is not None and cfg.eval_data is None and cfg.eval_prompts:
        splits["test"] = load_prompt_rows(cfg.data, split="test", limit=cfg.eval_prompts, seed=cfg.seed, pool="rm_eval")
    elif cfg.eval_data and cfg.eval_prompts:
        splits["test"] = load_prompt_rows(cfg.eval_data, split="test", limit=cfg.eval_prompts, seed=cfg.seed, flag="--eval-data", **columns)
    for rows in splits.values():
        if "prompt" not in rows[0]:
            raise ValueError(f"--data {cfg.data!r}: rows need a 'prompt' column; they have {sorted(rows[0])}")
    return splits


def collect(cfg: RMDataConfig, progress: bool = True) -> dict[str, Any]:
    """Sample, label and write every file (see the module docstring); returns the summary."""
    import torch
    from rewardlab.progress import progress_bar

    from rewards import build_reward
    from training.data import parse_task
    from rewardlab.runtime import cpu_threads
    from training.policy import default_policy_path, load_policy

    out = Path(cfg.output_dir)
    gold_fn = build_reward(cfg.gold)
    task = parse_task(cfg.data)
    separator = resolve_separator(cfg.step_separator, task)
    step_mode = cfg.step_labels
    if step_mode == "auto" and task is not None and not getattr(task, "worked", False):
        step_mode = "none"  # a task answered directly has no steps
    splits = prompt_splits(cfg)
    from training.data import check_columns
    from training.reward_calls import required_columns

    check_columns(splits["train"], sorted(required_columns(gold_fn)), cfg.data)
    if cfg.gold_completions and cfg.gold_completions not in splits["train"][0]:
        raise ValueError(f"--gold-completions {cfg.gold_completions!r}: the rows of --data have no such column; they have "
                         f"{sorted(splits['train'][0])} (give the column that holds a correct completion, e.g. answer)")
    if out.exists() and any(out.iterdir()) and not cfg.resume:
        raise FileExistsError(f"{out} is not empty; pass --resume to continue that run or choose another --output-dir")
    out.mkdir(parents=True, exist_ok=True)
    policy_path = cfg.model or str(default_policy_path())
    model, tokenizer = load_policy(policy_path)
    model.eval()
    cfg = replace(cfg, mixed_precision=cfg.precision(next(model.parameters()).device.type))  # config.json: what auto chose
    save_config(cfg, out)
    sampler = Sampler(model, tokenizer, cfg)
    started = time.time()
    with cpu_threads(cfg.cpu_threads, "rm-data"):
        for split, rows in splits.items():
            path = out / split / "samples.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            shards = [rows[s : s + cfg.shard_prompts] for s in range(0, len(rows), cfg.shard_prompts)]
            done = _complete_shards(path, [len(sh) for sh in shards])
            bar = progress_bar(total=len(rows), initial=sum(len(sh) for sh in shards[:done]), desc=f"rm-data {split}",
                               unit="prompts", disable=not progress)
            with path.open("a") as fh:
                for k in range(done, len(shards)):
                    torch.manual_seed(hash_seed(cfg.seed, split, k))
                    rng = random.Random(f"{cfg.seed}-{split}-{k}")
                    recs = label_shard(shards[k], sampler, gold_fn, cfg, separator, step_mode,
                                       cfg.near_misses if split == "train" else 0, rng,
                                       cfg.gold_completions if split == "train" else "")
                    fh.write("".join(json.dumps({**r, "shard": k}) + "\n" for r in recs))
                    fh.flush()
                    bar.update(len(shards[k]))
            bar.close()
    summary: dict[str, Any] = {"policy": policy_path, "data": cfg.data, "gold": cfg.gold, "step_separator": separator,
                               "seconds": round(time.time() - started, 1)}
    for split in splits:
        records = [json.loads(x) for x in (out / split / "samples.jsonl").read_text().splitlines() if x.strip()]
        rows = derive_rows(records, separator, cfg.max_pairs, random.Random(f"{cfg.seed}-{split}-pairs"))
        for fmt, fmt_rows in rows.items():
            if fmt_rows:
                (out / split / f"{fmt}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in fmt_rows))
        summary[split] = balance(records, rows)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def hash_seed(seed: int, split: str, shard: int) -> int:
    import zlib

    return zlib.crc32(f"{seed}-{split}-{shard}".encode())


def _complete_shards(path: Path, sizes: Sequence[int]) -> int:
    """How many leading shards `path` holds in full (shard k has sizes[k] lines); anything after
    them (a shard cut short by a kill, a partial line) is dropped from the file."""
    if not path.exists():
        return 0
    counts: dict[int, int] = {}
    kept: list[str] = []
    for line in path.read_text().splitlines(keepends=True):
        try:
            shard = int(json.loads(line)["shard"])
        except (ValueError, KeyError, TypeError):
            break
        counts[shard] = counts.get(shard, 0) + 1
        kept.append(line)
    done = 0
    while done < len(sizes) and counts.get(done, 0) == sizes[done]:
        done += 1
    path.write_text("".join(kept[: sum(sizes[:done])]))
    return done
