"""The reward service: a real uvicorn subprocess on a free loopback port, both request shapes."""

from __future__ import annotations

import httpx
import pytest

from tests.serving import running_server

pytestmark = pytest.mark.slow  # a real uvicorn server in a subprocess


TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def server():
    with running_server(["serve-reward", "--reward", "verifier:math*1.0+format:integer*0.5", "--max-items", "8",
                         "--max-body-kb", "4", "--token", TOKEN, "--log-level", "warning"]) as url:
        yield url


def test_health(server):
    assert httpx.get(f"{server}/health").json() == {"status": "ok", "reward": "verifier:math*1.0+format:integer*0.5"}


def test_openrlhf_request_shape(server):
    body = {"query": ["12+3=15", "12+3=16", "12+3=quinze"], "prompts": ["12+3="] * 3, "labels": ["15"] * 3}
    out = httpx.post(f"{server}/get_reward", json=body, headers=AUTH, timeout=60).json()
    # 1*verifier + 0.5*format: "15" -> 1.5, "16" -> 0.5, "quinze" -> 0 (no answer, not an integer)
    assert out["rewards"] == [1.5, 0.5, 0.0]
    assert out["scores"] == out["rewards"]
    assert out["extra_logs"]["verifier/verdict/correct"] == 1.0
    assert out["extra_logs"]["format/mean"] == pytest.approx(2 / 3)


def test_openrlhf_legacy_query_only(server):
    # older OpenRLHF posts only {"query": [...]}: accepted, but this reward needs gold labels,
    # so the answer is a clear 400 naming the missing column rather than a silent 0
    response = httpx.post(f"{server}/get_reward", json={"query": ["12+3=15"]}, headers=AUTH, timeout=60)
    assert response.status_code == 400 and "'answer'" in response.text


def test_batch_endpoint(server):
    body = {"prompts": ["1+1=", "1+1="], "completions": ["2", "3"], "columns": {"answer": ["2", "2"]}}
    out = httpx.post(f"{server}/reward", json=body, headers=AUTH, timeout=60).json()
    assert out["rewards"] == [1.5, 0.5]
    assert out["metrics"]["total/mean"] == 1.0


@pytest.mark.parametrize(
    "path, body, headers, status, fragment",
    [
        ("/get_reward", {"prompts": ["a"]}, AUTH, 422, "query"),  # missing field
        ("/reward", {"prompts": ["a"], "completions": ["1"]}, AUTH, 400, "'answer'"),  # missing gold column named
        ("/reward", {"prompts": ["a", "b"], "completions": ["1"], "columns": {}}, AUTH, 422, "one prompt per completion"),
        ("/get_reward", {"query": ["x"] * 9, "prompts": ["x"] * 9}, AUTH, 413, "limit is 8"),  # too many items
        ("/get_reward", {"query": ["x" * 5000]}, AUTH, 413, "bytes"),  # body over 4 KiB
        ("/get_reward", {"query": ["1"]}, {}, 401, "bearer token"),  # no token
        ("/reward", {"prompts": [], "completions": []}, {"Authorization": "Bearer wrong"}, 401, "bearer token"),
        # labels must be what the reward compares (text or a number): a nested label is not turned into a string
        # that a completion could spell out to earn the reward
        ("/get_reward", {"query": ["{'a': [1, {'b': 2}]}"], "prompts": [""], "labels": [{"a": [1, {"b": 2}]}]}, AUTH, 400,
         "column 'answer' item 1 is a dict"),
        ("/get_reward", {"query": ["[1, 2]"], "prompts": [""], "labels": [[1, 2]]}, AUTH, 400, "column 'answer' item 1 is a list"),
        ("/get_reward", {"query": ["True"], "prompts": [""], "labels": [True]}, AUTH, 400, "column 'answer' item 1 is a bool"),
        ("/reward", {"prompts": ["p"], "completions": ["{'b': 2}"], "columns": {"answer": [{"b": 2}]}}, AUTH, 400,
         "column 'answer' item 1 is a dict"),
    ],
)
def test_bad_requests(server, path, body, headers, status, fragment):
    response = httpx.post(f"{server}{path}", json=body, headers=headers, timeout=60)
    assert response.status_code == status
    assert fragment in response.text


