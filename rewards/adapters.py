"""Adapters: our rewards inside other RL frameworks.

- TRL: nothing to adapt - every reward is a valid item of `GRPOTrainer(reward_funcs=[...])` (same
  signature, extra keyword arguments accepted, `__name__` set, metrics sent to `log_metric`).
  `trl_reward_funcs(reward)` unpacks a `Combine` into `reward_funcs` / `reward_weights`. Async
  rewards (`async def`) are passed through as they are: TRL awaits them together on its event loop.
  TRL runs blocking rewards one after another; `trl_reward_funcs(reward, concurrent=True)` wraps
  them as async callables (run on threads) so that TRL overlaps them too.
  `trl_environment("calculator")` gives an environment of `rewards.environments` in TRL's
  `environment_factory` shape (a class with `reset(**row)` and its tools as public methods) and the
  reward function that scores the episode's final message with that environment.
- verl: `as_verl_compute_score(reward)` -> `compute_score(data_source, solution_str, ground_truth,
  extra_info=None, **kw)`, and `as_verl_batch_compute_score` for verl's batch reward manager.
  Environments: `verl_env_tools(env)` gives one verl tool class per tool of the environment (the
  `BaseTool` lifecycle its `ToolAgentLoop` drives: create with the row's `create_kwargs`, execute,
  release), and `as_verl_env_compute_score(env)` the final reward of the agent loop's response.
- OpenRLHF: `as_openrlhf_reward_func(reward)` -> `reward_func(queries, prompts, labels, **kw)`
  returning `{"rewards", "scores", "extra_logs"}`; the HTTP service (`rewards.service`) answers
  OpenRLHF's remote-RM requests with the same function.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Sequence

from rewards.base import reward_metrics
from rewards.concurrent import call_reward


def trl_reward_funcs(reward: Any, concurrent: bool = False) -> dict[str, list[Any]]:
    """`{"reward_funcs": [...], "reward_weights": [...]}` for TRL: a `Combine`'s components with their
    weights, or any other reward alone with weight 1. Async rewards stay async (TRL awaits them
    concurrently); `concurrent=True` also makes the blocking ones async (each runs on a thread), so
    TRL scores with all of them at once.

    >>> from rewards import build_reward
    >>> from rewards.concurrent import is_async_reward
    >>> args = trl_reward_funcs(build_reward("format:integer*1+length:target=4*0.1"))
    >>> [f.__name__ for f in args["reward_funcs"]], args["reward_weights"]
    (['format', 'length'], [1.0, 0.1])
    >>> [is_async_reward(f) for f in trl_reward_funcs(build_reward("format:integer"), concurrent=True)["reward_funcs"]]
    [True]
    """
    from rewards.concurrent import as_async

    as_trl = getattr(reward, "as_trl", None)
    args = as_trl() if callable(as_trl) else {"reward_funcs": [reward], "reward_weights": [1.0]}
    if concurrent:
        args["reward_funcs"] = [as_async(f) for f in args["reward_funcs"]]
    return args


def _number(value: Any, none_score: float) -> tuple[float, bool]:
    """(float, was_none) - verl and OpenRLHF need a number for every sample."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return none_score, True
    return float(value), False


def as_verl_compute_score(reward: Any, answer_column: str = "answer", none_score: float = 0.0,
                          return_dict: bool = True) -> Callable[..., Any]:
    """A verl `compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw)`.

    The gold goes to the reward as column `answer_column`; `extra_info["prompt"]` (if any) as the
    prompt and the other `extra_info` entries as columns. Returns a dict with `score` and the
    reward's metrics (`not_applicable` is 1.0 when the reward gave None, scored as `none_score`),
    or a bare float with `return_dict=False`.

    >>> from rewards import build_reward
    >>> compute_score = as_verl_compute_score(build_reward("format:integer"), return_dict=False)
    >>> compute_score("arith", "579", "579")
    1.0
    """

    def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict | None = None, **kw: Any) -> Any:
        extra = dict(extra_info or {})
        prompt = extra.pop("prompt", "")
        columns = {k: [v] for k, v in extra.items() if isinstance(k, str)}
        columns[answer_column] = [ground_truth]
        columns.setdefault("data_source", [data_source])
        value, was_none = _number(call_reward(reward, [prompt], [solution_str], **columns)[0], none_score)
        if not return_dict:
            return value
        metrics = {k: float(v) for k, v in reward_metrics(reward).items() if isinstance(v, (int, float))}
        return {"score": value, "not_applicable": float(was_none), **metrics}

    compute_score.__name__ = f"compute_score_{getattr(reward, '__name__', 'reward')}"
    return compute_score


