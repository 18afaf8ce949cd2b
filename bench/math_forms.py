"""Benchmark: right answers in every written form, and near misses, on the `math` kind and math-verify.

    python bench/math_forms.py                      # the dev set, ours and math-verify side by side
    python bench/math_forms.py --show 20            # also list up to 20 misses and false positives per verifier
    python bench/math_forms.py --judge              # plus the rule-then-judge hybrid with the tests' scripted judge
    python bench/math_forms.py --out bench/results/math_forms.jsonl

The dev set (`tests/verifiers/data/math_forms_dev.jsonl`) holds, per item, a gold answer taken from a
public source (named in the item's `source`), a right answer written differently (another form,
not other whitespace) and a near-miss wrong answer (first number equal, a sign flipped, an open
end instead of a closed one, a missing or extra element, a wrong angle, ...). Each answer is tried
two ways: in `\\boxed{}` (`boxed`) and as the bare string a caller passes after extracting it
(`bare`). Reported per verifier: recall of the right answers (boxed, bare), false positives (a
wrong answer called correct, either way), and recall per answer form.

math-verify is called as its README shows: `verify(parse(gold), parse(prediction))`, the gold
wrapped in `$...$` when it has no delimiter of its own (its parser reads nothing in a bare gold).

`--judge` runs `hybrid:math:URL` against `tests/openai_server.py`, the project's scripted judge
(it says "Yes" when the response's last number equals the reference's last number). No real LLM
judge is reachable here: the figures show what the rule decides alone, how many items a judge is
asked about, what that costs in requests and time, and how a careless judge adds false positives.
Not a test; `tests/verifiers/test_math_forms_dev.py` asserts the targets on the same data.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

DEV_SET = ROOT / "tests" / "verifiers" / "data" / "math_forms_dev.jsonl"
TARGETS = {"boxed": 0.95, "bare": 0.90}  # recall of right answers; false positives must be 0
WAYS = ("boxed", "bare")


def load(path: Path = DEV_SET) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for i, row in enumerate(rows, 1):
        missing = {"id", "form", "gold", "right", "wrong", "source"} - row.keys()
        if missing:
            raise ValueError(f"{path}, line {i}: missing field(s) {sorted(missing)}")
    return rows


def written(answer: str, way: str) -> str:
    """The prediction as a verifier receives it: `\\boxed{answer}` or the bare answer."""
    return f"\\boxed{{{answer}}}" if way == "boxed" else answer


def cases(rows: list[dict]) -> list[tuple[dict, str, str, str]]:
    """(row, which answer: right / wrong, way, prediction) for every answer written every way."""
    return [(row, which, way, written(row[which], way)) for row in rows for which in ("right", "wrong") for way in WAYS]


# --------------------------------------------------------------------------- the verifiers


def run_ours(rows: list[dict], workers: int = 2, timeout: float = 5.0) -> list[str]:
    """Our verdict (its value) for every case of `cases(rows)`, through the worker pool."""
    from verifiers import verify_batch

    todo = cases(rows)
    results = verify_batch([pred for *_, pred in todo], [row["gold"] for row, *_ in todo], kind="math",
                           workers=workers, timeout=timeout)
    return [r.verdict.value for r in results]


def run_math_verify(rows: list[dict]) -> list[str]:
    """math-verify's verdict, 'correct' or 'incorrect', for every case (its own signal timeouts)."""
    from math_verify import parse, verify

    out = []
    for row, _, _, pred in cases(rows):
        gold = row["gold"] if "$" in row["gold"] or "\\boxed" in row["gold"] else f"${row['gold']}$"
        try:
            ok = bool(verify(parse(gold), parse(pred)))
        except Exception:  # noqa: BLE001 - a crash counts as "not correct", as it would in a trainer
            ok = False
        out.append("correct" if ok else "incorrect")
    return out


def score(rows: list[dict], verdicts: list[str]) -> dict:
    """Recall per way, false positives (listed), misses (listed), recall per form."""
    hits: dict[str, int] = Counter()
    per_form: dict[str, Counter] = defaultdict(Counter)
    misses, false_positives = [], []
    for (row, which, way, pred), verdict in zip(cases(rows), verdicts):
        ok = verdict == "correct"
        if which == "right":
            hits[way] += ok
            per_form[row["form"]][f"{way}_right"] += ok
            per_form[row["form"]]["n"] += way == "boxed"
            if not ok:
                misses.append({"id": row["id"], "way": way, "gold": row["gold"], "prediction": pred, "verdict": verdict})
        elif ok:
            false_positives.append({"id": row["id"], "way": way, "gold": row["gold"], "prediction": pred})
    n = len(rows)
    return {"n": n, "recall": {way: hits[way] / n for way in WAYS}, "false_positives": false_positives,
            "misses": misses, "per_form": {k: dict(v) for k, v in sorted(per_form.items())}}


# --------------------------------------------------------------------------- the judge


