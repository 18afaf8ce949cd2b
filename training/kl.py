"""KL estimators between the policy and a frozen reference, per token, chosen by name from `KL`.

    fn(logprobs [N, T], ref_logprobs [N, T]) -> kl [N, T]

With r = pi_ref / pi_theta (log r = ref_logprobs - logprobs):
k1 = log pi_theta - log pi_ref;  k2 = 1/2 (log pi_theta - log pi_ref)^2;  k3 = r - 1 - log r,
the log-ratio clamped to [-10, 10] so exp() cannot overflow.

>>> lp, ref = torch.tensor([[0.0]]), torch.tensor([[-1.0]])
>>> [round(KL[k](lp, ref).item(), 4) for k in ("k1", "k2", "k3")]
[1.0, 0.5, 0.3679]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from rewardlab.config import check_fields, opt
from rewardlab.tables import looks_local

LOG_RATIO_CLAMP = 10.0


def k1(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    return logprobs - ref_logprobs


def k2(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    return 0.5 * (logprobs - ref_logprobs) ** 2


def k3(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    log_r = (ref_logprobs - logprobs).clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
    return torch.exp(log_r) - 1 - log_r


KL = {"k1": k1, "k2": k2, "k3": k3}


# ---------------------------------------------------------------- configuration
LEARNED_KL = 0.02  # InstructGPT's per-token KL weight (beta ~ 0.02); the default when the reward is learned


@dataclass(frozen=True)
class KLConfig:
    """The KL penalty and its reference model: a piece of `rl`'s config (the weight's default
    depends on the reward, so `RLConfig` resolves it)."""

    kl_coef: float | None = opt(None, f"KL weight to the reference policy (0: no reference model). Default: {LEARNED_KL} with a learned reward, else 0")
    kl_estimator: str = opt("k3", "KL estimator", choices=tuple(KL))
    kl_in: str = opt("loss", "where the KL goes: loss or reward", choices=("loss", "reward"))
    ref_model: str | None = opt(None, "reference model for the KL; default: the starting policy. 'none' disables the default")

    def check_kl(self) -> None:
        check_fields(self, KLConfig)
        if self.kl_coef is None:
            return  # unset: the composed config resolves it from the reward before this check
        if self.kl_coef < 0:
            raise ValueError(f"--kl-coef must be >= 0, got {self.kl_coef}")
        if self.kl_coef > 0 and (self.ref_model or "").lower() == "none":
            raise ValueError(
                f"--kl-coef {self.kl_coef} needs a reference model, but --ref-model is 'none'; pass "
                "--ref-model PATH (or omit it to use the starting policy), or set --kl-coef 0"
            )
        if self.kl_coef > 0 and self.ref_model and self.ref_model.lower() != "none" and looks_local(self.ref_model) and not Path(self.ref_model).exists():
            raise ValueError(f"--ref-model {self.ref_model!r} does not exist; pass a model folder or a hub name")

    __post_init__ = check_kl