def as_verl_batch_compute_score(reward: Any, answer_column: str = "answer", none_score: float = 0.0) -> Callable[..., list[float]]:
    """verl's batched form `compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kw)`
    -> one float per sample (one reward call for the whole batch).

    >>> from rewards import build_reward
    >>> as_verl_batch_compute_score(build_reward("format:integer"))(["a", "a"], ["5", "five"], ["5", "5"], [None, None])
    [1.0, 0.0]
    """

    def compute_score(data_sources: Sequence[str], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                      extra_infos: Sequence[dict | None] | None = None, **kw: Any) -> list[float]:
        extras = [dict(e or {}) for e in (extra_infos or [None] * len(solution_strs))]
        prompts = [e.pop("prompt", "") for e in extras]
        keys = sorted({k for e in extras for k in e} - {answer_column})
        columns = {k: [e.get(k) for e in extras] for k in keys}
        columns[answer_column] = list(ground_truths)
        columns.setdefault("data_source", list(data_sources))
        return [_number(v, none_score)[0] for v in call_reward(reward, prompts, list(solution_strs), **columns)]

    return compute_score


def split_query(query: str, prompt: str) -> str:
    """The response part of an OpenRLHF query (prompt + response).

    >>> split_query("1+1=2", "1+1="), split_query("<s>1+1=2", "1+1=")
    ('2', '2')
    """
    if query.startswith(prompt):
        return query[len(prompt):]
    at = query.find(prompt) if prompt else -1
    return query[at + len(prompt):] if at >= 0 else query


def as_openrlhf_reward_func(reward: Any, label_column: str = "answer", none_score: float = 0.0) -> Callable[..., dict[str, Any]]:
    """An OpenRLHF `reward_func(queries, prompts, labels, **kw)`.

    `queries` are prompt + response texts; the response is what follows the prompt. `labels` go to
    the reward as column `label_column`. Returns `{"rewards": [...], "scores": [...], "extra_logs":
    {...}}` (lists of floats; OpenRLHF turns them into tensors); a None reward becomes `none_score`
    and is counted in `extra_logs["not_applicable"]`.

    >>> from rewards import build_reward
    >>> out = as_openrlhf_reward_func(build_reward("format:integer"))(["1+1=2", "1+1=two"], ["1+1=", "1+1="], ["2", "2"])
    >>> out["rewards"], out["extra_logs"]["format/match_frac"]
    ([1.0, 0.0], 0.5)
    """

    def reward_func(queries: Sequence[str], prompts: Sequence[str] | None = None, labels: Sequence[Any] | None = None,
                    **kw: Any) -> dict[str, Any]:
        prompts, completions, columns = openrlhf_inputs(queries, prompts, labels, kw, label_column)
        raw = list(call_reward(reward, prompts, completions, **columns))
        return openrlhf_outputs(reward, raw, reward_metrics(reward), none_score)

    return reward_func


def openrlhf_inputs(queries: Sequence[str], prompts: Sequence[str] | None, labels: Sequence[Any] | None, extra: dict[str, Any],
                    label_column: str = "answer") -> tuple[list[str], list[str], dict[str, list[Any]]]:
    """(prompts, completions, columns) of an OpenRLHF request: the response is what follows the
    prompt in each query; `labels` become column `label_column`; other list fields of the right
    length become columns too."""
    if prompts is None:  # older OpenRLHF sends only the queries: the whole query is the completion
        prompts = [""] * len(queries)
    if len(queries) != len(prompts):
        raise ValueError(f"OpenRLHF request: {len(queries)} queries but {len(prompts)} prompts; send one prompt per query")
    completions = [split_query(q, p) for q, p in zip(queries, prompts)]
    columns = {k: list(v) for k, v in extra.items() if isinstance(v, (list, tuple)) and len(v) == len(queries)}
    if labels is not None:
        if len(labels) != len(queries):
            raise ValueError(f"OpenRLHF request: {len(labels)} labels for {len(queries)} queries")
        columns[label_column] = list(labels)
    return list(prompts), completions, columns


