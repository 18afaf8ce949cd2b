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

import torch

LOG_RATIO_CLAMP = 10.0


def k1(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    return logprobs - ref_logprobs


def k2(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    return 0.5 * (logprobs - ref_logprobs) ** 2


def k3(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    log_r = (ref_logprobs - logprobs).clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
    return torch.exp(log_r) - 1 - log_r


KL = {"k1": k1, "k2": k2, "k3": k3}
