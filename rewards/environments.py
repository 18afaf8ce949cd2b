"""Environments: multi-turn episodes that own their reward (tool use, feedback and a second try).

A reward scores one completion; an environment talks with the policy. One episode:

    env = factory()                       # a fresh environment per episode (TRL's environment_factory)
    opening = env.reset(row)              # the dataset row (prompt, answer, ...); an optional first observation
    turn = env.step(message)              # the policy's message -> Turn(observation, reward, done, ...)
    ...                                   # until turn.done or the trainer's turn limit
    env.reward()                          # the final reward of the episode (float, or None: not applicable)

An environment with tools may also list them as typed, documented functions (`tools()`), which is
how trainers with their own tool-call format (TRL, verl, NeMo Gym's HTTP shape) call them; `step`
is the text protocol `rewardlab rl` uses. `step` and `reward` may be coroutines (async environments); `run_step` / `final_reward` resolve
them. A policy turn ends at EOS or at one of `env.stop` (e.g. `</calc>`): the trainer then calls
`step`, appends the observation as environment tokens (never trained on), and lets the policy go
on. An environment whose class sets `concurrent = True` shares nothing between instances, and the
trainer may run the steps of different episodes at once in threads (the code environment: each
step waits on a sandboxed process). `Turn.reward` is an optional per-turn reward, put on the turn's last token. The reward must be
computed from what the policy wrote and the row, never from text an observation put in the
transcript (a policy that copies a tool's output is judged on its own final message only).

Built in (`build_env(spec)` -> factory; `ENVIRONMENTS` lists them):

- `calculator[:cost=C,max_calls=K,column=answer]`: the policy may write `<calc>734+289</calc>` and
  receives `<result>1023</result>`; a message without a call is its final answer, scored by the
  math verifier against the row's `answer` column, minus C per call made (default 0).
- `code[:max_attempts=2,column=answer,visible=visible_tests,hidden=0]`: each message is a program,
  run against the row's tests in the sandbox; a failing one gets the test output back as feedback
  (of the row's visible tests only, when it says which) and another try; the reward is the final
  attempt's (1 when every test passes).

An episode owns its budgets (`max_calls`, `max_attempts`: one per episode across the text protocol
and the tools) and ends once: after the final answer, `step` raises `EpisodeOver` and the tools
answer `error: the episode is over`.

>>> env = build_env("calculator")()
>>> env.reset({"prompt": "734+289=", "answer": "1023"})
>>> env.step("<calc>734+289</calc>")
Turn(observation='<result>1023</result>', reward=None, done=False, tool_call=True, tool_error=False)
>>> env.step("1023").done, env.reward()
(True, 1.0)
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Protocol, runtime_checkable

from rewards.base import suggestion


@dataclass(frozen=True)
class Turn:
    """What an environment answers to one policy message."""

    observation: str | None = None  # appended as environment tokens (None or "" when nothing is)
    reward: float | None = None  # this turn's own reward (optional; on the turn's last token)
    done: bool = False  # the episode is over (the final reward is `env.reward()`)
    tool_call: bool = False  # the message called a tool
    tool_error: bool = False  # ... and the call failed (bad arguments, too many calls)


@runtime_checkable
class Environment(Protocol):
    stop: tuple[str, ...]  # strings that end a policy turn besides EOS (a tool call's closing tag)

    def reset(self, row: dict[str, Any]) -> str | None: ...

    def step(self, message: str) -> Turn: ...

    def reward(self) -> float | None: ...


def resolve(value: Any) -> Any:
    """The value of a sync or async environment method's result."""
    if inspect.isawaitable(value):
        return asyncio.run(_await(value))
    return value


async def _await(value: Any) -> Any:
    return await value


def run_step(env: Any, message: str) -> Turn:
    """`env.step(message)`, checked: a Turn (or an observation string, or an (observation, reward,
    done) tuple as gym-style environments return)."""
    out = resolve(env.step(message))
    if isinstance(out, Turn):
        return out
    if out is None or isinstance(out, str):
        return Turn(observation=out or None, done=out is None)
    if isinstance(out, tuple) and len(out) in (3, 4):
        obs, reward, done = out[:3]
        return Turn(observation=obs or None, reward=None if reward is None else float(reward), done=bool(done))
    raise TypeError(f"{type(env).__name__}.step returned {type(out).__name__}; return a rewards.environments.Turn "
                    "(or an observation string, or (observation, reward, done))")


class EpisodeOver(ValueError):
    """A message or tool call for an episode that has ended (its final answer is in): an episode
    is judged once, so nothing after the end can change its reward."""


def check_open(env: Any) -> None:
    """Raise `EpisodeOver` when `env` says its episode has ended (`env.done`)."""
    if getattr(env, "done", False):
        raise EpisodeOver(f"{type(env).__name__}: the episode is over (its final answer is in); reset it on a row "
                          "to start another")


