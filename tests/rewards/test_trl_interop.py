"""TRL interop: our rewards as items of GRPOTrainer(reward_funcs=...), two real training steps."""

from __future__ import annotations

import pytest

from rewards import build_reward, reward_name
from rewards.adapters import trl_reward_funcs
from tests.rewards.rm_fixtures import make_tiny_causal_lm


@pytest.mark.slow
def test_grpo_trainer_two_steps_with_our_rewards(tmp_path):
    trl = pytest.importorskip("trl", reason="trl is not installed (scripts/install.sh installs it)")
    from datasets import Dataset

    from verifiers.tasks import ArithmeticTask

    path, tokenizer = make_tiny_causal_lm(tmp_path)
    assert tokenizer.decode(tokenizer("12+3=")["input_ids"]) == "12+3="
    rows = ArithmeticTask(digits=1).sample(8, seed=0)
    dataset = Dataset.from_list([{"prompt": r["prompt"], "answer": r["answer"]} for r in rows])
    combined = build_reward("verifier:math*1.0+format:integer*0.1+overlong:max_length=8,cache=4*0")
    args = trl_reward_funcs(combined)
    ttrl = build_reward("ttrl")
    seen = []

    def spy(prompts, completions, **kw):  # records what TRL passes, gives no reward
        seen.append((list(prompts), list(completions), sorted(kw)))
        return [None] * len(completions)

    awaited = []

    async def async_spy(prompts, completions, **kw):  # an async reward: TRL awaits it on its own loop
        import asyncio

        await asyncio.sleep(0)
        awaited.append(len(completions))
        return [None] * len(completions)

    config = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=4, num_generations=4,
        max_completion_length=4, learning_rate=1e-3, bf16=False, fp16=False, gradient_checkpointing=False,
        use_cpu=True, report_to="none", logging_steps=1, save_strategy="no", temperature=1.0,
        reward_weights=args["reward_weights"] + [0.5, 0.0, 0.0], dataloader_num_workers=0, seed=0,
    )
    trainer = trl.GRPOTrainer(model=path, processing_class=tokenizer, reward_funcs=args["reward_funcs"] + [ttrl, spy, async_spy],
                              args=config, train_dataset=dataset)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    assert trainer.state.global_step == 2
    assert awaited and all(n == 4 for n in awaited)  # the async reward was awaited on every batch
    changed = sum(not p.detach().equal(before[n]) for n, p in trainer.model.named_parameters())
    assert changed > 0  # a real optimisation step happened
    # TRL called our rewards with the dataset column and its own extras
    prompts, completions, kwargs = seen[0]
    assert len(completions) == 4 and {"answer", "completion_ids", "trainer_state"} <= set(kwargs)
    # TRL names rewards by __name__ and logs per-reward means; our metrics arrive through log_metric
    logged = {k for entry in trainer.state.log_history for k in entry}
    for fn in args["reward_funcs"] + [ttrl]:
        assert f"rewards/{reward_name(fn)}/mean" in logged
    assert [reward_name(f) for f in args["reward_funcs"]] == ["verifier", "format", "overlong"]  # component names
    assert "verifier/verdict/correct" in logged
    assert "ttrl/majority_ratio" in logged


@pytest.mark.slow
def test_grpo_trainer_with_our_environment_as_its_environment_factory(tmp_path):
    """TRL's side of `trl_environment`: GRPOTrainer takes the class (its tool schema from our
    signature and docstring, a reset per rollout with the row), its own response parser routes a
    tool call to our tool, and our reward scores each rollout's final message with its environment."""
    trl = pytest.importorskip("trl", reason="trl is not installed (scripts/install.sh installs it)")
    import string

    import torch
    from datasets import Dataset
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    from transformers.utils import get_json_schema
    from trl.chat_template_utils import add_response_schema, qwen3_chat_template

    from rewards.adapters import trl_environment

    vocab = {"<pad>": 0, "<|im_end|>": 1, **{c: i + 2 for i, c in enumerate(string.printable[:-5])}}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    backend.pre_tokenizer, backend.decoder = pre_tokenizers.Split("", behavior="isolated"), decoders.Fuse()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", eos_token="<|im_end|>")
    tok.chat_template = qwen3_chat_template  # a template TRL knows how to parse tool calls from
    add_response_schema(tok)
    torch.manual_seed(0)
    LlamaForCausalLM(LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                 num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096, pad_token_id=0,
                                 eos_token_id=1, bos_token_id=None)).save_pretrained(tmp_path / "m")
    args = trl_environment("calculator")
    resets, scored = [], []

    class Counted(args["environment_factory"]):
        def reset(self, **row):
            resets.append(row)
            return super().reset(**row)

    def reward(prompts, completions, environments=None, **kw):
        out = args["reward_funcs"][0](prompts, completions, environments=environments, **kw)
        scored.append((completions, out, environments))
        return out

    reward.__name__ = "env_calculator"
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": f"{a}+{b}="}], "answer": str(a + b)}
                                 for a, b in [(1, 2), (3, 4), (5, 6), (7, 8)]])
    config = trl.GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=1, per_device_train_batch_size=4, num_generations=4,
                            max_completion_length=8, learning_rate=1e-3, bf16=False, fp16=False, use_cpu=True, report_to="none",
                            logging_steps=1, save_strategy="no", dataloader_num_workers=0, seed=0)
    trainer = trl.GRPOTrainer(model=str(tmp_path / "m"), processing_class=tok, reward_funcs=[reward], environment_factory=Counted,
                              args=config, train_dataset=dataset)
    assert [t.__name__ for t in trainer.tools] == ["calculator"]
    schema = get_json_schema(trainer.tools[0])["function"]
    assert schema["parameters"]["properties"]["expression"]["type"] == "string" and "arithmetic" in schema["description"]
    trainer.train()
    assert len(resets) >= 4 and {"prompt", "answer"} <= set(resets[0])
    completions, values, environments = scored[0]
    assert len(values) == len(completions) == len(environments) == 4
    for completion, value, env in zip(completions, values, environments):  # each rollout scored by its own environment
        from verifiers import verify

        assert value == (1.0 if verify(completion[-1]["content"], env.env._gold).correct else 0.0)
    assert "rewards/env_calculator/mean" in {k for entry in trainer.state.log_history for k in entry}
    # TRL's parser turns the model's tool call into a call of our tool, with our result
    call = tok.parse_response('<tool_call>\n{"name": "calculator", "arguments": {"expression": "734+289"}}\n</tool_call>', prefix="")
    function = call["tool_calls"][0]["function"]
    env = Counted()
    env.reset(prompt="734+289=", answer="1023")
    assert getattr(env, function["name"])(**function["arguments"]) == "1023"
    assert args["reward_funcs"][0](["734+289="], [[{"role": "assistant", "content": "1023"}]], environments=[env]) == [1.0]
