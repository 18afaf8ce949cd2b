"""One episode, four trainers: the reward `rewardlab rl --env` computes for a transcript (its own
multi-turn rollout, `sample_episodes`, driven by a policy that writes the transcript) equals what
verl receives for the same episode (its per-call tool lifecycle, then `compute_score` on the
Hermes-format response), what a NeMo Gym agent gets from `serve-env` (its own request shapes,
cookies only) and what the gym-style `/step` returns with `done: true`.

Generated episodes: every combination of tool calls (right, failing, past `max_calls`) and a right
or wrong final answer, with a per-call cost, so the budget and the cost must survive each trainer's
lifecycle for the rewards to agree."""

from __future__ import annotations

import asyncio
import itertools
import json
from types import SimpleNamespace

import pytest
import torch
from starlette.testclient import TestClient

from rewards.adapters import as_verl_env_compute_score, verl_env_tools
from rewards.env_service import COOKIE, create_env_app
from rewards.environments import build_env
from training.episodes import episode_scores, sample_episodes
from training.policy import tiny_policy, widen_vocabulary
from training.tokenizer import TOOL_CHARS

SPEC = "calculator:cost=0.1,max_calls=2"
PROMPT = "734+289="
ROW = {"prompt": PROMPT, "answer": "1023"}
EPISODES = [(calls, answer) for n in (0, 1, 3) for calls in itertools.combinations(["734+289", "1/0", "2*3"], n)
            for answer in ("1023", "1022")]


class ScriptedPolicy(torch.nn.Module):
    """A policy that writes a given transcript: the tiny model's forward (its KV cache), with logits
    that put the next character of `script` (policy turns and the environment's observations) first,
    and EOS at its end. The rollout appends the observations itself; the policy only follows."""

    def __init__(self, inner, tokenizer, prompt, script):
        super().__init__()
        self.inner, self.tok, self.script = inner, tokenizer, script
        self.config, self.generation_config = inner.config, inner.generation_config
        self.prompt_len = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        self.context: list[int] = []

    def forward(self, input_ids, attention_mask=None, position_ids=None, cache=None, use_cache=True, logits_to_keep=1):
        out = self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         cache=cache, use_cache=use_cache, logits_to_keep=logits_to_keep)
        if cache is None:  # a prefill: the whole context
            self.context = input_ids[0][attention_mask[0].bool()].tolist()
        else:
            self.context += input_ids[0].tolist()
        written = self.tok.decode(self.context[self.prompt_len:], skip_special_tokens=True)
        assert self.script.startswith(written), (written, self.script)
        nxt = self.tok.eos_token_id if written == self.script else self.tok.convert_tokens_to_ids(self.script[len(written)])
        logits = torch.full_like(out.logits, -1e4)
        logits[..., nxt] = 1e4
        out.logits = logits
        return out


def rl_reward(calls, answer):
    """`rl --env`'s own reward for the episode: its rollout with a policy that writes these turns."""
    turns = [f"<calc>{c}</calc>" for c in calls] + [answer]
    reference = build_env(SPEC)()  # the observations the rollout will append, to script the policy
    reference.reset(ROW)
    script = "".join(t + (reference.step(t).observation or "") for t in turns)
    model, tok = tiny_policy(seed=0)
    model, tok = widen_vocabulary(model, tok, TOOL_CHARS)
    policy = ScriptedPolicy(model, tok, PROMPT, script)
    rollout = sample_episodes(policy, tok, [PROMPT], [ROW], build_env(SPEC), num_samples=1, max_turns=len(turns),
                              max_new_tokens=24, temperature=0)
    episode = rollout.episodes[0]
    assert episode.answered and episode.final_message == answer and episode.tool_calls == len(calls)
    return episode_scores(rollout.episodes).totals[0]


def verl_reward(calls, answer, request_id):
    """verl's: its ToolAgentLoop's per-call create / execute(agent_data) / release for each call,
    the Hermes-format response, then compute_score on it (in a fresh environment: verl may score
    in another process)."""
    (Tool,) = verl_env_tools(SPEC)
    tool = Tool(config={"type": "native"}, tool_schema=None)
    agent_data = SimpleNamespace(request_id=request_id)

    async def call_tool(arguments):
        instance_id, _ = await tool.create(create_kwargs=ROW)
        try:
            return await tool.execute(instance_id, json.loads(arguments), agent_data=agent_data)
        finally:
            await tool.release(instance_id)

    response, costs = "", []
    for c in calls:
        arguments = json.dumps({"expression": c})
        out, step_reward, _ = asyncio.run(call_tool(arguments))
        costs.append(step_reward)
        response += (f'<tool_call>\n{{"name": "calculator", "arguments": {arguments}}}\n</tool_call>'
                     f"user\n<tool_response>\n{out.text}\n</tool_response>\nassistant\n")
    assert sum(costs) == pytest.approx(-0.1 * len(calls))  # the cost verl's tool_rewards carry
    return as_verl_env_compute_score(SPEC)("arithmetic", response + answer, ROW["answer"], {"prompt": PROMPT})


