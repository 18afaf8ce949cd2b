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


SERVICE_TOKEN = "tests-service-token"  # what `running_server` gives a server started without --token
SERVICE_AUTH = {"Authorization": f"Bearer {SERVICE_TOKEN}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(command: list[str], env: dict[str, str] | None = None, start_timeout: float = 60) -> Iterator[str]:
    """Run `rewardlab <command...> --port P` until the block ends; yields the base URL once
    `/health` answers 200. A server that exits or never answers fails the test with its output. Without
    --token in `command` the server requires `SERVICE_TOKEN` (its $REWARDLAB_SERVICE_TOKEN)."""
    port = free_port()
    full_env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""),
                "REWARDLAB_SERVICE_TOKEN": SERVICE_TOKEN, **(env or {})}
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


class OpenRLHFClient:
    """OpenRLHF's remote reward client: one query per HTTP request, JSON with no other header (so
    the token rides in the URL, `?token=`); on any error (connection, non-2xx status) it waits one
    second and tries again, 5 tries in all, then leaves the reward empty (None). Counts what it saw,
    so a test can tell that no reward was lost."""

    def __init__(self, url: str, tries: int = 5, pause: float = 1.0, timeout: float = 180.0, token: str = SERVICE_TOKEN) -> None:
        self.url, self.tries, self.pause = f"{url}?token={token}", tries, pause
        self.client = httpx.Client(timeout=timeout)
        self.statuses: list[int] = []

    def reward(self, query: str, prompt: str, label: str) -> float | None:
        for _ in range(self.tries):
            try:
                response = self.client.post(self.url, json={"query": [query], "prompts": [prompt], "labels": [label]})
                self.statuses.append(response.status_code)
                response.raise_for_status()
                return response.json()["rewards"][0]
            except httpx.HTTPError:
                time.sleep(self.pause)
        return None  # what OpenRLHF does after its last try: the reward stays empty

    def close(self) -> None:
        self.client.close()
