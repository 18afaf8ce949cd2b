"""The `rewardlab` dispatcher and the dataclass-config helper."""

import argparse
import importlib
import json
from dataclasses import dataclass

import pytest

from rewardlab.cli import COMMANDS, main
from rewardlab.config import add_config_args, config_from_args, opt, save_config


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


def test_unknown_command_is_a_clear_error(capsys):
    assert main(["trian-rm"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'trian-rm'" in err and "train-rm" in err


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_module_has_configure_and_run(name):
    module = importlib.import_module(COMMANDS[name][0])
    assert callable(module.configure) and callable(module.run)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_prints_its_help(name, capsys):
    # argparse formats each option's help with %: a bare percent sign in one breaks `--help`
    with pytest.raises(SystemExit) as done:
        main([name, "--help"])
    assert done.value.code == 0 and "usage:" in capsys.readouterr().out


@dataclass(frozen=True)
class Demo:
    steps: int = opt(10, "optimizer steps")
    lr: float = opt(1e-3, "learning rate")
    name: str | None = opt(None, "run name")
    fast: bool = opt(False, "go fast")
    ks: tuple[int, ...] = opt((1, 4), "k values")
    mode: str = opt("a", "mode", choices=("a", "b"))

    def __post_init__(self):
        if self.steps < 1:
            raise ValueError(f"--steps must be >= 1, got {self.steps}")


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_config_args(parser, Demo)
    return config_from_args(Demo, parser.parse_args(argv))


def test_config_round_trip(tmp_path):
    cfg = _parse(["--steps", "3", "--fast", "--ks", "2", "8", "--name", "x", "--mode", "b"])
    assert cfg == Demo(steps=3, lr=1e-3, name="x", fast=True, ks=(2, 8), mode="b")
    assert _parse([]) == Demo()  # defaults
    assert _parse(["--fast", "false"]).fast is False
    path = save_config(cfg, tmp_path / "run")
    assert json.loads(path.read_text())["ks"] == [2, 8]


def test_config_validation_happens_at_parse_time():
    with pytest.raises(ValueError, match="--steps must be >= 1"):
        _parse(["--steps", "0"])
    with pytest.raises(SystemExit):  # argparse rejects a value outside `choices`
        _parse(["--mode", "c"])