def openrlhf_outputs(reward: Any, values: Sequence[Any], metrics: dict[str, Any], none_score: float = 0.0) -> dict[str, Any]:
    """OpenRLHF's answer `{"rewards", "scores", "extra_logs"}` for the reward's `values` and `metrics`."""
    from rewards.combine import Combine

    pairs = [_number(v, none_score) for v in values]
    rewards = [v for v, _ in pairs]
    # a Combine's metrics are already named per component; others get the reward's name
    prefix = "" if isinstance(reward, Combine) else f"{getattr(reward, '__name__', 'reward')}/"
    extra_logs = {prefix + k: float(v) for k, v in metrics.items() if isinstance(v, (int, float))}
    extra_logs["not_applicable"] = float(sum(none for _, none in pairs))
    return {"rewards": rewards, "scores": rewards, "extra_logs": extra_logs}


def trl_environment(env: Any) -> dict[str, Any]:
    """`{"environment_factory": cls, "reward_funcs": [fn]}` for TRL's `GRPOTrainer`, from an
    environment spec (`"calculator"`) or factory of `rewards.environments`.

    TRL makes one `cls()` per rollout, calls `reset(**row)` with the dataset row, offers the public
    methods as tools (their signatures and docstrings are the schemas; here the environment's
    `tools()`), and runs the tool calls it parses from the model's chat template. `fn(prompts,
    completions, environments=..., **columns)` then gives each rollout's environment the final
    assistant message as the answer (`step`) and returns its `reward()`: the environment owns the
    reward, as in `rewardlab rl --env`, and reads only what the policy wrote.

    >>> args = trl_environment("calculator")
    >>> env = args["environment_factory"]()
    >>> env.reset(prompt="734+289=", answer="1023"), env.calculator("734+289")
    (None, '1023')
    >>> args["reward_funcs"][0](["734+289="], [[{"role": "assistant", "content": "1023"}]], environments=[env])
    [1.0]
    """
    import functools

    from rewards.environments import build_env, final_reward, resolve, run_step

    factory = build_env(env) if isinstance(env, str) else env
    probe = factory()
    tools = list(probe.tools()) if callable(getattr(probe, "tools", None)) else []
    name = env.split(":")[0] if isinstance(env, str) else type(probe).__name__

    class TRLEnvironment:
        def __init__(self) -> None:
            self.env = factory()

        def reset(self, **row: Any) -> str | None:
            self.env = factory()
            return resolve(self.env.reset(row))

    TRLEnvironment.__name__ = TRLEnvironment.__qualname__ = f"TRL_{name}"
    for tool in tools:
        def call(self, *args: Any, _name: str = tool.__name__, **kwargs: Any) -> Any:
            return getattr(self.env, _name)(*args, **kwargs)

        # the environment's own signature and docstring (inspect follows __wrapped__): TRL's tool schema
        setattr(TRLEnvironment, tool.__name__, functools.update_wrapper(call, getattr(type(probe), tool.__name__)))

    def reward(prompts: Sequence[Any], completions: Sequence[Any], environments: Sequence[Any] | None = None, **_: Any) -> list[float | None]:
        if environments is None or len(environments) != len(completions):
            raise ValueError(f"env_{name}: TRL passes the rollouts' environments as `environments=`; got "
                             f"{'none' if environments is None else len(environments)} for {len(completions)} completions "
                             "(pass environment_factory=... to GRPOTrainer together with this reward)")
        out = []
        for holder, completion in zip(environments, completions):
            inner = getattr(holder, "env", holder)
            run_step(inner, _final_message(completion))
            out.append(final_reward(inner))
        return out

    reward.__name__ = f"env_{name}"
    return {"environment_factory": TRLEnvironment, "reward_funcs": [reward]}


