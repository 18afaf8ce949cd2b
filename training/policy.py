"""Policies: load any causal LM (a local path or a hub name), or the project's default tiny
character-level Llama, warm-started by SFT on `ArithmeticTask` and cached.

The default policy ships with the project (`training/default_policy/`, weights checked by their
sha256) and is copied into the cache on first use; `rewardlab sft` rebuilds it (the command is in
its `rewardlab.json`). Cache: `$REWARDLAB_CACHE` (default `~/.cache/rewardlab/`), one folder per
(model config, task, SFT settings), written atomically so an interrupted copy or build never
leaves a half policy; its `rewardlab.json` records what built it.

>>> model, tok = tiny_policy(seed=0)
>>> sum(p.numel() for p in model.parameters()) < 300_000
True
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from rewardlab.config import check_fields, opt
from rewardlab.tables import looks_local
from rewardlab.runs import write_folder_atomically
from rewardlab.runtime import cpu_threads
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


def widen_vocabulary(model: Any, tokenizer: Any, chars: str) -> tuple[Any, Any]:
    """A character-level policy that can also write `chars` (e.g. `tokenizer.TOOL_CHARS`, for tool
    calls): the tokenizer gets the new characters after its own (every old id stays), and the
    embedding matrix new rows (transformers' resize, initialised at the mean of the old ones), so
    what the policy wrote before it still writes. Returns (model, tokenizer)."""
    old = tokenizer.get_vocab()
    new_tok = char_tokenizer("".join(dict.fromkeys(tokenizer.convert_ids_to_tokens(sorted(old.values()))[3:] + list(chars))))
    if any(new_tok.convert_tokens_to_ids(t) != i for t, i in old.items()):
        raise ValueError("widen_vocabulary: the tokenizer is not one of char_tokenizer's (its ids would move)")
    model.resize_token_embeddings(len(new_tok))
    return model, new_tok


def cache_dir() -> Path:
    return Path(os.environ.get("REWARDLAB_CACHE") or Path.home() / ".cache" / "rewardlab")


@dataclass(frozen=True)
class DefaultPolicySpec:
    """What the default policy is: the tiny model trained by SFT on this task for a fixed number
    of steps (`rewardlab sft` with `sft_args()`; the same data, seed and one thread give the same
    weights)."""

    model: TinyModelSpec = TinyModelSpec()
    digits: int = 3
    n_terms: int = 2
    ops: str = "+"
    batch_size: int = 128
    lr: float = 1e-3
    steps: int = 1570
    seed: int = 0

    def key(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def task(self) -> str:
        return f"arithmetic:digits={self.digits},n_terms={self.n_terms},ops={self.ops}"

    def sft_args(self) -> list[str]:
        """`rewardlab sft` arguments that build this policy (from a fresh tiny Llama, one thread)."""
        if self.model != TinyModelSpec():
            raise ValueError("only the default tiny model can be built by `rewardlab sft`")
        return ["--data", self.task(), "--lr", str(self.lr), "--batch-size", str(self.batch_size),
                "--steps", str(self.steps), "--seed", str(self.seed), "--cpu-threads", "1"]


DEFAULT_POLICY = DefaultPolicySpec()
# The default policy ships with the project (about 1 MB), so every machine starts from the same
# bits: float rounding differs between CPUs, and a rebuild elsewhere may differ in the last bits
# (the same machine rebuilds it exactly). Its weights' fingerprint (`training.sft.weights_sha256`):
SHIPPED_POLICY = Path(__file__).with_name("default_policy")
SHIPPED_POLICY_SHA256 = "7f42e4e8230797a69c94a2396840506d05e591d8a770b4531436b08251c6c46e"


def _rebuild_command(spec: DefaultPolicySpec) -> str | None:
    if spec.model != TinyModelSpec():
        return None
    return "rewardlab sft " + " ".join(spec.sft_args()) + " --output-dir runs/default-policy"


def build_environment() -> dict[str, Any]:
    """What a trained policy's bits depend on besides data and seed (recorded beside it)."""
    import platform

    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__, "python": platform.python_version(),
            "machine": platform.machine(), "processor": _cpu_name(), "threads": torch.get_num_threads()}


def default_policy_path(spec: DefaultPolicySpec | None = None, build: bool = True) -> Path:
    """Folder of the cached default policy. When missing (and `build`): the shipped policy is
    copied into the cache after its fingerprint is checked; any other spec (or a checkout without
    the shipped files) is built by SFT. Either way the cache folder's `rewardlab.json` says what
    built it and how to rebuild it."""
    spec = spec or DEFAULT_POLICY
    path = cache_dir() / f"policy-{spec.key()}"
    if (path / "config.json").exists() or not build:
        return path
    if spec == DefaultPolicySpec() and (SHIPPED_POLICY / "config.json").exists():
        _install_shipped_policy(path)
    else:
        _build_policy(spec, path)
    return path


