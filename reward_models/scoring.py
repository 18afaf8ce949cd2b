"""Scoring API: `load_reward_model(path)` -> a `LoadedRewardModel` with `score` and `embed`.

What `score` returns depends on the kind (see docs/contracts.md):
- bt       : `list[float]`, one reward per (prompt, response)
- quantile : `list[QuantileScore]` (quantiles, mean, lower quantile, CVaR, spread)
- prm      : `list[StepScores]`, from `score(prompts, steps)` with `steps` a list of step lists

Scoring runs in batches of `batch_size` (inputs sorted by length, results in input order), on the
model's device, under `torch.no_grad()`, with the truncation described in `reward_models.encoding`.
`QuantileScore` and `StepScores` are defined in `reward_models.scores`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from rewardlab.config import check_fields, opt

from reward_models.backbones import load_tokenizer
from reward_models.encoding import PairEncoder, collate
from reward_models.modeling import RewardModel
from reward_models.scores import QuantileScore, StepScores, check_pairs


class LoadedRewardModel:
    """A trained reward model with its tokenizer: `kind`, `device`, `score`, `embed`."""

    def __init__(self, model: RewardModel, tokenizer: Any, batch_size: int = 32) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self._last: tuple | None = None  # (inputs, outputs) of the last forward
        self.ood: Any = None  # an OODMonitor of the training distribution, when one was saved (ood.npz)
        self.encoder = PairEncoder(tokenizer, max_length=model.config.max_seq_length, append_eos=getattr(model.config, "append_eos", False),
                                   chat_template=getattr(model.config, "use_chat_template", None))

    @property
    def kind(self) -> str:
        return self.model.config.kind

    @property
    def config(self):
        return self.model.config

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def to(self, device: str | torch.device) -> "LoadedRewardModel":
        self.model.to(device)
        return self

    def save_pretrained(self, directory: str | Path) -> None:
        self.model.save_pretrained(directory)
        self.tokenizer.save_pretrained(directory)

    @torch.no_grad()
    def _run(self, items: list[dict[str, Any]], batch_size: int | None, reuse: bool = False) -> list[dict[str, torch.Tensor]]:
        """Forward `items` in length-sorted batches; returns per-item output dicts in input order.
        The last call's outputs are kept: with `reuse`, the same inputs are not run again (so
        `embed` right after `score` of the same texts - the RL loop's reward, then its OOD
        monitor - costs no second forward pass)."""
        size = batch_size or self.batch_size
        if size < 1:
            raise ValueError(f"batch_size must be >= 1, got {size}")
        key = tuple(tuple(it["input_ids"]) for it in items)
        if reuse and self._last is not None and self._last[0] == key:
            return self._last[1]
        order = sorted(range(len(items)), key=lambda i: len(items[i]["input_ids"]))
        results: list[dict[str, torch.Tensor]] = [{} for _ in items]
        pad = self.tokenizer.pad_token_id
        for start in range(0, len(order), size):
            idx = order[start : start + size]
            batch = {k: v.to(self.device) for k, v in collate([items[i] for i in idx], pad).items()}
            out = self.model(**batch)
            for row, i in enumerate(idx):
                results[i] = {k: v[row].float().cpu() for k, v in out.items()}
        self._last = (key, results)
        return results

    def _pairs(self, prompts: Sequence[Any], responses: Sequence[Any]) -> list[dict[str, Any]]:
        check_pairs(prompts, responses, "responses")
        return [self.encoder.encode_pair(p, r) for p, r in zip(prompts, responses)]

    def embed(self, prompts: Sequence[Any], responses: Sequence[Any], batch_size: int | None = None) -> torch.Tensor:
        """The pooled backbone embedding the head reads: [N, H] (float32, on CPU)."""
        outs = self._run(self._pairs(prompts, responses), batch_size, reuse=True)
        if not outs:
            return torch.zeros(0, self.model.config.hidden_size)
        return torch.stack([o["pooled"] for o in outs])

    def score(self, prompts: Sequence[Any], responses: Sequence[Any], batch_size: int | None = None) -> list[Any]:
        """Per-item results; for prm, `responses` is a list of step lists (see the module doc)."""
        return SCORERS[self.kind](self, prompts, responses, batch_size)


def _score_bt(rm: LoadedRewardModel, prompts, responses, batch_size) -> list[float]:
    return [float(o["rewards"]) for o in rm._run(rm._pairs(prompts, responses), batch_size)]


def _score_quantile(rm: LoadedRewardModel, prompts, responses, batch_size) -> list[QuantileScore]:
    taus, names = list(rm.config.taus), list(rm.config.attributes)
    out = []
    for o in rm._run(rm._pairs(prompts, responses), batch_size):
        out.append(
            QuantileScore(
                taus=taus,
                quantiles=o["quantiles"].tolist(),
                attribute_quantiles={n: o["attribute_quantiles"][a].tolist() for a, n in enumerate(names)},
                gate={n: float(o["gate"][a]) for a, n in enumerate(names)},
            )
        )
    return out


def _score_prm(rm: LoadedRewardModel, prompts, steps, batch_size) -> list[StepScores]:
    check_pairs(prompts, steps, "step lists")
    for i, s in enumerate(steps):
        if isinstance(s, str) or not all(isinstance(x, str) for x in s):
            raise TypeError(f"prm scoring takes steps as a list of lists of strings; item {i + 1} is {type(s).__name__}")
    items = [rm.encoder.encode_steps(p, s, rm.config.step_separator) for p, s in zip(prompts, steps)]
    outs = rm._run(items, batch_size)
    result = []
    for item, o in zip(items, outs):
        probs = torch.sigmoid(o["step_logits"])
        result.append(StepScores([float(probs[p]) if p >= 0 else math.nan for p in item["step_positions"]]))
    return result


OOD_FILE = "ood.npz"  # the training distribution's OOD detector, saved beside the model by train-rm

SCORERS: dict[str, Callable[..., list[Any]]] = {"bt": _score_bt, "quantile": _score_quantile, "prm": _score_prm}


@dataclass(frozen=True)
class RMSourceConfig:
    """Which reward model a command loads (`load_reward_model`'s path, kind and hub options): a piece of `eval-rm`'s config."""

    rm: str = opt("", "reward model: a directory or hub name (the project's own, or a hub sequence-classification RM / PRM)",
                  required="a reward-model directory saved by `rewardlab train-rm`, or a hub name")
    rm_kind: str = opt("auto", "auto: what the checkpoint is; prm: also a causal LM as a step-tag PRM (Math-Shepherd)",
                       choices=("auto", "bt", "prm", "quantile"))
    rm_option: tuple[str, ...] = opt((), "key=value options for a hub-format model (label=, tag=, good=, bad=, system=, "
                                         "max_length=, trust_remote_code=), repeatable")

    def check_rm_source(self) -> None:
        check_fields(self, RMSourceConfig)
        bad = next((item for item in self.rm_option if not item.partition("=")[0].strip() or "=" not in item), None)
        if bad is not None:
            raise ValueError(f"--rm-option must look like key=value, got {bad!r}")

    __post_init__ = check_rm_source


def load_reward_model(path: str | Path, device: str | torch.device | None = None, batch_size: int = 32, kind: str | None = None,
                      flag: str | None = None, **options: Any) -> Any:
    """Load a reward model from a directory or hub name; `device` defaults to CUDA when available.

    A model saved by `rewardlab train-rm` (or `save_pretrained`) loads as a `LoadedRewardModel`;
    a hub-format model this project did not train (a sequence-classification RM, a
    token-classification PRM, or with `kind="prm"` a causal-LM step-tag PRM) loads through
    `reward_models.hub` behind the same API, with `options` for it. A local path that does not
    exist is "no such directory" (never a hub lookup); a causal LM given as a reward model says
    what to do instead."""
    from rewardlab.tables import looks_local

    from reward_models.hub import load_hub_reward_model, read_config

    path = str(path)
    where = f"{flag} {path!r}" if flag else repr(path)
    if looks_local(path) and not Path(path).expanduser().exists():
        raise FileNotFoundError(f"{where}: no such directory")
    path = str(Path(path).expanduser()) if looks_local(path) else path
    if Path(path).is_file():
        raise FileNotFoundError(f"{where}: is a file; pass the reward model's directory (the run's 'final' or a checkpoint dir)")
    if Path(path).is_dir() and not (Path(path) / "config.json").exists():
        raise FileNotFoundError(f"{path} has no config.json: not a saved reward model (pass the run's 'final' or a checkpoint dir)")
    try:
        config = read_config(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{where}: not a local directory and not loadable from the hub "
                         f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
    if config.get("model_type") != RewardModel.config_class.model_type:
        return load_hub_reward_model(path, config, kind, device, batch_size, **options)
    if options:
        raise ValueError(f"{where} is a reward model trained by this project: options {sorted(options)} are for hub-format models")
    model = RewardModel.from_pretrained(path)
    tokenizer = load_tokenizer(path)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    rm = LoadedRewardModel(model.to(device), tokenizer, batch_size=batch_size)
    if (Path(path) / OOD_FILE).exists():
        from reward_models.ood import OODMonitor

        rm.ood = OODMonitor.load(Path(path) / OOD_FILE, rm=rm, batch_size=batch_size)
    return rm
