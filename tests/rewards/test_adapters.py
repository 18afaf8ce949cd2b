"""verl and OpenRLHF adapters, called the way those frameworks call them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rewards import build_reward
from rewards.adapters import as_openrlhf_reward_func, as_verl_batch_compute_score, as_verl_compute_score, split_query


def test_verl_compute_score_keywords_like_naive_reward_manager():
    compute_score = as_verl_compute_score(build_reward("verifier:math"))
    # verl's NaiveRewardManager calls compute_score(data_source=, solution_str=, ground_truth=, extra_info=)
    out = compute_score(data_source="arith", solution_str="The answer is 579", ground_truth="579", extra_info={"split": "train"})
    assert out["score"] == 1.0 and out["verdict/correct"] == 1.0 and out["not_applicable"] == 0.0
    assert compute_score("arith", "580", "579")["score"] == 0.0
    bare = as_verl_compute_score(build_reward("verifier:math"), return_dict=False)
    assert bare("arith", "579", "579") == 1.0


def test_verl_none_is_scored_and_flagged():
    # bad gold -> the verifier reward is None; verl needs a number: none_score, flagged
    compute_score = as_verl_compute_score(build_reward("verifier:math"), none_score=-1.0)
    out = compute_score("arith", "579", "\\frac{")
    assert out["score"] == -1.0 and out["not_applicable"] == 1.0


def test_verl_batch_form():
    compute_score = as_verl_batch_compute_score(build_reward("verifier:math*1+format:integer*0.5"))
    out = compute_score(["a", "a", "a"], ["12", "13", "douze"], ["12", "12", "12"], [{"prompt": "7+5="}, None, None])
    assert out == [1.5, 0.5, 0.0]


@pytest.mark.parametrize(
    "query, prompt, expected",
    [
        ("7+5=12", "7+5=", "12"),  # plain concatenation
        ("<s>7+5=12</s>", "7+5=", "12</s>"),  # special tokens before the prompt are skipped
        ("12", "unrelated", "12"),  # prompt not found: the whole query
    ],
)
def test_split_query(query, prompt, expected):
    assert split_query(query, prompt) == expected


def test_openrlhf_reward_func():
    fn = as_openrlhf_reward_func(build_reward("ttrl"))
    out = fn(["7+5=12", "7+5=12", "7+5=13", "9+1=x"], ["7+5=", "7+5=", "7+5=", "9+1="], ["12", "12", "12", "10"])
    assert out["rewards"] == [1.0, 1.0, 0.0, 0.0]  # the last prompt has no answer: None -> 0, counted
    assert out["scores"] == out["rewards"]
    assert out["extra_logs"]["not_applicable"] == 1.0
    assert out["extra_logs"]["ttrl/label_accuracy"] == 1.0
    with pytest.raises(ValueError, match="2 queries but 1 prompts"):
        fn(["a", "b"], ["a"], None)


def test_environment_tools_in_verls_tool_agent_loop_lifecycle():
    """verl 0.9.1's ToolAgentLoop._call_tool, per call: `create(create_kwargs=tools_kwargs[name]["create_kwargs"])`,
    `execute(instance_id, json.loads(arguments), agent_data=...)`, `release(instance_id)`; the final
    reward comes from compute_score on the response, reading the text after the last tool result."""
    import asyncio
    import json

    from rewards.adapters import as_verl_env_compute_score, verl_env_tools

    (Tool,) = verl_env_tools("calculator:cost=0.05")
    tool = Tool(config={"type": "native"}, tool_schema=None)  # verl builds tools with these keywords
    schema = tool.get_openai_tool_schema()
    schema = schema if isinstance(schema, dict) else schema.model_dump()
    assert schema["function"]["name"] == "calculator" and schema["function"]["parameters"]["required"] == ["expression"]
    tools_kwargs = {"calculator": {"create_kwargs": {"prompt": "734+289=", "answer": "1023"}}}

    async def call_tool(arguments):
        instance_id, _ = await tool.create(create_kwargs=tools_kwargs["calculator"].get("create_kwargs", {}))
        try:
            return await tool.execute(instance_id, json.loads(arguments), agent_data=SimpleNamespace(request_id="r1"))
        finally:
            await tool.release(instance_id)

    response, step_reward, metrics = asyncio.run(call_tool('{"expression": "734+289"}'))
    assert (response.text, step_reward, metrics) == ("1023", -0.05, {"tool_error": 0.0})
    response, _, metrics = asyncio.run(call_tool('{"expression": "734/0"}'))
    assert response.text == "error: division by zero" and metrics == {"tool_error": 1.0}
    assert tool.calls == {}  # every instance released
    score = as_verl_env_compute_score("calculator")
    transcript = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "734+289"}}\n</tool_call>\n<tool_response>\n1023\n</tool_response>\n'
    assert score("arithmetic", transcript + "1023", "1023", {"prompt": "734+289="}) == 1.0
    assert score("arithmetic", transcript, "1023") == 0.0  # no answer after the result: the result is not the answer
    assert score("arithmetic", transcript + "1022", "1023") == 0.0


def test_code_environment_as_a_verl_tool():
    import asyncio

    from rewards.adapters import as_verl_env_compute_score, verl_env_tools

    (Tool,) = verl_env_tools("code")
    tool = Tool(config={"type": "native"}, tool_schema=None)
    schema = tool.get_openai_tool_schema()
    schema = schema if isinstance(schema, dict) else schema.model_dump()
    assert schema["function"]["name"] == "run_tests" and schema["function"]["parameters"]["required"] == ["program"]

    async def call(program):
        instance_id, _ = await tool.create(create_kwargs={"answer": "assert add(1, 2) == 3"})
        try:
            return await tool.execute(instance_id, {"program": program}, agent_data=SimpleNamespace(request_id="r1"))
        finally:
            await tool.release(instance_id)

    response, _, _ = asyncio.run(call("def add(a, b):\n    return a - b"))
    assert response.text == "test 1/1: AssertionError at test line 1: assert add(1, 2) == 3"
    score = as_verl_env_compute_score("code")
    transcript = "<tool_call>...</tool_call>\n<tool_response>\ntest 1/1: AssertionError ...\n</tool_response>\n"
    assert score("code", transcript + "def add(a, b):\n    return a + b", "assert add(1, 2) == 3") == 1.0
    assert score("code", transcript, "assert add(1, 2) == 3") == 0.0
