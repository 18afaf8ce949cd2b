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
        rl = {r["prompt"] for r in run.rows}
        held = {r["prompt"] for r in run.eval_rows + run.probe_rows}
        assert len(rl) > 15_000 and len(held) == 500 + RLConfig().probe_size  # evaluated, and the gold probe
        assert rm["train"] & rl == set() and rm["test"] & rl == set()
        assert rm["train"] & held == set() and rm["test"] & held == set() and rl & held == set()
        assert rm["train"] & rm["test"] == set()


# ---------------------------------------------------------------- the procedural code task
def test_function_task_programs_pass_their_tests_and_every_wrong_operator_fails_the_first():
    from verifiers import verify
    from verifiers.tasks import FunctionTask

    task = FunctionTask()
    rows = task.sample(6, seed=3, split="test")
    assert {r["kind"] for r in rows} == {"code"} and all(r["prompt"].startswith("write ") for r in rows)
    for row in rows:
        lines = row["answer"].splitlines()
        assert len(lines) == task.n_tests
        for op in task.ops:
            # each case tells the operators apart: the right one passes all, any other fails every line
            for line in lines:
                call, want = line.removeprefix("assert ").split(" == ")
                a, b = map(int, call[call.index("(") + 1 : -1].split(", "))
                assert (task.apply(op, a, b) == int(want)) == (op == row["op"]), (row, op, line)
    # the sandbox agrees, on one row per operator
    for row in {r["op"]: r for r in task.sample(60, seed=0)}.values():
        assert verify(task.program(row, row["op"]), row["answer"], kind="code").correct
        wrong = next(o for o in task.ops if o != row["op"])
        assert not verify(task.program(row, wrong), row["answer"], kind="code").correct


def test_function_task_feedback_is_what_the_code_environment_returns():
    """The SFT rows' second-try prompts must show the environment's feedback character for character."""
    from rewards.environments import build_env
    from verifiers.tasks import EOS_TEXT, FunctionTask

    task = FunctionTask(retry=100)
    for row in task.sample(3, seed=0, split="test"):
        env = build_env("code")()
        env.reset(row)
        attempt, feedback = row["prompt"].removeprefix(f"write {row['name']}({row['args']})\n").split(EOS_TEXT)
        assert env.step(attempt).observation == feedback == task.feedback(row)
        assert attempt != row["solution"] == task.program(row, row["op"])
        assert not env.step(row["solution"]).observation and env.reward() == 1.0


def test_function_task_split_retry_share_and_bad_settings():
    from training.data import parse_task
    from verifiers.tasks import FunctionTask

    task = FunctionTask()
    train = {r["prompt"] + r["answer"] for r in task.sample(3000, seed=1)}
    test = [r["prompt"] + r["answer"] for r in task.sample(300, seed=0, split="test")]
    assert not train & set(test) and len(set(test)) == len(test)
    rows = FunctionTask(retry=60).sample(2000, seed=0)
    second = [r for r in rows if "<feedback>" in r["prompt"]]
    assert 0.55 < len(second) / len(rows) < 0.65
    # the first turn's solution is always the first operator: a guess the feedback then corrects
    assert {r["solution"].split("return ")[1][1] for r in rows if r not in second} == {"+"}
    # the same problems with and without the SFT option
    assert [r["answer"] for r in rows[:50]] == [r["answer"] for r in FunctionTask().sample(50, seed=0)]
    assert parse_task("functions:ops=+*,n_tests=2,retry=50") == FunctionTask(ops="+*", n_tests=2, retry=50)
    for spec, message in (("functions:digits=2", "n_tests, heldout_every, retry"), ("functions:ops=+/", "ops"),
                          ("functions:retry=101", "retry"), ("functions:n_tests=0", "n_tests")):
        with pytest.raises(ValueError, match=message):
            parse_task(spec)
