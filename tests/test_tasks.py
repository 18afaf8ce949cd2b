"""The procedural arithmetic tasks: answers are exact, the held-out split never leaks."""

import pytest

from verifiers.tasks import ArithmeticTask


@pytest.mark.parametrize(
    "task",
    [
        ArithmeticTask(),  # the default: 3-digit addition
        ArithmeticTask(digits=2, n_terms=4, ops="+-*"),  # mixed ops need brackets for left-to-right order
        ArithmeticTask(digits=1, n_terms=3, ops="-"),  # negative answers
    ],
)
def test_answers_match_python_arithmetic(task):
    for row in task.sample(300, seed=1) + task.sample(100, seed=1, split="test"):
        assert int(row["answer"]) == eval(row["expression"]), row  # noqa: S307 - our own digits and ops
        assert row["prompt"] == row["expression"] + "="
        assert task.steps(row)[-1][1] == int(row["answer"])


def test_heldout_split_is_disjoint_and_stable():
    task = ArithmeticTask(digits=2)
    train = {r["expression"] for seed in range(3) for r in task.sample(2000, seed=seed)}
    test = [r["expression"] for r in task.sample(200, seed=0, split="test")]
    assert not train & set(test)  # no leakage, whatever the seeds
    assert len(set(test)) == len(test)  # test problems are distinct
    assert test == [r["expression"] for r in task.sample(200, seed=0, split="test")]  # reproducible


def test_steps_are_left_to_right():
    row = {"terms": [2, 3, 4], "ops": ["+", "*"]}
    assert ArithmeticTask.steps(row) == [("2+3", 5), ("5*4", 20)]  # (2+3)*4, by hand


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"digits": 0}, "digits"),  # operands need at least one digit
        ({"n_terms": 1}, "n_terms"),  # one operand is not a problem
        ({"ops": "/"}, "ops"),  # only + - * are exact on integers
    ],
)
def test_bad_settings_name_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ArithmeticTask(**kwargs)


def test_bad_split_and_impossible_request():
    with pytest.raises(ValueError, match="split"):
        ArithmeticTask().sample(1, split="validation")
    with pytest.raises(ValueError, match="distinct"):
        ArithmeticTask(digits=1, n_terms=2).sample(100, split="test")  # only ~10 test problems exist


def test_worked_solutions_are_correct_and_take_many_paths():
    task = ArithmeticTask(digits=2, n_terms=3, worked=True)
    rows = task.sample(300, seed=0)
    # the same problems as without solutions: the option must not move the split or the draws
    assert [r["expression"] for r in rows] == [r["expression"] for r in ArithmeticTask(digits=2, n_terms=3).sample(300)]
    for row in rows:
        steps = row["solution"].split(" ")
        assert len(steps) == 2 and steps[-1].rsplit("=", 1)[1] == row["answer"]
        for step in steps:  # every step is true arithmetic, and the first adds two of the terms
            lhs, value = step.split("=")
            assert eval(lhs) == int(value), row  # noqa: S307 - our own digits and ops
        first = sorted(map(int, steps[0].split("=")[0].split("+")))
        assert all(t in row["terms"] for t in first)
    firsts = {tuple(r["solution"].split(" ")[0].split("=")[0].split("+")) == tuple(map(str, r["terms"][:2])) for r in rows}
    assert firsts == {True, False}  # the order varies (left to right would always start with terms 0 and 1)
    # with '-' or '*' the order matters: the steps stay left to right
    mixed = ArithmeticTask(digits=1, n_terms=3, ops="*", worked=True).sample(1)[0]
    assert mixed["solution"] == " ".join(f"{a}={b}" for a, b in ArithmeticTask.steps(mixed))


def test_rm_data_rl_and_heldout_prompts_never_overlap(tmp_path, monkeypatch):
    """The prompts `rm-data` samples on (its train and validation), the prompts `rl` trains on and
    RL's held-out set are disjoint by construction, for any seeds: drawn at the commands' own call
    sites with their defaults (the default task, 20,000 RM prompts, 20,000 RL prompts, 500 held out)."""
    from training.config import RLConfig
    from training.rm_data import RMDataConfig, prompt_splits
    from training.run_state import prepare_run

    monkeypatch.setenv("REWARDLAB_CACHE", str(tmp_path / "cache"))
    rm = {}
    for seed in (0, 1):
        for split, rows in prompt_splits(RMDataConfig(seed=seed)).items():
            rm.setdefault(split, set()).update(r["prompt"] for r in rows)
    assert len(rm["train"]) > 15_000 and len(rm["test"]) > 400
    for seed in (0, 1):
        run = prepare_run(RLConfig(seed=seed, output_dir=str(tmp_path / f"rl{seed}")))
        rl = {r["prompt"] for r in run["rows"]}
        held = {r["prompt"] for r in run["eval_rows"] + run["probe_rows"]}
        assert len(rl) > 15_000 and len(held) == 500 + RLConfig().probe_size  # evaluated, and the gold probe
        assert rm["train"] & rl == set() and rm["test"] & rl == set()
        assert rm["train"] & held == set() and rm["test"] & held == set() and rl & held == set()
        assert rm["train"] & rm["test"] == set()
