"""Monitors: plain objects the RL loop calls once per step with that step's rollouts and scores.
Each returns numbers to log and, optionally, an alarm (a sentence saying what went wrong).

- `SampleLog`       a few (prompt, completion, reward, gold) samples per step, for metrics.jsonl and the report
- `ConstantReward`  warns when the reward (or a component of a composite) is the same for every completion:
                    a constant reward teaches nothing, and the policy drifts on noise
- `OODShare`        the share of the step's completions that a learned reward model's OOD detector
                    (`reward_models.ood`, saved by train-rm) flags as outside its training distribution
- `GoldProbe`       greedy accuracy on a fixed set of held-out prompts with gold answers, every few steps
- `HackMonitor`     the alarm: the proxy (the training reward) rises while the gold probe falls; or the
                    completion length or the PRM's step count drifts far from where it started

`build_monitors` builds them for a run; `Monitors.step` calls them with the step's batch and adds
their numbers to the step's metrics line.

>>> m = HackMonitor(gold_drop=0.05, drift=0.5)
>>> [m.observe({"step": s, "reward/mean": 0.1 * s, "probe/accuracy": g, "length/mean": 4.0})
...  for s, g in [(1, 0.30), (2, 0.40), (3, 0.44), (4, 0.34), (5, 0.30), (6, 0.28)]][-1]
'gold probe accuracy fell from 39.3% (step 4) to 30.7% while the proxy reward rose from 0.250 to 0.400'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rewards.base import reward_name
from training.guards import TrainingStopped

if TYPE_CHECKING:
    from training.collect import Batch
    from training.run_state import Run


@dataclass
class StepView:
    """What a monitor sees of one step: the training completions and their rewards."""

    step: int
    prompts: list[str]  # one per completion
    completions: list[str]
    totals: list[float | None]  # the training reward per completion
    gold: list[float | None] | None  # the accuracy reward per completion, where the data has gold answers
    metrics: dict[str, float]  # the reward's own metrics of this step (components, verdict counts, ...)
    group_size: int


# ---------------------------------------------------------------- samples
@dataclass
class SampleLog:
    """The first completion of each of the first `k` prompts of the step (no randomness: a resumed
    run logs the same samples)."""

    k: int = 4

    def __call__(self, view: StepView) -> dict[str, Any]:
        out = []
        for i in range(0, min(len(view.completions), self.k * view.group_size), view.group_size):
            item = {"prompt": view.prompts[i][-200:], "completion": view.completions[i][:400], "reward": view.totals[i]}
            if view.gold is not None:
                item["gold"] = view.gold[i]
            out.append(item)
        return {"samples": out} if out else {}


# ---------------------------------------------------------------- constant rewards
def _spread(values: Sequence[float | None]) -> tuple[float, float] | None:
    kept = [v for v in values if v is not None]
    return (min(kept), max(kept)) if kept else None


@dataclass
class ConstantReward:
    """A warning when the reward, or a component of a composite (its `<name>/std` metric), has the
    same value for every completion of the step. Warns on the first such step and then every
    `every` steps while it lasts (the count is logged every step).

    It also decides when a run must stop (`stop_reason`): after `max_none_steps` steps in a row in
    which the reward was None (not applicable) for every completion - a broken gold column, a
    reward that does not apply to this data: nothing is trained - or `max_constant_steps` steps
    in a row of one value for every completion (0 turns either off). The reason names the reward,
    its metrics of the last step (e.g. verdict counts) and a sample."""

    name: str = "reward"
    every: int = 25
    max_none_steps: int = 0
    max_constant_steps: int = 0
    stop_reason: str | None = field(default=None, init=False)
    _count: int = field(default=0, init=False)
    _none: int = field(default=0, init=False)
    _const: int = field(default=0, init=False)

    def __call__(self, view: StepView) -> tuple[dict[str, float], str | None]:
        constant = []
        n = max(len(view.totals), 1)
        none_frac = sum(t is None for t in view.totals) / n
        self._none = self._none + 1 if view.totals and none_frac == 1.0 else 0
        span = _spread(view.totals)
        whole = span is not None and len(view.totals) > 1 and span[1] - span[0] <= 1e-12 * max(1.0, abs(span[0]))
        if whole:
            constant.append(f"{self.name} = {span[0]:.4g}")
        for key, value in view.metrics.items():
            if key.endswith("/std") and not key.startswith("total/") and isinstance(value, float) and value == 0.0:
                mean = view.metrics.get(key[: -len("/std")] + "/mean", math.nan)
                constant.append(f"component {key[: -len('/std')]!r} = {mean:.4g}")
        numbers = {"monitor/none_frac": none_frac}
        self._check_stop(view, whole)
        if not constant:
            self._count = 0
            return {**numbers, "monitor/constant_reward": 0.0}, None
        self._count += 1
        warn = None
        if self._count == 1 or self._count % self.every == 0:
            warn = (f"step {view.step}: constant reward over all {len(view.totals)} completions ({'; '.join(constant)}) "
                    f"for {self._count} step(s) in a row: no learning signal (is the reward's threshold or scale right?)")
        return {**numbers, "monitor/constant_reward": 1.0}, warn

    def _check_stop(self, view: StepView, whole: bool) -> None:
        self._const = self._const + 1 if whole else 0
        if self.max_none_steps and self._none >= self.max_none_steps:
            what = f"was None (not applicable) for all {len(view.totals)} completions"
            count = self._none
        elif self.max_constant_steps and self._const >= self.max_constant_steps:
            what = f"was {_spread(view.totals)[0]:.4g} for all {len(view.totals)} completions"
            count = self._const
        else:
            return
        metrics = ", ".join(f"{k}={v:.4g}" for k, v in view.metrics.items() if isinstance(v, (int, float)) and v == v)
        sample = (f"prompt={view.prompts[0][-160:]!r}, completion={view.completions[0][:160]!r}"
                  if view.completions else "no completions")
        self.stop_reason = (f"reward {self.name!r} {what} in {count} steps in a row (steps {view.step - count + 1}-{view.step}): "
                            f"nothing to learn from. Its metrics at step {view.step}: {metrics or 'none'}. "
                            f"A sample: {sample}. Check the reward against the data (e.g. the gold column), or set "
                            f"--max-none-steps / --max-constant-steps 0 to run on")


# ---------------------------------------------------------------- OOD share
def learned_models(reward: Any) -> list[tuple[str, Any]]:
    """(name, reward model) of every learned component of a reward that carries an OOD detector."""
    found: list[tuple[str, Any]] = []

    def walk(fn: Any, name: str) -> None:
        model = getattr(fn, "model", None)
        if model is not None and getattr(model, "ood", None) is not None:
            found.append((name, model))
        for comp in getattr(fn, "components", ()) or ():
            if isinstance(comp, tuple):
                walk(comp[1], comp[0])
        for attr in ("reward", "success", "fn"):
            inner = getattr(fn, attr, None)
            if callable(inner) and inner is not fn:
                walk(inner, name)

    walk(reward, getattr(reward, "name", "reward"))
    return found


@dataclass
class OODShare:
    """Per step, for each learned reward model with a detector: the share of completions flagged
    out of its training distribution (`ood/<name>_frac`), and one rule for the flag and the warning:
    `ood/<name>_alarm` is 1 on a step where the share is both above the detector's batch level
    (the expected share plus 3 binomial standard errors) and at least three times the expected
    share (5% -> 15%); the warning prints, once per model, on the first such step."""

    models: list[tuple[str, Any]]
    _warned: set = field(default_factory=set, init=False)

    def __call__(self, view: StepView) -> tuple[dict[str, float], str | None]:
        out, warn = {}, None
        for name, rm in self.models:
            report = rm.ood.check(view.prompts, view.completions)
            out[f"ood/{name}_frac"] = report.flagged_fraction
            alarm = report.batch_is_ood and report.flagged_fraction >= 3 * report.target_fpr
            out[f"ood/{name}_alarm"] = float(alarm)
            if alarm and name not in self._warned:
                self._warned.add(name)
                warn = (f"step {view.step}: {report.flagged_fraction:.0%} of the completions are outside reward model "
                        f"{name!r}'s training distribution (expected {report.target_fpr:.0%}): its scores there are not to be trusted")
        return out, warn


# ---------------------------------------------------------------- gold probe
@dataclass
class GoldProbe:
    """Greedy accuracy on held-out prompts with gold answers; `accuracy_of(rows)` is the loop's
    evaluation function (greedy generation + the accuracy reward)."""

    rows: list[dict]
    every: int
    accuracy_of: Callable[[list[dict]], float]

    def __call__(self, step: int, last: bool = False) -> dict[str, float]:
        if not self.rows or (step % self.every and not last and step != 1):
            return {}
        return {"probe/accuracy": self.accuracy_of(self.rows)}


@dataclass
class BestProbePolicy:
    """--rollback-on-alarm: the policy's weights at its best gold probe so far (a CPU copy, taken
    at each new best), put back when the hack alarm stops the run: the alarm fires once the gold
    probe has already fallen, so the policy at the alarm is past its best."""

    step: int = 0
    accuracy: float = float("-inf")
    state: dict[str, Any] | None = None

    def offer(self, step: int, accuracy: float, model: Any) -> None:
        if accuracy > self.accuracy:
            self.step, self.accuracy = step, accuracy
            self.state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}

    def restore(self, model: Any) -> dict[str, Any] | None:
        """Load the kept weights into `model`; {"step", "probe_accuracy"} or None when none was kept."""
        if self.state is None:
            return None
        model.load_state_dict(self.state)
        return {"step": self.step, "probe_accuracy": self.accuracy}


# ---------------------------------------------------------------- the hack alarm
@dataclass
class HackMonitor:
    """Raises an alarm when the learned reward stops tracking gold:

    - the gold signal `gold_key` (the mean of the last `probe_window` gold probes, or without a
      probe the rollouts' gold accuracy over `window` steps) is `gold_drop` below its best while
      the proxy reward (smoothed) is at or above its value at that best;
    - the mean completion length, or the PRM's mean step count, moved more than `drift`
      (relative) from its start (the mean of the first `window` steps).
    One alarm per cause; `observe` returns the newest alarm's text (or None)."""

    gold_drop: float = 0.05
    drift: float = 0.3
    gold_key: str | None = "probe/accuracy"  # or "accuracy" (the rollouts' gold correct rate) without a probe; None: no gold alarm
    window: int = 5  # steps the proxy, the rollouts' accuracy and the drifts are averaged over
    probe_window: int = 3  # gold probes averaged (one probe of 256 prompts has a standard error of ~3 points)
    history: list[dict[str, float]] = field(default_factory=list)
    raised: set = field(default_factory=set)
    _best: tuple[float, int, float] | None = field(default=None, init=False)  # (gold, step, proxy then)
    expected: bool = field(default=False, init=False)  # the last alarm is a case the docs call expected (tool use)
    _gold: float | None = field(default=None, init=False)  # the latest gold signal

    def _tool_use_note(self, key: str, longer: bool, gold: float | None) -> str:
        """Why a longer completion is expected, when it is: the episodes call tools more often (each
        call and its result lengthen the completion, docs/training.md) and gold has not fallen."""
        start, now = self._start("episodes/tool_calls_mean"), self._smooth("episodes/tool_calls_mean")
        if key != "length/mean" or not longer or start is None or now is None or now <= start:
            return ""
        if gold is None or self._best is None or gold <= self._best[0] - self.gold_drop:
            return ""
        return (f"; expected with tool use, not a hack: tool calls per episode rose from {start:.2f} to {now:.2f} (each call "
                f"and its result lengthen the completion) while gold accuracy holds ({gold:.1%}, best {self._best[0]:.1%})")

    def _smooth(self, key: str, window: int | None = None) -> float | None:
        """The mean of the last `window` logged values of `key` (steps where it was not logged skipped)."""
        values = [h[key] for h in self.history if isinstance(h.get(key), (int, float))][-(window or self.window) :]
        return sum(values) / len(values) if values else None

    def _start(self, key: str) -> float | None:
        values = [h[key] for h in self.history if isinstance(h.get(key), (int, float))][: self.window]
        return sum(values) / len(values) if len(values) == self.window else None

    def observe(self, record: dict[str, Any]) -> str | None:
        self.history.append({k: v for k, v in record.items() if isinstance(v, (int, float))})
        alarm, self.expected = None, False
        gold_key = self.gold_key if self.gold_key and isinstance(record.get(self.gold_key), (int, float)) else None
        proxy = self._smooth("reward/mean")
        if gold_key is not None and proxy is not None:
            gold = self._smooth(gold_key, self.probe_window if gold_key.startswith("probe/") else self.window)
            self._gold = gold  # the latest (probes come every few steps; the alarms between read this one)
            if self._best is None or gold > self._best[0]:
                self._best = (gold, record["step"], proxy)
            best, at, proxy_then = self._best
            if "gold" not in self.raised and gold <= best - self.gold_drop and proxy >= proxy_then:
                self.raised.add("gold")
                name = "gold probe accuracy" if gold_key.startswith("probe/") else "gold accuracy of the rollouts"
                alarm = (f"{name} fell from {best:.1%} (step {at}) to {gold:.1%} while the proxy reward rose "
                         f"from {proxy_then:.3f} to {proxy:.3f}")
        for key, what in (("length/mean", "mean completion length"), ("steps_mean", "mean PRM step count")):
            keys = [k for k in record if k == key or k.endswith("/" + key)]
            if not keys or key in self.raised:
                continue
            start, now = self._start(keys[0]), self._smooth(keys[0])
            if start and now is not None and abs(now - start) > self.drift * abs(start):
                self.raised.add(key)
                alarm = f"{what} drifted from {start:.2f} to {now:.2f} ({now / start - 1:+.0%})"
                note = self._tool_use_note(key, now > start, self._gold)
                self.expected = bool(note)
                alarm += note
        return alarm


# ---------------------------------------------------------------- the loop's view
@dataclass
class Monitors:
    """The per-step monitors above and what they said."""

    samples: SampleLog
    constant: ConstantReward
    ood: OODShare | None
    probe: GoldProbe | None
    hack: HackMonitor
    warn: Any  # fn(text): print a warning above the progress bar

    def step(self, run: Run, step: int, batch: Batch, record: dict[str, Any]) -> str | None:
        """Add the monitors' numbers to `record`; returns the hack alarm's text, if any."""
        view = StepView(step=step, prompts=batch.prompts, completions=batch.rollout.texts, totals=batch.scores.totals,
                        gold=batch.gold, metrics=batch.metrics, group_size=run.config.group_size)
        for monitor in (self.constant, self.ood):
            if monitor is None:
                continue
            numbers, warning = monitor(view)
            record.update(numbers)
            if warning:
                self.warn(f"rl: warning: {warning}")
        if self.probe is not None:
            record.update(self.probe(step, last=step == run.config.steps))
        alarm = self.hack.observe(record)
        record["monitor/alarm"] = float(alarm is not None)
        if alarm:
            record["monitor/alarm_reason"] = alarm
            action = ("; stopping with the policy of the best gold probe (--rollback-on-alarm)" if run.config.rollback_on_alarm
                      else "; stopping (--stop-on-alarm)" if run.config.stop_on_alarm else "")
            label = "alarm (expected)" if self.hack.expected else "HACK ALARM"
            self.warn(f"rl: {label} at step {step}: {alarm}{action}")
        record.update(self.samples(view))
        return alarm

    def check_stop(self) -> None:
        """Raise `TrainingStopped` when a monitor says the run cannot learn (all-None or constant rewards)."""
        if self.constant.stop_reason:
            raise TrainingStopped(self.constant.stop_reason)


def build_monitors(run: Run, probe_rows: list[dict], warn: Any) -> Monitors:
    """The monitors of an `rl` run; `warn(text)` prints a warning (above the progress bar)."""
    from training.heldout import greedy_accuracy

    c = run.config
    models = learned_models(run.reward_fn)
    probe = GoldProbe(probe_rows, c.probe_every, lambda rows: greedy_accuracy(run, rows)) if probe_rows and run.accuracy_fn else None
    constant = ConstantReward(reward_name(run.reward_fn), max_none_steps=c.max_none_steps, max_constant_steps=c.max_constant_steps)
    return Monitors(samples=SampleLog(c.log_samples), constant=constant,
                    ood=OODShare(models) if models else None, probe=probe,
                    hack=HackMonitor(c.hack_gold_drop, c.hack_drift, gold_key=None if not c.gold_alarm else "probe/accuracy" if probe else "accuracy"),
                    warn=warn)
