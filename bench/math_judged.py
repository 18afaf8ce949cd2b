"""Benchmark: real model responses with a judge's verdict, per source, ours and math-verify side by side.

    python bench/math_judged.py                     # the dev part of every judged set
    python bench/math_judged.py --part held         # the held-aside part (look once, at the end)
    python bench/math_judged.py --show 20           # also list misses and false positives
    python bench/math_judged.py --build omni-math --from /path/to/Omni-MATH   # rebuild a set from its source

Each judged set (`tests/verifiers/data/judged_<source>.jsonl`) holds whole model responses (the
last `TAIL_CHARS` characters: both verifiers look for the answer at the end), the gold answer and
the verdict a judge gave that response, all taken from a public source named in every item. Unlike
`tests/verifiers/data/math_forms_dev.jsonl` (right answers written by hand), nothing here was
written for the verifier: the answers are as models wrote them and the labels are someone else's.
Every item is in the `dev` part (the one fixes are measured on) or the `held` part (set aside, read
once at the end), split by a hash of its id.

Reported per source and part: recall (judge-accepted responses we accept), false positives
(judge-rejected responses we accept; each listed, since a judge errs too), and the same for
math-verify called as its README shows (`verify(parse(gold), parse(response))`, the gold wrapped in
`$...$`). `tests/verifiers/test_math_judged.py` pins the dev part's numbers.

Sources:
- `omni-math`: KbsdJames/Omni-MATH (github.com/KbsdJames/Omni-MATH), the GPT-4o evaluation examples
  `GPT_eval/examples/internlm2-math-plus-mixtral8x22b_gpteval.jsonl` and
  `GPT_eval/examples/meta_llama_3-1_70b_instruct_gpteval.jsonl` at commit 5aac08bc8ebe (later
  commits keep them in Git LFS): Olympiad-level problems, the responses of two models, and GPT-4o's
  "Equivalence Judgement" (TRUE / FALSE) of each final answer against the reference answer. The
  repository states no licence of its own; the items are kept here as a small evaluation sample
  with their source named.
Not a test; not run in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

DATA = ROOT / "tests" / "verifiers" / "data"
TAIL_CHARS = 3000  # of each response: the answer is at its end (ours reads the last 8192 characters)
HELD_SHARE = 35  # percent of items set aside, chosen by a hash of the id

OMNI_COMMIT = "5aac08bc8ebeef5511e244c094194321209550af"
OMNI_FILES = {"internlm2-math-plus-mixtral8x22b": "GPT_eval/examples/internlm2-math-plus-mixtral8x22b_gpteval.jsonl",
              "llama-3.1-70b-instruct": "GPT_eval/examples/meta_llama_3-1_70b_instruct_gpteval.jsonl"}
_JUDGEMENT_RE = re.compile(r"##\s*Equivalence Judgement\s*\n\s*(TRUE|FALSE)", re.IGNORECASE)
_JUDGE_READ_RE = re.compile(r"##\s*Student Final Answer\s*\n(.*?)\n\s*##", re.DOTALL)


def part_of(item_id: str) -> str:
    """'held' for about HELD_SHARE percent of ids (a stable hash), 'dev' for the rest."""
    return "held" if int(hashlib.sha256(item_id.encode()).hexdigest(), 16) % 100 < HELD_SHARE else "dev"


def build_omni_math(checkout: Path) -> list[dict]:
    """The judged set from a git checkout of KbsdJames/Omni-MATH (the files are read at OMNI_COMMIT)."""
    items = []
    for model, path in OMNI_FILES.items():
        text = subprocess.run(["git", "-C", str(checkout), "show", f"{OMNI_COMMIT}:{path}"], check=True,
                              capture_output=True, text=True).stdout
        for line in text.splitlines():
            row = json.loads(line)
            original = json.loads(row["original_json"])
            m = _JUDGEMENT_RE.search(row["gen"])
            if m is None:
                continue  # the judge gave no verdict
            item_id = f"omni-{model}-{row['uuid']}"
            read = _JUDGE_READ_RE.search(row["gen"])
            items.append({"id": item_id, "part": part_of(item_id), "judge": m.group(1).upper() == "TRUE",
                          "gold": original["answer"], "response": original["model_generation"][-TAIL_CHARS:],
                          "judge_read": read.group(1).strip() if read else None, "model": model, "source": f"KbsdJames/Omni-MATH {path} @ {OMNI_COMMIT[:12]}"
                          f" (uuid {row['uuid']}; judge: GPT-4o)"})
    return items


BUILDERS = {"omni-math": build_omni_math}


def load(source: str) -> list[dict]:
    path = DATA / f"judged_{source}.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for i, row in enumerate(rows, 1):
        missing = {"id", "part", "judge", "gold", "response", "source"} - row.keys()
        if missing:
            raise ValueError(f"{path}, line {i}: missing field(s) {sorted(missing)}; rebuild it with --build {source}")
    return rows


def sources() -> list[str]:
    return sorted(p.stem.removeprefix("judged_") for p in DATA.glob("judged_*.jsonl"))


# --------------------------------------------------------------------------- the verifiers


def run_ours(rows: list[dict], workers: int = 2, timeout: float = 10.0) -> list[str]:
    from verifiers import verify_batch

    results = verify_batch([r["response"] for r in rows], [r["gold"] for r in rows], kind="math",
                           workers=workers, timeout=timeout)
    return [r.verdict.value for r in results]


def run_math_verify(rows: list[dict]) -> list[str]:
    from math_verify import parse, verify

    out = []
    for row in rows:
        gold = row["gold"] if "$" in row["gold"] or "\\boxed" in row["gold"] else f"${row['gold']}$"
        try:
            out.append("correct" if verify(parse(gold), parse(row["response"])) else "incorrect")
        except Exception as exc:  # noqa: BLE001 - math-verify's crash is its verdict here: counted and printed apart
            out.append(f"error: {type(exc).__name__}")
    return out


_STATED_RE = re.compile(r"\\boxed|\\fbox|answer\s+is", re.IGNORECASE)


def states_answer(response: str) -> bool:
    """Whether a response states a final answer (a box or 'the answer is'): a judge sometimes accepts a
    cut-off or proof-only response by reading the reference answer into it."""
    return bool(_STATED_RE.search(response))


def score(rows: list[dict], verdicts: list[str]) -> dict:
    """Recall on the judge-accepted responses (all, and those that state an answer), false positives
    among the judge-rejected ones."""
    right = [(r, v) for r, v in zip(rows, verdicts) if r["judge"]]
    stated = [(r, v) for r, v in right if states_answer(r["response"])]
    wrong = [(r, v) for r, v in zip(rows, verdicts) if not r["judge"]]
    return {"right": len(right), "wrong": len(wrong),
            "accepted_right": sum(v == "correct" for _, v in right),
            "recall": sum(v == "correct" for _, v in right) / max(1, len(right)),
            "stated": len(stated), "accepted_stated": sum(v == "correct" for _, v in stated),
            "false_positives": [r["id"] for r, v in wrong if v == "correct"],
            "misses": [(r["id"], v) for r, v in right if v != "correct"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("dev", "held", "all"), default="dev", help="which part of each set")
    ap.add_argument("--show", type=int, default=5, help="misses and false positives listed per source")
    ap.add_argument("--workers", type=int, default=2, help="verifier worker processes (ours)")
    ap.add_argument("--build", choices=sorted(BUILDERS), help="rebuild this set from a checkout of its source")
    ap.add_argument("--from", dest="checkout", type=Path, help="the source's git checkout (with --build)")
    args = ap.parse_args(argv)

    if args.build:
        if args.checkout is None:
            ap.error("--build needs --from: a git checkout of the source repository")
        items = BUILDERS[args.build](args.checkout)
        out = DATA / f"judged_{args.build}.jsonl"
        out.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
        print(f"wrote {len(items)} items to {out.relative_to(ROOT)}")
        return 0

    print("right: judge-accepted responses (stated: those with a box or 'the answer is'); FP: judge-rejected ones accepted")
    print(f"{'source':12}{'part':6}{'right':>7}{'wrong':>7}{'ours recall':>14}{'stated':>9}{'ours FP':>9}"
          f"{'mv recall':>11}{'stated':>9}{'mv FP':>7}{'s ours/mv':>12}")
    for source in sources():
        rows = [r for r in load(source) if args.part == "all" or r["part"] == args.part]
        start = time.perf_counter()
        ours = score(rows, run_ours(rows, args.workers))
        ours_s = time.perf_counter() - start
        start = time.perf_counter()
        mv = score(rows, run_math_verify(rows))
        mv_s = time.perf_counter() - start
        print(f"{source:12}{args.part:6}{ours['right']:>7}{ours['wrong']:>7}"
              f"{ours['recall']:>8.1%} ({ours['accepted_right']:>2}){ours['accepted_stated']:>5}/{ours['stated']:<3}"
              f"{len(ours['false_positives']):>9}{mv['recall']:>11.1%}{mv['accepted_stated']:>5}/{mv['stated']:<3}"
              f"{len(mv['false_positives']):>7}{ours_s:>7.1f}/{mv_s:.1f}")
        for name, res in (("ours", ours), ("math-verify", mv)):
            errors = [v for _, v in res["misses"] if v.startswith("error")]
            if errors:
                print(f"  {name}: {len(errors)} right answers crashed the verifier ({', '.join(sorted(set(errors)))})")
        by_id = {r["id"]: r for r in rows}
        for name, res in (("ours", ours), ("math-verify", mv)):
            for label, ids in (("false positives", res["false_positives"]), ("misses", [i for i, _ in res["misses"]])):
                if ids and args.show:
                    print(f"  {name}: {len(ids)} {label}")
                    for i in ids[: args.show]:
                        r = by_id[i]
                        print(f"    {i[-22:]} gold={r['gold'][:50]!r} end={r['response'][-70:]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
