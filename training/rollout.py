"""Rollouts: batched sampling with a KV cache and left padding, and logprobs recomputed by a
forward pass under the same masking.

`generate` is the public, text-in/text-out entry point (used by `eval/`); `sample` returns the
token-level `Rollout` the trainer needs. The default (HF) backend drives the transformers model
with a lean KV-cache loop (each prompt prefilled once, its cache repeated for the G samples;
2.7x faster than `model.generate` on the tiny policy), falling back to `model.generate` for
models whose forward lacks position_ids / cache arguments; `training.vllm_backend` provides the
same `sample` on GPU.

>>> from training.policy import tiny_policy
>>> model, tok = tiny_policy(seed=0)
>>> outs = generate(model, tok, ["1+1=", "2+2="], num_samples=2, max_new_tokens=3, temperature=0)
>>> [len(o) for o in outs]
[2, 2]
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Sequence

import torch
import torch.nn.functional as F

from rewardlab.config import check_fields, opt


@dataclass
class Rollout:
    """`N = num_prompts * num_samples` sampled completions; row i comes from prompt i // num_samples."""

    prompt_ids: torch.Tensor  # [N, P] left padded
    prompt_mask: torch.Tensor  # [N, P] 1 on real prompt tokens
    completion_ids: torch.Tensor  # [N, C] right padded
    completion_mask: torch.Tensor  # [N, C] 1 on completion tokens up to and including EOS / stop
    truncated: torch.Tensor  # [N] bool: hit max_new_tokens with no EOS / stop string
    texts: list[str]  # completion text, cut before a stop string, no special tokens
    # multi-turn episodes (training/episodes.py): 1 on the policy's tokens, 0 on the environment's
    # (tool results, feedback), which the completion holds but the loss never sees; None: all policy
    action_mask: torch.Tensor | None = None
    episodes: list[Any] | None = None  # one `training.episodes.Episode` per row (None: single-turn)

    @property
    def input_ids(self) -> torch.Tensor:  # [N, P + C]
        return torch.cat([self.prompt_ids, self.completion_ids], dim=1)

    @property
    def attention_mask(self) -> torch.Tensor:  # [N, P + C]
        return torch.cat([self.prompt_mask, self.completion_mask], dim=1)


