"""Learned-RM rewards: quantile utilities by hand, running standardisation, real tiny RMs by spec."""

from __future__ import annotations

import math
from types import SimpleNamespace as NS

import pytest

from rewards import QuantileRMReward, RunningStats, ScalarRMReward, build_reward


class FixedQRM:
    """A quantile RM whose distribution is the five quantiles below for every response."""

    kind = "quantile"

    def score(self, prompts, responses, batch_size=None):
        from reward_models import QuantileScore

        return [QuantileScore(taus=[0.1, 0.3, 0.5, 0.7, 0.9], quantiles=[-2.0, 0.0, 1.0, 2.0, 4.0]) for _ in responses]


@pytest.mark.parametrize(
    "utility, param, expected",
    [
        ("mean", None, 1.0),  # (-2 + 0 + 1 + 2 + 4) / 5
        ("cvar", 0.3, -1.0),  # mean of quantiles with tau <= 0.3: (-2 + 0) / 2
        ("lower", 0.1, -2.0),  # the 0.1-quantile
        ("risk", 0.5, None),  # mean - 0.5 * spread (the contract's interpolated IQR), computed below
    ],
)
def test_quantile_utilities(utility, param, expected):
    fn = QuantileRMReward(FixedQRM(), utility=utility, param=param)
    q = FixedQRM().score(["p"], ["r"])[0]
    if expected is None:
        expected = q.mean - 0.5 * q.spread
    assert fn(["p"], ["r"]) == [pytest.approx(expected)]


def test_running_standardisation_across_batches():
    scores = iter([[1.0, 3.0], [5.0, 7.0]])
    model = NS(kind="bt", score=lambda p, r, batch_size=None: next(scores))
    fn = ScalarRMReward(model, standardize=True)
    first = fn(["p"] * 2, ["a", "b"])
    assert first == [pytest.approx(-1.0, abs=1e-5), pytest.approx(1.0, abs=1e-5)]  # mean 2, std 1
    second = fn(["p"] * 2, ["a", "b"])
    # running stats over [1, 3, 5, 7]: mean 4, std sqrt(5)
    assert second == [pytest.approx((5 - 4) / math.sqrt(5), abs=1e-5), pytest.approx(3 / math.sqrt(5), abs=1e-5)]
    assert fn.last_metrics["running_mean"] == 4.0


def test_running_stats_match_batch_formula():
    s = RunningStats()
    s.update([2.0, 4.0, 4.0])
    s.update([4.0, 5.0, 5.0, 7.0, 9.0])
    assert (s.mean, s.std) == (5.0, 2.0)  # the textbook example: mean 5, population std 2


def test_bad_utility():
    with pytest.raises(ValueError, match="utility must be one of mean, lower, cvar, risk"):
        QuantileRMReward(FixedQRM(), utility="median")
    with pytest.raises(ValueError, match="alpha"):
        QuantileRMReward(FixedQRM(), utility="cvar", param=1.5)


@pytest.mark.slow
def test_real_tiny_bt_and_quantile_rms_by_spec(tmp_path):
    from reward_models import load_reward_model
    from tests.rewards.rm_fixtures import make_tiny_rm

    bt = make_tiny_rm(tmp_path, "bt")
    qrm = make_tiny_rm(tmp_path, "quantile")
    prompts, completions = ["2+2="] * 3, ["4", "The answer is 4.", [{"role": "assistant", "content": "5"}]]
    fn = build_reward(f"rm:{bt}")
    expected = load_reward_model(bt).score(prompts, ["4", "The answer is 4.", "5"])
    assert fn(prompts, completions) == pytest.approx(expected)  # the reward is the RM's score
    assert fn.last_metrics["score_mean"] == pytest.approx(sum(expected) / 3)
    std = build_reward(f"rm:{bt}:standardize")
    out = std(prompts, completions)
    assert sum(out) == pytest.approx(0.0, abs=1e-4)  # first batch: standardised by its own statistics
    cvar = build_reward(f"qrm:{qrm}:cvar=0.1")
    scores = load_reward_model(qrm).score(prompts, ["4", "The answer is 4.", "5"])
    assert cvar(prompts, completions) == pytest.approx([q.cvar(0.1) for q in scores])
    assert cvar(prompts, completions)[0] <= build_reward(f"qrm:{qrm}")(prompts, completions)[0]  # CVaR <= mean
    with pytest.raises(ValueError, match="is a 'bt' reward model.*use rm:"):
        build_reward(f"qrm:{bt}")


@pytest.mark.parametrize("utility", ["lower", "cvar"])
@pytest.mark.parametrize("level", [-0.5, 0.0, 1e-6, 0.1, 0.3, 0.5, 0.9, 1 - 1e-6, 1.0, 1.5])
def test_a_level_that_builds_is_a_level_that_scores(utility, level):
    # validation and scoring agree on the range: a level accepted at build time never fails at the first step
    try:
        fn = QuantileRMReward(FixedQRM(), utility=utility, param=level)
    except ValueError as exc:
        assert "alpha" in str(exc) and "(0, 1)" in str(exc)
        with pytest.raises(ValueError):
            getattr(FixedQRM().score(["p"], ["r"])[0], utility)(level)
        return
    assert math.isfinite(fn(["p"], ["r"])[0])


@pytest.mark.parametrize("spec", ["qrm:some/qrm:cvar=1.0", "qrm:some/qrm:lower=1", "qrm:some/qrm:cvar=0"])
def test_a_bad_level_in_a_spec_fails_before_the_model_loads(monkeypatch, spec):
    import rewards.learned

    def load(*args, **kwargs):
        raise AssertionError("the reward model was loaded before the level was checked")

    monkeypatch.setattr(rewards.learned, "load_reward_model_for", load)
    with pytest.raises(ValueError, match=r"alpha for .* must be in \(0, 1\)"):
        build_reward(spec)
