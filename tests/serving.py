"""Start a `rewardlab` HTTP command as a real uvicorn server on a free loopback port."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from typing import Iterator

import httpx
import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(command: list[str], env: dict[str, str] | None = None, start_timeout: float = 60) -> Iterator[str]:
    """Run `rewardlab <command...> --port P` until the block ends; yields the base URL once
    `/health` answers 200. A server that exits or never answers fails the test with its output."""
    port = free_port()
    full_env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "rewardlab", *command, "--port", str(port)],
                            env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + start_timeout
    while True:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"server did not start: {proc.stdout.read()}")
        time.sleep(0.2)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
