"""Advantage estimators against hand-computed values (std is the unbiased one, as in TRL)."""

import pytest
import torch

from training.advantages import ESTIMATORS, discounted_returns

S3 = 3 ** 0.5


def seq(*rewards):
    """Sequence rewards as token rewards on a single token each: [N, 1] and its mask."""
    r = torch.tensor(rewards, dtype=torch.float32)[:, None]
    return r, torch.ones_like(r)


CASES = [
    # (estimator, rewards, group_size, params, expected per-sequence advantage)
    # one success in 4: mean .25, std sqrt((.75^2 + 3 * .25^2) / 3) = .5
    ("grpo", (1, 0, 0, 0), 4, {}, [1.5, -0.5, -0.5, -0.5]),
    # all equal: zero advantage, no division by zero
    ("grpo", (1, 1), 2, {}, [0.0, 0.0]),
    # Dr. GRPO: only the group mean is removed
    ("dr_grpo", (1, 0, 0, 0), 4, {}, [0.75, -0.25, -0.25, -0.25]),
    # RLOO: baseline of item 0 is mean(0,0,0)=0, of the others mean(1,0,0)=1/3
    ("rloo", (1, 0, 0, 0), 4, {}, [1.0, -1 / 3, -1 / 3, -1 / 3]),
    # Lite PPO: groups [1,0] and [1,1]; centred [.5,-.5,0,0]; batch std of [1,0,1,1] = .5
    ("lite_ppo", (1, 0, 1, 1), 2, {}, [1.0, -1.0, 0.0, 0.0]),
    # QAE, K=.4, G=5, 'lower' quantile = 2nd smallest: hard prompt -> baseline 0, only the success moves
    ("qae", (1, 0, 0, 0, 0), 5, {"qae_k": 0.4}, [1.0, 0.0, 0.0, 0.0, 0.0]),
    # easy prompt: 2nd smallest of [0,1,1,1,1] is 1 -> only the failure moves
    ("qae", (1, 1, 1, 1, 0), 5, {"qae_k": 0.4}, [0.0, 0.0, 0.0, 0.0, -1.0]),
    # W-REINFORCE: +lambda for successes, -1 for failures
    ("w_reinforce", (1, 0, 0.2, 0.9), 2, {"w_lambda": 0.1}, [0.1, -1.0, -1.0, 0.1]),
]


@pytest.mark.parametrize("name,rewards,group_size,params,expected", CASES)
def test_sequence_estimators(name, rewards, group_size, params, expected):
    r, m = seq(*rewards)
    out = ESTIMATORS[name].fn(r, m, group_size, **params)
    assert out.squeeze(-1).tolist() == pytest.approx(expected, abs=1e-4)


def test_sequence_advantage_is_broadcast_to_every_completion_token_and_masked():
    r = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])  # reward on the last token
    m = torch.tensor([[1, 1, 1], [1, 0, 0]], dtype=torch.float32)  # row 1 has one token
    out = ESTIMATORS["dr_grpo"].fn(r, m, 2)
    assert out.tolist() == [[0.5, 0.5, 0.5], [-0.5, 0.0, 0.0]]


def test_reinforce_pp_whitens_token_returns_over_the_batch():
    # returns [[1,1],[0,0]]: mean .5, unbiased std over 4 tokens sqrt(1/3) -> +-sqrt(3)/2
    r = torch.tensor([[0.0, 1.0], [0.0, 0.0]])
    out = ESTIMATORS["reinforce_pp"].fn(r, torch.ones(2, 2), 1)
    assert out.flatten().tolist() == pytest.approx([S3 / 2, S3 / 2, -S3 / 2, -S3 / 2], abs=1e-4)


def test_discounted_returns_with_dense_rewards():
    # rewards .5 at t=0 and 1 at t=2, gamma .5: G2 = 1, G1 = .5, G0 = .5 + .25 = .75
    r = torch.tensor([[0.5, 0.0, 1.0]])
    assert discounted_returns(r, torch.ones(1, 3), gamma=0.5).tolist() == [[0.75, 0.5, 1.0]]


def test_rl_zvp_shapes_zero_variance_groups_by_entropy():
    rewards = torch.tensor([[1.0], [1.0], [0.0], [0.0], [1.0], [0.0]]).expand(6, 2) * torch.tensor([0.0, 1.0])
    mask = torch.ones(6, 2)
    entropy = torch.tensor([[0.5, 1.0], [2.0, 0.0], [1.0, 3.0], [2.0, 2.0], [1.0, 1.0], [1.0, 1.0]])
    out = ESTIMATORS["rl_zvp"].fn(rewards, mask, 2, entropy=entropy, zvp_alpha=0.1)
    # group 0 all correct: +0.1 H; group 1 all wrong, max H = 3: -0.1 (3 - H); group 2 mixed: GRPO +-1/sqrt(2)
    expected = [[0.05, 0.1], [0.2, 0.0], [-0.2, 0.0], [-0.1, -0.1], [0.7071, 0.7071], [-0.7071, -0.7071]]
    assert out.flatten().tolist() == pytest.approx(sum(expected, []), abs=1e-4)


def test_gae_hand_computed():
    # r = [0, 1], V = [.5, .8], gamma 1, lambda .5: delta1 = 1 - .8 = .2, delta0 = .8 - .5 = .3,
    # A1 = .2, A0 = .3 + .5 * .2 = .4
    out = ESTIMATORS["gae"].fn(torch.tensor([[0.0, 1.0]]), torch.ones(1, 2), 1,
                               values=torch.tensor([[0.5, 0.8]]), gamma=1.0, lam=0.5)
    assert out.flatten().tolist() == pytest.approx([0.4, 0.2])


def test_estimators_that_need_inputs_say_so():
    r, m = seq(1, 0)
    with pytest.raises(ValueError, match="entropy"):
        ESTIMATORS["rl_zvp"].fn(r, m, 2)
    with pytest.raises(ValueError, match="value"):
        ESTIMATORS["gae"].fn(r, m, 2)
    with pytest.raises(ValueError, match="groups of 3"):
        ESTIMATORS["grpo"].fn(r, m, 3)
