"""Environments (rewards/environments.py): the calculator tool and the code environment with a
second try, as the trainer and the adapters call them; bad specs and rows fail with clear errors."""

import pytest

from rewards.environments import build_env, run_step


@pytest.mark.parametrize("call,observation,error", [
    ("<calc>734+289</calc>", "<result>1023</result>", False),
    ("I check <calc> 7 / 2 </calc>", "<result>7/2</result>", False),
    ("<calc>1/0</calc>", "<result>error: division by zero</result>", True),
    ("<calc>__import__('os').system('x')</calc>", "<result>error: only numbers, + - * / and brackets are allowed</result>", True),
    ("<calc>" + "9*" * 60 + "9</calc>", "<result>error: the expression is longer than 80 characters</result>", True),
    ("<calc>2**99</calc>", "<result>error: only numbers, + - * / and brackets are allowed</result>", True),
])
def test_calculator_calls(call, observation, error):
    env = build_env("calculator")()
    env.reset({"answer": "1"})
    turn = env.step(call)
    assert (turn.observation, turn.tool_call, turn.tool_error, turn.done) == (observation, True, error, False)


def test_calculator_cost_limit_and_bad_specs():
    env = build_env("calculator:cost=0.1,max_calls=1")()
    env.reset({"answer": "5"})
    env.step("<calc>2+3</calc>")
    assert env.step("<calc>2+3</calc>").tool_error  # past max_calls
    assert env.step("5").done and env.reward() == pytest.approx(1.0 - 0.2)
    with pytest.raises(ValueError, match="unknown option 'costs'.*did you mean 'cost'"):
        build_env("calculator:costs=1")
    with pytest.raises(ValueError, match="unknown environment 'calculater'.*did you mean 'calculator'"):
        build_env("calculater")
    with pytest.raises(ValueError, match="no 'answer' column"):
        build_env("calculator")().reset({"prompt": "1+1="})




def test_code_environment_gives_feedback_and_a_second_try():
    env = build_env("code")()
    env.reset({"prompt": "Write add(a, b).", "answer": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]})  # MBPP's test_list shape
    first = run_step(env, "```python\ndef add(a, b):\n    return a * b\n```")
    assert not first.done and first.observation.startswith("<feedback>test 1/1: AssertionError at test line 1: assert add(1, 2) == 3")
    second = run_step(env, "```python\ndef add(a, b):\n    return a + b\n```")
    assert second.done and second.observation is None and env.reward() == 1.0


def test_code_environment_reward_is_the_final_attempts():
    env = build_env("code:max_attempts=2")()
    env.reset({"answer": "assert add(1, 2) == 3\nassert add(2, 2) == 4"})
    run_step(env, "def add(a, b):\n    return 3")
    assert run_step(env, "print('all tests passed')").done and env.reward() == 0.0  # a forged message passes nothing
    one = build_env("code:max_attempts=1")()
    one.reset({"answer": "assert add(1, 2) == 3"})
    assert run_step(one, "def add(a, b):\n    return 0").done and one.reward() == 0.0  # no second try
    with pytest.raises(ValueError, match="no 'answer' column"):
        build_env("code")().reset({"tests": "assert True"})


def test_code_environment_run_tests_tool_gives_tool_calling_trainers_the_second_try():
    """TRL / verl / HTTP turns are tool calls: `run_tests(program)` returns the feedback, at most
    max_attempts - 1 times, and the reward is still the final message's."""
    from rewards.adapters import trl_environment

    env = build_env("code:max_attempts=3")()
    assert [t.__name__ for t in env.tools()] == ["run_tests"]
    assert env.run_tests("def add(a, b): return a + b").startswith("error: no problem yet")
    env.reset({"answer": "assert add(1, 2) == 3"})
    assert env.run_tests("def add(a, b):\n    return a - b") == "test 1/1: AssertionError at test line 1: assert add(1, 2) == 3"
    assert env.run_tests("def add(a, b):\n    return a + b") == "all tests passed"
    assert env.run_tests("def add(a, b):\n    return a + b").startswith("error: no test runs left")
    assert env.reward() == 0.0  # a passing test run is not an answer
    args = trl_environment("code")
    trl_env = args["environment_factory"]()
    assert trl_env.reset(prompt="Write add(a, b).", answer="assert add(1, 2) == 3") is None
    assert "Args:" in trl_env.run_tests.__doc__  # TRL builds the tool's schema from the signature and docstring
    assert trl_env.run_tests("def add(a, b):\n    return a * b").startswith("test 1/1: AssertionError")
    final = [{"role": "assistant", "content": "```python\ndef add(a, b):\n    return a + b\n```"}]
    assert args["reward_funcs"][0](["Write add(a, b)."], [final], environments=[trl_env]) == [1.0]
    forged = [{"role": "assistant", "content": "all tests passed"}]  # the tool's words as the answer pass nothing
    trl_env.reset(prompt="Write add(a, b).", answer="assert add(1, 2) == 3")
    assert args["reward_funcs"][0](["Write add(a, b)."], [forged], environments=[trl_env]) == [0.0]


