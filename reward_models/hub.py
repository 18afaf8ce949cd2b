"""Reward models this project did not train, in the hub's own formats, behind the same scoring
API as the project's (`kind`, `score`, `embed`, `config`, `ood`):

- `SequenceRM` (kind "bt"): an `AutoModelForSequenceClassification` reward model (Skywork-Reward,
  ArmoRM, OpenAssistant, any model TRL's `RewardTrainer` saved). The conversation
  [user: prompt, assistant: response] goes through the model's own chat template when it has one
  (a chat prompt is used as it is); without a template, (prompt, response) is encoded as a text
  pair. The reward is the head's logit (label `label`, default 0) read at the last real token;
  models whose output carries a `score` (ArmoRM) give that.
- `StepTagPRM` (kind "prm"): a causal LM trained as a step-tag PRM (Math-Shepherd): the solution is
  written `step 1 <tag>\\nstep 2 <tag>...` after the question, and a step's score is the
  probability of the "good" token against the "bad" one at its tag, P(good) / (P(good) + P(bad))
  (Math-Shepherd: tag "ки", good "+", bad "-", the defaults).
- `TokenPRM` (kind "prm"): a token-classification PRM (Qwen2.5-Math-PRM style): the assistant turn
  is the steps each followed by the tag (default "<extra_0>"), wrapped in the chat template; a
  step's score is the softmax probability of label 1 at its tag (the sigmoid for one label).

Inputs longer than `max_length` tokens keep their end (the answer and the last steps); a step
whose tag was cut away scores NaN, as for the project's PRMs. `load_hub_reward_model` picks the
class from the checkpoint's architecture and the kind the caller needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch

from reward_models.backbones import POOLERS, is_decoder_config
from reward_models.encoding import is_messages
from reward_models.scores import StepScores, check_pairs

DEFAULT_MAX_LENGTH = 4096
STEP_TAG_DEFAULTS = {"tag": "ки", "good": "+", "bad": "-"}  # Math-Shepherd
TOKEN_PRM_TAG = "<extra_0>"  # Qwen2.5-Math-PRM
TOKEN_NAMES = {"plus": "+", "minus": "-", "space": " ", "newline": "\n"}  # spellable in a reward spec


@dataclass
class HubConfig:
    """What the rewards read from a reward model's config (see `RewardModelConfig`)."""

    kind: str
    step_separator: str = "\n"
    max_seq_length: int = DEFAULT_MAX_LENGTH
    clip_eta: float | None = None
    source: str = ""
    architecture: str = ""


def _messages(prompt: Any, response: Any) -> list[dict[str, Any]]:
    p = list(prompt) if is_messages(prompt) else ([{"role": "user", "content": str(prompt)}] if str(prompt) else [])
    r = list(response) if is_messages(response) else [{"role": "assistant", "content": str(response)}]
    return p + r


class _HubModel:
    """Shared plumbing: device, batching by length, left truncation."""

    def __init__(self, model: Any, tokenizer: Any, config: HubConfig, batch_size: int = 32) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.config = config
        self.batch_size = batch_size
        self.ood: Any = None  # no training-distribution detector ships with a hub model
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        limit = getattr(model.config, "max_position_embeddings", None) or DEFAULT_MAX_LENGTH
        self.config.max_seq_length = min(self.config.max_seq_length, int(limit))

    @property
    def kind(self) -> str:
        return self.config.kind

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def to(self, device: str | torch.device) -> "_HubModel":
        self.model.to(device)
        return self

    def _truncate(self, ids: list[int]) -> list[int]:
        return ids[-self.config.max_seq_length:]

    def _batches(self, items: list[list[int]], batch_size: int | None):
        """(indices, input_ids [B, T], attention_mask [B, T]) in length-sorted, right-padded batches."""
        size = batch_size or self.batch_size
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        pad = self.tokenizer.pad_token_id
        for start in range(0, len(order), size):
            idx = order[start : start + size]
            width = max(len(items[i]) for i in idx)
            ids = torch.full((len(idx), width), pad, dtype=torch.long)
            mask = torch.zeros((len(idx), width), dtype=torch.long)
            for row, i in enumerate(idx):
                ids[row, : len(items[i])] = torch.tensor(items[i])
                mask[row, : len(items[i])] = 1
            yield idx, ids.to(self.device), mask.to(self.device)


