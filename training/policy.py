"""Policies: load any causal LM (a local path or a hub name), or the project's default tiny
character-level Llama, warm-started by SFT on `ArithmeticTask` and cached.

Cache: `$REWARDLAB_CACHE` (default `~/.cache/rewardlab/`), one folder per (model config, task,
SFT settings), written atomically so an interrupted warm start never leaves a half policy.

>>> model, tok = tiny_policy(seed=0)
>>> sum(p.numel() for p in model.parameters()) < 300_000
True
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from rewardlab.runtime import cpu_threads  # noqa: F401  (re-exported: training.policy.cpu_threads)
from training.tokenizer import char_tokenizer


@dataclass(frozen=True)
class TinyModelSpec:
    hidden_size: int = 64
    num_layers: int = 4
    num_heads: int = 4
    intermediate_size: int = 256
    max_positions: int = 64


def tiny_policy(spec: TinyModelSpec = TinyModelSpec(), seed: int = 0) -> tuple[Any, Any]:
    """A randomly initialised tiny Llama (~264K parameters) and its character tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = char_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_heads,
        max_position_embeddings=spec.max_positions,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.bos_token_id = None
    return model, tok


def cache_dir() -> Path:
    return Path(os.environ.get("REWARDLAB_CACHE") or Path.home() / ".cache" / "rewardlab")


@dataclass(frozen=True)
class DefaultPolicySpec:
    """What the default policy is: the tiny model warm-started on this task to this accuracy."""

    model: TinyModelSpec = TinyModelSpec()
    digits: int = 3
    n_terms: int = 2
    ops: str = "+"
    target_accuracy: float = 0.15  # stop SFT once held-out greedy accuracy reaches this
    batch_size: int = 128
    lr: float = 1e-3
    max_steps: int = 5000
    eval_every: int = 25
    seed: int = 0

    def key(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


DEFAULT_POLICY = DefaultPolicySpec()


def default_policy_path(spec: DefaultPolicySpec | None = None, build: bool = True) -> Path:
    """Folder of the cached default policy, built by SFT first when missing (and `build`)."""
    spec = spec or DEFAULT_POLICY
    path = cache_dir() / f"policy-{spec.key()}"
    if (path / "config.json").exists() or not build:
        return path
    from training.sft import SFTConfig, train_sft
    from verifiers.tasks import ArithmeticTask

    print(f"rewardlab: building the default policy (tiny Llama, SFT on arithmetic) -> {path}", flush=True)
    model, tok = tiny_policy(spec.model, seed=spec.seed)
    task = ArithmeticTask(digits=spec.digits, n_terms=spec.n_terms, ops=spec.ops)
    sft = SFTConfig(
        target_accuracy=spec.target_accuracy,
        batch_size=spec.batch_size,
        lr=spec.lr,
        max_steps=spec.max_steps,
        eval_every=spec.eval_every,
        seed=spec.seed,
    )
    with cpu_threads(1):  # see RLConfig.cpu_threads
        result = train_sft(model, tok, sft, task=task)
    if result["accuracy"] < spec.target_accuracy:
        raise RuntimeError(
            f"default policy warm start reached only {result['accuracy']:.1%} held-out accuracy after "
            f"{result['steps']} steps (target {spec.target_accuracy:.0%}); nothing was cached"
        )
    save_policy_atomically(model, tok, path, extra={"sft": result, "spec": asdict(spec)})
    print(f"rewardlab: warm start reached {result['accuracy']:.1%} held-out accuracy after {result['steps']} SFT steps "
          f"({result['seconds']:.0f} s); cached", flush=True)
    return path


def save_policy_atomically(model: Any, tokenizer: Any, path: Path, extra: dict | None = None) -> None:
    """Write to a temp folder beside `path`, then rename: readers see all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=path.name + ".tmp-", dir=path.parent))
    try:
        getattr(model, "module", model).save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if extra is not None:
            (tmp / "rewardlab.json").write_text(json.dumps(extra, indent=2, default=str) + "\n")
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_policy(path: str | None = None, dtype: Any = None) -> tuple[Any, Any]:
    """`(model, tokenizer)` from a local folder or hub name; `None` gives the default tiny policy
    (warm-started and cached on first use). The tokenizer pads on the left."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = str(default_policy_path()) if path is None else str(path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        kwargs = {"dtype": dtype} if dtype is not None else {}
        model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    except OSError as err:
        raise ValueError(
            f"--model {path!r}: cannot load a causal LM from it ({err.__class__.__name__}: "
            f"{str(err).splitlines()[0]}). Pass a local folder with config.json or a hub name "
            "that is available offline, or omit --model for the default tiny policy."
        ) from None
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer
