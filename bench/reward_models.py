"""Benchmark: this project's Bradley-Terry trainer vs TRL's RewardTrainer, same run.

Same backbone (the packaged MiniLM unless --backbone), same generated preference data and
held-out split, same batch size, sequence length, steps, learning rate and schedule (linear,
no warmup), the same precision (--precision: fp32, or bf16 autocast over fp32 master weights),
no gradient checkpointing, dropout off in both (TRL's default), AdamW. In one run: both at
--precision, each at its own default (ours: --mixed-precision auto; TRL: bf16), and ours in fp32.
Each trainer runs in its own child process (one after the other, or all at once with --parallel), so
peak memory (max RSS) is its own.

    python bench/reward_models.py --steps 100 --batch-size 16 --precision bf16 --parallel

Prints samples/s (preference pairs per second of training-loop time), the ratio (ours / TRL,
target >= 1.5 with a shorter wall time), ours bf16 / ours fp32, peak RSS, the held-out pairwise
accuracy of each model beside its speed, and the load average before and after.
Differences that remain: TRL's model is `AutoModelForSequenceClassification` (BERT: pooler
over [CLS]) and it tokenizes `prompt + response + eos` as one text; ours reads
[CLS] prompt [SEP] response [SEP] with mean pooling (the documented default for encoders).
TRL needs an EOS token and BERT-style tokenizers have none: [SEP] is passed as `eos_token`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

# this file shares its name with the `reward_models` package: drop bench/ from the import path
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def run_ours(args: argparse.Namespace) -> dict:
    from reward_models.train import TrainRMConfig, train

    with tempfile.TemporaryDirectory() as out:
        cfg = TrainRMConfig(kind="bt", backbone=args.backbone, output=out, steps=args.steps, batch_size=args.batch_size,
                            lr=args.lr, warmup_steps=0, max_seq_length=args.max_length, n_train=args.n_train, n_eval=args.n_eval,
                            eval_every=args.steps, save_every=args.steps, log_every=args.steps, seed=args.seed, max_grad_norm=1.0,
                            cpu_threads=args.threads,  # the child set it: the trainer's own default would be 1 on 2 cores
                            padding_free=args.padding_free, mixed_precision=_ACCELERATE[args.as_precision])
        result = train(cfg, progress=False)
        log = [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))]
    rate = [e for e in log if e["event"] == "train"][-1]["samples_per_s"]
    return {"samples_per_s": rate, "accuracy": result["eval"]["pairwise_accuracy"],
            "accuracy_by_type": {k.split("/", 1)[1]: v for k, v in result["eval"].items() if k.startswith("pairwise_accuracy/")}}


def run_trl(args: argparse.Namespace) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from trl import RewardConfig, RewardTrainer

    from reward_models.backbones import default_backbone_path
    from reward_models.data import make_preference_rows

    path = args.backbone or default_backbone_path()
    tok = AutoTokenizer.from_pretrained(path)
    torch.manual_seed(args.seed)
    from rewardlab.runtime import attention_for

    bf16 = args.as_precision == "bf16"
    # fp32 master weights under bf16 autocast, as ours; in bf16 on CPU the same eager attention ours uses (SDPA's CPU
    # backward in bf16 is slow: rewardlab/runtime.py), so each side runs at its best
    model = AutoModelForSequenceClassification.from_pretrained(
        path, num_labels=1, dtype=torch.float32, attn_implementation=attention_for(args.as_precision.replace("fp32", "no"), "cpu", "sdpa"))
    train_rows = make_preference_rows(args.n_train, seed=args.seed, split="train")
    test_rows = make_preference_rows(args.n_eval, seed=args.seed, split="test")
    keep = ("prompt", "chosen", "rejected")
    with tempfile.TemporaryDirectory() as out:
        config = RewardConfig(
            output_dir=out, per_device_train_batch_size=args.batch_size, max_steps=args.steps, learning_rate=args.lr,
            lr_scheduler_type="linear", warmup_steps=0, max_length=args.max_length, bf16=bf16, fp16=False,
            gradient_checkpointing=False, eos_token=tok.sep_token or tok.eos_token, report_to=[], save_strategy="no",
            logging_steps=args.steps, use_cpu=not torch.cuda.is_available(), seed=args.seed, max_grad_norm=1.0,
            dataloader_num_workers=0, disable_tqdm=True,
        )
        trainer = RewardTrainer(model=model, args=config, train_dataset=Dataset.from_list([{k: r[k] for k in keep} for r in train_rows]),
                                processing_class=tok)
        metrics = trainer.train().metrics
    # held-out accuracy, scoring exactly as TRL trains: prompt + response + eos as one text
    model = trainer.model.eval()
    eos = config.eos_token
    wins = []
    with torch.no_grad():
        for start in range(0, len(test_rows), 64):  # scored in fp32, as ours evaluates its final model
            rows = test_rows[start : start + 64]
            texts = [r["prompt"] + r[side] + eos for side in ("chosen", "rejected") for r in rows]
            batch = tok(texts, padding=True, truncation=True, max_length=args.max_length, return_tensors="pt").to(model.device)
            logits = model(**batch).logits.squeeze(-1)
            c, w = logits[: len(rows)], logits[len(rows) :]
            wins += (c > w).tolist()
    by_type: dict[str, list[bool]] = {}
    for r, won in zip(test_rows, wins):
        by_type.setdefault(r["error_type"], []).append(won)
    return {"samples_per_s": metrics["train_samples_per_second"], "accuracy": sum(wins) / len(wins),
            "accuracy_by_type": {k: sum(v) / len(v) for k, v in sorted(by_type.items())}}


RUNNERS = {"ours": run_ours, "trl": run_trl}
_ACCELERATE = {"fp32": "no", "bf16": "bf16"}


def default_precisions() -> dict[str, str]:
    """Each trainer's own default here: ours `--mixed-precision auto` (bf16 where the device does it
    fast), TRL's RewardConfig `bf16=True` (its default whenever fp16 is not set)."""
    from rewardlab.runtime import resolve_precision

    return {"ours": "bf16" if resolve_precision("auto") == "bf16" else "fp32", "trl": "bf16"}


