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

from rewardlab.config import add_config_args, check_fields, config_from_args, opt
from rewards.batch import RayConfig

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class ScoreDataConfig(RayConfig):
    """score-data: the rows, the reward, where the scored rows go, and the engine (Ray's settings: `RayConfig`)."""

    data: str = opt("", "rows to score: a JSONL / Parquet / CSV file or a hub dataset name (required)", required="a file or a hub dataset")
    reward: str = opt("", "reward spec, e.g. verifier:math, rm:PATH, verifier:math*1.0+format*0.1, module:function (required)",
                      required="a reward spec, e.g. verifier:math")
    output: Path = opt(Path(""), "where the scored rows go: .parquet or .jsonl (required); shards in <output>.shards/",
                       required="a .parquet or .jsonl path")
    split: str = opt("train", "split of a hub dataset")
    prompt_column: str = opt("prompt", "column with the prompt of each row")
    completion_column: str = opt("completion", "column with the completion (solution, response) to score")
    engine: str = opt("local", "local: this machine's verifier pool; ray: Ray Data over a cluster (pip install 'rewardlab[ray]')", choices=ENGINES)
    batch_size: int = opt(512, "rows per reward call", ge=1)
    shard_size: int = opt(10_000, "rows per shard: each finished shard is saved, and a rerun skips it", ge=1)
    limit: int | None = opt(None, "score only the first N rows", ge=1)
    workers: int | None = opt(None, "local engine: verifier worker processes (default: min(cpu count, 4))", ge=1)
    overwrite: bool = opt(False, "discard finished shards of an earlier run on the same --output")
    progress: bool = opt(True, "show a progress bar")

    def check_score_data(self) -> None:
        check_fields(self, ScoreDataConfig)
        if Path(self.output).suffix not in (".parquet", ".jsonl", ".json"):
            raise ValueError(f"--output {str(self.output)!r}: use a .parquet or .jsonl path")

    def __post_init__(self) -> None:
        self.check_ray()
        self.check_score_data()


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
