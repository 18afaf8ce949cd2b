"""Scoring overlapped with generation and training (`rl --overlap`).

Without overlap a step is generate -> score -> train, one after another. With a slow reward (a
remote judge, a sandbox, a learned RM) scoring dominates the step. With `--overlap`:

    step t:  generate batch t+1 (weights after step t-1)  |  background: score batch t, then batch t+1
             wait for batch t's scores -> advantages -> update
    so scoring runs while the next batch is generated and while the current one trains.

This changes the algorithm, which is why it is off by default: batch t+1 is sampled by the policy
before update t and trained after it, one step off-policy. The loss stays a correct PPO-clip
objective because each rollout carries the log-probabilities of the policy that sampled it
(`behaviour`, a no-grad pass right after generation): the ratio is pi_theta / pi_behaviour, clipped
as usual (the same treatment as one-step-off-policy / asynchronous GRPO in other trainers).

- The scorer is one background thread: batches are scored in order, one at a time (a reward keeps
  the metrics of its last call). A reward that raises stops the run as before (the error is
  re-raised in the loop).
- Checkpoint steps and the last step do not generate ahead, so a checkpoint holds no half-used
  batch, and `--resume` continues exactly like an uninterrupted run with `--overlap`.
- Dynamic sampling: the batch generated ahead is the first round; further rounds of the same step
  are generated and scored at once, with the current weights.
- Rewards that sample with torch's global random generator (a generative judge) would draw from it
  on the scorer thread while the loop samples: such runs are not bit-reproducible with `--overlap`.
"""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass
from typing import Any, Callable

import torch

from training.forward import PolicyPass


@dataclass
class Round:
    """One round of generation: the prompts' rows and texts, the rollout, and the behaviour
    policy's per-token outputs when the round is used one step later (overlap), else None."""

    rows: list[dict]
    prompts: list[str]
    rollout: Any
    behaviour: PolicyPass | None
    generate_seconds: float


@dataclass
class ScoredRound:
    round: Round
    scores: Any
    gold: list | None
    metrics: dict[str, float]
    score_seconds: float


class BackgroundScorer:
    """Scores rounds on one background thread, in the order they are submitted."""

    def __init__(self, score: Callable[[Round], ScoredRound]) -> None:
        self.score = score
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardlab-scorer")

    def submit(self, round_: Round) -> concurrent.futures.Future:
        return self.pool.submit(self.score, round_)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def wait_for(future: concurrent.futures.Future) -> tuple[ScoredRound, float]:
    """(the scored round, seconds the loop waited for it)."""
    start = time.time()
    scored = future.result()  # a reward error raised on the scorer thread is raised here
    return scored, time.time() - start


def select_rows(behaviour: PolicyPass | None, idx: list[int]) -> PolicyPass | None:
    if behaviour is None:
        return None
    return PolicyPass(*(x[idx] if x is not None else None for x in behaviour))


def concat_behaviour(parts: list[PolicyPass | None], width: int) -> PolicyPass | None:
    """Stack the behaviour tensors [n_k, C_k] of several rounds, right-padded to `width` columns
    (the width of the stacked rollout)."""
    if not parts or parts[0] is None:
        return None

    def pad(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pad(x, (0, width - x.shape[1]), value=0.0)

    return PolicyPass(*(torch.cat([pad(p[i]) for p in parts]) if parts[0][i] is not None else None for i in range(3)))
