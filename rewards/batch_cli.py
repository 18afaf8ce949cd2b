"""`rewardlab score-data`: verify and/or score a whole dataset with a reward spec; write it back
with reward columns and verdicts (see `rewards.batch`).

    rewardlab score-data --data solutions.jsonl --reward verifier:math --output scored.parquet
    rewardlab score-data --data solutions.parquet --reward "verifier:math*1.0+format:integer*0.1" \\
        --output scored.jsonl --engine ray --ray-address auto     # on a Ray cluster
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from rewardlab.config import add_config_args, config_from_args, opt

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class ScoreDataConfig:
    data: str = opt("", "rows to score: a JSONL / Parquet / CSV file or a hub dataset name (required)")
    reward: str = opt("", "reward spec, e.g. verifier:math, rm:PATH, verifier:math*1.0+format*0.1, module:function (required)")
    output: Path = opt(Path(""), "where the scored rows go: .parquet or .jsonl (required); shards in <output>.shards/")
    split: str = opt("train", "split of a hub dataset")
    prompt_column: str = opt("prompt", "column with the prompt of each row")
    completion_column: str = opt("completion", "column with the completion (solution, response) to score")
    engine: str = opt("local", "local: this machine's verifier pool; ray: Ray Data over a cluster (pip install 'rewardlab[ray]')", choices=ENGINES)
    batch_size: int = opt(512, "rows per reward call")
    shard_size: int = opt(10_000, "rows per shard: each finished shard is saved, and a rerun skips it")
    limit: int | None = opt(None, "score only the first N rows")
    workers: int | None = opt(None, "local engine: verifier worker processes (default: min(cpu count, 4))")
    ray_address: str | None = opt(None, "ray engine: cluster address ('auto' inside a cluster); default: start a local Ray instance")
    actors: int | None = opt(None, "ray engine: scorers at once (learned rewards: the actor pool's size; default: the cluster's CPUs / --cpus-per-worker)")
    cpus_per_worker: float = opt(1.0, "ray engine: CPUs per Ray task / actor; also the size of its verifier worker pool")
    gpus_per_worker: float = opt(0.0, "ray engine: GPUs per actor (learned reward models)")
    actor_pool: bool | None = opt(None, "ray engine: score on an actor pool (true) or with tasks (false); default: actors for learned rewards, tasks for rule rewards")
    overwrite: bool = opt(False, "discard finished shards of an earlier run on the same --output")
    progress: bool = opt(True, "show a progress bar")

    def __post_init__(self) -> None:
        for name in ("data", "reward"):
            if not getattr(self, name).strip():
                raise ValueError(f"--{name} is required")
        if not str(self.output) or str(self.output) == ".":
            raise ValueError("--output is required (a .parquet or .jsonl path)")
        if Path(self.output).suffix not in (".parquet", ".jsonl", ".json"):
            raise ValueError(f"--output {str(self.output)!r}: use a .parquet or .jsonl path")
        for name in ("batch_size", "shard_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        for name in ("limit", "workers", "actors"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"--{name} must be >= 1, got {getattr(self, name)}")
        if self.cpus_per_worker <= 0 or self.gpus_per_worker < 0:
            raise ValueError("--cpus-per-worker must be > 0 and --gpus-per-worker >= 0")


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_args(parser, ScoreDataConfig)


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(ScoreDataConfig, args)
        if config.engine == "ray":
            try:
                import ray.data  # noqa: F401
            except ImportError:
                raise ValueError("--engine ray needs Ray Data: pip install 'rewardlab[ray]' (or 'ray[data]')") from None
        from rewards.batch import score_dataset

        summary = score_dataset(config.data, config.reward, config.output, split=config.split, prompt_column=config.prompt_column,
                                completion_column=config.completion_column, engine=config.engine, batch_size=config.batch_size,
                                shard_size=config.shard_size, limit=config.limit, workers=config.workers,
                                ray_address=config.ray_address, actors=config.actors, cpus_per_worker=config.cpus_per_worker,
                                gpus_per_worker=config.gpus_per_worker, actor_pool=config.actor_pool, overwrite=config.overwrite,
                                progress_bar=config.progress)
    except ValueError as exc:
        print(f"rewardlab score-data: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2))
    return 0
