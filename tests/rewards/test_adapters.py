"""verl and OpenRLHF adapters, called the way those frameworks call them."""

from __future__ import annotations

import pytest

from rewards import build_reward
from rewards.adapters import as_openrlhf_reward_func, as_verl_batch_compute_score, as_verl_compute_score, split_query


def test_verl_compute_score_keywords_like_naive_reward_manager():
    compute_score = as_verl_compute_score(build_reward("verifier:math"))
    # verl's NaiveRewardManager calls compute_score(data_source=, solution_str=, ground_truth=, extra_info=)
    out = compute_score(data_source="arith", solution_str="The answer is 579", ground_truth="579", extra_info={"split": "train"})
    assert out["score"] == 1.0 and out["verdict/correct"] == 1.0 and out["not_applicable"] == 0.0
    assert compute_score("arith", "580", "579")["score"] == 0.0
    bare = as_verl_compute_score(build_reward("verifier:math"), return_dict=False)
    assert bare("arith", "579", "579") == 1.0


def test_verl_none_is_scored_and_flagged():
    # bad gold -> the verifier reward is None; verl needs a number: none_score, flagged
    compute_score = as_verl_compute_score(build_reward("verifier:math"), none_score=-1.0)
    out = compute_score("arith", "579", "\\frac{")
    assert out["score"] == -1.0 and out["not_applicable"] == 1.0


def test_verl_batch_form():
    compute_score = as_verl_batch_compute_score(build_reward("verifier:math*1+format:integer*0.5"))
    out = compute_score(["a", "a", "a"], ["12", "13", "douze"], ["12", "12", "12"], [{"prompt": "7+5="}, None, None])
    assert out == [1.5, 0.5, 0.0]


@pytest.mark.parametrize(
    "query, prompt, expected",
    [
        ("7+5=12", "7+5=", "12"),  # plain concatenation
        ("<s>7+5=12</s>", "7+5=", "12</s>"),  # special tokens before the prompt are skipped
        ("12", "unrelated", "12"),  # prompt not found: the whole query
    ],
)
def test_split_query(query, prompt, expected):
    assert split_query(query, prompt) == expected


def test_openrlhf_reward_func():
    fn = as_openrlhf_reward_func(build_reward("ttrl"))
    out = fn(["7+5=12", "7+5=12", "7+5=13", "9+1=x"], ["7+5=", "7+5=", "7+5=", "9+1="], ["12", "12", "12", "10"])
    assert out["rewards"] == [1.0, 1.0, 0.0, 0.0]  # the last prompt has no answer: None -> 0, counted
    assert out["scores"] == out["rewards"]
    assert out["extra_logs"]["not_applicable"] == 1.0
    assert out["extra_logs"]["ttrl/label_accuracy"] == 1.0
    with pytest.raises(ValueError, match="2 queries but 1 prompts"):
        fn(["a", "b"], ["a"], None)
