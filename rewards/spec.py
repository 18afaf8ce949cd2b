"""Rewards by name: `build_reward(spec)` turns a spec string into a reward.

Grammar:
    spec      := term ("+" term)*            several terms -> a `Combine` (weights default to 1)
    term      := single ("*" weight)?
    single    := name (":" arg)*  |  module:function
    arg       := value | key=value            (several key=value may share one arg, comma-separated)

Examples: `verifier:math`, `verifier:math:no_answer=-0.5`, `ttrl`, `format:integer`,
`rm:PATH`, `qrm:PATH:cvar=0.1`, `prm:PATH:clip-delta:success=math`, `genrm:PATH:pointwise:k=4`,
`genrm:http://127.0.0.1:8000/v1:model=judge,concurrency=8`, `hybrid:math:http://HOST:PORT/v1`,
`dispatch:default=math`, `verifier:math*1.0+format*0.1`, `my_pkg.rewards:brevity`. Paths and
regular expressions inside a spec must not contain `+`, `*` or `:` (build such rewards in Python
instead); an http(s) URL may hold its `:` (scheme and port).
"""

from __future__ import annotations

import codecs
import importlib
import re
from typing import Any, Callable

from rewards import generative, learned, prm, raters, shaping, ttrl, verifier
from rewards.base import suggestion
from rewards.combine import Combine
from verifiers.api import OPTION_CHECKS

Factory = Callable[..., Any]


def spec_value(text: str) -> Any:
    low = text.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return codecs.decode(text, "unicode_escape") if "\\" in text else text


def _verifier(kind: str = "math", column: str = "answer", timeout: float | None = None, reasoning: str = "auto",
              **verdicts: Any) -> Any:
    options = {k: verdicts.pop(k) for k in list(verdicts) if k not in verifier.VERDICTS and kind in OPTION_CHECKS}
    unknown = [k for k in verdicts if k not in verifier.VERDICTS]
    if unknown:
        valid = list(dict.fromkeys(["column", "timeout", "reasoning", *verifier.VERDICTS]))
        raise ValueError(f"unknown option {unknown[0]!r}{suggestion(unknown[0], valid)}; valid options: {', '.join(valid)}")
    if options:  # the kind's own options (`verifier:code:language=cpp`), checked now by the kind
        module_name, _, attr = OPTION_CHECKS[kind].partition(":")
        try:
            getattr(importlib.import_module(module_name), attr)(options)
        except TypeError as exc:
            raise ValueError(f"unknown option: {exc}") from None
    return verifier.VerifierReward(kind=kind, answer_column=column, timeout=timeout, reasoning=reasoning,
                                   rewards=verifier.verdict_rewards(**verdicts), options=options)


def _judge(target: str | None = None, column: str = "answer", **remote: Any) -> Any:
    from rewards.generative import load_judge
    from rewards.judge import JudgeReward

    if not target:
        raise ValueError("the spec judge:URL needs the URL of an OpenAI-compatible judge server (or a local judge model)")
    return JudgeReward(load_judge(target, **_remote_options(remote)), answer_column=column)


def _hybrid(kind: str = "math", target: str | None = None, column: str = "answer", ask: str = "no_answer|incorrect",
            timeout_verify: float | None = None, **remote: Any) -> Any:
    from rewards.generative import load_judge
    from rewards.judge import HybridReward

    if not target:
        raise ValueError("the spec hybrid:KIND:URL needs the URL of an OpenAI-compatible judge server (or a local judge model)")
    asked = tuple(a.strip() for a in str(ask).replace("/", "|").split("|") if a.strip())
    rule = verifier.VerifierReward(kind=kind, answer_column=column, timeout=timeout_verify)
    return HybridReward(rule, load_judge(target, **_remote_options(remote, ("column", "ask", "timeout_verify"))), ask=asked)


def _remote_options(options: dict[str, Any], own: tuple[str, ...] = ("column",)) -> dict[str, Any]:
    from rewards.generative import REMOTE_OPTIONS

    unknown = [k for k in options if k not in REMOTE_OPTIONS]
    if unknown:
        valid = [*own, *REMOTE_OPTIONS]
        raise ValueError(f"unknown option {unknown[0]!r}{suggestion(unknown[0], valid)}; valid options: {', '.join(valid)}")
    return options


_UNSET = object()


def _dispatch(column: str = "answer", source_column: str = "data_source", default: Any = _UNSET,
              timeout: float | None = None, **mapping: Any) -> Any:
    from rewards.dispatch import NONE, DispatchReward

    # default=none arrives as None (the spec's null): rows of unknown sources get None
    default = None if default is _UNSET else NONE if default is None else str(default)
    return DispatchReward(mapping={k: str(v) for k, v in mapping.items()}, default=default, source_column=source_column,
                          answer_column=column, timeout=timeout)


def _calibrated(kind: str = "math", column: str = "answer") -> Any:
    return shaping.ConfidenceCalibratedReward(verifier.VerifierReward(kind=kind, answer_column=column))


