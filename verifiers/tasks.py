"""Procedural, verifiable task families: unlimited, leakage-free, exactly checkable.

`ArithmeticTask` draws integer expressions like `123+456=` (answer `579`); difficulty is set by
operand size (`digits`) and number of steps (`n_terms - 1` operations). The held-out split is
fixed by a stable hash of the prompt, not by a seed, so a test problem can never appear in any
training sample, whatever seeds the caller uses.

The training side is cut the same way into pools that never share a prompt, by a second hash:
`rl` (the prompts RL trains on), `rm` (the prompts reward-model data is sampled on) and `rm_eval`
(the reward model's own validation, what its early stopping reads: never RL's held-out set).
`train` is every prompt outside `test` (supervised warm starts draw from it).

    test     1 in `heldout_every` prompts (crc32 of the expression; RL's held-out set)
    rm       1 in RM_POOL_EVERY of the rest (sha256 of the expression), less rm_eval
    rm_eval  1 in RM_EVAL_EVERY of the rm pool
    rl       everything else

With `worked=True` each row also gets a `solution`: the sum written out step by step, with the
terms added in a random order when every operator is `+` (`12+34+56=` -> `56+12=68 68+34=102`),
so a policy trained on it has many paths to one answer and its majority vote can beat its
greedy answer (self-consistency; what majority-vote rewards need). The final answer is the
number after the last `=`. The problems drawn are the same with and without `worked`.
With `tool_calls=P` a P% share of the rows' `solution` calls the calculator tool instead
(`<calc>734+289</calc><result>1023</result>1023`), the rest is the bare answer: SFT data for a
policy that has seen tool calls (the same problems again).

>>> task = ArithmeticTask(digits=2, n_terms=2, ops="+")
>>> rows = task.sample(3, seed=0, split="test")
>>> all(int(r["answer"]) == eval(r["expression"]) for r in rows)
True
>>> task.steps(rows[0])[-1][1] == int(rows[0]["answer"])
True
>>> pools = {s: {r["prompt"] for r in task.sample(100, seed=1, split=s)} for s in ("rl", "rm", "rm_eval")}
>>> pools["rl"] & pools["rm"], pools["rm"] & pools["rm_eval"], {task.pool_of(r["expression"]) for r in rows}
(set(), set(), {'test'})
>>> ArithmeticTask(digits=2, n_terms=3, worked=True).sample(1)[0]["solution"]
'97+5=102 102+41=143'
"""

from __future__ import annotations

import hashlib
import random
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterator

SPLITS = ("train", "test", "rl", "rm", "rm_eval")  # train = rl + rm + rm_eval
RM_POOL_EVERY = 5  # one training-side prompt in 5 belongs to the reward-model pools
RM_EVAL_EVERY = 10  # one reward-model prompt in 10 is the reward model's validation
STEP_SEPARATOR = " "  # worked solutions: `97+5=102 102+41=143`


def split_of(key: str, heldout_every: int) -> str:
    """`test` for 1 problem in `heldout_every` (crc32 of its key), else `train`."""
    return "test" if zlib.crc32(key.encode()) % heldout_every == 0 else "train"


def pool_of(key: str, heldout_every: int) -> str:
    """Which of the disjoint pools test / rl / rm / rm_eval a problem belongs to."""
    if split_of(key, heldout_every) == "test":
        return "test"
    digest = hashlib.sha256(f"rm-pool:{key}".encode()).digest()
    if int.from_bytes(digest[:8], "big") % RM_POOL_EVERY:
        return "rl"
    return "rm_eval" if int.from_bytes(digest[8:16], "big") % RM_EVAL_EVERY == 0 else "rm"


def in_split(key: str, split: str, heldout_every: int) -> bool:
    return split_of(key, heldout_every) == "train" if split == "train" else pool_of(key, heldout_every) == split