class SequenceRM(_HubModel):
    """An `AutoModelForSequenceClassification` reward model (see the module docstring)."""

    def __init__(self, model: Any, tokenizer: Any, config: HubConfig, batch_size: int = 32, label: int = 0) -> None:
        super().__init__(model, tokenizer, config, batch_size)
        labels = int(getattr(model.config, "num_labels", 1) or 1)
        if not 0 <= label < labels:
            raise ValueError(f"label={label}: the model has {labels} output label(s); use 0..{labels - 1}")
        self.label = label
        self.decoder = is_decoder_config(model.config)
        if getattr(model.config, "pad_token_id", None) is None:  # the head finds the last real token by it
            model.config.pad_token_id = tokenizer.pad_token_id

    def encode(self, prompt: Any, response: Any) -> list[int]:
        """Token ids of one (prompt, response): the chat template when there is one, else a text pair."""
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            text = tok.apply_chat_template(_messages(prompt, response), tokenize=False)
            return self._truncate(tok(text, add_special_tokens=False)["input_ids"])
        p = "\n".join(str(m["content"]) for m in prompt) if is_messages(prompt) else str(prompt)
        r = "\n".join(str(m["content"]) for m in response) if is_messages(response) else str(response)
        return self._truncate(tok(p, r)["input_ids"] if p else tok(r)["input_ids"])

    @torch.no_grad()
    def _forward(self, prompts, responses, batch_size, hidden: bool = False) -> list[torch.Tensor]:
        check_pairs(prompts, responses, "responses")
        items = [self.encode(p, r) for p, r in zip(prompts, responses)]
        out: list[torch.Tensor] = [torch.zeros(0)] * len(items)
        for idx, ids, mask in self._batches(items, batch_size):
            result = self.model(input_ids=ids, attention_mask=mask, output_hidden_states=hidden)
            if hidden:
                pooled = POOLERS["last" if self.decoder else "mean"](result.hidden_states[-1].float(), mask)
                values = pooled
            else:
                values = self._rewards(result, ids, mask)
            for row, i in enumerate(idx):
                out[i] = values[row].float().cpu()
        return out

    def _rewards(self, result: Any, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        score = getattr(result, "score", None)  # ArmoRM-style outputs carry the preference score
        if score is not None:
            return score.float().reshape(len(ids), -1)[:, 0]
        logits = result.logits.float()  # [B, num_labels], read at the last non-pad token by the model
        return logits[:, self.label]

    def score(self, prompts: Sequence[Any], responses: Sequence[Any], batch_size: int | None = None) -> list[float]:
        return [float(v) for v in self._forward(prompts, responses, batch_size)]

    def embed(self, prompts: Sequence[Any], responses: Sequence[Any], batch_size: int | None = None) -> torch.Tensor:
        """The last hidden state pooled (last real token for decoders, mean for encoders): [N, H]."""
        outs = self._forward(prompts, responses, batch_size, hidden=True)
        return torch.stack(outs) if outs else torch.zeros(0, int(self.model.config.hidden_size))


class _TagPRM(_HubModel):
    """A PRM whose step scores are read at a tag token placed after every step."""

    tag: str
    tag_id: int

    def _tag_id(self, tag: str) -> int:
        ids = self.tokenizer.encode(tag, add_special_tokens=False)
        if not ids:
            raise ValueError(f"the step tag {tag!r} encodes to no token with this tokenizer")
        if len(ids) > 1 and self.tokenizer.convert_tokens_to_ids(tag) in (None, self.tokenizer.unk_token_id):
            raise ValueError(f"the step tag {tag!r} is {len(ids)} tokens for this tokenizer; a step tag must be one token "
                             "(pass the model's own tag: tag=...)")
        return ids[-1]

    def step_ids(self, prompt: Any, steps: Sequence[str]) -> list[int]:
        raise NotImplementedError

    def _probs(self, logits: torch.Tensor) -> torch.Tensor:
        """[T, V or L] logits at the tag positions -> [T] step probabilities."""
        raise NotImplementedError

    @torch.no_grad()
    def score(self, prompts: Sequence[Any], steps: Sequence[Sequence[str]], batch_size: int | None = None) -> list[Any]:
        check_pairs(prompts, steps, "step lists")
        for i, s in enumerate(steps):
            if isinstance(s, str) or not all(isinstance(x, str) for x in s):
                raise TypeError(f"prm scoring takes steps as a list of lists of strings; item {i + 1} is {type(s).__name__}")
        items = [self.step_ids(p, s) for p, s in zip(prompts, steps)]
        result: list[Any] = [None] * len(items)
        for idx, ids, mask in self._batches(items, batch_size):
            logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
            for row, i in enumerate(idx):
                n = len(items[i])
                where = (ids[row, :n] == self.tag_id).nonzero().flatten()
                probs = self._probs(logits[row, where]).tolist() if len(where) else []
                k = len(steps[i])
                probs = probs[-k:]  # tags of steps cut away by left truncation are missing at the front
                result[i] = StepScores([math.nan] * (k - len(probs)) + [float(p) for p in probs])
        return result

    def embed(self, prompts: Sequence[Any], responses: Sequence[Any], batch_size: int | None = None) -> torch.Tensor:
        raise ValueError(f"{self.config.source}: a hub PRM has no embedding for OOD checks")


class StepTagPRM(_TagPRM):
    """A causal LM step-tag PRM (Math-Shepherd); see the module docstring."""

    def __init__(self, model: Any, tokenizer: Any, config: HubConfig, batch_size: int = 32, tag: str = STEP_TAG_DEFAULTS["tag"],
                 good: str = STEP_TAG_DEFAULTS["good"], bad: str = STEP_TAG_DEFAULTS["bad"]) -> None:
        super().__init__(model, tokenizer, config, batch_size)
        self.tag, self.tag_id = tag, self._tag_id(tag)
        self.good_id, self.bad_id = self._token(good, "good"), self._token(bad, "bad")
        if self.good_id == self.bad_id:
            raise ValueError(f"good={good!r} and bad={bad!r} are the same token for this tokenizer")

    def _token(self, text: str, name: str) -> int:
        ids = self.tokenizer.encode(TOKEN_NAMES.get(text, text), add_special_tokens=False)
        if not ids:
            raise ValueError(f"{name}={text!r} encodes to no token with this tokenizer")
        return ids[-1]

    def step_ids(self, prompt: Any, steps: Sequence[str]) -> list[int]:
        question = "\n".join(str(m["content"]) for m in prompt) if is_messages(prompt) else str(prompt)
        text = (question + " " if question else "") + "\n".join(f"{s.strip()} {self.tag}" for s in steps)
        ids = self.tokenizer(text)["input_ids"]  # with BOS, as the model was trained
        return self._truncate(ids)

    def _probs(self, logits: torch.Tensor) -> torch.Tensor:
        pair = logits[:, [self.good_id, self.bad_id]]  # [T, 2]
        return torch.softmax(pair, dim=-1)[:, 0]


class TokenPRM(_TagPRM):
    """A token-classification PRM (Qwen2.5-Math-PRM style); see the module docstring."""

    def __init__(self, model: Any, tokenizer: Any, config: HubConfig, batch_size: int = 32, tag: str = TOKEN_PRM_TAG,
                 system: str | None = None) -> None:
        super().__init__(model, tokenizer, config, batch_size)
        self.tag, self.tag_id = tag, self._tag_id(tag)
        self.system = system

    def step_ids(self, prompt: Any, steps: Sequence[str]) -> list[int]:
        answer = "".join(f"{s.strip()}{self.tag}" for s in steps)
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            head = [{"role": "system", "content": self.system}] if self.system else []
            text = tok.apply_chat_template(head + _messages(prompt, answer), tokenize=False)
            ids = tok(text, add_special_tokens=False)["input_ids"]
        else:
            question = "\n".join(str(m["content"]) for m in prompt) if is_messages(prompt) else str(prompt)
            ids = tok(question + "\n" + answer)["input_ids"]
        return self._truncate(ids)

    def _probs(self, logits: torch.Tensor) -> torch.Tensor:
        if logits.shape[-1] == 1:
            return torch.sigmoid(logits[:, 0])
        return torch.softmax(logits, dim=-1)[:, 1]


def _architecture(config: dict[str, Any]) -> str:
    archs = config.get("architectures") or []
    return archs[0] if archs else str(config.get("model_type", "unknown"))


def load_hub_reward_model(path: str, config: dict[str, Any], kind: str | None, device: Any, batch_size: int,
                          **options: Any) -> _HubModel:
    """A `SequenceRM`, `StepTagPRM` or `TokenPRM` for the checkpoint at `path` (config.json `config`)
    and the `kind` the caller needs ("bt" for rm:, "prm" for prm:, None: whatever it is).
    `options`: label (SequenceRM), tag / good / bad (StepTagPRM), tag / system (TokenPRM),
    trust_remote_code, max_length."""
    from transformers import (AutoModelForCausalLM, AutoModelForSequenceClassification, AutoModelForTokenClassification,
                              AutoTokenizer)

    arch = _architecture(config)
    remote = bool(options.pop("trust_remote_code", False))
    max_length = int(options.pop("max_length", DEFAULT_MAX_LENGTH))
    hub = HubConfig(kind="bt", max_seq_length=max_length, source=path, architecture=arch)
    if arch.endswith("ForSequenceClassification") or "RewardModel" in arch and "Process" not in arch:
        builder, cls, hub.kind = AutoModelForSequenceClassification, SequenceRM, "bt"
    elif arch.endswith("ForTokenClassification") or "ProcessRewardModel" in arch:
        builder, cls, hub.kind = AutoModelForTokenClassification, TokenPRM, "prm"
        if "ProcessRewardModel" in arch:
            from transformers import AutoModel as builder  # noqa: N813 - custom code registers itself under AutoModel
    elif arch.endswith("ForCausalLM"):
        if kind != "prm":
            raise ValueError(
                f"{path!r} is a causal language model ({arch}), not a reward model. To score with it: "
                f"as a step-tag PRM (Math-Shepherd style) use prm:{path}; as a judge use genrm:{path}; "
                f"to train a reward model on it run `rewardlab train-rm --backbone {path}`")
        builder, cls, hub.kind = AutoModelForCausalLM, StepTagPRM, "prm"
    else:
        raise ValueError(f"{path!r} ({arch}) is not a reward model this project can load: it loads its own reward models, "
                         "sequence-classification RMs (*ForSequenceClassification), token-classification PRMs "
                         "(*ForTokenClassification) and causal-LM step-tag PRMs (with prm:)")
    if kind is not None and kind != hub.kind:
        have = {"bt": "a sequence reward model (one score per response; use rm:)",
                "prm": "a process reward model (a score per step; use prm:)"}[hub.kind]
        raise ValueError(f"{path!r} ({arch}) is {have}, but a {kind!r} model is needed here")
    try:
        model = builder.from_pretrained(path, dtype=torch.float32 if not torch.cuda.is_available() else "auto",
                                        trust_remote_code=remote)
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=remote)
    except ValueError as exc:
        if "trust_remote_code" in str(exc) and not remote:
            raise ValueError(f"{path!r} ({arch}) ships its own modelling code; add trust_remote_code=true to the spec "
                             "if you trust it") from None
        raise
    import inspect

    valid = sorted(set(inspect.signature(cls.__init__).parameters) - {"self", "model", "tokenizer", "config", "batch_size"})
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(f"{path!r} is loaded as a {cls.__name__}: unknown option(s) {unknown}; valid options: "
                         f"{', '.join(valid + ['max_length', 'trust_remote_code'])}")
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return cls(model.to(device), tokenizer, hub, batch_size=batch_size, **options)


def read_config(path: str) -> dict[str, Any]:
    """config.json of a local directory, or of a hub model (via `AutoConfig`, which caches it)."""
    import json

    local = Path(path) / "config.json"
    if local.exists():
        return json.loads(local.read_text())
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(path).to_dict()