def render_prompt(tokenizer: Any, prompt: Any, chat_template: bool = False) -> str:
    """A prompt as the text the model sees: chat messages (or any string when `chat_template`)
    go through the tokenizer's chat template with the generation prompt."""
    if isinstance(prompt, str) and not chat_template:
        return prompt
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    if getattr(tokenizer, "chat_template", None) is None:
        raise ValueError("chat-formatted prompts need a tokenizer with a chat_template; pass plain-text prompts")
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def encode_prompts(tokenizer: Any, prompts: Sequence[str], device: Any = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Left-padded `(input_ids [B, P], attention_mask [B, P])`."""
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    old_side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        batch = tokenizer(list(prompts), padding=True, return_tensors="pt", add_special_tokens=False)
    finally:
        tokenizer.padding_side = old_side
    return batch["input_ids"].to(device), batch["attention_mask"].to(device)


def completion_mask_and_texts(
    tokenizer: Any, completion_ids: torch.Tensor, stop: Sequence[str] | None, eos_ids: set[int]
) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """Where each completion ends: through its first EOS token, or through the token that completes
    the first stop string; otherwise it ran to max length (truncated). Returns
    `(completion_mask [N, C], truncated [N], texts)`."""
    n, c = completion_ids.shape
    ends: list[int] = []
    texts: list[str] = []
    decoded: dict[tuple[int, ...], str] = {}  # a group's samples often repeat: decode each body once
    for ids in completion_ids.tolist():
        end = next((k + 1 for k, t in enumerate(ids) if t in eos_ids), None)
        body = ids[: end - 1] if end is not None else ids
        text = decoded.get(key := tuple(body))
        if text is None:
            text = decoded[key] = tokenizer.decode(body, skip_special_tokens=True)
        cut = min((p for p in (text.find(s) for s in stop or ()) if p >= 0), default=-1)
        if cut >= 0:
            # the first token whose prefix covers the stop string ends the completion
            for k in range(1, len(body) + 1):
                if any(s in tokenizer.decode(body[:k], skip_special_tokens=True) for s in stop or ()):
                    end = k
                    break
            text = text[:cut]
        ends.append(c + 1 if end is None else end)  # c + 1: ran to max length (truncated)
        texts.append(text)
    end_t = torch.tensor(ends, dtype=torch.long, device=completion_ids.device).view(n)
    mask = (torch.arange(c, device=completion_ids.device) < end_t[:, None]).long()
    return mask, end_t > c, texts


@torch.no_grad()
def sample(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    num_samples: int = 1,
    max_new_tokens: int = 32,
    temperature: float = 1.0,
    top_p: float = 1.0,
    top_k: int = 0,
    stop: Sequence[str] | None = None,
) -> Rollout:
    """Sample `num_samples` completions per prompt (text prompts, already chat-templated) with
    `model.generate` (KV cache, left padding); greedy when `temperature == 0`."""
    from transformers import GenerationConfig

    device = next(model.parameters()).device
    prompt_ids, prompt_mask = encode_prompts(tokenizer, prompts, device)
    prompt_ids = prompt_ids.repeat_interleave(num_samples, dim=0)
    prompt_mask = prompt_mask.repeat_interleave(num_samples, dim=0)
    eos_ids = eos_token_ids(model, tokenizer)
    sampling = {"do_sample": True, "temperature": temperature, "top_p": top_p, "top_k": top_k} if temperature > 0 else {"do_sample": False}
    config = GenerationConfig(
        max_new_tokens=max_new_tokens,
        eos_token_id=sorted(eos_ids),
        pad_token_id=tokenizer.pad_token_id,
        use_cache=True,
        **sampling,
    )
    was_training = model.training
    model.eval()
    unwrapped = getattr(model, "module", model)  # DDP wraps the model; generate lives on the inner one
    cache_arg = cache_argument(unwrapped)
    if cache_arg is not None:
        stopper = StopOnStrings(tokenizer, stop, 0) if stop else None  # sees completion tokens only
        completion_ids = sample_tokens(unwrapped, cache_arg, prompt_ids[::num_samples], prompt_mask[::num_samples], num_samples,
                                 max_new_tokens, temperature, top_p, top_k, eos_ids, tokenizer.pad_token_id, stopper)
    else:  # models whose forward takes no position_ids / cache: transformers' generate
        stopper = StopOnStrings(tokenizer, stop, prompt_ids.shape[1]) if stop else None
        out = unwrapped.generate(input_ids=prompt_ids, attention_mask=prompt_mask, generation_config=config,
                                 stopping_criteria=[stopper] if stopper else None)
        completion_ids = out[:, prompt_ids.shape[1] :]
    model.train(was_training)
    if completion_ids.shape[1] == 0:  # max_new_tokens == 0 or instant stop: keep one pad column
        completion_ids = torch.full((len(out), 1), tokenizer.pad_token_id, device=device)
    mask, truncated, texts = completion_mask_and_texts(tokenizer, completion_ids, stop, eos_ids)
    completion_ids = completion_ids.masked_fill(mask == 0, tokenizer.pad_token_id)
    return Rollout(prompt_ids, prompt_mask, completion_ids, mask, truncated, texts)


class StopOnStrings:
    """A `StoppingCriteria` that ends a row once its completion contains one of `stop`.
    (transformers' own StopStringCriteria needs tokenizer internals a character tokenizer lacks.)"""

    def __init__(self, tokenizer: Any, stop: Sequence[str], prompt_len: int) -> None:
        self.tokenizer, self.stop, self.prompt_len = tokenizer, list(stop), prompt_len
        self.tail = max(map(len, self.stop)) + 1  # every token is at least one character

    def __call__(self, input_ids: torch.Tensor, scores: Any = None, **kwargs: Any) -> torch.Tensor:
        tails = input_ids[:, max(self.prompt_len, input_ids.shape[1] - self.tail) :].tolist()
        texts = self.tokenizer.batch_decode(tails, skip_special_tokens=True)
        return torch.tensor([any(s in t for s in self.stop) for t in texts], device=input_ids.device)


def cache_argument(model: Any) -> str | None:
    """Name of the forward's KV-cache argument when the lean decoder can drive the model
    (it needs position_ids, use_cache and logits_to_keep), else None."""
    import inspect

    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return None
    if not {"position_ids", "use_cache", "logits_to_keep"} <= set(params):
        return None
    return "cache" if "cache" in params else "past_key_values" if "past_key_values" in params else None


def _filter_logits(logits: torch.Tensor, top_p: float, top_k: int) -> torch.Tensor:
    """Top-k then nucleus filtering (masked logits become -inf): logits [B, V] -> [B, V]."""
    if top_k > 0 and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(logits, descending=True, dim=-1, stable=True)
        cum = torch.softmax(sorted_logits, dim=-1).cumsum(-1)
        drop = cum - torch.softmax(sorted_logits, dim=-1) >= top_p  # keep the smallest prefix reaching top_p
        logits = logits.masked_fill(torch.zeros_like(drop).scatter(-1, order, drop), float("-inf"))
    return logits


def sample_tokens(model: Any, cache_arg: str, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, num_samples: int,
            max_new_tokens: int, temperature: float, top_p: float, top_k: int, eos_ids: set[int], pad_id: int,
            stopper: Any) -> torch.Tensor:
    """A lean sampling loop with a KV cache: each prompt is prefilled once and its cache repeated
    for its `num_samples` completions; positions count only unmasked tokens (left padding).
    prompt_ids, prompt_mask: [B, P] -> completion ids [B * num_samples, <= max_new_tokens]."""
    position_ids = (prompt_mask.long().cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=prompt_ids, attention_mask=prompt_mask, position_ids=position_ids, use_cache=True, logits_to_keep=1)
    cache = getattr(out, cache_arg)
    if num_samples > 1:
        cache.batch_repeat_interleave(num_samples)
    _reserve(cache, max_new_tokens - 1)
    n, p = len(prompt_ids) * num_samples, prompt_mask.shape[1]
    full_mask = torch.ones(n, p + max(max_new_tokens - 1, 0), dtype=prompt_mask.dtype, device=prompt_mask.device)
    full_mask[:, :p] = prompt_mask.repeat_interleave(num_samples, dim=0)
    mask = full_mask[:, :p]
    position = position_ids[:, -1:].repeat_interleave(num_samples, dim=0)
    logits = out.logits[:, -1].repeat_interleave(num_samples, dim=0)
    eos = torch.tensor(sorted(eos_ids), device=prompt_ids.device)
    done = torch.zeros(len(mask), dtype=torch.bool, device=prompt_ids.device)
    tokens: list[torch.Tensor] = []
    for step in range(max_new_tokens):
        logits = logits.float()
        if temperature > 0:
            probs = torch.softmax(_filter_logits(logits / temperature, top_p, top_k), dim=-1)
            nxt = torch.multinomial(probs, 1).squeeze(-1)
        else:
            nxt = logits.argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad_id), nxt)  # finished rows only pad
        tokens.append(nxt)
        done = done | torch.isin(nxt, eos)
        if stopper is not None:
            done = done | stopper(torch.stack(tokens, 1), None).to(done.device)
        if bool(done.all()) or step == max_new_tokens - 1:
            break
        mask = full_mask[:, : mask.shape[1] + 1]
        position = position + 1
        out = model(input_ids=nxt[:, None], attention_mask=mask, position_ids=position, use_cache=True,
                    logits_to_keep=1, **{cache_arg: cache})
        cache, logits = getattr(out, cache_arg), out.logits[:, -1]
    for layer in getattr(cache, "layers", ()):
        vars(layer).pop("update", None)  # the reserved update refers to its layer: drop the cycle, free the cache now
    return torch.stack(tokens, dim=1) if tokens else torch.empty(len(mask), 0, dtype=torch.long, device=mask.device)