def test_code_environment_gives_none_not_zero_when_a_try_cannot_be_judged():
    """Unreadable tests or a timeout are not the policy's failure: None (counted), as the code verifier's reward gives."""
    env = build_env("code:max_attempts=1")()
    env.reset({"answer": "assert add(1, 2) == 3"})
    assert run_step(env, "def add(a, b):\n    while True:\n        pass\n    return 3\nadd(0, 0)").done
    assert env.verdict == "timeout" and env.reward() is None
    env.reset({"answer": "[{\"input\": 1"})  # tests that cannot be read
    run_step(env, "print(3)")
    assert env.verdict == "bad_gold" and env.reward() is None
    env.reset({"answer": "assert add(1, 2) == 3"})
    run_step(env, "def add(a, b):\n    return 4")
    assert env.verdict == "incorrect" and env.reward() == 0.0
    assert build_env("code")().reward() == 0.0  # no try at all


def test_an_episode_ends_once_and_owns_one_budget_across_step_and_tools():
    """A finished episode takes no more messages (EpisodeOver) and its tools refuse; in the code
    environment a run_tests try and a message share max_attempts (the final message is the last try)."""
    from rewards.environments import EpisodeOver

    calc = build_env("calculator:cost=0.1")()
    calc.reset({"answer": "2"})
    assert calc.step("2").done and calc.reward() == 1.0
    with pytest.raises(EpisodeOver, match="the episode is over"):
        calc.step("3")
    assert calc.calculator("1+1") == "error: the episode is over" and calc.reward() == 1.0  # no cost, no new answer
    code = build_env("code:max_attempts=2")()
    code.reset({"answer": "assert add(1, 2) == 3"})
    assert code.run_tests("def add(a, b):\n    return 0").startswith("test 1/1")
    assert code.run_tests("def add(a, b):\n    return a + b").startswith("error: no test runs left")
    turn = run_step(code, "def add(a, b):\n    return 0")  # the second program judged is the last
    assert turn.done and turn.observation is None and code.reward() == 0.0
    with pytest.raises(EpisodeOver):
        run_step(code, "def add(a, b):\n    return a + b")
    assert code.run_tests("def add(a, b):\n    return a + b") == "error: the episode is over" and code.reward() == 0.0


HIDDEN = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(10, 5) == 15", "assert add(7, 7) == 14"]


@pytest.mark.parametrize("row,shown", [
    ({"visible_tests": HIDDEN[:1]}, HIDDEN[:1]),  # the row says which tests the task shows
    ({"visible_tests": []}, []),                  # none
])
def test_feedback_never_hands_out_hidden_tests(row, shown):
    """The lookup-table attack: a program that answers the shown tests and guesses the rest, re-tried
    with every test the feedback has shown; the feedback never carries a hidden test (any form of
    it: the call or the expected value), so the table cannot grow past the visible tests."""
    known = {}
    for _ in range(3):  # one episode per round (each allows one test run before the final answer)
        env = build_env("code:max_attempts=2")()
        env.reset({"answer": HIDDEN, **row})
        table = "".join(f"    if (a, b) == {k}:\n        return {v}\n" for k, v in known.items())
        feedback = env.run_tests(f"def add(a, b):\n{table}    return 0")
        for test in HIDDEN:
            if test not in shown:
                assert test not in feedback and test.split("==")[0].split("assert ")[1].strip() not in feedback, feedback
        for test in shown:
            call, value = test[len("assert add"):].split(" == ")
            known[eval(call)] = int(value)
        if shown:
            assert feedback.startswith(("test 1/1", "the visible tests pass; a hidden test fails")), feedback
        else:
            assert feedback == "a hidden test fails (incorrect)"
        assert run_step(env, f"def add(a, b):\n{table}    return 0").done and env.reward() == 0.0
    hidden_all = build_env("code:hidden=1")()
    hidden_all.reset({"answer": HIDDEN})
    assert hidden_all.run_tests("def add(a, b):\n    return 0") == "a hidden test fails (incorrect)"
    with pytest.raises(ValueError, match="hidden must be 0 or 1"):
        build_env("code:hidden=2")