def _final_message(completion: Any) -> str:
    """The text of a completion's last assistant message (a string completion is itself)."""
    if isinstance(completion, str):
        return completion
    for message in reversed(list(completion)):
        if message.get("role") == "assistant":
            content = message.get("content") or ""
            return content if isinstance(content, str) else "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


VERL_TOOL_RESPONSE_END = "</tool_response>"  # where the last tool result ends in a Hermes-format (verl's default) response
_TOOL_RESPONSE = re.compile(r"(<tool_response>.*?</tool_response>)", re.S)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)  # verl's Hermes parser's pattern
VERL_MAX_EPISODES = 65536  # open verl trajectories kept per environment (the least recently used goes past it)
VERL_EPISODE_TTL = 3600.0  # seconds a trajectory's environment is kept after its last tool call


class VerlEpisodes:
    """The environments of verl trajectories, keyed by the trajectory, not by the tool instance.

    verl's `ToolAgentLoop` creates and releases a tool instance around every call, so an
    environment per instance would start afresh each time (every budget reset, the cost lost).
    Here one trajectory - verl's `agent_data.request_id`, which `execute` receives, or an
    `instance_id` the caller assigns at `create` (a request id, as verl's older rollouts pass) -
    owns one environment from its first call on, shared by all the environment's tools: one
    budget, one cost, one episode. A caller-assigned id ends at its `release`; the others when
    `VERL_MAX_EPISODES` newer trajectories have come, or `VERL_EPISODE_TTL` seconds after their last call.
    """

    def __init__(self, factory: Callable[[], Any], max_episodes: int = VERL_MAX_EPISODES, ttl: float = VERL_EPISODE_TTL) -> None:
        from collections import OrderedDict

        self.factory, self.max_episodes, self.ttl = factory, max_episodes, ttl
        self.open: "OrderedDict[str, list]" = OrderedDict()  # trajectory -> [environment, last use]

    def get(self, key: str, row: dict) -> Any:
        """The trajectory's environment, reset on `row` at its first call."""
        import time

        from rewards.environments import resolve

        now = time.monotonic()
        while self.open and now - next(iter(self.open.values()))[1] > self.ttl:  # ordered by last use
            self.open.popitem(last=False)
        entry = self.open.get(key)
        if entry is None:
            while len(self.open) >= self.max_episodes:
                self.open.popitem(last=False)
            env = self.factory()
            resolve(env.reset(dict(row)))
            entry = self.open[key] = [env, now]
        entry[1] = now
        self.open.move_to_end(key)
        return entry[0]

    def end(self, key: str) -> None:
        self.open.pop(key, None)


def trajectory_key(instance_id: str, agent_data: Any, assigned: bool) -> str:
    """What names a verl trajectory: `agent_data.request_id` (verl's agent loop passes it to
    `execute`), else an `instance_id` the caller assigned; ValueError without either, since a
    per-call instance cannot hold an episode's budget."""
    request_id = getattr(agent_data, "request_id", None) or (agent_data.get("request_id") if isinstance(agent_data, dict) else None)
    if request_id:
        return f"request:{request_id}"
    if assigned:
        return f"instance:{instance_id}"
    raise ValueError("this tool's episode is the trajectory's, and the call names none: verl's agent loop passes "
                     "agent_data (its request_id) to execute; other callers pass their own instance_id to create")