def final_reward(env: Any) -> float | None:
    value = resolve(env.reward())
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{type(env).__name__}.reward() returned {value!r}; return a float or None") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{type(env).__name__}.reward() returned {value}; a reward must be finite")
    return value


# ---------------------------------------------------------------- the calculator tool
MAX_EXPRESSION = 80  # characters inside <calc>...</calc>



def calc_call(message: str) -> str | None:
    """The expression of a message that ends in a tool call, `<calc>EXPR</calc>` (then only
    whitespace), from its first `<calc>`; None for a final answer. Linear in the message: a regular
    expression here (`<calc>(.*?)</calc>\\s*$`) was quadratic on a message of many `<calc>`.

    >>> calc_call("so <calc>734+289</calc> "), calc_call("<calc>1</calc> is 1")
    ('734+289', None)
    """
    end = len(message.rstrip()) - len("</calc>")
    if end < 0 or not message.startswith("</calc>", end):
        return None
    start = message.find("<calc>", 0, end)
    return None if start < 0 else message[start + len("<calc>"):end]
_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b}


def calculate(expression: str) -> str:
    """The value of an arithmetic expression (integers and decimals, + - * / and brackets), exact:
    an integer, or a reduced fraction `a/b`. Raises ValueError on anything else.

    >>> calculate("734+289"), calculate("(12-20)*3"), calculate("7/2"), calculate("0.1+0.2")
    ('1023', '-24', '7/2', '3/10')
    >>> calculate("__import__('os')")
    Traceback (most recent call last):
    ...
    ValueError: only numbers, + - * / and brackets are allowed
    """
    if len(expression) > MAX_EXPRESSION:
        raise ValueError(f"the expression is longer than {MAX_EXPRESSION} characters")
    if not re.fullmatch(r"[\d\s.+\-*/()]+", expression):
        raise ValueError("only numbers, + - * / and brackets are allowed")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ValueError("not an arithmetic expression") from None
    value = _evaluate(tree.body)
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _evaluate(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _evaluate(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Div) and right == 0:
            raise ValueError("division by zero")
        return _OPS[type(node.op)](left, right)
    raise ValueError("only numbers, + - * / and brackets are allowed")


@dataclass
class CalculatorEnv:
    """A calculator tool for the arithmetic tasks (module docstring). The final answer is the first
    message without a tool call, scored by `verifier:math` against `column`; each call costs `cost`.
    Calls past `max_calls` are answered with an error and end nothing (the trainer's turn limit does)."""

    cost: float = 0.0
    max_calls: int = 4
    column: str = "answer"
    stop: tuple[str, ...] = ("</calc>",)
    calls: int = field(default=0, init=False)
    errors: int = field(default=0, init=False)
    done: bool = field(default=False, init=False)  # the final answer is in: the episode takes no more messages
    _gold: str | None = field(default=None, init=False, repr=False)
    _answer: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.cost < 0 or self.max_calls < 0:
            raise ValueError(f"calculator: cost and max_calls must be >= 0, got cost={self.cost}, max_calls={self.max_calls}")

    def reset(self, row: dict[str, Any]) -> None:
        if row.get(self.column) is None:
            raise ValueError(f"calculator: the row has no {self.column!r} column (the gold answer); "
                             f"its columns: {sorted(row)} (set column=NAME)")
        self._gold, self._answer, self.calls, self.errors, self.done = str(row[self.column]), None, 0, 0, False
        return None

    def step(self, message: str) -> Turn:
        check_open(self)
        call = calc_call(message)
        if call is None:  # a final answer
            self._answer, self.done = message, True
            return Turn(done=True)
        errors = self.errors
        result = self.calculator(call)
        return Turn(observation=f"<result>{result}</result>", tool_call=True, tool_error=self.errors > errors)

    def calculator(self, expression: str) -> str:
        """Evaluate an arithmetic expression exactly: integers and decimals with + - * / and brackets.

        Args:
            expression: the expression, e.g. 734+289 or (12-20)*3/4

        Returns:
            The value (an integer or a fraction a/b), or `error: ...` saying what was wrong.
        """
        if self.done:
            return "error: the episode is over"
        self.calls += 1
        if self.calls > self.max_calls:
            self.errors += 1
            return "error: too many calls"
        try:
            return calculate(str(expression))
        except ValueError as exc:
            self.errors += 1
            return f"error: {exc}"

    def tools(self) -> list[Callable[..., str]]:
        """The tools as functions (typed, documented): what a trainer with its own tool-call format
        (TRL's chat-template tool calls, verl's tool schemas, an HTTP client) calls directly."""
        return [self.calculator]

    def reward(self) -> float:
        """1 for a right final answer (0 for a wrong one or none), minus `cost` per call."""
        right = 0.0
        if self._answer is not None and self._gold is not None:
            from verifiers import verify

            right = 1.0 if verify(self._answer, self._gold, kind="math").correct else 0.0
        return right - self.cost * self.calls


# ---------------------------------------------------------------- code with a second try
MAX_FEEDBACK = 400  # characters of test output shown back to the policy


@dataclass
class CodeEnv:
    r"""The policy's program is run against the row's tests in the sandbox (the `code` verifier);
    a failing attempt gets the test output back (`<feedback>test 1/3: AssertionError at test line
    1: assert add(1, 2) == 3</feedback>`, as a test runner would show it) and another try, up to
    `max_attempts`. The reward is the final attempt's: 1 when every test passes, 0 when one fails,
    None when it could not be judged (see `reward`).

    >>> env = build_env("code")()
    >>> env.reset({"prompt": "Write add(a, b).", "answer": "assert add(1, 2) == 3"})
    >>> env.step("def add(a, b):\n    return a - b").observation
    '<feedback>test 1/1: AssertionError at test line 1: assert add(1, 2) == 3</feedback>'
    >>> env.step("def add(a, b):\n    return a + b").done, env.reward()
    (True, 1.0)

    Trainers whose turns are tool calls (TRL, verl, an HTTP client) get the same second try from
    the tool `run_tests(program)`: it answers with the test output. One budget per episode: every
    program judged - a `run_tests` call or a message - is one of the `max_attempts` tries, and the
    final message is always the last, so `run_tests` answers at most `max_attempts - 1` times.

    Which tests the feedback may show is the row's to say: tests in the `visible` column (e.g. the
    examples a prompt shows) are shown when they fail; the others are hidden, and a failure there
    reads `the visible tests pass; a hidden test fails (incorrect)`, never the test. A row without
    that column shows its tests (its task means them as feedback, as `FunctionTask`'s rows do),
    unless `hidden=1`, which hides them all. The reward always runs every test.

    >>> env = build_env("code")()
    >>> env.reset({"answer": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"], "visible_tests": ["assert add(1, 2) == 3"]})
    >>> env.run_tests("def add(a, b):\n    return 3")
    'the visible tests pass; a hidden test fails (incorrect)'
    """

    concurrent = True  # steps of different episodes may run at once (each waits on its own sandbox process)
    accuracy_reward = "verifier:code"  # what `rl` logs as accuracy: the final message passes the row's tests
    max_attempts: int = 2
    column: str = "answer"  # the tests, in any form the code verifier reads (asserts, stdin/stdout cases, MBPP/HumanEval shapes)
    language: str | None = None  # the code verifier's `language` (cpp, java, ...); else the row's `language`, else the fence tag
    visible: str = "visible_tests"  # the row column of the tests whose failures the feedback shows (when the row has it)
    hidden: int = 0  # 1: rows without a `visible` column hide every test (the feedback says only pass / fail)
    stop: tuple[str, ...] = ()
    attempts: int = field(default=0, init=False)  # programs judged this episode (`run_tests` calls and messages)
    test_runs: int = field(default=0, init=False)  # `run_tests` calls (refused ones included)
    passed: bool = field(default=False, init=False)
    done: bool = field(default=False, init=False)  # the final try is in: the episode takes no more programs
    verdict: str | None = field(default=None, init=False)  # the last try's verdict (`verifiers.Verdict` value)
    _tests: str | None = field(default=None, init=False, repr=False)
    _language: str | None = field(default=None, init=False, repr=False)
    _shown: str | None = field(default=None, init=False, repr=False)  # the visible tests (None: all of them)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"code: max_attempts must be >= 1, got {self.max_attempts}")
        if self.hidden not in (0, 1):
            raise ValueError(f"code: hidden must be 0 or 1, got {self.hidden!r}")

    def reset(self, row: dict[str, Any]) -> None:
        from verifiers.code_kind import code_gold

        if row.get(self.column) is None:
            raise ValueError(f"code: the row has no {self.column!r} column (the tests); its columns: {sorted(row)} (set column=NAME)")
        self._tests = code_gold(row[self.column], row.get("entry_point"), row.get("test_setup_code"))
        self._language = self.language or row.get("language")
        shown = row.get(self.visible)
        self._shown = None if shown is None else code_gold(shown, row.get("entry_point"), row.get("test_setup_code")) if shown else ""
        self.attempts, self.test_runs, self.passed, self.done, self.verdict = 0, 0, False, False, None
        return None

    def _judge(self, program: str) -> Any:
        return self._verify(program, self._tests or "")

    def _verify(self, program: str, tests: str) -> Any:
        from verifiers import verify

        options = {"language": self._language} if self._language else {}
        return verify(program, tests, kind="code", **options)

    def _feedback(self, program: str, result: Any) -> str:
        """What a failing try is told: the failure when the tests are visible; with hidden tests,
        the visible tests' own failure, else only that a hidden one fails."""
        if self._shown is None and not self.hidden:
            return (result.detail or result.verdict.value)[:MAX_FEEDBACK]
        if self._shown:
            shown = self._verify(program, self._shown)
            if not shown.correct:
                return (shown.detail or shown.verdict.value)[:MAX_FEEDBACK]
            return f"the visible tests pass; a hidden test fails ({result.verdict.value})"
        return f"a hidden test fails ({result.verdict.value})"

    def step(self, message: str) -> Turn:
        check_open(self)
        self.attempts += 1
        result = self._judge(message)
        self.passed, self.verdict = result.correct, result.verdict.value
        if self.passed or self.attempts >= self.max_attempts:
            self.done = True
            return Turn(done=True)
        return Turn(observation=f"<feedback>{self._feedback(message, result)}</feedback>")

    def run_tests(self, program: str) -> str:
        """Run a program against the problem's tests in a sandbox, before answering.

        Args:
            program: the whole program, e.g. def add(a, b): return a + b

        Returns:
            `all tests passed`, the first failure (which test, the error, the line), or `error: ...`.
        """
        if self._tests is None:
            return "error: no problem yet (reset first)"
        if self.done:
            return "error: the episode is over"
        self.test_runs += 1
        if self.attempts >= self.max_attempts - 1:  # one budget: the final message is the last try
            return "error: no test runs left; answer with your program"
        self.attempts += 1
        result = self._judge(str(program))
        return "all tests passed" if result.correct else self._feedback(str(program), result)

    def tools(self) -> list[Callable[..., str]]:
        """`run_tests`, for trainers whose turns are tool calls (see the class docstring)."""
        return [self.run_tests]

    def reward(self) -> float | None:
        """1 when the final try passes every test, 0 when it fails one; None - not applicable,
        counted, never a silent 0 - when it could not be judged (unreadable tests, a timeout, the
        sandbox failing), as the code verifier's reward does."""
        from rewards.verifier import DEFAULT_VERDICT_REWARDS

        return DEFAULT_VERDICT_REWARDS[self.verdict] if self.verdict else 0.0


# ---------------------------------------------------------------- registry
ENVIRONMENTS: dict[str, tuple[Callable[..., Any], str]] = {
    "calculator": (CalculatorEnv, "calculator[:cost=C,max_calls=K,column=answer]"),
    "code": (CodeEnv, "code[:max_attempts=2,column=answer,language=cpp,visible=visible_tests,hidden=0]"),
}


def accuracy_reward_of(spec: str) -> str:
    """The reward that tells whether an episode's final message is right (what `rl` logs as
    accuracy): the environment class's `accuracy_reward`, else `verifier:math`."""
    name, *parts = spec.strip().split(":")
    accuracy = getattr(ENVIRONMENTS.get(name, (None, ""))[0], "accuracy_reward", "verifier:math")
    column = [p for p in parts if p.startswith("column=")]  # the gold the environment reads, the accuracy reads too
    return f"{accuracy}:{column[-1]}" if column and name in ENVIRONMENTS else accuracy


def build_env(spec: str) -> Callable[[], Any]:
    """A factory of fresh environments from a spec (`calculator:cost=0.05`), or from
    `module:attribute` naming a class or a zero-argument factory of your own."""
    import importlib

    from rewards.spec import split_args

    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an environment spec must be a non-empty string, got {spec!r}; built in: {', '.join(ENVIRONMENTS)}")
    name, *parts = spec.strip().split(":")
    if name in ENVIRONMENTS:
        cls, usage = ENVIRONMENTS[name]
        positional, keyword = split_args(parts)
        if positional:
            raise ValueError(f"environment spec {spec!r}: options are key=value; usage: {usage}")
        known = {f.name for f in cls.__dataclass_fields__.values() if f.init}
        unknown = sorted(set(keyword) - known)
        if unknown:
            raise ValueError(f"environment spec {spec!r}: unknown option {unknown[0]!r}{suggestion(unknown[0], sorted(known))}; "
                             f"usage: {usage}")
        cls(**keyword)  # check the options once, here
        return lambda: cls(**keyword)
    if len(parts) == 1 and parts[0].isidentifier():
        try:
            target = getattr(importlib.import_module(name), parts[0])
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"environment spec {spec!r}: cannot load {parts[0]!r} from {name!r} ({exc})") from None
        if not callable(target):
            raise ValueError(f"environment spec {spec!r}: {name}.{parts[0]} is not a class or a factory")
        return target
    raise ValueError(f"unknown environment {name!r}{suggestion(name, sorted(ENVIRONMENTS))}; built in: "
                     f"{', '.join(ENVIRONMENTS)}, or module:attribute for your own")