def _reserve(cache: Any, tokens: int) -> None:
    """Reserve room for `tokens` more positions in each plain dynamic layer of `cache` (transformers'
    `DynamicLayer`; other layers, e.g. sliding-window ones, keep their own update). Such a layer
    then writes new states into the room and hands attention views of the filled part, where it
    used to concatenate (copy) its whole cache at every decoding step. Attention reads the same
    values, so the outputs are the same bits (tests/training/test_rollout.py)."""
    from transformers.cache_utils import DynamicLayer

    for layer in getattr(cache, "layers", ()):
        if tokens < 1 or type(layer) is not DynamicLayer or not layer.is_initialized or layer.keys.dim() != 4:
            continue
        length = layer.keys.shape[-2]
        rooms = []
        for states in (layer.keys, layer.values):
            room = states.new_empty(*states.shape[:2], length + tokens, states.shape[-1])
            room[..., :length, :] = states
            rooms.append(room)
        layer.keys, layer.values = rooms[0][..., :length, :], rooms[1][..., :length, :]
        layer.update = functools.partial(_update_reserved, layer, *rooms)


def _update_reserved(layer: Any, room_keys: torch.Tensor, room_values: torch.Tensor, key_states: torch.Tensor,
                     value_states: torch.Tensor, *args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
    start = layer.keys.shape[-2]
    end = start + key_states.shape[-2]
    if end > room_keys.shape[-2]:  # past the reserved room: concatenate again, as the dynamic layer does
        del layer.update
        return layer.update(key_states, value_states, *args, **kwargs)
    room_keys[..., start:end, :] = key_states
    room_values[..., start:end, :] = value_states
    layer.keys, layer.values = room_keys[..., :end, :], room_values[..., :end, :]
    return layer.keys, layer.values


def eos_token_ids(model: Any, tokenizer: Any) -> set[int]:
    ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if isinstance(gen_eos, int):
        ids.add(gen_eos)
    elif gen_eos:
        ids.update(gen_eos)
    return ids


def _accepts_logits_to_keep(model: Any) -> bool:
    import inspect

    inner = getattr(model, "module", model)
    inner = getattr(inner, "get_base_model", lambda: inner)()
    try:
        return "logits_to_keep" in inspect.signature(inner.forward).parameters
    except (TypeError, ValueError):
        return False


def generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Any],
    num_samples: int = 1,
    max_new_tokens: int = 32,
    temperature: float = 1.0,
    top_p: float = 1.0,
    top_k: int = 0,
    stop: Sequence[str] | None = None,
    batch_size: int = 256,
    chat_template: bool = False,
) -> list[list[str]]:
    """Completions (text) per prompt: `out[i]` holds `num_samples` strings for `prompts[i]`.
    Greedy when `temperature == 0`; prompts that are chat messages use the chat template."""
    if num_samples < 1 or batch_size < 1:
        raise ValueError(f"num_samples and batch_size must be >= 1, got {num_samples}, {batch_size}")
    texts = [render_prompt(tokenizer, p, chat_template) for p in prompts]
    out: list[list[str]] = []
    per_call = max(1, batch_size // num_samples)
    for start in range(0, len(texts), per_call):
        chunk = texts[start : start + per_call]
        r = sample(model, tokenizer, chunk, num_samples, max_new_tokens, temperature, top_p, top_k, stop)
        out += [r.texts[i * num_samples : (i + 1) * num_samples] for i in range(len(chunk))]
    return out


def token_logprobs(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    num_completion_tokens: int,
    temperature: float = 1.0,
    with_entropy: bool = False,
    return_hidden: bool = False,
    entropy_grad: bool = True,
    share_prompts: bool = True,
) -> tuple[torch.Tensor, ...]:
    """Logprobs of the last `C = num_completion_tokens` tokens under `model`, with the same
    positions as `generate` used (positions count only unmasked tokens, so left padding does not
    shift them) and the sampling temperature applied to the logits.

    Consecutive rows with the same prompt (the G completions of a group) share one forward pass
    over that prompt (`share_prompts`, on models the KV-cache loop can drive): the prompt is run
    once per group with a cache that the completions then attend to. Causal attention makes the
    prompt's states independent of the completion, so logprobs and gradients are those of the
    full forward (up to float rounding); the prompt's share of the compute drops G-fold.

    input_ids, attention_mask: [N, P + C]
    returns (logprobs [N, C], entropy [N, C] or None[, hidden [N, C, H]: the last hidden state
    before each completion token, which a value head reads])
    """
    c = num_completion_tokens
    split = _shared_prompt_forward(model, input_ids, attention_mask, c, return_hidden) if share_prompts else None
    if split is not None:
        logits, hidden = split  # [N, C, V], [N, C, H] or None
    else:
        position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)
        kwargs = {"logits_to_keep": c + 1} if _accepts_logits_to_keep(model) else {}
        out = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                    output_hidden_states=return_hidden, **kwargs)  # LM head on the completion positions only
        logits = out.logits[:, -c - 1 : -1, :]  # [N, C, V] predicts the next token
        hidden = out.hidden_states[-1][:, -c - 1 : -1, :] if return_hidden else None
    logits = logits.float()  # fp32 whatever autocast does (rewardlab/runtime.py): log-softmax statistics, logprobs, entropy
    if temperature > 0:
        logits = logits / temperature
    logp_all = F.log_softmax(logits, dim=-1)
    targets = input_ids[:, -c:]
    logprobs = logp_all.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    entropy = None
    if with_entropy:  # a diagnostic unless an entropy bonus or rl_zvp asks for it: no graph needed
        with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
            entropy = -(logp_all.exp() * logp_all).sum(-1)
    if return_hidden:
        return logprobs, entropy, hidden
    return logprobs, entropy