# name -> (factory(*positional, **keyword), usage). Add a reward by adding one line here.
REWARDS: dict[str, tuple[Factory, str]] = {
    "verifier": (_verifier, "verifier[:KIND][:VERDICT=VALUE,...][:column=answer][:timeout=S][:reasoning=auto|prefilled|off][:language=cpp,compare=lines (code)]"),
    "ttrl": (lambda kind="math", column="answer", min_votes=2: ttrl.MajorityVoteReward(kind=kind, gold_column=column, min_votes=min_votes),
             "ttrl[:KIND][:min_votes=2]"),
    "format": (lambda pattern="think-answer", reasoning="auto": shaping.FormatReward(pattern, reasoning=reasoning),
               f"format[:{'|'.join(shaping.FORMAT_PATTERNS)}][:reasoning=auto|prefilled|off]"),
    "overlong": (lambda max_length=512, cache=128: shaping.OverlongPenalty(max_length, cache), "overlong[:max_length=512,cache=128]"),
    "repetition": (lambda ngram=3, max_penalty=-1.0: shaping.RepetitionPenalty(ngram, max_penalty), "repetition[:ngram=3,max_penalty=-1]"),
    "length": (lambda target=256, coef=0.1: shaping.LengthPenalty(target, coef), "length[:target=256,coef=0.1]"),
    "calibrated": (_calibrated, "calibrated[:KIND]"),
    "raters": (lambda stat="mean", column="answer", rater=None: raters.build_rater_reward(f"rater={rater}" if rater else stat, column),
               "raters[:mean|min|correct|floor|rater=K][:column=answer] (a panel of simulated raters who disagree)"),
    "rm": (learned.scalar_rm_from_spec, "rm:PATH[:standardize][hub RMs: label=0,max_length=N,trust_remote_code=true]"),
    "qrm": (learned.quantile_rm_from_spec, "qrm:PATH[:mean|lower=A|cvar=A|risk=L][:standardize]"),
    "prm": (prm.prm_from_spec, "prm:PATH[:raw|clip|delta|clip-delta|min|last|product|mean][:eta=0.5,alpha=1,success=KIND,sep=space|newline|TEXT (default: the PRM's own)][hub PRMs: tag=TOKEN,good=plus,bad=minus,system=TEXT,max_length=N,trust_remote_code=true]"),
    "genrm": (generative.genrm_from_spec, "genrm:PATH|URL[:pyes|pointwise][:k=4,average=true,max_new_tokens=N][:model=NAME,concurrency=8,rate=0,retries=3,backoff=0.5,timeout=60,cache=100000,api_key_env=OPENAI_API_KEY]"),
    "fapo": (generative.fapo_from_spec, "fapo:PATH|URL[:KIND][:penalty=1][:model=NAME,...]"),
    "judge": (_judge, "judge:URL|PATH[:column=answer][:model=NAME,concurrency=8,rate=0,retries=3,backoff=0.5,timeout=60,cache=100000,max_tokens=N]"),
    "hybrid": (_hybrid, "hybrid:KIND:URL|PATH[:ask=no_answer|incorrect][:column=answer][:model=NAME,concurrency=8,rate=0,retries=3,timeout=60,...]"),
    "dispatch": (_dispatch, "dispatch[:SOURCE=KIND,...][:default=KIND|none][:source_column=data_source][:column=answer][:timeout=S]"),
}


# rewards computed by a learned model: RL against them needs guards (KL to the reference, monitors)
LEARNED = ("rm", "qrm", "prm", "genrm", "fapo", "judge", "hybrid")


def is_learned(spec: str) -> bool:
    """Whether any term of the spec is a learned reward (rm, qrm, prm, genrm, fapo, judge, hybrid).

    >>> is_learned("verifier:math*1.0+rm:runs/rm/final*0.5"), is_learned("verifier:math")
    (True, False)
    """
    terms = [t.strip().rpartition("*")[0] if "*" in t else t.strip() for t in str(spec).split("+")]
    return any(t.split(":")[0] in LEARNED for t in terms)


def trained_model_paths(spec: str) -> list[tuple[str, str]]:
    """(term, path) of every reward-model term (rm, qrm, prm) of the spec, the path as written
    (a local folder or a hub name).

    >>> trained_model_paths("verifier:math*1.0+rm:runs/rm/final*0.5+prm:runs/prm/final:clip")
    [('rm:runs/rm/final', 'runs/rm/final'), ('prm:runs/prm/final:clip', 'runs/prm/final')]
    """
    terms = [t.strip().rpartition("*")[0] if "*" in t else t.strip() for t in str(spec).split("+")]
    return [(t, t.split(":")[1]) for t in terms if t.split(":")[0] in ("rm", "qrm", "prm") and len(t.split(":")) > 1]


def reward_names() -> list[str]:
    return sorted(REWARDS)


