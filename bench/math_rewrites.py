"""Benchmark: generated rewrites of random gold answers (`tests/verifiers/math_rewrites.py`), the
`math` kind and math-verify side by side, per structure.

    python bench/math_rewrites.py                       # 20,000+ pairs, seed 1
    python bench/math_rewrites.py --per-structure 40 --seed 7 --show 5
    python bench/math_rewrites.py --failures            # the failing families of ours, counted
    python bench/math_rewrites.py --no-anchor --structures family tuple --per-structure 60 --seed 9 --failures

For each structure: the share of equivalent writings accepted (CORRECT) and the share of near
misses accepted (false positives; the target is 0). math-verify is called as its README shows,
`verify(parse(gold), parse(prediction))`, its gold wrapped in `$...$` (its parser reads nothing in a
bare gold).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "verifiers"))

from math_rewrites import generate  # noqa: E402


def ours(pairs) -> list[bool]:
    from verifiers.math_kind import verify_math

    return [verify_math(p.prediction, p.gold).correct for p in pairs]


def anchor(pairs) -> list[bool]:
    from math_verify import parse, verify

    out = []
    for p in pairs:
        try:
            gold = p.gold if "$" in p.gold else f"${p.gold}$"
            out.append(bool(verify(parse(gold, parsing_timeout=None), parse(p.prediction, parsing_timeout=None), timeout_seconds=None)))
        except Exception:  # math-verify raising is its failure to accept
            out.append(False)
    return out


def table(pairs, verdicts: dict[str, list[bool]]) -> str:
    rows = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))  # structure -> verifier -> [eq ok, eq, near ok, near]
    for name, got in verdicts.items():
        for p, ok in zip(pairs, got):
            r = rows[p.structure][name]
            if p.equivalent:
                r[0] += ok
                r[1] += 1
            else:
                r[2] += ok
                r[3] += 1
    names = list(verdicts)
    head = f"{'structure':<11} {'pairs':>6} " + " ".join(f"{n + ' accept':>16} {n + ' FP':>12}" for n in names)
    lines = [head]
    total = defaultdict(lambda: [0, 0, 0, 0])
    for s in sorted(rows):
        cells = []
        for n in names:
            a, b, c, d = rows[s][n]
            t = total[n]
            t[0] += a; t[1] += b; t[2] += c; t[3] += d  # noqa: E702
            cells.append(f"{100 * a / max(b, 1):15.1f}% {c:>6}/{d:<5}")
        lines.append(f"{s:<11} {sum(rows[s][names[0]][1::2]):>6} " + " ".join(cells))
    cells = [f"{100 * total[n][0] / max(total[n][1], 1):15.1f}% {total[n][2]:>6}/{total[n][3]:<5}" for n in names]
    lines.append(f"{'all':<11} {len(pairs):>6} " + " ".join(cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-structure", type=int, default=190, help="golds per structure (about 9 pairs each: 20,000+ pairs)")
    ap.add_argument("--structures", nargs="*", default=None, help="only these structures (default: all)")
    ap.add_argument("--no-anchor", action="store_true", help="skip math-verify")
    ap.add_argument("--only-anchor", action="store_true", help="run math-verify alone (to run the two side by side in two processes)")
    ap.add_argument("--failures", action="store_true", help="count our failures by structure and family")
    ap.add_argument("--show", type=int, default=0, help="print up to N failing pairs per family")
    args = ap.parse_args(argv)
    pairs = generate(args.seed, args.per_structure, args.structures)
    print(f"{len(pairs)} pairs, seed {args.seed}; load {Path('/proc/loadavg').read_text().split()[:3]}")
    verdicts, seconds = {}, {}
    runs = ([] if args.only_anchor else [("ours", ours)]) + ([] if args.no_anchor else [("math-verify", anchor)])
    for name, fn in runs:
        t = time.perf_counter()
        verdicts[name] = fn(pairs)
        seconds[name] = time.perf_counter() - t
    print(table(pairs, verdicts))
    print("seconds: " + ", ".join(f"{n} {s:.1f}" for n, s in seconds.items()))
    if "ours" in verdicts and (args.failures or args.show):
        bad = Counter()
        shown = Counter()
        for p, ok in zip(pairs, verdicts["ours"]):
            if ok != p.equivalent:
                key = (p.structure, "missed" if p.equivalent else "FALSE POSITIVE", p.family)
                bad[key] += 1
                if shown[key] < args.show:
                    shown[key] += 1
                    print(f"  {key}: gold={p.gold!r} pred={p.prediction!r}")
        for key, n in bad.most_common():
            print(f"{n:>5}  {' / '.join(key)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