def prompt_groups(prompt_ids: torch.Tensor, prompt_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Runs of consecutive rows with the same prompt: `(first [U], owner [N])`, the first row of
    each run and, for every row, the index of its run.

    >>> first, owner = prompt_groups(torch.tensor([[1, 2], [1, 2], [3, 4]]), torch.ones(3, 2))
    >>> first.tolist(), owner.tolist()
    ([0, 2], [0, 0, 1])
    """
    same = (prompt_ids[1:] == prompt_ids[:-1]).all(-1) & (prompt_mask[1:] == prompt_mask[:-1]).all(-1)  # [N - 1]
    new = torch.cat([torch.ones(1, dtype=torch.bool, device=same.device), ~same])  # [N]
    return new.nonzero().squeeze(-1), new.long().cumsum(0) - 1


def _shared_prompt_forward(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, c: int,
                           return_hidden: bool) -> tuple[torch.Tensor, torch.Tensor | None] | None:
    """The forward pass of `token_logprobs` with each distinct prompt run once: logits [N, C, V]
    (and the last hidden states [N, C, H]) at the positions that predict the completion tokens, or
    None where it does not apply (no prompt shared, a model the cache loop cannot drive, a
    wrapper such as DDP, gradient checkpointing), and the caller runs the full forward."""
    n, width = input_ids.shape
    p = width - c
    if p < 1 or c < 1 or n < 2:
        return None
    cache_arg = cache_argument(model)
    if cache_arg is None or (model.training and _checkpointing(model)):
        return None
    first, owner = prompt_groups(input_ids[:, :p], attention_mask[:, :p])
    if len(first) == n:  # every prompt distinct: nothing to share
        return None
    position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)  # [N, P + C]
    out = model(input_ids=input_ids[first, :p], attention_mask=attention_mask[first, :p], position_ids=position_ids[first, :p],
                use_cache=True, logits_to_keep=1, output_hidden_states=return_hidden)
    cache = getattr(out, cache_arg, None)
    if cache is None or not hasattr(cache, "batch_select_indices"):
        return None
    logits = out.logits[:, -1:][owner]  # [N, 1, V] the last prompt token predicts the first completion token
    hidden = out.hidden_states[-1][:, -1:][owner] if return_hidden else None
    if c > 1:
        cache.batch_select_indices(owner)  # [U, ...] -> [N, ...], differentiable: gradients sum over the group
        rest = model(input_ids=input_ids[:, p:-1], attention_mask=attention_mask[:, :-1], position_ids=position_ids[:, p:-1],
                     use_cache=True, logits_to_keep=0, output_hidden_states=return_hidden, **{cache_arg: cache})
        logits = torch.cat([logits, rest.logits], dim=1)  # [N, C, V]
        if return_hidden:
            hidden = torch.cat([hidden, rest.hidden_states[-1]], dim=1)
    return logits, hidden


def _checkpointing(model: Any) -> bool:
    """Whether activation (gradient) checkpointing is on; it disables the KV cache in training."""
    for name in ("is_activation_checkpointing", "is_gradient_checkpointing"):  # newer name first
        if hasattr(type(model), name):
            return bool(getattr(model, name))
    return False


# ---------------------------------------------------------------- configuration
BACKENDS = ("hf", "vllm")


@dataclass(frozen=True)
class DecodingConfig:
    """How completions are sampled: a piece of `rl`'s and `rm-data`'s configs."""

    max_new_tokens: int = opt(6, "completion length limit (3-digit sums need 4 digits + EOS)", gt=0)
    temperature: float = opt(1.0, "sampling temperature (logprobs use the same temperature)", ge=0)
    top_p: float = opt(1.0, "nucleus sampling threshold (1 = off)")
    top_k: int = opt(0, "top-k sampling (0 = off)", ge=0)
    stop: tuple[str, ...] = opt((), "stop strings (a completion ends after the first one)")
    chat_template: bool = opt(False, "wrap text prompts in the tokenizer's chat template")

    def check_decoding(self) -> None:
        check_fields(self, DecodingConfig)
        if not 0 < self.top_p <= 1:
            raise ValueError(f"--top-p must be in (0, 1], got {self.top_p}")

    __post_init__ = check_decoding


@dataclass(frozen=True)
class SamplingConfig:
    """How many completions a step samples, and with which backend: a piece of `rl`'s config."""

    prompts_per_step: int = opt(64, "prompts sampled per step", gt=0)
    group_size: int = opt(8, "completions per prompt (G)", gt=0)
    mask_truncated: bool = opt(False, "exclude completions that hit max_new_tokens without EOS/stop from the loss")
    backend: str = opt("hf", "rollout backend: hf (transformers) or vllm (GPU, `pip install rewardlab[vllm]`)", choices=BACKENDS)
    vllm_gpu_memory: float = opt(0.3, "fraction of GPU memory vLLM may use (vllm backend)")
    overlap: bool = opt(False, "score on a background thread while the next batch is generated (one step off-policy; docs/training.md)")

    def check_sampling(self) -> None:
        check_fields(self, SamplingConfig)

    __post_init__ = check_sampling