def verl_env_tools(env: Any) -> list[type]:
    """One verl tool class per tool of an environment (spec or factory), for `ToolAgentLoop`: put
    `CalculatorTool, = verl_env_tools("calculator")` in a module of yours and name
    `yourmodule.CalculatorTool` as `class_name` in the tool config that
    `actor_rollout_ref.rollout.multi_turn.tool_config_path` points at (verl builds it with
    `config=` and `tool_schema=`; without a schema it uses ours).

    Each class follows verl's `BaseTool` lifecycle (subclassing it when verl is installed):
    `create(instance_id=None, create_kwargs={row})`, `execute(instance_id, parameters,
    agent_data=...)` -> `(ToolResponse, step reward, metrics)` - the step reward is minus the
    environment's per-call cost, `tool_error` in the metrics - and `release(instance_id)`. The
    environment belongs to the trajectory (`VerlEpisodes`): verl's per-call create / release keeps
    one episode, its budgets and its cost across all the trajectory's calls, of every tool of the
    environment. Its schema is the tool's signature and docstring.

    >>> import asyncio
    >>> (Tool,) = verl_env_tools("calculator:cost=0.1,max_calls=1")
    >>> tool = Tool({}, None)
    >>> tool.name
    'calculator'
    >>> async def call(expression):  # verl's per-call lifecycle, one trajectory (request id r1)
    ...     iid, _ = await tool.create(create_kwargs={"answer": "1023"})
    ...     try:
    ...         return await tool.execute(iid, {"expression": expression}, agent_data={"request_id": "r1"})
    ...     finally:
    ...         await tool.release(iid)
    >>> response, step_reward, metrics = asyncio.run(call("734+289"))
    >>> response.text, step_reward, metrics
    ('1023', -0.1, {'tool_error': 0.0})
    >>> asyncio.run(call("734+289"))[0].text  # the trajectory's budget holds across instances
    'error: too many calls'
    """
    from rewards.environments import build_env

    factory = build_env(env) if isinstance(env, str) else env
    probe = factory()
    tools = list(probe.tools()) if callable(getattr(probe, "tools", None)) else []
    if not tools:
        raise ValueError(f"{type(probe).__name__} has no tools() to offer verl's agent loop; use as_verl_env_compute_score for its reward")
    episodes = VerlEpisodes(factory)  # shared by the environment's tools: one episode per trajectory
    classes = []
    for tool in tools:
        tool_name = tool.__name__
        schema_dict = _json_schema(getattr(type(probe), tool_name))

        classes.append(_verl_tool_class(tool_name, schema_dict, episodes))
    return classes


def _verl_tool_class(tool_name: str, schema_dict: dict, episodes: "VerlEpisodes") -> type:
    """verl's `BaseTool` for one tool of an environment (see `verl_env_tools`)."""
    import uuid

    from rewards.environments import resolve

    base, schema_cls, response_cls = _verl_types()

    class EnvTool(base):  # type: ignore[misc, valid-type]
        def __init__(self, config: dict, tool_schema: Any = None, _schema: dict = schema_dict) -> None:
            self.config, self.calls, self.episodes = dict(config or {}), {}, episodes
            if tool_schema is None:  # verl passes the schema from its tool config; else ours
                tool_schema = schema_cls.model_validate(_schema) if hasattr(schema_cls, "model_validate") else _schema
            self.tool_schema = tool_schema
            self.name = _schema["function"]["name"]

        def get_openai_tool_schema(self) -> Any:
            return self.tool_schema

        async def create(self, instance_id: str | None = None, create_kwargs: dict | None = None, **kwargs: Any) -> Any:
            assigned = instance_id is not None
            instance_id = instance_id or str(uuid.uuid4())
            self.calls[instance_id] = (dict(create_kwargs or kwargs.get("create_kwargs") or {}), assigned)
            return instance_id, response_cls()

        async def execute(self, instance_id: str, parameters: dict, _name: str = tool_name, agent_data: Any = None,
                          **kwargs: Any) -> Any:
            row, assigned = self.calls[instance_id]
            instance = self.episodes.get(trajectory_key(instance_id, agent_data, assigned), row)
            errors, calls = getattr(instance, "errors", 0), getattr(instance, "calls", 0)
            output = resolve(getattr(instance, _name)(**dict(parameters or {})))
            cost = float(getattr(instance, "cost", 0.0) or 0.0) * (getattr(instance, "calls", 0) - calls)
            return response_cls(text=str(output)), -cost, {"tool_error": float(getattr(instance, "errors", 0) > errors)}

        async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
            return 0.0  # the episode's reward is the environment's, from the final answer (as_verl_env_compute_score)

        async def release(self, instance_id: str, **kwargs: Any) -> None:
            _, assigned = self.calls.pop(instance_id, (None, False))
            if assigned:  # the caller's own id names the trajectory: released at its end
                self.episodes.end(f"instance:{instance_id}")

    EnvTool.__name__ = EnvTool.__qualname__ = f"Verl_{tool_name}"
    return EnvTool


