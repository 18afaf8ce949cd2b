"""Scoring: failures are loud and name the reward and sample; None is not applicable; dense
rewards land on the tokens where the steps end."""

import math

import pytest
import torch

from rewards.base import RewardOutput
from training.reward_calls import RewardError, required_columns, score, token_rewards
from training.tokenizer import char_tokenizer

TOK = char_tokenizer()


def boom(prompts, completions, **columns):
    if any(c == "bad" for c in completions):
        raise ZeroDivisionError("cannot score")
    return [1.0] * len(completions)


def test_a_reward_that_raises_names_itself_and_the_sample():
    with pytest.raises(RewardError, match=r"reward 'boom' raised ZeroDivisionError.*'2\+2='.*'bad'"):
        score(boom, ["1+1=", "1+1=", "2+2=", "2+2="], ["2", "3", "4", "bad"], {}, group_size=2)


@pytest.mark.parametrize("value", [math.nan, math.inf, "x"])
def test_non_numbers_and_non_finite_rewards_stop_the_run(value):
    with pytest.raises(RewardError, match="reward"):
        score(lambda p, c, **k: [value], ["q"], ["a"], {})


def test_wrong_number_of_rewards():
    with pytest.raises(RewardError, match="1 values for 2"):
        score(lambda p, c, **k: [1.0], ["q", "q"], ["a", "b"], {})


def test_none_rows_are_masked_and_do_not_move_the_group_baseline():
    s = score(lambda p, c, **k: [1.0, None, 0.0, 0.0], ["q"] * 4, ["a", "b", "c", "d"], {})
    mask = torch.ones(4, 2, dtype=torch.long)
    ids = torch.zeros(4, 2, dtype=torch.long)
    rewards, loss_mask = token_rewards(s, mask, ids, TOK, group_size=2)
    # the None of group 0 is filled with the mean of the rest (1.0), on the last token
    assert rewards[:, -1].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert loss_mask.sum(-1).tolist() == [2, 0, 2, 2]


def test_dense_step_rewards_land_where_each_step_ends():
    completion = "12\n34\n5"  # steps end at characters 3 ("12\n") and 6 ("34\n")
    out = RewardOutput(totals=[1.5], step_rewards=[[0.2, 0.3]], step_ends=[[3, 6]])
    s = score(lambda p, c, **k: out, ["q"], [completion], {})
    ids = torch.tensor([TOK(completion, add_special_tokens=False)["input_ids"] + [TOK.eos_token_id]])
    rewards, _ = token_rewards(s, torch.ones_like(ids), ids, TOK, group_size=1)
    # step 1 on token 2 ("\n"), step 2 on token 5, the rest of the total (1.0) on the last token (EOS)
    assert rewards[0].tolist() == pytest.approx([0, 0, 0.2, 0, 0, 0.3, 0, 1.0])
    assert rewards.sum().item() == pytest.approx(1.5)


def test_the_final_steps_reward_lands_on_the_eos_that_ends_it():
    # the EOS is the decision to stop: it must carry the final step's reward (a PRM reads the last step
    # there). On the step's last character instead, a low score for an early stop fell on the tokens
    # before the stop while the EOS got a return of 0, and Clip-Delta (rewards <= 0) taught stopping early.
    for completion, ends, expected in (("12\n34", [3, 5], [0, 0, -0.2, 0, 0, -0.5]), ("12", [2], [0, 0, -0.7])):
        out = RewardOutput(totals=[sum(x for x in expected)], step_rewards=[[x for x in expected if x]], step_ends=[ends])
        s = score(lambda p, c, **k: out, ["q"], [completion], {})
        ids = torch.tensor([TOK(completion, add_special_tokens=False)["input_ids"] + [TOK.eos_token_id]])
        rewards, _ = token_rewards(s, torch.ones_like(ids), ids, TOK, group_size=1)
        assert rewards[0].tolist() == pytest.approx(expected), completion


def test_required_columns_of_composites():
    from rewards import build_reward

    assert required_columns(build_reward("verifier:math")) == {"answer"}
    assert required_columns(build_reward("verifier:math*1.0+format*0.1")) == {"answer"}
    assert required_columns(build_reward("ttrl")) == set()


@pytest.mark.parametrize("seed", range(6))
def test_rounds_merged_by_dynamic_sampling_keep_each_rows_step_rewards(seed):
    # dynamic sampling merges the kept groups of several rounds; an environment may give per-turn rewards in some
    # rounds only. Metamorphic: the token rewards of the merged rounds are those of each round, stacked.
    import random

    from training.collect import merge_scores

    rng = random.Random(seed)
    width = 8
    parts, texts = [], []
    for _ in range(rng.randint(2, 4)):
        n = rng.randint(1, 3)
        round_texts = ["".join(rng.choice("12\n") for _ in range(rng.randint(2, width - 1))) for _ in range(n)]
        totals = [float(rng.randint(-2, 2)) for _ in range(n)]
        if rng.random() < 0.5:  # this round's episodes had per-turn rewards
            ends = [sorted({rng.randint(1, len(t)) for _ in range(2)}) for t in round_texts]
            steps = [[rng.choice([0.25, -0.5, 1.0]) for _ in e] for e in ends]
            out = RewardOutput(totals=totals, step_rewards=steps, step_ends=ends)
        else:
            out = totals
        parts.append(score(lambda p, c, **k: out, ["q"] * n, round_texts, {}))
        texts += round_texts
    if all(p.step_rewards is None for p in parts) or all(p.step_rewards is not None for p in parts):
        parts[0] = score(lambda p, c, **k: RewardOutput(totals=[1.0] * len(parts[0].totals), step_rewards=[[0.5]] * len(parts[0].totals),
                                                           step_ends=[[1]] * len(parts[0].totals)), ["q"] * len(parts[0].totals),
                         texts[: len(parts[0].totals)], {})

    def encode(ts):
        ids = [TOK(t, add_special_tokens=False)["input_ids"] + [TOK.eos_token_id] for t in ts]
        mask = torch.tensor([[1] * len(x) + [0] * (width + 1 - len(x)) for x in ids])
        return torch.tensor([x + [TOK.eos_token_id] * (width + 1 - len(x)) for x in ids]), mask

    merged = merge_scores(parts)
    assert len(merged.step_rewards) == len(merged.totals) == len(texts)
    ids, mask = encode(texts)
    whole, _ = token_rewards(merged, mask, ids, TOK, group_size=1)
    start, pieces = 0, []
    for p in parts:
        n = len(p.totals)
        pieces.append(token_rewards(p, mask[start : start + n], ids[start : start + n], TOK, group_size=1)[0])
        start += n
    assert torch.allclose(whole, torch.cat(pieces))


def test_scores_with_lists_of_other_lengths_are_refused():
    from training.reward_calls import Scores

    with pytest.raises(ValueError, match="step_rewards has 1 entries for 2 completions"):
        Scores(totals=[1.0, 0.0], applicable=[True, True], step_rewards=[[0.5]], step_ends=[[1]])