def _install_shipped_policy(path: Path) -> None:
    from transformers import AutoModelForCausalLM

    from training.sft import weights_sha256

    model = AutoModelForCausalLM.from_pretrained(SHIPPED_POLICY)
    found = weights_sha256(model)
    if found != SHIPPED_POLICY_SHA256:
        raise RuntimeError(
            f"the shipped default policy in {SHIPPED_POLICY} is not the one this version of rewardlab was "
            f"released with (weights sha256 {found[:16]}..., expected {SHIPPED_POLICY_SHA256[:16]}...). Restore it "
            f"with `git checkout -- {SHIPPED_POLICY.name}` in training/, or pass --model with your own policy"
        )
    built = json.loads((SHIPPED_POLICY / "rewardlab.json").read_text())
    tok = char_tokenizer()
    extra = {**built, "source": f"shipped with rewardlab ({SHIPPED_POLICY}), weights sha256 checked",
             "weights_sha256": found, "rebuild": _rebuild_command(DEFAULT_POLICY)}
    save_policy_atomically(model, tok, path, extra=extra)
    print(f"rewardlab: default policy (tiny Llama, {built['sft']['steps']} SFT steps on 3-digit sums, held-out "
          f"{built['sft']['accuracy']:.1%}; weights sha256 {found[:12]}) -> {path}", flush=True)


def _build_policy(spec: DefaultPolicySpec, path: Path) -> None:
    """SFT exactly as `rewardlab sft <spec.sft_args()>` does (same rows, seed, kernels, one thread)."""
    from training.data import load_prompt_rows
    from training.sft import SFTConfig, train_sft

    print(f"rewardlab: building the policy (tiny Llama, {spec.steps} SFT steps on {spec.task()}) -> {path}", flush=True)
    model, tok = tiny_policy(spec.model, seed=spec.seed)
    sft = SFTConfig(steps=spec.steps, batch_size=spec.batch_size, lr=spec.lr, seed=spec.seed, eval_size=500,
                    eval_every=spec.steps)
    rows = load_prompt_rows(spec.task(), split="train", seed=spec.seed)
    eval_rows = load_prompt_rows(spec.task(), split="test", limit=sft.eval_size, seed=spec.seed)
    with cpu_threads(1):  # see RLConfig.cpu_threads; the same weights need the same thread count
        result = train_sft(model, tok, sft, rows=rows, eval_rows=eval_rows)
        environment = build_environment()
    extra = {"source": "built here by SFT", "sft": {k: v for k, v in result.items() if k != "history"},
             "spec": asdict(spec), "weights_sha256": result["weights_sha256"], "rebuild": _rebuild_command(spec),
             "built_with": environment}
    if spec == DefaultPolicySpec():  # e.g. a checkout without the shipped files: did this machine rebuild them?
        extra["matches_shipped_policy"] = result["weights_sha256"] == SHIPPED_POLICY_SHA256
    save_policy_atomically(model, tok, path, extra=extra)
    print(f"rewardlab: the policy reached {result['accuracy']:.1%} held-out accuracy after {result['steps']} SFT steps "
          f"({result['seconds']:.0f} s; weights sha256 {result['weights_sha256'][:12]}); cached", flush=True)


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor()


def save_policy_atomically(model: Any, tokenizer: Any, path: Path, extra: dict | None = None) -> None:
    """Write to a temp folder beside `path`, then rename: readers see all or nothing."""
    def write(tmp: Path) -> None:
        getattr(model, "module", model).save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if extra is not None:
            (tmp / "rewardlab.json").write_text(json.dumps(extra, indent=2, default=str) + "\n")

    write_folder_atomically(path, write)


def load_policy(path: str | None = None, dtype: Any = None) -> tuple[Any, Any]:
    """`(model, tokenizer)` from a local folder or hub name; `None` gives the default tiny policy
    (shipped with the project, copied to the cache on first use). The tokenizer pads on the left."""
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


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class PolicyConfig:
    """The policy model and how it is trained (all weights or LoRA): a piece of `rl`'s config."""

    model: str | None = opt(None, "policy: a local folder or hub name; default: the tiny character-level Llama warm-started on arithmetic")
    gradient_checkpointing: bool = opt(False, "trade compute for memory in the policy")
    lora: bool = opt(False, "train LoRA adapters (peft) instead of all weights")
    lora_r: int = opt(16, "LoRA rank")
    lora_alpha: int = opt(32, "LoRA alpha")

    def check_policy(self) -> None:
        check_fields(self, PolicyConfig)
        if self.model is not None and looks_local(self.model) and not Path(self.model).exists():
            raise ValueError(f"--model {self.model!r} does not exist; pass a model folder, a hub name, or omit it for the default policy")

    __post_init__ = check_policy
