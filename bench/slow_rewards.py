"""Slow rewards for the benchmarks: the math verifier behind a remote service.

`remote_verifier` is an async reward (TRL's convention): every item costs 20 ms of waiting (network,
queue, a judge's latency) with at most 16 items in flight, the way a remote verifier or judge
behind a rate limit behaves; the verdicts are the real math verifier's. 512 items take ~0.64 s.

    rewardlab rl --reward bench.slow_rewards:remote_verifier ...   (run from the repository root)
"""

from __future__ import annotations

import asyncio

from rewards.verifier import VerifierReward

LATENCY = 0.020  # seconds per item
IN_FLIGHT = 16  # items waited on at once

_verifier = VerifierReward(kind="math")


async def remote_verifier(prompts, completions, **columns):
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one() -> None:
        async with gate:
            await asyncio.sleep(LATENCY)

    await asyncio.gather(*(one() for _ in completions))
    return await asyncio.to_thread(_verifier, prompts, completions, **columns)


remote_verifier.itemwise = True
remote_verifier.answer_column = "answer"  # what `rl` checks the data for
