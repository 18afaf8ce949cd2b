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