def nemo_gym_reward(client, calls, answer):
    """A NeMo Gym simple agent's episode: top-level seed, tool calls with cookies only, /verify with
    its BaseVerifyRequest; the reward of its BaseVerifyResponse."""
    run_request = {"responses_create_params": {"input": [{"role": "user", "content": PROMPT}]}, "answer": "1023"}
    cookie = client.post("/seed_session", json=run_request).cookies.get(COOKIE)
    output = []
    for i, c in enumerate(calls):
        client.cookies.clear()
        r = client.post("/calculator", json={"expression": c}, headers={"cookie": f"{COOKIE}={cookie}"})
        cookie = r.cookies.get(COOKIE)
        output += [{"type": "function_call", "name": "calculator", "arguments": json.dumps({"expression": c}), "call_id": f"c{i}"},
                   {"type": "function_call_output", "call_id": f"c{i}", "output": r.text}]
    output.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]})
    client.cookies.clear()
    verified = client.post("/verify", json={**run_request, "response": {"output": output}}, headers={"cookie": f"{COOKIE}={cookie}"})
    assert verified.status_code == 200, verified.text
    return verified.json()["reward"]


def gym_step_reward(client, calls, answer):
    sid = client.post("/reset", json={"task": ROW}).json()["session_id"]
    for c in calls:
        assert not client.post("/step", json={"session_id": sid, "message": f"<calc>{c}</calc>"}).json()["done"]
    last = client.post("/step", json={"session_id": sid, "message": answer}).json()
    assert last["done"]
    return last["reward"]


def test_one_episode_gets_the_same_reward_from_rl_verl_nemo_gym_and_step():
    client = TestClient(create_env_app(build_env(SPEC), SPEC), base_url="http://127.0.0.1:8000")
    rewards = {}
    for k, (calls, answer) in enumerate(EPISODES):
        got = {"rl": rl_reward(calls, answer), "verl": verl_reward(calls, answer, f"r{k}"),
               "nemo_gym": nemo_gym_reward(client, calls, answer), "step": gym_step_reward(client, calls, answer)}
        assert len({round(v, 12) for v in got.values()}) == 1, (calls, answer, got)
        rewards[(calls, answer)] = got["rl"]
    # the cost and the budget count: 3 calls cost 0.3 (the one past max_calls=2 too), a wrong answer is 0
    assert rewards[(("734+289", "1/0", "2*3"), "1023")] == pytest.approx(0.7)
    assert rewards[((), "1023")] == 1.0 and rewards[(("734+289",), "1022")] == pytest.approx(-0.1)


def test_verl_tools_keep_one_episode_per_trajectory_across_per_call_instances():
    """verl creates and releases a tool instance around every call: the trajectory's budget, cost
    and environment hold across them (calls past max_calls refused, run_tests refused past its
    budget) and two trajectories never share one; without a trajectory key the call fails loudly."""
    (Tool,) = verl_env_tools("calculator:max_calls=2")
    tool = Tool({}, None)

    async def call(request_id, expression="1+1"):
        iid, _ = await tool.create(create_kwargs={"answer": "2"})
        try:
            return (await tool.execute(iid, {"expression": expression}, agent_data=SimpleNamespace(request_id=request_id)))[0].text
        finally:
            await tool.release(iid)

    assert [asyncio.run(call("a")) for _ in range(4)] == ["2", "2", "error: too many calls", "error: too many calls"]
    assert asyncio.run(call("b")) == "2"  # another trajectory, its own budget

    async def no_trajectory():
        iid, _ = await tool.create(create_kwargs={"answer": "2"})
        return await tool.execute(iid, {"expression": "1+1"})

    with pytest.raises(ValueError, match="agent_data"):
        asyncio.run(no_trajectory())
    (Code,) = verl_env_tools("code:max_attempts=3")
    code = Code({}, None)

    async def run_tests(program):
        iid, _ = await code.create(create_kwargs={"answer": "assert add(1, 2) == 3\nassert add(2, 2) == 4"})
        try:
            return (await code.execute(iid, {"program": program}, agent_data={"request_id": "c"}))[0].text
        finally:
            await code.release(iid)

    outputs = [run_tests(f"def add(a, b):\n    return {k}") for k in range(5)]
    outputs = [asyncio.run(o) for o in outputs]
    assert [o.startswith("test 1/1") for o in outputs[:2]] == [True, True]
    assert all(o.startswith("error: no test runs left") for o in outputs[2:])  # max_attempts - 1 runs per episode
