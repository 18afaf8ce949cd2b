"""Supervised fine-tuning on prompt/answer rows, loss on answer tokens only.

Rows with a `solution` column (worked steps ending in the answer) train on the solution instead.
Training always runs exactly `steps` optimizer steps, with deterministic kernels: the same data,
seed and thread count give the same weights (`weights_sha256`), and a run never stops early on a
held-out target, because tiny models learn arithmetic in jumps of 10-20 points between
evaluations and the evaluation at which a target is first crossed differed between machines
(warm starts of 20.5% to 36.8% from one command). `min_accuracy` is a check after the last step,
never a stop rule. Held-out accuracy is logged every `eval_every` steps. Accuracy is an exact match of the stripped completion with `answer`; for
rows with a solution, of the final answer read from the completion (as the math verifier reads
it) with `answer`, and for code rows (`kind` "code", as `verifiers.tasks.FunctionTask` writes)
an exact match with the solution (the one program the row asks for). Held-out completions may run to the longest target + EOS even when
`max_new_tokens` is smaller, so a short limit cannot make every answer look wrong.

>>> from training.policy import tiny_policy
>>> from verifiers.tasks import ArithmeticTask
>>> model, tok = tiny_policy(seed=0)
>>> out = train_sft(model, tok, SFTConfig(steps=2, eval_every=2, batch_size=8, eval_size=4),
...                 task=ArithmeticTask(digits=1))
>>> out["steps"], 0.0 <= out["accuracy"] <= 1.0
(2, True)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch
from rewardlab.config import check_fields, opt
from rewardlab.progress import progress_bar
from rewardlab.runtime import RuntimeConfig, autocast
from training.rollout import generate


@dataclass(frozen=True)
class SFTConfig(RuntimeConfig):
    """SFT's optimisation and held-out evaluation, with the seed, threads and precision (`RuntimeConfig`:
    `--mixed-precision` defaults to `no`, fp32, because the default policy is rebuilt bit for bit)."""

    lr: float = opt(3e-3, "AdamW learning rate", gt=0)
    batch_size: int = opt(128, "rows per optimizer step", gt=0)
    steps: int = opt(4000, "optimizer steps; always exactly this many, so the same data, seed and threads give the same weights", gt=0)
    min_accuracy: float = opt(0.0, "after the last step, fail if held-out greedy accuracy is below this (0..1); a check, never a stop rule", ge=0, le=1)
    eval_every: int = opt(250, "log held-out accuracy every N steps (does not change the weights)", gt=0)
    eval_size: int = opt(200, "held-out prompts per evaluation", gt=0)
    max_new_tokens: int = opt(8, "tokens generated per held-out prompt when evaluating", gt=0)
    weight_decay: float = opt(0.0, "AdamW weight decay")

    def check_sft(self) -> None:
        check_fields(self, SFTConfig)

    def __post_init__(self) -> None:
        self.check_runtime()
        self.check_sft()


def sft_batch(tokenizer: Any, prompts: Sequence[str], answers: Sequence[str]) -> dict[str, torch.Tensor]:
    """Right-padded `prompt + answer + eos` with labels -100 everywhere but the answer and EOS."""
    ids, labels = [], []
    for p, a in zip(prompts, answers):
        p_ids = tokenizer(p, add_special_tokens=False)["input_ids"]
        a_ids = tokenizer(str(a), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        ids.append(p_ids + a_ids)
        labels.append([-100] * len(p_ids) + a_ids)
    width = max(map(len, ids))
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([x + [pad] * (width - len(x)) for x in ids])
    attention_mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids])
    label_t = torch.tensor([x + [-100] * (width - len(x)) for x in labels])
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": label_t}


def target(row: dict) -> str:
    """What SFT trains on: the worked `solution` when the row has one, else the `answer`."""
    return str(row["solution"] if row.get("solution") is not None else row["answer"])


def is_correct(completion: str, row: dict) -> bool:
    if row.get("solution") is None:
        return completion.strip() == str(row["answer"]).strip()
    if row.get("kind") == "code":  # the program a task row asks for (FunctionTask): one text is right
        return completion.strip() == str(row["solution"]).strip()
    from verifiers.extract import extract_answer

    return extract_answer(completion) == extract_answer(str(row["answer"]))


def exact_accuracy(model: Any, tokenizer: Any, rows: Sequence[dict], max_new_tokens: int) -> float:
    longest = max((len(tokenizer(target(r), add_special_tokens=False)["input_ids"]) for r in rows), default=0)
    max_new_tokens = max(max_new_tokens, longest + 1)
    outs = generate(model, tokenizer, [r["prompt"] for r in rows], max_new_tokens=max_new_tokens, temperature=0)
    return sum(is_correct(o[0], r) for o, r in zip(outs, rows)) / max(1, len(rows))


def weights_sha256(model: Any) -> str:
    """A fingerprint of the weights themselves (names, dtypes, shapes, bytes), independent of the
    file format: two policies with the same fingerprint are the same bits."""
    digest = hashlib.sha256()
    for name, tensor in sorted(getattr(model, "module", model).state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        digest.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        digest.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()


@contextlib.contextmanager
def deterministic_kernels():
    """`torch.use_deterministic_algorithms(True)` for a block (warn-only where an op has no
    deterministic kernel), restored afterwards."""
    before, warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before, warn_only=warn)


def train_sft(
    model: Any,
    tokenizer: Any,
    config: SFTConfig,
    task: Any | None = None,
    rows: Sequence[dict] | None = None,
    eval_rows: Sequence[dict] | None = None,
    log_path: str | Path | None = None,
) -> dict[str, Any]:
    """Train in place for exactly `config.steps` steps on `task` samples or `rows` ({prompt, answer});
    returns {steps, accuracy, seconds, history, weights_sha256}."""
    from training.data import PromptStream

    if task is not None:
        rows = task.sample(20_000, seed=config.seed, split="train")
        eval_rows = task.sample(config.eval_size, seed=config.seed, split="test")
    if not rows or not eval_rows:
        raise ValueError("train_sft needs a task, or training rows and held-out rows")
    stream = PromptStream(rows, seed=config.seed)
    torch.manual_seed(config.seed)
    device = next(model.parameters()).device
    precision = config.precision(device.type)  # autocast for the forward passes; weights, AdamW and the loss stay fp32
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    history: list[dict] = []
    log = open(log_path, "a") if log_path else None
    start, accuracy, step = time.time(), 0.0, 0
    bar = progress_bar(total=config.steps, desc="sft", leave=False)  # plain lines every 30 s when piped
    with contextlib.ExitStack() as stack:
        stack.enter_context(deterministic_kernels())
        stack.callback(bar.close)
        if log:
            stack.callback(log.close)
        for step in range(1, config.steps + 1):
            model.train()
            batch_rows = stream.take(config.batch_size)
            batch = sft_batch(tokenizer, [r["prompt"] for r in batch_rows], [target(r) for r in batch_rows])
            with autocast(precision, device.type):  # transformers' causal-LM loss casts the logits to fp32 itself
                loss = model(**{k: v.to(device) for k, v in batch.items()}).loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            bar.update(1)
            if step % config.eval_every == 0 or step == config.steps:
                with autocast(precision, device.type):
                    accuracy = exact_accuracy(model, tokenizer, eval_rows[: config.eval_size], config.max_new_tokens)
                record = {"step": step, "loss": loss.item(), "accuracy": accuracy, "time": time.time() - start}
                history.append(record)
                bar.set_postfix(loss=f"{loss.item():.3f}", single_turn_acc=f"{accuracy:.1%}")
                if log:
                    log.write(json.dumps(record) + "\n")
                    log.flush()
    return {"steps": step, "accuracy": accuracy, "seconds": time.time() - start, "history": history, "mixed_precision": precision,
            "eval_size": min(len(eval_rows), config.eval_size), "weights_sha256": weights_sha256(model)}