def draw_problems(task: Any, n: int, seed: int, split: str, key: str) -> Iterator[dict[str, Any]]:
    """`n` problems of `split` from `task._draw` with an RNG seeded by (seed, split, task); the
    problem's `key` field decides its split (test problems are distinct)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    rng = random.Random(f"{seed}-{split}-{task}")
    seen: set[str] = set()
    found = attempts = 0
    while found < n:
        attempts += 1
        if attempts > 1000 * (n + 10):
            raise ValueError(f"cannot draw {n} distinct {split} problems from {task}; make the task larger")
        row = task._draw(rng)
        if not in_split(row[key], split, task.heldout_every) or (split == "test" and row[key] in seen):
            continue
        seen.add(row[key])
        found += 1
        yield row


@dataclass(frozen=True)
class ArithmeticTask:
    digits: int = 3  # operands are uniform in [0, 10**digits)
    n_terms: int = 2  # number of operands (so n_terms - 1 steps)
    ops: str = "+"  # operators to draw from, a subset of "+-*"
    heldout_every: int = 10  # one prompt in `heldout_every` belongs to the test split (by hash)
    template: str = "{expression}="  # prompt format; `{expression}` is e.g. "12+7"
    # rows get a worked `solution` column; left out of the repr, which seeds the draws, so the
    # problems are the same either way
    worked: bool = field(default=False, repr=False)
    # percent of rows whose `solution` calls a calculator tool, `<calc>734+289</calc><result>1023</result>1023`
    # (the rest: the bare answer); a warm start for tool use (rewards.environments.CalculatorEnv)
    tool_calls: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.tool_calls <= 100 or (self.tool_calls and self.worked):
            raise ValueError(f"tool_calls is a percent (0-100) and does not go with worked, got tool_calls={self.tool_calls}, worked={self.worked}")
        if self.digits < 1 or self.n_terms < 2:
            raise ValueError(f"need digits >= 1 and n_terms >= 2, got digits={self.digits}, n_terms={self.n_terms}")
        if not self.ops or set(self.ops) - set("+-*"):
            raise ValueError(f"ops must be a non-empty subset of '+-*', got {self.ops!r}")
        if self.heldout_every < 2:
            raise ValueError("heldout_every must be >= 2")

    @property
    def step_separator(self) -> str:
        """What separates the steps of a worked solution (process reward models split on it)."""
        return STEP_SEPARATOR

    def split_of(self, expression: str) -> str:
        return split_of(expression, self.heldout_every)

    def pool_of(self, expression: str) -> str:
        """Which of the disjoint pools test / rl / rm / rm_eval the prompt belongs to."""
        return pool_of(expression, self.heldout_every)

    def in_split(self, expression: str, split: str) -> bool:
        return in_split(expression, split, self.heldout_every)

    def _draw(self, rng: random.Random) -> dict[str, Any]:
        hi = 10**self.digits - 1
        terms = [rng.randint(0, hi) for _ in range(self.n_terms)]
        ops = [rng.choice(self.ops) for _ in range(self.n_terms - 1)]
        expression = str(terms[0])
        for i, (op, t) in enumerate(zip(ops, terms[1:])):
            # evaluation is left to right; bracket the left side where precedence would differ
            if op == "*" and i > 0 and set(ops[:i]) & set("+-"):
                expression = f"({expression})"
            expression += f"{op}{t}"
        return {"terms": terms, "ops": ops, "expression": expression}

    def sample(self, n: int, seed: int = 0, split: str = "train") -> list[dict[str, Any]]:
        """`n` problems of `split` (train, test, rl, rm, rm_eval) as rows {prompt, answer,
        expression, terms, ops}. Test rows are distinct; the others may repeat (the space is
        sampled with replacement)."""
        order_rng = random.Random(f"{seed}-{split}-{self}-worked")
        rows: list[dict[str, Any]] = []
        for row in draw_problems(self, n, seed, split, key="expression"):
            row["answer"] = str(self.evaluate(row))
            row["prompt"] = self.template.format(expression=row["expression"])
            if self.worked:
                row["solution"] = self.solution(row, order_rng)
            elif self.tool_calls:
                tool = order_rng.random() * 100 < self.tool_calls
                row["solution"] = f"<calc>{row['expression']}</calc><result>{row['answer']}</result>{row['answer']}" if tool else row["answer"]
            rows.append(row)
        return rows

    @staticmethod
    def solution(row: dict[str, Any], rng: random.Random | None = None) -> str:
        """The worked steps as text, `a+b=s s+c=t ...`; with `rng` and only `+` operators the
        terms are added in a random order (any order gives the same sum)."""
        if rng is not None and set(row["ops"]) == {"+"}:
            terms = list(row["terms"])
            rng.shuffle(terms)
            row = {**row, "terms": terms}
        return STEP_SEPARATOR.join(f"{lhs}={value}" for lhs, value in ArithmeticTask.steps(row))

    @staticmethod
    def evaluate(row: dict[str, Any]) -> int:
        return ArithmeticTask.steps(row)[-1][1] if len(row["terms"]) > 1 else row["terms"][0]

    @staticmethod
    def steps(row: dict[str, Any]) -> list[tuple[str, int]]:
        """Left-to-right worked steps [("123+456", 579), ("579*2", 1158), ...]; the expression
        carries brackets wherever left-to-right order differs from operator precedence."""
        value = row["terms"][0]
        out = []
        for op, t in zip(row["ops"], row["terms"][1:]):
            new = value + t if op == "+" else value - t if op == "-" else value * t
            out.append((f"{value}{op}{t}", new))
            value = new
        return out


# ---------------------------------------------------------------- a procedural code task
FUNCTION_NAMES = ("f", "g", "h", "p", "q")
FUNCTION_ARGS = ("a,b", "x,y", "m,n", "u,v")
EOS_TEXT = "<eos>"  # how the character tokenizer's end-of-sequence token is written in text (`training.tokenizer`)


@dataclass(frozen=True)
class FunctionTask:
    """Write a two-argument function whose behaviour is given by hidden tests: `write g(x,y)` ->
    `def g(x,y):return x*y`, the operator one of `ops`, checked by `n_tests` asserts on one-digit
    arguments (`assert g(3, 4) == 12`), each of which tells the operators apart. The prompt does
    not say which operator: a first attempt is a guess (right 1 time in len(ops)), and the failing
    test a code environment returns (`rewards.environments.CodeEnv`) tells the second attempt
    which one it is, a test-driven loop a small policy can learn. The rows are code data in the
    shape the code verifier reads: `answer` holds the asserts, `kind` is "code".

    With `retry=P` each row also gets the `solution` a policy should write next (SFT data for a
    policy that has seen the loop): in P% of the rows the prompt already holds a wrong first
    attempt, the end of that turn (`<eos>`) and the environment's feedback, and the solution is
    the right program; in the rest the solution is the first guess, the first of `ops`.

    >>> task = FunctionTask()
    >>> row = task.sample(1, seed=0, split="test")[0]
    >>> row["prompt"], row["answer"].splitlines()[0]
    ('write q(m,n)\\n', 'assert q(3, 9) == 12')
    >>> task.program(row, row["op"])
    'def q(m,n):return m+n'
    >>> FunctionTask(retry=100).sample(1, seed=0, split="test")[0]["prompt"].split(EOS_TEXT)
    ['write q(m,n)\\ndef q(m,n):return m-n', '<feedback>test 1/1: AssertionError at test line 1: assert q(3, 9) == 12</feedback>']
    """

    ops: str = "+-*"  # the operators a function may use
    n_tests: int = 3  # asserts per problem
    heldout_every: int = 10  # one problem in `heldout_every` belongs to the test split (by hash)
    retry: int = field(default=0, repr=False)  # percent of second-try rows in SFT data (see above)

    def __post_init__(self) -> None:
        if len(self.ops) < 2 or len(set(self.ops)) != len(self.ops) or set(self.ops) - set("+-*"):
            raise ValueError(f"ops must be two or three distinct operators of '+-*', got {self.ops!r}")
        if not 1 <= self.n_tests <= 10:
            raise ValueError(f"n_tests must be 1-10, got {self.n_tests}")
        if not 0 <= self.retry <= 100:
            raise ValueError(f"retry is a percent (0-100), got {self.retry}")
        if self.heldout_every < 2:
            raise ValueError("heldout_every must be >= 2")

    @staticmethod
    def apply(op: str, a: int, b: int) -> int:
        return a + b if op == "+" else a - b if op == "-" else a * b

    def _draw(self, rng: random.Random) -> dict[str, Any]:
        name, args, op = rng.choice(FUNCTION_NAMES), rng.choice(FUNCTION_ARGS), rng.choice(self.ops)
        cases: list[tuple[int, int]] = []
        while len(cases) < self.n_tests:  # every case tells every pair of operators apart
            a, b = rng.randint(0, 9), rng.randint(0, 9)
            if len({self.apply(o, a, b) for o in self.ops}) == len(self.ops):
                cases.append((a, b))
        tests = "\n".join(f"assert {name}({a}, {b}) == {self.apply(op, a, b)}" for a, b in cases)
        prompt = f"write {name}({args})\n"
        return {"name": name, "args": args, "op": op, "answer": tests, "kind": "code", "prompt": prompt, "key": prompt + tests}

    @staticmethod
    def program(row: dict[str, Any], op: str) -> str:
        x, y = row["args"].split(",")
        return f"def {row['name']}({row['args']}):return {x}{op}{y}"

    @staticmethod
    def feedback(row: dict[str, Any]) -> str:
        """What the code environment returns for an attempt that fails the first test."""
        return f"<feedback>test 1/1: AssertionError at test line 1: {row['answer'].splitlines()[0]}</feedback>"

    def sample(self, n: int, seed: int = 0, split: str = "train") -> list[dict[str, Any]]:
        """`n` problems of `split` (train, test, rl, rm, rm_eval) as rows {prompt, answer (the
        asserts), kind, name, args, op}; test rows are distinct."""
        retry_rng = random.Random(f"{seed}-{split}-{self}-retry")
        rows: list[dict[str, Any]] = []
        for row in draw_problems(self, n, seed, split, key="key"):
            del row["key"]
            if self.retry:
                if retry_rng.random() * 100 < self.retry:
                    first = retry_rng.choice([o for o in self.ops if o != row["op"]])
                    row["prompt"] += self.program(row, first) + EOS_TEXT + self.feedback(row)
                    row["solution"] = self.program(row, row["op"])
                else:
                    row["solution"] = self.program(row, self.ops[0])
            rows.append(row)
        return rows
