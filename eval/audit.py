"""Verifier audits: run two verifiers over the same items and compare their verdicts.

A verifier is named by a spec string, built by the function of the same name in `AUDITORS`:
  ours:KIND[:key=value,...]   our verifiers (`verifiers.verify_batch`), e.g. `ours:math`,
                              `ours:numeric:tolerance=1e-6` (values parsed as JSON when they can be)
  math-verify                 plain `math_verify.parse` + `math_verify.verify`, in process (a gold
                              that parses to nothing is retried wrapped in `$...$`)
  label[:COLUMN]              a labelled column (`label` or `expected` by default): a verdict
                              name, true/false, yes/no or 1/0

Each verifier maps (predictions, golds, rows) -> one result dict per item {verdict, extracted, detail};
`audit` returns agreement, Cohen's kappa (scikit-learn), the verdict confusion table (rows:
verifier A, columns: verifier B) and the disagreeing items.

>>> label = build_auditor("label")
>>> [r["verdict"] for r in label(["4", "5"], ["4", "4"], [{"label": True}, {"label": "incorrect"}])]
['correct', 'incorrect']
"""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from sklearn.metrics import cohen_kappa_score

from verifiers.types import Verdict

Result = dict[str, Any]
Auditor = Callable[[Sequence[str], Sequence[str], Sequence[dict[str, Any]]], list[Result]]

VERDICTS = [v.value for v in Verdict]
_LABEL_WORDS = {"true": "correct", "yes": "correct", "1": "correct", "1.0": "correct",
                "false": "incorrect", "no": "incorrect", "0": "incorrect", "0.0": "incorrect"}


def _parse_options(text: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for part in filter(None, text.split(",")):
        key, eq, value = part.partition("=")
        if not eq or not key:
            raise ValueError(f"verifier option {part!r} must look like key=value")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


def _ours(arg: str, timeout: float | None = None, workers: int | None = None) -> Auditor:
    from verifiers import verify_batch
    from verifiers.registry import get_kind

    kind, _, opts = (arg or "math").partition(":")
    get_kind(kind)  # clear error for an unknown kind
    options = _parse_options(opts)

    def run(predictions: Sequence[str], golds: Sequence[str], rows: Sequence[dict[str, Any]]) -> list[Result]:
        results = verify_batch(list(predictions), list(golds), kind=kind, timeout=timeout, workers=workers, **options)
        return [{"verdict": r.verdict.value, "extracted": r.extracted, "detail": r.detail} for r in results]

    return run


def _math_verify(arg: str, timeout: float | None = None, workers: int | None = None) -> Auditor:
    if arg:
        raise ValueError(f"the math-verify auditor takes no options, got {arg!r}")
    import math_verify

    def one(prediction: str, gold: str) -> Result:
        try:
            # gold as most pipelines pass it: plain, else wrapped in $...$ (bare LaTeX needs delimiters)
            gold_parsed = math_verify.parse(gold) or math_verify.parse(f"${gold}$")
            if not gold_parsed:
                return {"verdict": Verdict.BAD_GOLD.value, "extracted": None, "detail": "math_verify.parse(gold) is empty"}
            pred_parsed = math_verify.parse(prediction)
            if not pred_parsed:
                return {"verdict": Verdict.NO_ANSWER.value, "extracted": None, "detail": "math_verify.parse(prediction) is empty"}
            ok = math_verify.verify(gold_parsed, pred_parsed)
            return {"verdict": (Verdict.CORRECT if ok else Verdict.INCORRECT).value, "extracted": str(pred_parsed[-1]), "detail": ""}
        except Exception as exc:  # noqa: BLE001 - recorded as an ERROR verdict with the message, never a score
            return {"verdict": Verdict.ERROR.value, "extracted": None, "detail": f"{type(exc).__name__}: {exc}"}

    return lambda predictions, golds, rows: [one(p, g) for p, g in zip(predictions, golds)]


def label_verdict(value: Any, where: str) -> str:
    """A verdict name from a label cell (verdict name, bool, yes/no, 1/0)."""
    if isinstance(value, bool):
        return "correct" if value else "incorrect"
    text = str(value).strip().lower()
    if text in VERDICTS:
        return text
    if text in _LABEL_WORDS:
        return _LABEL_WORDS[text]
    raise ValueError(f"{where}: cannot read label {value!r}; use a verdict ({', '.join(VERDICTS)}), true/false, yes/no or 1/0")


def _label(arg: str, timeout: float | None = None, workers: int | None = None) -> Auditor:
    def run(predictions: Sequence[str], golds: Sequence[str], rows: Sequence[dict[str, Any]]) -> list[Result]:
        column = arg or next((c for c in ("label", "expected") if rows and c in rows[0]), None)
        if column is None or (rows and column not in rows[0]):
            raise ValueError(f"label auditor: no column {column or 'label/expected'!r} in the data; found {sorted(rows[0]) if rows else []}")
        return [{"verdict": label_verdict(r[column], f"row {i + 1} column {column!r}"), "extracted": None, "detail": "label"}
                for i, r in enumerate(rows)]

    return run


AUDITORS: dict[str, Callable[..., Auditor]] = {"ours": _ours, "math-verify": _math_verify, "label": _label}


def build_auditor(spec: str, timeout: float | None = None, workers: int | None = None) -> Auditor:
    """The verifier for a spec string (see the module doc); a clear error lists the valid names."""
    name, _, arg = spec.partition(":")
    if name not in AUDITORS:
        raise ValueError(f"unknown verifier {spec!r}; valid: ours:KIND[:k=v,...], math-verify, label[:COLUMN]")
    return AUDITORS[name](arg, timeout=timeout, workers=workers)


def confusion(a: Sequence[str], b: Sequence[str]) -> list[dict[str, Any]]:
    """Rows: verdicts of A; columns: verdicts of B (only verdicts that occur); counts."""
    present = [v for v in VERDICTS if v in set(a) | set(b)]
    rows = []
    for va in present:
        row: dict[str, Any] = {"A \\ B": va}
        for vb in present:
            row[vb] = sum(1 for x, y in zip(a, b) if x == va and y == vb)
        row["total"] = sum(1 for x in a if x == va)
        rows.append(row)
    return rows


def audit(a: Auditor, b: Auditor, predictions: Sequence[str], golds: Sequence[str], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Compare verifiers a and b on the same items: agreement, kappa, confusion, disagreements."""
    ra, rb = a(predictions, golds, rows), b(predictions, golds, rows)
    va, vb = [r["verdict"] for r in ra], [r["verdict"] for r in rb]
    n = len(va)
    if n == 0:
        raise ValueError("audit: no items")
    same = [x == y for x, y in zip(va, vb)]
    correct_same = [(x == "correct") == (y == "correct") for x, y in zip(va, vb)]
    kappa = float(cohen_kappa_score(va, vb)) if len(set(va) | set(vb)) > 1 else 1.0
    disagreements = [
        {"index": i, "prediction": predictions[i], "gold": golds[i], "verdict_a": va[i], "verdict_b": vb[i],
         "extracted_a": ra[i]["extracted"], "extracted_b": rb[i]["extracted"], "detail_a": ra[i]["detail"], "detail_b": rb[i]["detail"]}
        for i in range(n) if not same[i]
    ]
    return {
        "n": n,
        "agreement": sum(same) / n,
        "correct_agreement": sum(correct_same) / n,
        "kappa": kappa,
        "correct_rate_a": va.count("correct") / n,
        "correct_rate_b": vb.count("correct") / n,
        "confusion": confusion(va, vb),
        "disagreements": disagreements,
        "verdicts_a": va,
        "verdicts_b": vb,
    }
