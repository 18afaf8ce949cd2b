"""One CPU-thread policy for every command: a machine-fixed default, a warning past the free cores."""

import os

import torch

import rewardlab.runtime as runtime


def test_auto_is_fixed_per_machine_and_more_than_the_free_cores_is_warned_once(monkeypatch):
    monkeypatch.setattr(runtime, "machine_cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.4, 1.0, 1.0))  # one core busy with another job
    runtime._warned.clear()
    said = []
    assert runtime.free_cores() == 1 and runtime.default_threads() == 1
    assert runtime.check_threads(2, "train-rm", warn=said.append)
    assert "--cpu-threads 2 but only 1 of 2 cores are free" in said[0] and "pass --cpu-threads 1" in said[0]
    assert not runtime.check_threads(2, "train-rm", warn=said.append) and len(said) == 1  # once
    assert not runtime.check_threads(1, "train-rm", warn=said.append)  # within the free cores: quiet
    before = torch.get_num_threads()
    with runtime.cpu_threads(0, "rl"):
        assert torch.get_num_threads() == 1  # auto on a 2-core machine, whatever the load
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    with runtime.cpu_threads(0, "rl"):
        assert torch.get_num_threads() == 1  # the same on an idle one: the count never follows the load
    assert torch.get_num_threads() == before
    monkeypatch.setattr(runtime, "machine_cores", lambda: 16)
    assert runtime.default_threads() == 8 and runtime.free_cores() == 16