def test_non_finite_label_is_a_4xx(server):
    body = '{"query": ["nan"], "prompts": [""], "labels": [NaN]}'  # valid for Python's JSON parser
    response = httpx.post(f"{server}/get_reward", content=body, headers={**AUTH, "content-type": "application/json"}, timeout=60)
    assert response.status_code == 400 and "column 'answer' item 1 is nan" in response.text


@pytest.mark.parametrize(
    "body, status, fragment",
    [
        ('{"query": ["1"', 422, "body (at character 14): not valid JSON"),  # cut short
        (b'{"query": ["\xff"]}', 422, "not valid JSON"),  # not UTF-8
        ("[" * 100_000 + "]" * 100_000, 413, "bytes"),  # over the 4 KiB body limit before any parsing
        # under the limit: Python 3.11's parser gives up at this depth ("nested too deeply"), newer ones parse a list
        ("[" * 1_000 + "]" * 1_000, 422, '{"detail": "body: '),
        ('["12+3=15"]', 422, "body: expected a JSON object"),
        ('{"query": "12+3=15"}', 422, "query: expected a list, got a string"),
        ('{"query": null}', 422, "query: field required"),
        ('{"query": ["a", 1, null]}', 422, "query[1]: expected a string, got a number (2 items are not)"),
        ('{"query": ["a"], "prompts": [{"p": 1}]}', 422, "prompts[0]: expected a string, got an object"),
        ('{"query": ["a"], "labels": "15"}', 422, "labels: expected a list, got a string"),
        ('{"query": ["12+3=15"], "prompts": ["12+3="], "labels": ["15"], "metas": [{}]}', 200, '"rewards": [1.5]'),
    ],
    ids=["cut-short", "not-utf8", "nested-over-limit", "nested", "a-list", "query-a-string", "query-null", "query-items",
         "prompts-items", "labels-a-string", "extra-fields"],
)
def test_openrlhf_route_checks_the_body(server, body, status, fragment):
    # the OpenRLHF route is a lean JSON endpoint (not a FastAPI model): it checks each field itself
    response = httpx.post(f"{server}/get_reward", content=body, headers={**AUTH, "content-type": "application/json"}, timeout=60)
    assert (response.status_code, fragment in response.text) == (status, True), (response.status_code, response.text[:300])


def test_openrlhf_route_answers_other_methods_405(server):
    assert httpx.get(f"{server}/get_reward", headers=AUTH, timeout=30).status_code == 405
    assert httpx.post(f"{server}/", json={"query": ["12+3=15"], "prompts": ["12+3="], "labels": ["15"]}, headers=AUTH,
                      timeout=30).json()["rewards"] == [1.5]


def test_cli_bad_spec_lists_valid_names(capsys):
    from rewardlab.cli import main

    assert main(["serve-reward", "--reward", "verifier:math+nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown reward 'nope'" in err and "valid names: calibrated, dispatch, fapo, format" in err


@pytest.mark.parametrize("path", ["/health", "/reward"])
def test_oversized_or_too_many_headers_are_a_431(server, path):
    # one 1 MiB header, or 1,000 small ones (limit 100): refused on every path (the open /health included) before any work
    method = httpx.get if path == "/health" else httpx.post
    kwargs = {} if path == "/health" else {"json": {"prompts": ["1+1="], "completions": ["2"], "columns": {"answer": ["2"]}}}
    for headers in ({**AUTH, "x-big": "a" * (1 << 20)}, {**AUTH, **{f"x-h{i}": "1" for i in range(1_000)}}):
        response = method(server + path, headers=headers, timeout=30, **kwargs)
        assert response.status_code == 431, (response.status_code, response.text[:200])
        assert "limit is" in response.json()["detail"]
    assert method(server + path, headers=AUTH, timeout=30, **kwargs).status_code == 200