def plan(precision: str) -> list[tuple[str, str]]:
    """(trainer, precision) pairs of one run: both at --precision, each at its own default, and
    ours in fp32 (our bf16 / fp32 speed-up and accuracy), without repeats.

    >>> plan("fp32") if default_precisions()["ours"] == "bf16" else None
    [('ours', 'fp32'), ('trl', 'fp32'), ('ours', 'bf16'), ('trl', 'bf16')]
    """
    pairs = [("ours", precision), ("trl", precision), *default_precisions().items(), ("ours", "fp32")]
    return list(dict.fromkeys(pairs))


def run_children(argv: list[str], pairs: list[tuple[str, str]], threads: int, parallel: bool) -> dict[tuple[str, str], dict]:
    """Each (trainer, precision) in its own child process: one after the other, or all at once."""
    procs = {}
    for name, precision in pairs:
        cmd = [sys.executable, os.path.abspath(__file__), *argv, "--only", name, "--as-precision", precision]
        procs[(name, precision)] = subprocess.Popen(cmd + (["--threads", str(threads)] if threads else []),
                                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if not parallel:
            procs[(name, precision)].wait()
    results = {}
    for (name, precision), proc in procs.items():
        stdout, stderr = proc.communicate()
        line = next((x for x in stdout.splitlines() if x.startswith("RESULT ")), None)
        if proc.returncode != 0 or line is None:
            raise SystemExit(f"{name} ({precision}) failed (exit {proc.returncode}):\n{stderr[-3000:]}")
        results[(name, precision)] = json.loads(line[len("RESULT "):])
    return results


def _report(args: argparse.Namespace, results: dict[tuple[str, str], dict], loads: list[float]) -> None:
    from rewardlab.runtime import cpu_bf16_support

    flags = ", ".join(k for k, v in cpu_bf16_support().items() if v and k != "fast") or "none"
    defaults = default_precisions()
    print(f"BT reward model, {args.steps} steps x {args.batch_size} pairs, max_length {args.max_length}, lr {args.lr}, {'all at once, 1 thread each' if args.parallel else 'one after the other'}, "
          f"ours {'padding-free' if args.padding_free else 'padded (length-sorted chunks)'}; CPU, {os.cpu_count()} cores, bf16 support: {flags}; "
          f"load before/after {loads[0]:.2f}/{loads[1]:.2f}")
    print(f"{'':8} {'precision':>9} {'pairs/s':>9} {'peak RSS MB':>12} {'held-out acc':>13} {'wall s':>7} {'threads':>8}")
    for (name, prec), r in results.items():
        mark = " (its default)" if defaults[name] == prec else ""
        print(f"{name:8} {prec:>9} {r['samples_per_s']:9.2f} {r['peak_rss_mb']:12.0f} {r['accuracy']:13.3f} {r['wall_s']:7.0f} {r['threads']:8d}{mark}")
    p = args.precision
    ours, trl = results[("ours", p)], results[("trl", p)]
    print(f"{p}, ours/TRL: pairs/s {ours['samples_per_s'] / trl['samples_per_s']:.2f}x (target >= 1.5), wall {trl['wall_s'] / ours['wall_s']:.2f}x shorter, "
          f"accuracy ours-TRL {ours['accuracy'] - trl['accuracy']:+.3f}")
    a, b = results[("ours", defaults["ours"])], results[("trl", defaults["trl"])]
    print(f"each at its default (ours {defaults['ours']}, TRL {defaults['trl']}): pairs/s {a['samples_per_s'] / b['samples_per_s']:.2f}x, "
          f"wall {b['wall_s'] / a['wall_s']:.2f}x shorter")
    if ("ours", "bf16") in results:
        lo, hi = results[("ours", "bf16")], results[("ours", "fp32")]
        print(f"ours bf16 vs ours fp32: {lo['samples_per_s'] / hi['samples_per_s']:.2f}x pairs/s, held-out accuracy "
              f"{lo['accuracy'] - hi['accuracy']:+.3f} (target within 0.01)")
    for t in ours["accuracy_by_type"]:
        print(f"  {t:16} ours {ours['accuracy_by_type'][t]:.3f}   trl {trl['accuracy_by_type'].get(t, float('nan')):.3f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--n-train", type=int, default=2000)
    p.add_argument("--n-eval", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backbone", default=None, help="backbone path or hub name (default: packaged MiniLM)")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="bf16",
                   help="both trainers at this precision (bf16: autocast over fp32 master weights); each also runs at its own default, "
                        "and ours in fp32, in the same run")
    p.add_argument("--parallel", action="store_true",
                   help="run every trainer of the plan at the same time (one CPU thread each): on a machine shared with other work, "
                        "all then see the same load, so the ratios stay meaningful")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads per trainer (0 = all CPUs; --parallel: 1)")
    p.add_argument("--padding-free", action="store_true", help="ours: train-rm --padding-free (the real tokens only, no padding compute)")
    p.add_argument("--only", choices=list(RUNNERS), help=argparse.SUPPRESS)  # child mode
    p.add_argument("--as-precision", choices=("fp32", "bf16"), default="fp32", help=argparse.SUPPRESS)  # child mode
    p.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = p.parse_args(argv)
    if args.only:
        import torch

        # explicit, equal thread counts: a child process does not always get torch's usual default
        args.threads = args.threads or os.cpu_count() or 1
        torch.set_num_threads(args.threads)
        t0 = time.perf_counter()
        result = RUNNERS[args.only](args)
        result.update(peak_rss_mb=_peak_rss_mb(), wall_s=time.perf_counter() - t0, threads=torch.get_num_threads())
        print("RESULT " + json.dumps(result))
        return 0
    child_args = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--json" and a != args.json]
    loads = [os.getloadavg()[0]]
    results = run_children(child_args, plan(args.precision), args.threads or (1 if args.parallel else 0), args.parallel)  # same machine, same data
    loads.append(os.getloadavg()[0])
    _report(args, results, loads)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "loads": loads, "runs": [{"trainer": n, "precision": q, **r} for (n, q), r in results.items()]}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
