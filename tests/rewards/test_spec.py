"""build_reward: spec strings, combinations, user rewards, and errors that list the valid names."""

from __future__ import annotations

import pytest

from rewards import Combine, FormatReward, MajorityVoteReward, VerifierReward, build_reward, reward_name


@pytest.mark.parametrize(
    "spec, kind, check",
    [
        ("verifier:math", VerifierReward, lambda f: f.kind == "math"),  # kind as a positional argument
        ("verifier", VerifierReward, lambda f: f.kind == "math"),  # default kind
        ("verifier:numeric:column=solution", VerifierReward, lambda f: f.answer_column == "solution"),
        ("ttrl", MajorityVoteReward, lambda f: f.kind == "math"),
        ("format", FormatReward, lambda f: f.pattern == "think-answer"),
        ("format:integer", FormatReward, lambda f: f.pattern == "integer"),
    ],
)
def test_single_specs(spec, kind, check):
    fn = build_reward(spec)
    assert isinstance(fn, kind) and check(fn)


def test_combination_weights_and_names():
    fn = build_reward("verifier:math*1.0+format:integer*0.1")
    assert isinstance(fn, Combine)
    assert [(n, w) for n, _, w in fn.components] == [("verifier", 1.0), ("format", 0.1)]
    assert reward_name(fn) == "verifier:math*1.0+format:integer*0.1"
    # the same reward twice gets distinct names
    twice = build_reward("format:integer+format:boxed*0")
    assert [(n, w) for n, _, w in twice.components] == [("format", 1.0), ("format2", 0.0)]


def test_user_reward_by_module_function():
    fn = build_reward("tests.rewards.user_reward:brevity")
    assert fn(["p", "p"], ["ab", "abcd"]) == [-2.0, -4.0]
    combo = build_reward("tests.rewards.user_reward:brevity*0.5+format:integer")
    assert combo(["p"], ["12"]) == [0.0]  # 0.5 * -2 + 1


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nope", r"unknown reward 'nope'.*valid names: calibrated, dispatch, fapo, format, genrm"),  # unknown name
        ("", "non-empty string"),  # empty spec
        ("verifier:math*heavy", "weight 'heavy'"),  # weight not a number
        ("verifier:klingon", "unknown verifier kind 'klingon'"),  # bad kind -> verifier's list of kinds
        ("format:(", "neither a known format"),  # bad regex
        ("rm", "needs the path"),  # rm without a path
        ("qrm:/x:cvar=0.1:lower=0.2", "at most one utility"),  # two utilities
        ("ttrl:math:colour=red", r"unknown option 'colour' \(did you mean 'column'\?\)"),  # unknown option, with the closest name
        ("verifier:math:colum=answer", r"unknown option 'colum' \(did you mean 'column'\?\)"),
        ("format:boxd", r"'boxd' is not a known format \(did you mean 'boxed'\?\)"),  # a typo, not a regex that never matches
        ("no_such_module_xyz:fn", "cannot be imported"),  # module:function that does not import
        ("tests.rewards.user_reward:missing", "has no attribute 'missing'"),
        ("rm:/no/such/dir", "cannot load a reward model from '/no/such/dir'"),  # clear error, not a hub traceback
        ("qrm:/no/such/dir:cvar=0.1", "cannot load a reward model"),
        ("genrm:/no/such/dir", "cannot load a causal LM judge"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises(ValueError, match=message):
        build_reward(spec)
