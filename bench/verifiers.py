"""Benchmark: `verifiers.verify_batch` (fast path + worker pool) versus the anchor, math-verify's
`parse` + `verify` called one by one in a single process, on the same 10,000-item batch, same run.

    python bench/verifiers.py                    # 10,000 items, seed 0, 2 workers
    python bench/verifiers.py --n 2000 --out bench/results/verifiers.jsonl

The batch is realistic for RL scoring: prompts with 8 completions each (the gold repeats), mostly
simple final answers (integers, separators, fractions, decimals, phrased many ways), some LaTeX
(radicals, expressions, sets, tuples, intervals, matrices, choice letters), bare answers as a
caller passes them after extracting them (no delimiters, often in another form than the gold's:
a renamed function, an inequality for an interval, units per element), a few hard or garbage
items (tiny/huge values, unit-vs-variable answers, empty/NUL/very long text, slow expansions).
Every item carries a label (is the answer right?) from its generator, so we can see where each
verifier is right. Reported: items/s of both and the ratio (the worker pool is started and warmed
before the clock starts; its start-up time is printed apart), per-item latency p50/p99 (the time
spent on the item itself: fast path, or inside the worker; not time waiting in the queue), peak
memory (parent, workers, anchor process), accuracy against the labels per category, and verdict
agreement on every item where the anchor is right (the items where they differ are listed by
category). --out appends one JSONL record with every number.
Not a test; not run in CI. Timings on a shared machine are inflated; the ratio is what matters.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import statistics
import sys
import time
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

Item = tuple[str, str, bool, str]  # (prediction, gold, label: the answer is right, category)
TARGET_SPEEDUP = 10  # ours must stay at least this many times math-verify's one-by-one rate

# --------------------------------------------------------------------------- the batch

SIMPLE_FRAMES = [
    "{work}The answer is {a}.", "{work}So the answer is $\\boxed{{{a}}}$.", "{work}\\boxed{{{a}}}", "{a}",
    "{work}Answer: {a}", "{work}Therefore we get {a}", "{work}The final answer is ${a}$. I hope it is correct.",
    "{work}\n{a}", "{work}x = {a}", "{work}The answer is ${a}$.",
]


def _work(rng: random.Random) -> str:
    """A short chain of thought with numbers in it (distractors for last-number extraction)."""
    a, b = rng.randint(2, 99), rng.randint(2, 99)
    return rng.choice(["", f"First, {a} + {b} = {a + b}. ", f"We have {a} apples and {b} pears. ",
                       f"Let me check: {a} * {b} = {a * b}.\n"])


def _simple_int(g: random.Random, r: random.Random) -> Item:
    gold = g.choice([g.randint(0, 999), g.randint(1000, 10**7), -g.randint(1, 999)])
    gold_text = f"{gold:,}" if abs(gold) >= 1000 and g.random() < 0.2 else str(gold)
    right = r.random() < 0.5
    value = gold if right else gold + r.choice([1, -1, 10, -10])
    text = f"{value:,}" if abs(value) >= 1000 and r.random() < 0.4 else str(value)
    return r.choice(SIMPLE_FRAMES).format(work=_work(r), a=text), gold_text, right, "simple-int"


def _simple_frac(g: random.Random, r: random.Random) -> Item:
    a, b = g.randint(1, 40), g.randint(2, 16)
    v = Fraction(a, b)
    gold = g.choice([f"\\frac{{{a}}}{{{b}}}", f"{a}/{b}"] + ([f"{float(v):g}"] if (v * 10**6).denominator == 1 else []))
    right = r.random() < 0.5
    value = v if right else v + Fraction(1, b)
    forms = [f"\\frac{{{value.numerator}}}{{{value.denominator}}}", f"{value.numerator}/{value.denominator}"]
    if (value * 10**6).denominator == 1:
        forms.append(f"{float(value):g}")  # an exact decimal
    pred = r.choice(SIMPLE_FRAMES).format(work=_work(r), a=r.choice(forms))
    return pred, gold, right, "simple-fraction"


def _latex(g: random.Random, r: random.Random) -> Item:
    a, b, k = g.randint(1, 9), g.randint(10, 19), g.randint(2, 6)
    templates = {  # name: (gold, right answer, wrong answer)
        "radical": (f"{k}\\sqrt{{{a + 1}}}", f"\\sqrt{{{k * k * (a + 1)}}}", f"\\sqrt{{{k * k * (a + 1) + 1}}}"),
        "polynomial": (f"(x+{a})^2", f"x^2+{2 * a}x+{a * a}", f"x^2+{2 * a}x+{a * a + 1}"),
        "pi": (f"\\frac{{{a}\\pi}}{{{b}}}", f"\\frac{{{a}}}{{{b}}}\\pi", f"\\frac{{{a + 1}}}{{{b}}}\\pi"),
        "set": (f"\\{{{a},{b}\\}}", f"\\{{{b},{a}\\}}", f"\\{{{a},{b + 1}\\}}"),
        "tuple": (f"({a},{b})", f"({a},{b})", f"({b},{a})"),
        "interval": (f"[{a},{b})", f"[{a},{b})", f"[{a},{b}]"),
        "matrix": (f"\\begin{{pmatrix}}{a}&{b}\\\\{k}&1\\end{{pmatrix}}", f"\\begin{{pmatrix}}{a}&{b}\\\\{k}&1\\end{{pmatrix}}",
                   f"\\begin{{pmatrix}}{a}&{b}\\\\{k}&2\\end{{pmatrix}}"),
        "equation": (f"y={a}x+{b}", f"y={b}+{a}x", f"y={a}x-{b}"),
        "choice": ("(B)" if g.random() < 0.5 else "B", "B", "C"),
    }
    name = g.choice(sorted(templates))
    gold, good, bad = templates[name]
    right = r.random() < 0.5
    answer = good if right else bad
    if name == "choice":
        pred = r.choice(["The answer is ({x}).", "\\boxed{{{x}}}", "Answer: {x}"]).format(x=answer)
    else:
        pred = r.choice(["So the answer is $\\boxed{{{x}}}$.", "$${x}$$", "The answer is ${x}$."]).format(x=answer)
    return pred, gold, right, f"latex-{name}"


def _hard(g: random.Random, r: random.Random) -> Item:
    kind = g.choice(["tiny", "tiny", "power", "unit-variable", "unit-separated", "expansion"])
    right = r.random() < 0.5
    if kind == "tiny":
        k = g.randint(7, 9)
        gold = f"{g.randint(1, 4) / 10**k:.{k}f}"
        pred = gold if right else f"{float(gold) * 2:.{k}f}"
        return f"The answer is {pred}.", gold, right, "hard-tiny-decimal"
    if kind == "power":
        n = g.randint(60, 99)
        return f"$\\frac{{1}}{{2^{{{n if right else n - 1}}}}}$", f"\\frac{{1}}{{2^{{{n}}}}}", right, "hard-tiny-exact"
    if kind == "unit-variable":
        return (f"$5{'t' if right else ''}$", "5t", right, "hard-unit-variable")
    if kind == "unit-separated":
        return (f"The answer is {'5' if right else '6'} cm.", "5", right, "hard-unit-separated")
    d = g.randint(6, 9)
    expanded = "+".join(f"{math.comb(d, i)}x^{{{i}}}" for i in range(d, 0, -1)) + "+1"
    return (f"$(x+1)^{{{d}}}$" if right else f"$(x+1)^{{{d + 1}}}$"), expanded, right, "hard-expansion"


def _garbage(g: random.Random, r: random.Random) -> Item:
    pred = r.choice(["", "I don't know.", "\x00\x00\x00", "asdf qwer zxcv", "The answer is unclear.",
                     "lorem ipsum " * 20_000, "\\boxed{", "$$$$", "(((((", "\ud800"])
    return pred, str(g.randint(1, 99)), False, "garbage"


def _bare(g: random.Random, r: random.Random) -> Item:
    """An answer a caller already extracted: no delimiters, often another form than the gold's."""
    a, b, k = g.randint(2, 9), g.randint(10, 19), g.randint(2, 6)
    templates = {  # name: (gold, right answer, wrong answer)
        "radical": (f"\\sqrt{{{k * k * a}}}", f"{k}\\sqrt{{{a}}}", f"{k + 1}\\sqrt{{{a}}}"),
        "function": (f"f(x)=x^2+{a}", f"f(t) = t^2 + {a}", f"f(x) = x^2 + {a + 1}"),
        "inequality": (f"({a},\\infty)", f"x > {a}", f"x \\ge {a}"),
        "solution-set": (f"{-a}, {b}", f"x = {b} or x = {-a}", f"x = {b} or x = {a}"),
        "assignment": (f"(p,q)=({a},{b})", f"p={a}, q={b}", f"p={b}, q={a}"),
        "units": (f"{a} \\text{{ apples}}, {b} \\text{{ pears}}", f"{a} apples, {b} pears", f"{a} apples, {b + 1} pears"),
        "degrees": (f"{30 * (a % 5 + 1)}^\\circ", f"\\frac{{{a % 5 + 1}\\pi}}{{6}}", f"\\frac{{{a % 5 + 2}\\pi}}{{6}}"),
        "expression": (f"(x+{a})^2", f"x^2 + {2 * a}x + {a * a}", f"x^2 + {a}x + {a * a}"),
    }
    name = g.choice(sorted(templates))
    gold, good, bad = templates[name]
    right = r.random() < 0.5
    return (good if right else bad), gold, right, f"bare-{name}"


