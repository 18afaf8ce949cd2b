"""Batch scoring: a whole dataset through a reward spec, written back with reward columns and verdicts.

Used for filtering generated solutions, best-of-N labelling and building RM data. The dataset (a
JSONL / Parquet / CSV file or a hub dataset) has one completion per row, its prompt, and whatever
the reward needs (e.g. `answer`). Each row gets:

- `reward`: the reward's value (null where it is not applicable);
- `reward_<component>`: each component's own value, when the spec combines several;
- `verdict` (one verifier) or `verdict_<component>` (several): the verifier's verdict, so a
  failure (timeout, error, bad gold) stays visible instead of hiding in a 0.

Engines (the same `Scorer` in both, so the same verdicts):
- `local`: this process; rule verifiers run in its worker pool (`--workers`);
- `ray`: Ray Data `map_batches`. Rule rewards run as tasks: each Ray worker process builds the
  reward once and keeps it, so it has one verifier worker pool of its own (`--cpus-per-worker`
  processes) for as long as it lives. Learned rewards (rm, qrm, prm, genrm, fapo) run on an actor
  pool (`--actors`), each actor holding one copy of the model (`--gpus-per-worker` for GPUs).
  Ray is optional: `pip install "rewardlab[ray]"`.

Resumable by shards: the rows are cut into shards of `--shard-size`; each finished shard is written
to `<output>.shards/shard-NNNNN.parquet` at once (atomically), and a rerun of the same command
skips the finished ones (`manifest.json` there records what the shards were made with; another
command on the same output is refused unless `--overwrite`). When every shard is done they are
joined into `--output` and a summary (verdict counts, reward means, items/s) is printed and saved
as `<output>.shards/summary.json`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from rewardlab.config import check_fields, opt
from rewardlab.runs import write_file_atomically

SHARD_COLUMN = "__shard"  # carried through Ray Data so each output row finds its shard


# ------------------------------------------------------------------------------------ scoring

@dataclass(frozen=True)
class RayConfig:
    """Where `score-data --engine ray` runs and how it splits the work: a piece of `ScoreDataConfig`."""

    ray_address: str | None = opt(None, "ray engine: cluster address ('auto' inside a cluster); default: start a local Ray instance")
    actors: int | None = opt(None, "ray engine: scorers at once (learned rewards: the actor pool's size; default: the cluster's CPUs / --cpus-per-worker)", ge=1)
    cpus_per_worker: float = opt(1.0, "ray engine: CPUs per Ray task / actor; also the size of its verifier worker pool", gt=0)
    gpus_per_worker: float = opt(0.0, "ray engine: GPUs per actor (learned reward models)", ge=0)
    actor_pool: bool | None = opt(None, "ray engine: score on an actor pool (true) or with tasks (false); default: actors for learned rewards, tasks for rule rewards")

    def check_ray(self) -> None:
        check_fields(self, RayConfig)

    __post_init__ = check_ray


class Scorer:
    """Scores a pyarrow Table of rows and returns it with the reward and verdict columns added.
    Builds its reward on first use, in the process that uses it (a Ray actor builds its own)."""

    def __init__(self, spec: str, prompt_column: str = "prompt", completion_column: str = "completion",
                 verifier_workers: int | None = None) -> None:
        self.spec, self.prompt_column, self.completion_column = spec, prompt_column, completion_column
        self.verifier_workers = verifier_workers
        self._reward: Any = None

    @property
    def reward(self) -> Any:
        if self._reward is None:
            from rewards.spec import build_reward

            if self.verifier_workers:
                from verifiers.pool import PoolConfig, configure_pool, get_pool

                if get_pool().capacity != self.verifier_workers:
                    configure_pool(PoolConfig(workers=self.verifier_workers))
            self._reward = build_reward(self.spec)
        return self._reward

    def check_columns(self, table: Any) -> None:
        names = table.column_names
        for column in (self.prompt_column, self.completion_column):
            if column not in names:
                raise ValueError(f"score-data: the rows have no column {column!r} (they have {sorted(n for n in names if n != SHARD_COLUMN)}); "
                                 f"name the right one with --{'prompt' if column == self.prompt_column else 'completion'}-column")

    def __call__(self, table: Any) -> Any:
        import pyarrow as pa

        self.check_columns(table)
        names = table.column_names
        rows = {name: table.column(name).to_pylist() for name in names if name != SHARD_COLUMN}
        prompts, completions = rows.pop(self.prompt_column), rows.pop(self.completion_column)
        from rewards.concurrent import call_reward

        values = list(call_reward(self.reward, prompts, completions, **rows))
        if len(values) != len(completions):
            raise ValueError(f"reward {self.spec!r} returned {len(values)} values for {len(completions)} rows")
        for name, column in output_columns(self.reward, values).items():
            kind = pa.string() if name.startswith("verdict") else pa.float64()
            table = table.append_column(name, pa.array(column, type=kind))
        return table


def output_columns(reward: Any, values: list) -> dict[str, list]:
    """The columns a reward's last call gives: `reward`, `reward_<component>` and the verdicts."""
    from rewards.combine import Combine
    from rewards.verifier import VerifierReward

    def number(v: Any) -> float | None:
        return None if v is None or (isinstance(v, float) and v != v) else float(v)

    out: dict[str, list] = {"reward": [number(v) for v in values]}
    parts = [(name, fn) for name, fn, _ in reward.components] if isinstance(reward, Combine) else []
    for name in reward.last_components if parts else ():
        out[f"reward_{name}"] = [number(v) for v in reward.last_components[name]]
    verifiers = [(name, fn) for name, fn in parts if isinstance(fn, VerifierReward)]
    if isinstance(reward, VerifierReward):
        out["verdict"] = list(reward.last_verdicts)
    elif len(verifiers) == 1:
        out["verdict"] = list(verifiers[0][1].last_verdicts)
    else:
        for name, fn in verifiers:
            out[f"verdict_{name}"] = list(fn.last_verdicts)
    return out


