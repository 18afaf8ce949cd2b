"""Who may call a rewardlab service (`rewardlab.service`): loopback is no boundary. A web page in the
user's browser reaches 127.0.0.1 by a simple cross-site POST or by DNS rebinding (its own name,
resolved to 127.0.0.1), and every local user reaches the port. The three services (serve-verifier,
serve-reward, serve-env) refuse the page's requests and require a token by default."""

from __future__ import annotations

import argparse
import itertools
import json

import pytest
from fastapi.testclient import TestClient

from rewardlab.service import ServiceLimits

TOKEN = "t0ken"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _apps():
    """The three services' apps behind the same protections, each with a request it must accept."""
    from rewards import build_reward
    from rewards.env_service import create_env_app
    from rewards.environments import build_env
    from rewards.service import create_app as reward_app
    from verifiers.service import create_app as verifier_app

    limits = ServiceLimits(token=TOKEN)
    return {
        "serve-verifier": (verifier_app(limits), "/verify", {"items": []}),
        "serve-reward": (reward_app(build_reward("format:integer"), "format:integer", limits), "/get_reward",
                         {"query": ["1+1=2"], "prompts": ["1+1="]}),
        "serve-env": (create_env_app(build_env("calculator"), "calculator", limits), "/seed_session", {"task": {"answer": "2"}}),
    }


# what a web page can make the browser send: any Host name it owns (DNS rebinding), a simple POST's content types
# (text/plain, a form, none), the token or not; each mixed with the others, so no single check is relied on
PAGE_HOSTS = ["attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example", "localhost.attacker.example."]
SIMPLE_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None]


@pytest.mark.parametrize("service", ["serve-verifier", "serve-reward", "serve-env"])
def test_a_web_page_cannot_call_a_loopback_service(service):
    app, path, body = _apps()[service]
    client = TestClient(app, base_url="http://127.0.0.1:8000")
    ok = client.post(path, content=json.dumps(body), headers={**AUTH, "content-type": "application/json"})
    assert ok.status_code == 200, ok.text  # the legitimate client: loopback name, JSON, token
    for host, auth in itertools.product(PAGE_HOSTS, (AUTH, {})):  # DNS rebinding: the page's own name in Host
        r = client.post(path, content=json.dumps(body), headers={**auth, "host": host, "content-type": "application/json"})
        assert r.status_code == 400 and "is not a name of this service" in r.json()["detail"], (host, r.text)
    assert client.get("/health", headers={"host": "attacker.example"}).status_code == 400  # every path
    for ctype in SIMPLE_TYPES:  # a simple cross-site POST (no preflight) cannot send application/json
        headers = {**AUTH, **({"content-type": ctype} if ctype else {})}
        r = client.post(path, content=json.dumps(body), headers=headers)
        assert r.status_code == 415 and "Content-Type: application/json" in r.json()["detail"], (ctype, r.text)
    no_token = client.post(path, content=json.dumps(body), headers={"content-type": "application/json"})
    assert no_token.status_code == 401
    # names a client may use: loopback ones, IP addresses (DNS rebinding needs a name), and the configured ones
    for host in ("localhost:8000", "[::1]:8000", "10.1.2.3:8000", "LOCALHOST."):
        r = client.post(path, content=json.dumps(body), headers={**AUTH, "host": host, "content-type": "application/json"})
        assert r.status_code == 200, (host, r.text)


def test_token_in_the_url_for_clients_without_headers_is_not_logged():
    # OpenRLHF's remote-RM client sends JSON and no other header: its URL carries the token, which the
    # middleware takes out of the request before the server's access log prints the path
    app, path, body = _apps()["serve-reward"]
    seen = []

    @app.middleware("http")
    async def record(request, call_next):  # outside the protections, as the server is: it logs after the answer
        response = await call_next(request)
        seen.append(request.scope["query_string"].decode())
        return response

    client = TestClient(app, base_url="http://127.0.0.1:8000")
    assert client.post(f"{path}?token={TOKEN}&x=1", json=body).status_code == 200
    assert client.post(f"{path}?token=wrong", json=body).status_code == 401
    assert seen and all(TOKEN not in q for q in seen) and "x=1" in seen[0]


def _config(module: str, *argv: str):
    import importlib

    from rewardlab.config import add_config_args, config_from_args

    cli = importlib.import_module(module)
    cls = next(v for k, v in vars(cli).items() if k.startswith("Serve") and k.endswith("Config") and isinstance(v, type))
    parser = argparse.ArgumentParser()
    add_config_args(parser, cls)
    return config_from_args(cls, parser.parse_args(list(argv)))


@pytest.mark.parametrize("module,argv", [
    ("verifiers.service_cli", []), ("rewards.service_cli", ["--reward", "format"]), ("rewards.env_service_cli", ["--env", "calculator"])])
def test_each_service_requires_a_token_by_default(module, argv, monkeypatch, capsys):
    from rewardlab.service import service_access

    monkeypatch.delenv("REWARDLAB_SERVICE_TOKEN", raising=False)
    first = service_access(_config(module, *argv), "serve-x")
    second = service_access(_config(module, *argv), "serve-x")
    assert first["token"] and len(first["token"]) >= 24 and first["token"] != second["token"]  # random, per run
    assert first["token"] in capsys.readouterr().out  # printed at start, for the operator's clients
    assert service_access(_config(module, *argv, "--token", "mine"), "serve-x")["token"] == "mine"
    assert service_access(_config(module, *argv, "--no-token"), "serve-x")["token"] is None  # only when asked
    assert "warning: no token" in capsys.readouterr().err
    hosts = service_access(_config(module, *argv, "--host", "0.0.0.0", "--allowed-host", "rl.example"), "serve-x")["allowed_hosts"]
    assert "rl.example" in hosts and len(hosts) >= 2  # and the machine's own names, when listening on every interface
