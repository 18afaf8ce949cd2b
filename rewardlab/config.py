"""Frozen-dataclass configs on the command line, with argparse.

A config is a frozen dataclass; each field carries its help text in
`field(metadata={"help": ...})` (use `opt()` below) and is validated in `__post_init__`.
`add_config_args` turns the fields into `--kebab-case` options, `config_from_args` builds the
dataclass back (so validation runs at parse time), and `save_config` writes it beside a run.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Demo:
...     steps: int = opt(10, "optimizer steps")
...     lr: float = opt(1e-3, "learning rate")
>>> import argparse
>>> p = argparse.ArgumentParser(); add_config_args(p, Demo)
>>> config_from_args(Demo, p.parse_args(["--steps", "3"]))
Demo(steps=3, lr=0.001)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import types
import typing
from pathlib import Path
from typing import Any


def opt(default: Any, help: str, **metadata: Any) -> Any:
    """A dataclass field with a default and a one-line help string (shown by `--help`). Constraints
    in `metadata`, checked by `check_fields`: `choices` (also the command line's), `gt`, `ge`, `lt`,
    `le` (on the value, or on each item of a tuple), `required` (a non-empty value; its text says what to pass),
    `seconds` (None or a finite number of seconds > 0)."""
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"help": help, **metadata})
    return dataclasses.field(default=default, metadata={"help": help, **metadata})


def check_fields(config: Any, piece: type) -> None:
    """Check on `config` the constraints written on the fields that `piece` declares itself
    (`choices`, `gt`, `ge`, `lt`, `le`, `required`, `seconds`; None passes the bounds), naming the option.

    >>> @dataclasses.dataclass(frozen=True)
    ... class Demo:
    ...     steps: int = opt(10, "optimizer steps", gt=0)
    ...     mode: str = opt("a", "mode", choices=("a", "b"))
    ...     rates: tuple = opt((0.5,), "rates", ge=0, le=1)
    ...     path: str = opt("x", "input", required="a JSONL file")
    >>> check_fields(Demo(steps=0), Demo)
    Traceback (most recent call last):
    ...
    ValueError: --steps must be > 0, got 0
    >>> check_fields(Demo(mode="c"), Demo)
    Traceback (most recent call last):
    ...
    ValueError: --mode 'c' is not valid; valid values: a, b
    >>> check_fields(Demo(rates=(0.1, 2.0)), Demo)
    Traceback (most recent call last):
    ...
    ValueError: --rates must be <= 1, got 2.0
    >>> check_fields(Demo(path=" "), Demo)
    Traceback (most recent call last):
    ...
    ValueError: --path is required: a JSONL file
    """
    own = set(vars(piece).get("__annotations__", {}))
    for f in dataclasses.fields(piece):
        if f.name in own:
            _check_field(getattr(config, f.name), f.metadata, "--" + f.name.replace("_", "-"))


_BOUNDS = {"gt": (">", lambda v, b: v > b), "ge": (">=", lambda v, b: v >= b),
           "lt": ("<", lambda v, b: v < b), "le": ("<=", lambda v, b: v <= b)}


def _check_field(value: Any, meta: Any, flag: str) -> None:
    if meta.get("required") and (value is None or not str(value).strip() or str(value) == "."):
        raise ValueError(f"{flag} is required: {meta['required']}")
    if meta.get("seconds") and value is not None and not (math.isfinite(value) and value > 0):
        raise ValueError(f"{flag} must be a positive number of seconds, got {value}")
    items = value if isinstance(value, (tuple, list)) else (value,)  # a repeatable option: each of its values
    for item in items:
        if "choices" in meta and item not in meta["choices"]:
            raise ValueError(f"{flag} {item!r} is not valid; valid values: {', '.join(sorted(map(str, meta['choices'])))}")
    for item in items:
        for key, (sign, holds) in _BOUNDS.items():
            if key in meta and item is not None and not holds(item, meta[key]):
                raise ValueError(f"{flag} must be {sign} {meta[key]}, got {item}")


def with_defaults(piece: type, **defaults: Any) -> type:
    """`piece` with other defaults for some of its fields: the same options, help, constraints and
    check, so a command keeps its own defaults while sharing the piece (`__defaults_of__` names it).

    >>> @dataclasses.dataclass(frozen=True)
    ... class Demo:
    ...     steps: int = opt(10, "optimizer steps", gt=0)
    >>> with_defaults(Demo, steps=3)().steps, with_defaults(Demo, steps=3).__defaults_of__ is Demo
    (3, True)
    """
    fields = {f.name: f for f in dataclasses.fields(piece)}
    unknown = sorted(set(defaults) - set(fields))
    if unknown:
        raise TypeError(f"{piece.__name__} has no field(s) {unknown}")
    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": piece.__module__, "__defaults_of__": piece,
                                 "__doc__": piece.__doc__}
    for name, value in defaults.items():
        namespace["__annotations__"][name] = fields[name].type
        namespace[name] = opt(value, fields[name].metadata["help"], **{k: v for k, v in fields[name].metadata.items() if k != "help"})
    return dataclasses.dataclass(frozen=True)(type(piece.__name__, (piece,), namespace))


def _base_type(tp: Any) -> tuple[Any, bool]:
    """(inner type, is_optional) for `X | None` / `Optional[X]`."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return tp, False


def _parse_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true/false, got {text!r}")


def add_config_args(parser: argparse.ArgumentParser, cls: type) -> None:
    """Add one `--option` per field of the dataclass `cls`."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp, optional = _base_type(hints[f.name])
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        help_ = f.metadata.get("help", "")
        choices = f.metadata.get("choices")
        if choices:
            help_ += f" (one of: {', '.join(map(str, choices))})"
        help_ += f" [default: {default}]"
        kwargs: dict[str, Any] = {"dest": f.name, "default": default, "help": help_}
        if tp is bool:
            parser.add_argument(flag, type=_parse_bool, nargs="?", const=True, metavar="BOOL", **kwargs)
            continue
        origin = typing.get_origin(tp)
        if origin in (list, tuple):
            (inner,) = set(typing.get_args(tp)) - {Ellipsis} or {str}
            parser.add_argument(flag, type=inner, nargs="*", **kwargs)
            continue
        if tp in (int, float, str, Path):
            kwargs["type"] = tp
        elif optional and tp not in (int, float, str):
            kwargs["type"] = str
        if choices:
            kwargs["choices"] = choices
        parser.add_argument(flag, **kwargs)


def config_from_args(cls: type, args: argparse.Namespace, **overrides: Any) -> Any:
    """Build the dataclass from parsed args; `__post_init__` validation errors propagate."""
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    values = {k: v for k, v in vars(args).items() if k in names}
    values.update(overrides)
    for f in dataclasses.fields(cls):
        if f.name in values and isinstance(values[f.name], list) and f.type and "tuple" in str(f.type):
            values[f.name] = tuple(values[f.name])
    return cls(**values)


def config_to_dict(config: Any) -> dict[str, Any]:
    def plain(v: Any) -> Any:
        if isinstance(v, Path):
            return str(v)
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    return {k: plain(v) for k, v in dataclasses.asdict(config).items()}


def save_config(config: Any, directory: str | Path, name: str = "config.json") -> Path:
    """Write the config as JSON into `directory` (created if needed)."""
    path = Path(directory) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config_to_dict(config), indent=2, sort_keys=True) + "\n")
    return path