def verl_transcript(solution_str: str) -> tuple[list[tuple[str, Any]], str]:
    """(the tool calls verl executed, in order, as (name, arguments); the final answer) of a
    Hermes-format response (verl's default). A call was executed when a `<tool_response>` answers
    it: each response answers the next pending call of the policy's last turn with calls (verl runs
    the first `max_parallel_calls` of a turn; calls left without a response never ran). Calls are
    read as verl's parser reads them (a JSON object with `name` and `arguments`; others skipped),
    only from the policy's text, never from inside a tool response. The final answer is the text
    after the last tool response.

    >>> verl_transcript('<tool_call>{"name": "calculator", "arguments": {"expression": "1+2"}}</tool_call>'
    ...                 '<tool_response>3</tool_response>3')
    ([('calculator', {'expression': '1+2'})], '3')
    """
    executed, pending = [], []
    for piece in _TOOL_RESPONSE.split(solution_str):
        if piece.startswith("<tool_response>") and piece.endswith(VERL_TOOL_RESPONSE_END):
            if pending:
                executed.append(pending.pop(0))
            continue
        calls = []
        for match in _TOOL_CALL.findall(piece):
            try:
                call = json.loads(match)
                calls.append((call["name"], call["arguments"]))
            except (ValueError, TypeError, KeyError, RecursionError):
                continue
        if calls:
            pending = calls
    return executed, solution_str.rpartition(VERL_TOOL_RESPONSE_END)[2].strip()


def as_verl_env_compute_score(env: Any, answer_column: str = "answer") -> Callable[..., float]:
    """verl's `compute_score` for an environment's episodes: a fresh environment is reset on the row
    (`ground_truth` as `answer_column`, `extra_info` as the other columns), the episode is replayed
    from the response - the tool calls verl executed (`verl_transcript`), in order, so the budget
    and the per-call cost are the trajectory's - and given the final answer, the text after the last
    tool result (`</tool_response>` in verl's Hermes format), so a tool's output in the transcript
    is never read as the answer; its `reward()` is returned. verl may score in another process than
    the one its tools ran in, so the reward is rebuilt from the transcript alone: the same reward
    `rewardlab rl --env` gives the same episode.

    >>> score = as_verl_env_compute_score("calculator:cost=0.1")
    >>> call = '<tool_call>{"name": "calculator", "arguments": {"expression": "734+289"}}</tool_call>'
    >>> score("arith", call + '<tool_response>1023</tool_response>1023', "1023")
    0.9
    >>> score("arith", call + '<tool_response>1023</tool_response>', "1023")
    -0.1
    """
    from rewards.environments import build_env, final_reward, resolve, run_step

    factory = build_env(env) if isinstance(env, str) else env

    def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict | None = None, **kw: Any) -> float:
        instance = factory()
        resolve(instance.reset({**dict(extra_info or {}), answer_column: ground_truth}))
        calls, answer = verl_transcript(solution_str)
        tools = {t.__name__: t for t in (instance.tools() if callable(getattr(instance, "tools", None)) else [])}
        for name, arguments in calls:
            if name in tools and isinstance(arguments, dict):
                try:
                    resolve(tools[name](**arguments))
                except TypeError:  # arguments the tool does not take: verl's call failed the same way, nothing ran
                    continue
        run_step(instance, answer)
        return _number(final_reward(instance), 0.0)[0]

    return compute_score


def _verl_types() -> tuple[Any, Any, Any]:
    """verl's (BaseTool, OpenAIFunctionToolSchema, ToolResponse) when verl is installed, else
    stand-ins with the same fields (the class then follows the same protocol, duck-typed)."""
    try:
        from verl.tools.base_tool import BaseTool
        from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

        return BaseTool, OpenAIFunctionToolSchema, ToolResponse
    except ImportError:
        from dataclasses import dataclass

        @dataclass
        class ToolResponse:  # verl.tools.schemas.ToolResponse's fields
            text: str | None = None
            image: Any = None
            video: Any = None

        return object, dict, ToolResponse


def _json_schema(fn: Callable[..., Any]) -> dict:
    """The OpenAI function schema of a documented, typed function (transformers' reader, as TRL's and verl's)."""
    from transformers.utils import get_json_schema

    schema = get_json_schema(fn)
    schema["function"].pop("return", None)
    return schema