MIX = [(_simple_int, 0.61), (_simple_frac, 0.14), (_latex, 0.12), (_bare, 0.05), (_hard, 0.05), (_garbage, 0.03)]


def make_batch(n: int, seed: int = 0, group: int = 8) -> list[Item]:
    """`n` items: prompts with `group` completions each that share the prompt's gold, as in GRPO."""
    rng = random.Random(seed)
    makers, weights = zip(*MIX)
    items: list[Item] = []
    while len(items) < n:
        maker = rng.choices(makers, weights)[0]
        gold_seed = rng.getrandbits(64)
        for _ in range(group):  # the gold draws repeat (same seed); the completion draws do not
            items.append(maker(random.Random(gold_seed), rng))
    return items[:n]


# --------------------------------------------------------------------------- the two verifiers


def run_ours(items: list[Item], workers: int, timeout: float, chunk: int) -> tuple[list[bool], list[float], float, dict]:
    from tqdm import tqdm

    from verifiers import verify_batch
    from verifiers.pool import get_pool

    start = time.perf_counter()
    pool = get_pool()
    pool.grow(workers)
    pool.warm()  # start the workers and let them import sympy / math-verify: a one-time cost, reported apart
    warm = time.perf_counter() - start
    correct, latency, verdicts = [], [], Counter()
    start = time.perf_counter()
    for i in tqdm(range(0, len(items), chunk), desc="ours", unit="chunk", leave=False):
        part = items[i: i + chunk]
        for res in verify_batch([p for p, *_ in part], [g for _, g, *_ in part], kind="math", workers=workers, timeout=timeout):
            correct.append(res.correct)
            latency.append(res.elapsed)
            verdicts[res.verdict.value] += 1
    total = time.perf_counter() - start
    return correct, latency, total, {"pool_start_s": warm, "verdicts": dict(verdicts), "worker_peak_mb": _children_peak_mb()}


