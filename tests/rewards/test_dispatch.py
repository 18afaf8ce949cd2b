"""Per-row dispatch: the verifier kind picked from each row's `data_source`, like verl's
`default_compute_score`, also through the verl adapters."""

from __future__ import annotations

import json

import pytest

from rewards import build_reward
from rewards.adapters import as_verl_batch_compute_score, as_verl_compute_score
from rewards.dispatch import kind_of


@pytest.mark.parametrize("source, kind", [
    ("openai/gsm8k", "math"),  # verl's own name
    ("HuggingFaceH4/MATH-500", "math"),  # case-insensitive exact name
    ("lighteval/MATH", "math"),
    ("AI-MO/aimo-validation-aime", "math"),  # a word starting with "aime"
    ("numina_olympiads", "math"),
    ("google-research-datasets/mbpp", "code"),
    ("openai_humaneval", "code"),
    ("codeparrot/apps", "code"),
    ("taco", "code"),
    ("cais/mmlu", "choice"),
    ("Idavidrein/gpqa", "choice"),
    ("allenai/ai2_arc", "choice"),
    ("my-company/research-notes", None),  # "research" must not match "arc": whole words only
    ("wikitext", None),
])
def test_known_sources(source, kind):
    assert kind_of(source, {}) == kind


def test_the_spec_mapping_comes_first():
    assert kind_of("my/eval-set", {"my/eval-set": "numeric"}) == "numeric"
    assert kind_of("openai/gsm8k", {"openai/gsm8k": "string"}) == "string"  # a user's choice beats the known name


def test_a_mixed_batch_is_scored_per_kind_in_one_call_each():
    fn = build_reward("dispatch")
    code = "```python\ndef add(a, b):\n    return a + b\n```"
    rows = [("openai/gsm8k", "Natalia sold 72 clips.", "#### 72"),  # GSM8K's whole solution as the gold
            ("lighteval/MATH", "so $\\boxed{\\frac{1}{2}}$", "0.5"),
            ("mbpp", code, ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]),  # MBPP's test_list
            ("mbpp", "```python\ndef add(a, b):\n    return a - b\n```", ["assert add(1, 2) == 3"]),
            ("cais/mmlu", "The answer is (C).", "C")]
    out = fn(["q"] * len(rows), [r[1] for r in rows], answer=[r[2] for r in rows], data_source=[r[0] for r in rows])
    assert out == [1.0, 1.0, 1.0, 0.0, 1.0]
    m = fn.last_metrics
    assert (m["rows/math"], m["rows/code"], m["rows/choice"]) == (2.0, 2.0, 1.0)
    assert m["code/verdict/incorrect"] == 1.0 and m["accuracy"] == pytest.approx(0.8)


def test_an_unknown_source_fails_loudly_unless_a_default_is_given():
    with pytest.raises(ValueError, match=r"no verifier for data_source 'wikitext' \(item 2\).*dispatch:wikitext=math"):
        build_reward("dispatch")(["q", "q"], ["4", "4"], answer=["4", "4"], data_source=["openai/gsm8k", "wikitext"])
    assert build_reward("dispatch:default=none")(["q"], ["4"], answer=["4"], data_source=["wikitext"]) == [None]
    assert build_reward("dispatch:default=math")(["q"], ["4"], answer=["4"], data_source=["wikitext"]) == [1.0]
    assert build_reward("dispatch:wikitext=string")(["q"], ["four"], answer=["four"], data_source=["wikitext"]) == [1.0]
    with pytest.raises(ValueError, match="unknown verifier kind 'maths'"):
        build_reward("dispatch:wikitext=maths")


def test_dispatch_from_the_verl_adapters():
    compute_score = as_verl_compute_score(build_reward("dispatch"))
    assert compute_score("openai/gsm8k", "so the answer is 72", "72")["score"] == 1.0
    tests = json.dumps([{"input": "1 2\n", "output": "3\n"}])  # verl's code ground truth: stdin/stdout cases
    assert compute_score("codecontests", "```python\nprint(sum(map(int, input().split())))\n```", tests)["score"] == 1.0
    assert compute_score("codecontests", "```python\nprint(0)\n```", tests)["score"] == 0.0
    batch = as_verl_batch_compute_score(build_reward("dispatch"))
    assert batch(["openai/gsm8k", "cais/mmlu"], ["72", "(B)"], ["72", "A"], [None, None]) == [1.0, 0.0]