def _usage() -> str:
    return "; ".join(usage for _, usage in REWARDS.values()) + "; a combination a*W+b*W; or module:function"


def split_args(parts: list[str]) -> tuple[list[Any], dict[str, Any]]:
    positional, keyword = [], {}
    for part in parts:
        for piece in part.split(",") if "=" in part else [part]:
            if "=" in piece:
                key, _, value = piece.partition("=")
                keyword[key.strip().replace("-", "_")] = spec_value(value.strip())
            elif piece:
                positional.append(piece)
    return positional, keyword


def _import_reward(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"reward spec {spec!r}: {module_name!r} is not a reward name{suggestion(module_name, reward_names())} "
                         f"({', '.join(reward_names())}) "
                         f"and cannot be imported as a module ({exc})") from None
    if not hasattr(module, attr):
        raise ValueError(f"reward spec {spec!r}: module {module_name!r} has no attribute {attr!r}")
    fn = getattr(module, attr)
    if not callable(fn):
        raise ValueError(f"reward spec {spec!r}: {module_name}.{attr} is not callable")
    return fn


def split_spec(spec: str) -> list[str]:
    """The `:`-separated parts of a term, with an http(s) URL (scheme, host:port, path) kept whole.

    >>> split_spec("genrm:http://127.0.0.1:8000/v1:pointwise:k=2")
    ['genrm', 'http://127.0.0.1:8000/v1', 'pointwise', 'k=2']
    """
    parts, out = spec.split(":"), []
    i = 0
    while i < len(parts):
        part = parts[i]
        if part in ("http", "https") and i + 1 < len(parts) and parts[i + 1].startswith("//"):
            part, i = part + ":" + parts[i + 1], i + 1
            if i + 1 < len(parts) and re.match(r"\d+(/|$)", parts[i + 1]):  # the port (and the path after it)
                part, i = part + ":" + parts[i + 1], i + 1
        out.append(part)
        i += 1
    return out


def build_single(spec: str) -> Any:
    """One reward (no `+`/`*`) from its spec."""
    spec = spec.strip()
    name, *parts = split_spec(spec)
    if name in REWARDS:
        factory, usage = REWARDS[name]
        positional, keyword = split_args(parts)
        try:
            return factory(*positional, **keyword)
        except TypeError as exc:
            raise ValueError(f"reward spec {spec!r}: {_explain(exc, factory)}; usage: {usage}") from None
        except ValueError as exc:
            if str(exc).startswith("unknown option"):
                raise ValueError(f"reward spec {spec!r}: {exc}; usage: {usage}") from None
            raise
    if len(parts) == 1 and name and parts[0].isidentifier():
        return _import_reward(spec)
    raise ValueError(f"unknown reward {name!r} in spec {spec!r}{suggestion(name, reward_names())}; valid names: "
                     f"{', '.join(reward_names())} (usage: {_usage()})")


def _explain(exc: TypeError, factory: Factory) -> str:
    """A factory's TypeError as a sentence; an unknown option gets the closest valid name."""
    import inspect
    import re

    text = str(exc)
    found = re.search(r"unexpected keyword argument '([^']+)'", text)
    if not found:
        return f"bad arguments ({text})"
    params = [p for p, v in inspect.signature(factory).parameters.items() if v.kind in (v.KEYWORD_ONLY, v.POSITIONAL_OR_KEYWORD)]
    return f"unknown option {found.group(1)!r}{suggestion(found.group(1), params)}; valid options: {', '.join(params)}"


def build_reward(spec: str) -> Any:
    """A reward from a spec string (see the module docstring).

    >>> fn = build_reward("format:integer*1.0+length:target=2,coef=1*0.5")
    >>> fn(["q", "q"], ["12", "1234"]), sorted(k for k in fn.last_metrics if k.endswith("/mean"))
    ([1.0, 0.5], ['format/mean', 'length/mean', 'total/mean'])
    >>> build_reward("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown reward 'nope' in spec 'nope'; valid names: calibrated, dispatch, fapo, format, genrm, ...
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a reward spec must be a non-empty string, got {spec!r}; valid names: {', '.join(reward_names())}")
    terms = [t.strip() for t in spec.split("+")]
    if len(terms) == 1 and "*" not in terms[0]:
        return build_single(terms[0])
    components, seen = [], {}
    for term in terms:
        body, star, weight_text = term.rpartition("*")
        if not star:
            body, weight = term, 1.0
        else:
            try:
                weight = float(weight_text)
            except ValueError:
                raise ValueError(f"reward spec {spec!r}: weight {weight_text!r} of term {term!r} is not a number") from None
        fn = build_single(body)
        name = body.split(":")[0] if body.split(":")[0] in REWARDS else body.replace(":", ".")
        seen[name] = seen.get(name, 0) + 1
        components.append((name if seen[name] == 1 else f"{name}{seen[name]}", fn, weight))
    return Combine(components, name=spec)