# ------------------------------------------------------------------------------------ data
def load_table(data: str, split: str = "train", limit: int | None = None) -> Any:
    """A pyarrow Table of a JSONL / JSON / Parquet / CSV file or a hub dataset's split."""
    import datasets

    path = Path(data)
    builders = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
    try:
        if path.exists():
            if path.suffix not in builders:
                raise ValueError(f"--data {data!r}: unknown file type {path.suffix!r}; use one of {sorted(builders)}")
            ds = datasets.load_dataset(builders[path.suffix], data_files=str(path), split="train")
        else:
            ds = datasets.load_dataset(data, split=split)
    except (FileNotFoundError, ConnectionError, OSError) as err:
        raise ValueError(f"--data {data!r}: not an existing file nor an available dataset "
                         f"({err.__class__.__name__}: {str(err).splitlines()[0] if str(err) else ''})") from None
    if limit is not None:
        ds = ds.select(range(min(limit, len(ds))))
    table = ds.with_format("arrow")[:]
    if table.num_rows == 0:
        raise ValueError(f"--data {data!r}: no rows")
    return table


def write_table(table: Any, path: Path) -> None:
    """Write `table` as Parquet or JSONL (by the suffix), atomically (`rewardlab.runs.write_file_atomically`)."""
    import pyarrow.parquet as pq

    if path.suffix not in (".parquet", ".jsonl", ".json"):
        raise ValueError(f"--output {str(path)!r}: write .parquet or .jsonl")

    def write(tmp: Path) -> None:
        if path.suffix == ".parquet":
            pq.write_table(table, tmp)
            return
        with open(tmp, "w") as f:
            for row in table.to_pylist():
                f.write(json.dumps(row, default=str) + "\n")

    write_file_atomically(path, write)