def run_anchor(items: list[Item]) -> tuple[list[bool], list[float], float]:
    from math_verify import parse, verify
    from tqdm import tqdm

    correct, latency = [], []
    start = time.perf_counter()
    for pred, gold, _, _ in tqdm(items, desc="anchor", unit="item", leave=False):
        t = time.perf_counter()
        try:  # the call its README shows; default signal timeouts (we are in the main thread)
            ok = bool(verify(parse("$" + gold + "$"), parse(pred)))
        except Exception:  # noqa: BLE001 - an anchor crash counts as "not correct", as it would in a trainer
            ok = False
        correct.append(ok)
        latency.append(time.perf_counter() - t)
    return correct, latency, time.perf_counter() - start


def _children_peak_mb() -> float:
    """Sum of the peak RSS (VmHWM) of this process's live children: the verifier workers."""
    try:
        import psutil

        total = 0
        for child in psutil.Process().children(recursive=True):
            with open(f"/proc/{child.pid}/status") as f:
                hwm = next((line for line in f if line.startswith("VmHWM")), "VmHWM: 0 kB")
            total += int(hwm.split()[1])
        return total / 1024
    except Exception:  # noqa: BLE001 - memory reporting is best effort (no psutil, not Linux)
        return float("nan")


def _peak_self_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


