"""The hub's prompt shapes in `rl`, each from its shipped sample in data/samples/ with at most one
flag: the rows load with the prompt and the gold where the reward reads them, and the reward
gives a reference solution full marks (a wrong one none)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from training.config import RLConfig
from training.collect import rollout_columns
from training.run_state import prepare_run

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"
sys.path.insert(0, str(ROOT / "tests"))
from hub_fixtures import make_chat_policy  # noqa: E402


@pytest.fixture(scope="module")
def chat_policy(tmp_path_factory):
    return make_chat_policy(tmp_path_factory.mktemp("policy"))


def _first(name):
    return json.loads((SAMPLES / name).read_text().splitlines()[0])


# (sample, the one flag it needs (or none), reward, a correct completion of row 1, a wrong one)
SHAPES = [
    # GSM8K: `question` is found without a flag; the gold is the whole solution ending "#### 72"
    ("gsm8k.jsonl", {}, "verifier:math", "She sold 24 in May, so 72 in all. The answer is 72.", "The answer is 48."),
    # MATH-500: `problem` found without a flag, `answer` is the gold
    ("math500.jsonl", {}, "verifier:math", "The point is $\\boxed{(3, \\frac{\\pi}{2})}$.", "$\\boxed{(3, \\pi)}$"),
    # MATH (hendrycks): no answer column: the gold is the \boxed{} of `solution`
    ("math.jsonl", {"answer_column": "solution"}, "verifier:math", "So there are $\\boxed{2}$ asymptotes.", "$\\boxed{3}$"),
    # MBPP: the prompt is `text`, the tests a list of asserts
    ("mbpp.jsonl", {"prompt_column": "text"}, "verifier:code:column=test_list",
     "```python\ndef remove_Occ(s, ch):\n    s = s.replace(ch, '', 1)\n    i = s.rfind(ch)\n    return s if i < 0 else s[:i] + s[i + 1:]\n```",
     "```python\ndef remove_Occ(s, ch):\n    return s\n```"),
    # HumanEval: the completion continues the prompt; `test` defines check(candidate), `entry_point` names it
    ("humaneval.jsonl", {}, "verifier:code:column=test",
     "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n", "    return False\n"),
    # TRL standard prompts
    ("trl_prompts.jsonl", {}, "verifier:math", "19", "18"),
    # TRL conversational prompts (chat messages)
    ("trl_conversational.jsonl", {}, "verifier:math", "19", "18"),
]


@pytest.mark.parametrize("sample, flags, reward, right, wrong", SHAPES, ids=[s[0] for s in SHAPES])
def test_each_prompt_shape_works_with_at_most_one_flag(chat_policy, tmp_path, sample, flags, reward, right, wrong):
    assert len(flags) <= 1
    config = RLConfig(model=chat_policy, data=str(SAMPLES / sample), reward=reward, output_dir=tmp_path / "run", **flags)
    prepared = prepare_run(config)
    row = prepared.rows[0]
    raw = _first(sample)
    expected_prompt = raw.get("prompt", raw.get("question", raw.get("problem", raw.get("text"))))
    assert row["prompt"] == expected_prompt
    columns = rollout_columns([row, row], 1)
    fn = prepared.reward_fn
    assert fn([row["prompt"]] * 2, [right, wrong], **columns) == [1.0, 0.0]


def test_a_named_column_that_is_missing_names_the_flag(tmp_path, chat_policy):
    with pytest.raises(ValueError, match=r"--prompt-column: column 'query' is not in the data.*'question'"):
        prepare_run(RLConfig(model=chat_policy, data=str(SAMPLES / "gsm8k.jsonl"), prompt_column="query", output_dir=tmp_path))
    with pytest.raises(ValueError, match=r"--answer-column: column 'final' is not in the data"):
        prepare_run(RLConfig(model=chat_policy, data=str(SAMPLES / "gsm8k.jsonl"), answer_column="final", output_dir=tmp_path))


@pytest.mark.slow
def test_rl_runs_on_conversational_gsm8k_style_prompts(chat_policy, tmp_path):
    """Two steps of `rl` on chat-message prompts with the policy's chat template."""
    from training.trainer import train

    out = tmp_path / "run"
    summary = train(RLConfig(model=chat_policy, data=str(SAMPLES / "trl_conversational.jsonl"), reward="length:target=4,coef=1",
                             accuracy_reward="none", steps=2, prompts_per_step=2, group_size=2, max_new_tokens=4,
                             eval_every=0, checkpoint_every=0, report=False, probe_size=0, output_dir=out))
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert summary["steps"] == 2 and len(rows) == 2
    assert rows[0]["samples"][0]["prompt"].startswith("<|user|>What is")  # the chat template was applied