# ------------------------------------------------------------------------------------ shards
@dataclass(frozen=True)
class Plan:
    """Where the shards of a run live and which are done."""

    output: Path
    rows: int
    shard_size: int

    @property
    def folder(self) -> Path:
        return self.output.with_name(self.output.name + ".shards")

    @property
    def shards(self) -> int:
        return -(-self.rows // self.shard_size)

    def path(self, k: int) -> Path:
        return self.folder / f"shard-{k:05d}.parquet"

    def done(self) -> list[int]:
        return [k for k in range(self.shards) if self.path(k).exists()]

    def todo(self) -> list[int]:
        return [k for k in range(self.shards) if not self.path(k).exists()]


def prepare_folder(plan: Plan, manifest: dict[str, Any], overwrite: bool) -> None:
    """Create the shard folder, or check that the one there was made by the same command."""
    path = plan.folder / "manifest.json"
    if overwrite and plan.folder.exists():
        shutil.rmtree(plan.folder)
    if path.is_symlink():  # a dangling link would pass `exists()` as False and be written through
        raise ValueError(f"{path} is a symbolic link; rewardlab writes no file through a link: remove it or choose another --output")
    if path.exists():
        old = json.loads(path.read_text())
        if old != manifest:
            diff = sorted(k for k in set(old) | set(manifest) if old.get(k) != manifest.get(k))
            raise ValueError(f"{plan.folder} holds shards of another command (different {', '.join(diff)}); "
                             f"pass --overwrite to start over, or choose another --output")
        return
    plan.folder.mkdir(parents=True, exist_ok=True)
    from rewardlab.runs import write_text_atomically

    write_text_atomically(path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def local_batches(table: Any, plan: Plan, todo: list[int], scorer: Scorer, batch_size: int) -> Iterator[tuple[int, Any]]:
    """(shard, scored rows) for the rows of the shards to do, scored in this process."""
    for k in todo:
        start = k * plan.shard_size
        shard = table.slice(start, min(plan.shard_size, plan.rows - start))
        for at in range(0, shard.num_rows, batch_size):
            yield k, scorer(shard.slice(at, batch_size))


_PROCESS_SCORERS: dict[tuple, Scorer] = {}


def score_in_worker(table: Any, spec: str, prompt_column: str, completion_column: str, verifier_workers: int) -> Any:
    """A Ray task's function: the `Scorer` of this worker process (built on its first batch and
    kept, with its verifier pool, for the process's later batches)."""
    key = (spec, prompt_column, completion_column, verifier_workers)
    if key not in _PROCESS_SCORERS:
        _PROCESS_SCORERS[key] = Scorer(spec, prompt_column, completion_column, verifier_workers)
    return _PROCESS_SCORERS[key](table)


def ray_batches(table: Any, plan: Plan, todo: list[int], scorer: Scorer, batch_size: int, actors: int | None,
                cpus_per_worker: float, gpus_per_worker: float, actor_pool: bool | None = None) -> Iterator[tuple[int, Any]]:
    """(shard, scored rows) from Ray Data: the shards to do as blocks, `map_batches` of the scorer
    (tasks for rule rewards, one verifier pool per Ray worker process; an actor pool for learned
    rewards, one model per actor), results in order."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import ray

    import logging

    logging.getLogger("ray.data").setLevel(logging.WARNING)  # our progress bar and summary say what matters
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # shards complete one after another
    ctx.enable_progress_bars = False  # ours counts rows
    blocks = []  # a few batches per block: Ray hands a whole block to one actor, so small blocks balance and stream
    block_rows = max(batch_size, min(plan.shard_size, 4 * batch_size))
    for k in todo:
        start = k * plan.shard_size
        shard = table.slice(start, min(plan.shard_size, plan.rows - start))
        shard = shard.append_column(SHARD_COLUMN, pa.array([k] * shard.num_rows, type=pa.int32()))
        blocks.extend(shard.slice(at, block_rows) for at in range(0, shard.num_rows, block_rows))
    from rewards.spec import is_learned

    settings = {"spec": scorer.spec, "prompt_column": scorer.prompt_column, "completion_column": scorer.completion_column,
                "verifier_workers": max(1, int(cpus_per_worker))}
    resources = {"num_cpus": cpus_per_worker, **({"num_gpus": gpus_per_worker} if gpus_per_worker else {})}
    ds = ray.data.from_arrow(blocks)
    if actor_pool if actor_pool is not None else is_learned(scorer.spec):  # a model per actor, loaded once
        if actors is None:
            actors = max(1, int(ray.cluster_resources().get("CPU", 1) // max(cpus_per_worker, 1e-9)))
        ds = ds.map_batches(Scorer, fn_constructor_kwargs=settings, batch_size=batch_size, batch_format="pyarrow",
                            concurrency=actors, **resources)
    else:  # tasks: Ray reuses its worker processes, and each keeps its scorer and verifier pool
        ds = ds.map_batches(score_in_worker, fn_kwargs=settings, batch_size=batch_size, batch_format="pyarrow",
                            **({"concurrency": actors} if actors else {}), **resources)
    for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
        ids = batch.column(SHARD_COLUMN)
        for k in sorted(set(ids.to_pylist())):
            part = batch.filter(pc.equal(ids, k)) if len(set(ids.to_pylist())) > 1 else batch
            yield k, part.drop_columns([SHARD_COLUMN])


def start_ray(address: str | None) -> None:
    """Connect to a Ray cluster (`address`, e.g. "auto"), or start a local instance whose workers
    import this checkout of rewardlab."""
    import ray

    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False)
        return
    root = str(Path(__file__).resolve().parents[1])
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:  # the local instance's workers inherit this environment (and start faster than with a runtime_env)
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
    ray.init(include_dashboard=False, log_to_driver=False)


def run_shards(batches: Iterator[tuple[int, Any]], plan: Plan, todo: list[int], progress: Callable[[int], None]) -> None:
    """Gather scored rows per shard and write each shard as soon as all its rows are in."""
    import pyarrow as pa

    pending: dict[int, list] = {}
    for k, part in batches:
        pending.setdefault(k, []).append(part)
        progress(part.num_rows)
        expected = min(plan.shard_size, plan.rows - k * plan.shard_size)
        if sum(p.num_rows for p in pending[k]) == expected:
            write_table(pa.concat_tables(pending.pop(k)), plan.path(k))
    if pending:
        raise RuntimeError(f"shards {sorted(pending)} did not receive all their rows")
    missing = [k for k in todo if not plan.path(k).exists()]
    if missing:
        raise RuntimeError(f"shards {missing} were not written")


def summarize(table: Any, seconds: float, scored_rows: int) -> dict[str, Any]:
    """Verdict counts and reward statistics of the scored table."""
    summary: dict[str, Any] = {"rows": table.num_rows, "scored_this_run": scored_rows,
                               "seconds_this_run": round(seconds, 2),
                               "items_per_s_this_run": round(scored_rows / seconds, 1) if seconds > 0 and scored_rows else None}
    for name in table.column_names:
        values = table.column(name).to_pylist()
        if name.startswith("verdict"):
            summary[name] = dict(sorted(Counter("no_gold" if v is None else v for v in values).items()))
        elif name == "reward" or name.startswith("reward_"):
            kept = [v for v in values if v is not None]
            summary[name] = {"mean": round(sum(kept) / len(kept), 6) if kept else None, "not_applicable": len(values) - len(kept)}
    return summary


def score_dataset(data: str, reward: str, output: Path, *, split: str = "train", prompt_column: str = "prompt",
                  completion_column: str = "completion", engine: str = "local", batch_size: int = 512, shard_size: int = 10_000,
                  limit: int | None = None, workers: int | None = None, ray_address: str | None = None, actors: int | None = None,
                  cpus_per_worker: float = 1.0, gpus_per_worker: float = 0.0, actor_pool: bool | None = None,
                  overwrite: bool = False, progress_bar: bool = True, table: Any = None) -> dict[str, Any]:
    """Score `data` with `reward` into `output` (see the module docstring); returns the summary.
    `table` (a pyarrow Table) may be given instead of reading `data`."""
    from rewardlab.progress import progress_bar as progress_lines

    output = Path(output)
    if output.suffix not in (".parquet", ".jsonl", ".json"):
        raise ValueError(f"--output {str(output)!r}: write .parquet or .jsonl")
    scorer = Scorer(reward, prompt_column, completion_column, verifier_workers=workers)
    scorer.reward  # a bad spec fails here, before any data is read  # noqa: B018
    if table is None:
        table = load_table(data, split, limit)
    scorer.check_columns(table)
    plan = Plan(output, table.num_rows, shard_size)
    manifest = {"data": data, "split": split, "reward": reward, "prompt_column": prompt_column,
                "completion_column": completion_column, "shard_size": shard_size, "rows": table.num_rows}
    prepare_folder(plan, manifest, overwrite)
    todo = plan.todo()
    done_rows = table.num_rows - sum(min(shard_size, plan.rows - k * shard_size) for k in todo)
    if done_rows:
        print(f"score-data: {plan.shards - len(todo)} of {plan.shards} shards already done in {plan.folder}; "
              f"scoring the other {len(todo)}", file=sys.stderr)
    bar = progress_lines(total=table.num_rows, initial=done_rows, unit="items", desc=f"score-data ({engine})", disable=not progress_bar)
    start = time.perf_counter()
    try:
        if todo and engine == "ray":
            start_ray(ray_address)
            batches = ray_batches(table, plan, todo, scorer, batch_size, actors, cpus_per_worker, gpus_per_worker, actor_pool)
        elif todo:
            batches = local_batches(table, plan, todo, scorer, batch_size)
        else:
            batches = iter(())
        run_shards(batches, plan, todo, bar.update)
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    import pyarrow as pa
    import pyarrow.parquet as pq

    scored = pa.concat_tables([pq.read_table(plan.path(k)) for k in range(plan.shards)])
    write_table(scored, output)
    summary = summarize(scored, seconds, table.num_rows - done_rows)
    summary.update(engine=engine, reward_spec=reward, output=str(output))
    (plan.folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