# --------------------------------------------------------------------------- report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="items in the batch")
    ap.add_argument("--seed", type=int, default=0, help="seed of the generated batch")
    ap.add_argument("--workers", type=int, default=2, help="verifier worker processes")
    ap.add_argument("--timeout", type=float, default=5.0, help="per-item wall-clock limit of ours (s)")
    ap.add_argument("--chunk", type=int, default=1000, help="items per verify_batch call (progress bar)")
    ap.add_argument("--out", type=str, default="", help="append a JSONL record with every number here")
    args = ap.parse_args(argv)

    items = make_batch(args.n, args.seed)
    cats = Counter(cat for *_, cat in items)
    print(f"batch: {len(items)} items, seed {args.seed}; " + ", ".join(f"{c} {n}" for c, n in sorted(cats.items())))

    ours, ours_lat, ours_s, info = run_ours(items, args.workers, args.timeout, args.chunk)
    parent_mb = _peak_self_mb()  # before the anchor imports sympy here
    anchor, anchor_lat, anchor_s = run_anchor(items)
    anchor_mb = _peak_self_mb()

    labels = [label for _, _, label, _ in items]
    by_cat: dict[str, Counter] = defaultdict(Counter)
    differ: dict[str, list] = defaultdict(list)
    for (pred, gold, label, cat), o, a in zip(items, ours, anchor):
        c = by_cat[cat]
        c["n"] += 1
        c["ours_right"] += o == label
        c["anchor_right"] += a == label
        if a == label:
            c["anchor_right_items"] += 1
            c["agree_where_anchor_right"] += o == a
        if o != a:
            differ[cat].append({"gold": gold[:60], "prediction": pred[-80:], "label": label, "ours": o, "anchor": a})

    ratio = anchor_s / ours_s
    record = {
        "n": len(items), "seed": args.seed, "workers": args.workers, "cpu_count": os.cpu_count(),
        "ours_items_per_s": len(items) / ours_s, "anchor_items_per_s": len(items) / anchor_s, "speedup": ratio,
        "ours_p50_ms": 1e3 * _pct(ours_lat, 50), "ours_p99_ms": 1e3 * _pct(ours_lat, 99),
        "anchor_p50_ms": 1e3 * _pct(anchor_lat, 50), "anchor_p99_ms": 1e3 * _pct(anchor_lat, 99),
        "ours_parent_peak_mb": parent_mb, "ours_workers_peak_mb": info["worker_peak_mb"],
        "anchor_process_peak_mb": anchor_mb, "pool_start_s": info["pool_start_s"], "ours_verdicts": info["verdicts"],
        "ours_accuracy": sum(o == lab for o, lab in zip(ours, labels)) / len(items),
        "anchor_accuracy": sum(a == lab for a, lab in zip(anchor, labels)) / len(items),
        "agreement_where_anchor_right": sum(c["agree_where_anchor_right"] for c in by_cat.values())
        / max(1, sum(c["anchor_right_items"] for c in by_cat.values())),
        "by_category": {k: dict(v) for k, v in sorted(by_cat.items())},
    }

    record["load_after"] = os.getloadavg()
    print(f"\n{os.cpu_count()} cores, load average {record['load_after'][0]:.2f} after the run (timings on a shared machine are inflated)")
    print(f"{'':22}{'ours':>14}{'anchor':>14}")
    print(f"{'items/s':22}{record['ours_items_per_s']:>14.1f}{record['anchor_items_per_s']:>14.1f}   speedup {ratio:.2f}x"
          f" ({'meets' if ratio >= TARGET_SPEEDUP else 'BELOW'} the {TARGET_SPEEDUP}x target)")
    print(f"{'latency p50 (ms)':22}{record['ours_p50_ms']:>14.3f}{record['anchor_p50_ms']:>14.3f}")
    print(f"{'latency p99 (ms)':22}{record['ours_p99_ms']:>14.3f}{record['anchor_p99_ms']:>14.3f}")
    print(f"{'peak memory (MB)':22}{parent_mb:>9.0f} + {info['worker_peak_mb']:.0f} workers   anchor process {anchor_mb:.0f}")
    print(f"{'accuracy vs labels':22}{record['ours_accuracy']:>14.4f}{record['anchor_accuracy']:>14.4f}")
    print(f"pool start {info['pool_start_s']:.1f} s (not in ours' time); our verdicts: {info['verdicts']}")
    print(f"agreement on the items where the anchor is right: {record['agreement_where_anchor_right']:.4%}\n")
    print(f"{'category':26}{'n':>6}{'ours right':>12}{'anchor right':>14}{'agree|anchor right':>20}")
    for cat, c in sorted(by_cat.items()):
        print(f"{cat:26}{c['n']:>6}{c['ours_right']:>12}{c['anchor_right']:>14}"
              f"{c['agree_where_anchor_right']:>13}/{c['anchor_right_items']}")
    if differ:
        print("\nitems where the verdicts differ (up to 3 per category):")
        for cat, rows in sorted(differ.items()):
            wrong_ours = sum(r["ours"] != r["label"] for r in rows)
            print(f"  {cat}: {len(rows)} differ, ours wrong on {wrong_ours}, anchor wrong on {len(rows) - wrong_ours}")
            for r in rows[:3]:
                print(f"    gold={r['gold']!r} pred=...{r['prediction']!r} label={r['label']} ours={r['ours']} anchor={r['anchor']}")
    record["differ_examples"] = {k: v[:10] for k, v in differ.items()}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a") as f:
            f.write(json.dumps(record) + "\n")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