def run_hybrid(rows: list[dict]) -> dict:
    """`hybrid:math:URL` on the bare answers, against the tests' scripted judge server."""
    sys.path.insert(0, str(ROOT / "tests"))
    from openai_server import judge_server

    from rewards import build_reward

    preds = [row[which] for row in rows for which in ("right", "wrong")]
    golds = [row["gold"] for row in rows for _ in ("right", "wrong")]
    labels = [which == "right" for _ in rows for which in ("right", "wrong")]
    with judge_server() as srv:
        fn = build_reward(f"hybrid:math:{srv.url}")
        start = time.perf_counter()
        rewards = fn(["Give the final answer."] * len(preds), preds, answer=golds)
        seconds = time.perf_counter() - start
        requests = srv.control.requests
    verdicts = list(fn.verifier.last_verdicts)
    asked = [v in ("incorrect", "no_answer") for v in verdicts]
    yes = [a and r == 1.0 for a, r in zip(asked, rewards)]
    return {"items": len(preds), "rule_accepts_right": sum(v == "correct" and lab for v, lab in zip(verdicts, labels)),
            "rule_accepts_wrong": sum(v == "correct" and not lab for v, lab in zip(verdicts, labels)),
            "judge_asked": sum(asked), "judge_asked_right": sum(a and lab for a, lab in zip(asked, labels)),
            "judge_yes_right": sum(y and lab for y, lab in zip(yes, labels)),
            "judge_yes_wrong": sum(y and not lab for y, lab in zip(yes, labels)),
            "requests": requests, "seconds": seconds}


# --------------------------------------------------------------------------- report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEV_SET, help="the dev set (JSONL: id, form, gold, right, wrong, source)")
    ap.add_argument("--workers", type=int, default=2, help="verifier worker processes (ours)")
    ap.add_argument("--timeout", type=float, default=5.0, help="per-item wall-clock limit of ours (s)")
    ap.add_argument("--show", type=int, default=5, help="misses and false positives listed per verifier")
    ap.add_argument("--judge", action="store_true", help="also run hybrid:math with the tests' scripted judge")
    ap.add_argument("--out", type=str, default="", help="append a JSONL record with every number here")
    args = ap.parse_args(argv)

    rows = load(args.data)
    forms = Counter(row["form"] for row in rows)
    print(f"dev set: {len(rows)} items ({len(forms)} forms) from {args.data.relative_to(ROOT) if args.data.is_relative_to(ROOT) else args.data}")
    start = time.perf_counter()
    ours = score(rows, run_ours(rows, args.workers, args.timeout))
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    anchor = score(rows, run_math_verify(rows))
    anchor_s = time.perf_counter() - start

    print(f"\n{'':28}{'ours':>12}{'math-verify':>14}   target")
    for way in WAYS:
        print(f"{'recall, ' + way:28}{ours['recall'][way]:>12.1%}{anchor['recall'][way]:>14.1%}   >= {TARGETS[way]:.0%}")
    print(f"{'false positives':28}{len(ours['false_positives']):>12}{len(anchor['false_positives']):>14}   0"
          f"   (of {2 * len(rows)} wrong answers)")
    print(f"{'seconds':28}{ours_s:>12.1f}{anchor_s:>14.1f}")
    met = all(ours["recall"][w] >= TARGETS[w] for w in WAYS) and not ours["false_positives"]
    print(f"ours {'meets' if met else 'MISSES'} the targets")

    print(f"\n{'form':14}{'n':>5}{'ours boxed':>12}{'ours bare':>11}{'mv boxed':>10}{'mv bare':>9}")
    for form in sorted(forms):
        o, a = ours["per_form"][form], anchor["per_form"][form]
        print(f"{form:14}{o['n']:>5}{o.get('boxed_right', 0):>12}{o.get('bare_right', 0):>11}"
              f"{a.get('boxed_right', 0):>10}{a.get('bare_right', 0):>9}")
    for name, res in (("ours", ours), ("math-verify", anchor)):
        for label, items in (("false positives", res["false_positives"]), ("misses", res["misses"])):
            if items and args.show:
                print(f"\n{name}: {len(items)} {label}" + (f" (first {args.show})" if len(items) > args.show else ""))
                for it in items[: args.show]:
                    print(f"  {it['id']} {it['way']:5} gold={it['gold'][:50]!r} pred={it['prediction'][:60]!r} {it.get('verdict', '')}")

    record = {"n": len(rows), "ours": {k: v for k, v in ours.items() if k != "per_form"},
              "math_verify": {"recall": anchor["recall"], "false_positives": len(anchor["false_positives"])},
              "ours_seconds": ours_s, "math_verify_seconds": anchor_s}
    if args.judge:
        hy = run_hybrid(rows)
        n = hy["items"]
        print(f"\nhybrid:math with the scripted judge (bare answers, {n} items: {len(rows)} right, {len(rows)} wrong)")
        right, wrong = len(rows), len(rows)
        print(f"  the rule alone: accepts {hy['rule_accepts_right']}/{right} right answers and {hy['rule_accepts_wrong']}/{wrong} wrong ones;"
              f" it decides {n - hy['judge_asked']}/{n} items ({(n - hy['judge_asked']) / n:.1%}) without a judge")
        print(f"  the judge is asked about {hy['judge_asked']} items ({hy['judge_asked'] / n:.1%}): "
              f"{hy['judge_asked_right']} right answers the rule rejected and {hy['judge_asked'] - hy['judge_asked_right']} wrong ones")
        print(f"  the scripted judge says yes to {hy['judge_yes_right']} of those right answers (recall "
              f"{hy['rule_accepts_right'] / right:.1%} -> {(hy['rule_accepts_right'] + hy['judge_yes_right']) / right:.1%})"
              f" and to {hy['judge_yes_wrong']} wrong ones (false positives {hy['rule_accepts_wrong']} -> "
              f"{hy['rule_accepts_wrong'] + hy['judge_yes_wrong']})")
        print(f"  cost: {hy['requests']} judge requests for {n} items, {hy['seconds']:.2f} s in all "
              f"(a scripted judge on 127.0.0.1: no model latency or token cost)")
        record["hybrid"] = hy
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a") as f:
            f.write(json.dumps(record) + "\n")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
