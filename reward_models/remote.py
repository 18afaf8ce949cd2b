"""A judge behind an OpenAI-compatible chat-completions endpoint (vLLM, SGLang, TGI, any provider),
with the same methods as the local `GenerativeJudge` (`generate`, `p_yes`, `pointwise`) plus
`judge_reference` (does a response match a reference answer?).

Every request goes through one client that bounds what a judge costs and says what failed:
- `concurrency`: requests in flight at once (an asyncio semaphore);
- `rate`: requests started per second at most (0: no limit), spaced evenly;
- `retries` with exponential backoff (`backoff` x 2^attempt seconds, +-10% jitter; a
  `Retry-After` header is honoured, up to 60 s) on timeouts, connection errors, 429 and 5xx;
- `timeout` seconds per request;
- a cache of successful replies keyed by the whole request (`cache` entries, least recently used
  dropped; 0: off), so a repeated question is not paid twice.
A request that still fails gives None for its item - never a score - and its reason is counted in
`stats` (`timeout`, `connect`, `http_429`, `http_5xx`, `http_4xx`, `bad_response`); a reply the
judge's parser cannot read is counted as `unparseable`.

Requests run on one event loop in a background thread (shared by every judge of the process, made
again after a fork), so the synchronous reward API works from the main thread, from other threads
and from inside a running asyncio loop.

The API key is read from the environment (`api_key_env`, default OPENAI_API_KEY), never from a
spec string (specs are saved in run configs).

>>> endpoint_url("http://127.0.0.1:8000/v1"), endpoint_url("http://h:1/v1/chat/completions")
('http://127.0.0.1:8000/v1/chat/completions', 'http://h:1/v1/chat/completions')
>>> parse_yes_no(" Yes."), parse_yes_no("no"), parse_yes_no("maybe") is None
(True, False, True)
"""

from __future__ import annotations

import asyncio
import collections
import json
import math
import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from reward_models.local_judge import JudgeTemplates, PointwiseResult, parse_scores

RETRY_STATUS = {429, 500, 502, 503, 504}
_LOOP: tuple[int, asyncio.AbstractEventLoop] | None = None  # (pid, loop) of the judges' background thread
_LOOP_LOCK = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The process's judge event loop, running in a daemon thread (started on first use)."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP[0] != os.getpid() or _LOOP[1].is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="rewardlab-judges", daemon=True).start()
            _LOOP = (os.getpid(), loop)
        return _LOOP[1]
MAX_RETRY_AFTER = 60.0


def endpoint_url(base_url: str) -> str:
    """The chat-completions URL of a base URL (".../v1") or of the full endpoint."""
    url = base_url.rstrip("/")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


def parse_yes_no(text: str | None) -> bool | None:
    """True / False for a reply that starts with yes / no (case, spaces and punctuation ignored)."""
    if text is None:
        return None
    m = re.match(r"\W*(yes|no)\b", text.strip(), re.IGNORECASE)
    return None if m is None else m.group(1).lower() == "yes"


@dataclass
class Limits:
    """What one judge may cost (see the module docstring)."""

    concurrency: int = 8
    rate: float = 0.0  # requests per second (0: no limit)
    retries: int = 3
    backoff: float = 0.5  # seconds before the first retry; doubled each time
    timeout: float = 60.0  # seconds per request
    cache: int = 100_000  # cached replies (0: no cache)

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.retries < 0 or self.rate < 0 or self.backoff < 0 or self.timeout <= 0 or self.cache < 0:
            raise ValueError(f"judge limits must be concurrency >= 1, retries >= 0, rate >= 0, backoff >= 0, timeout > 0, "
                             f"cache >= 0; got {self}")


@dataclass
class Reply:
    text: str
    logprobs: list[dict[str, float]] | None = None  # first token's top alternatives: token -> logprob


@dataclass
class JudgeStats:
    """Counts since the judge was made (a reward publishes the change over each call)."""

    requests: int = 0  # requests sent (retries included)
    calls: int = 0  # items asked for (cache hits included)
    cache_hits: int = 0
    retries: int = 0
    failures: collections.Counter = field(default_factory=collections.Counter)  # reason -> count
    seconds: float = 0.0  # time spent in judge calls
    max_in_flight: int = 0

    def snapshot(self) -> dict[str, float]:
        out = {"requests": float(self.requests), "calls": float(self.calls), "cache_hits": float(self.cache_hits),
               "retries": float(self.retries), "failed": float(sum(self.failures.values())), "seconds": self.seconds}
        out.update({f"failed/{k}": float(v) for k, v in self.failures.items()})
        return out


class RemoteJudge:
    """An LLM judge behind an OpenAI-compatible endpoint (see the module docstring)."""

    def __init__(self, base_url: str, model: str | None = None, limits: Limits | None = None,
                 templates: JudgeTemplates | None = None, api_key_env: str = "OPENAI_API_KEY", max_tokens: int = 512) -> None:
        import httpx  # noqa: F401 - fail here, with the install hint, rather than on the first request

        self.url = endpoint_url(base_url)
        self.base_url = self.url[: -len("/chat/completions")]
        self.limits = limits or Limits()
        self.templates = templates or JudgeTemplates()
        self.api_key = os.environ.get(api_key_env) or None
        self.max_tokens = max_tokens
        self.stats = JudgeStats()
        self._cache: collections.OrderedDict[str, Reply] = collections.OrderedDict()
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop its client belongs to
        self._client: Any = None
        self._semaphore: asyncio.Semaphore | None = None
        self._next_start = 0.0
        self._in_flight = 0
        self.model = model or self._first_model()

    # ------------------------------------------------------------------ the event loop thread
    def _run(self, coro: Any) -> Any:
        loop = background_loop()
        if loop is not self._loop:  # first use, or after a fork: a client and a semaphore of this loop
            self._loop, self._client, self._semaphore = loop, None, None
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def close(self) -> None:
        """Close the HTTP client (a later call opens a new one)."""
        if self._client is not None and self._loop is background_loop():
            self._run(self._client.aclose())
        self._client, self._semaphore = None, None

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _first_model(self) -> str:
        """The first model the server lists (GET /models), for a spec without model=."""
        import httpx

        try:
            r = httpx.get(self.base_url + "/models", headers=self._headers(), timeout=min(self.limits.timeout, 30))
            r.raise_for_status()
            return str(r.json()["data"][0]["id"])
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"judge at {self.base_url}: no model= given and GET /models did not name one "
                             f"({type(exc).__name__}: {exc}); pass model=NAME") from None

    # ------------------------------------------------------------------ requests
    async def _pace(self) -> None:
        """Space request starts by 1 / rate seconds."""
        if not self.limits.rate:
            return
        now = time.monotonic()
        start = max(now, self._next_start)
        self._next_start = start + 1.0 / self.limits.rate
        if start > now:
            await asyncio.sleep(start - now)

    async def _post(self, payload: dict[str, Any]) -> Reply | None:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.limits.timeout, headers=self._headers())
            self._semaphore = asyncio.Semaphore(self.limits.concurrency)
        reason = "bad_response"
        for attempt in range(self.limits.retries + 1):
            wait = self.limits.backoff * 2**attempt * random.uniform(0.9, 1.1)
            async with self._semaphore:
                await self._pace()
                self._in_flight += 1
                self.stats.max_in_flight = max(self.stats.max_in_flight, self._in_flight)
                self.stats.requests += 1
                try:
                    response = await self._client.post(self.url, json=payload)
                except httpx.TimeoutException:
                    reason = "timeout"
                    response = None
                except httpx.TransportError:
                    reason = "connect"
                    response = None
                finally:
                    self._in_flight -= 1
            if response is not None:
                if response.status_code == 200:
                    return self._reply(response)
                reason = "http_429" if response.status_code == 429 else "http_5xx" if response.status_code >= 500 else "http_4xx"
                if response.status_code not in RETRY_STATUS:
                    break
                after = response.headers.get("retry-after")
                if after:
                    try:
                        wait = min(float(after), MAX_RETRY_AFTER)
                    except ValueError:
                        pass
            if attempt < self.limits.retries:
                self.stats.retries += 1
                await asyncio.sleep(wait)
        self.stats.failures[reason] += 1
        return None

    def _reply(self, response: Any) -> Reply | None:
        try:
            choice = response.json()["choices"][0]
            text = choice["message"]["content"]
            if not isinstance(text, str):
                raise TypeError("content is not a string")
            top = None
            content = (choice.get("logprobs") or {}).get("content") or []
            if content:
                top = [{alt["token"]: float(alt["logprob"]) for alt in content[0].get("top_logprobs") or []}]
            return Reply(text, top)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            self.stats.failures["bad_response"] += 1
            return None

    async def _cached(self, payload: dict[str, Any]) -> Reply | None:
        key = json.dumps(payload, sort_keys=True)
        if self.limits.cache and key in self._cache:
            self._cache.move_to_end(key)
            self.stats.cache_hits += 1
            return self._cache[key]
        reply = await self._post(payload)
        if reply is not None and self.limits.cache:
            self._cache[key] = reply
            while len(self._cache) > self.limits.cache:
                self._cache.popitem(last=False)
        return reply

    def chat(self, prompts: Sequence[str], max_tokens: int | None = None, temperature: float = 0.0, top_p: float = 1.0,
             seeds: Sequence[int | None] | None = None, logprobs: int = 0) -> list[Reply | None]:
        """One reply per user prompt (None where the request failed), sent concurrently within the limits."""
        payloads = []
        for i, prompt in enumerate(prompts):
            payload: dict[str, Any] = {"model": self.model, "messages": [{"role": "user", "content": prompt}],
                                       "max_tokens": max_tokens or self.max_tokens, "temperature": temperature}
            if top_p < 1.0:
                payload["top_p"] = top_p
            if seeds is not None and seeds[i] is not None:
                payload["seed"] = int(seeds[i])
            if logprobs:
                payload.update(logprobs=True, top_logprobs=logprobs)
            payloads.append(payload)

        async def run_all() -> list[Reply | None]:
            return list(await asyncio.gather(*(self._cached(p) for p in payloads)))

        start = time.perf_counter()
        self.stats.calls += len(payloads)
        try:
            return self._run(run_all()) if payloads else []
        finally:
            self.stats.seconds += time.perf_counter() - start

    # ------------------------------------------------------------------ GenerativeJudge's methods
    def generate(self, prompts: Sequence[str], max_new_tokens: int = 256, temperature: float = 1.0, top_p: float = 1.0,
                 seed: int | None = None) -> list[str | None]:
        """One completion per prompt (None where the request failed)."""
        seeds = [None if seed is None else seed + i for i in range(len(prompts))]
        return [r.text if r is not None else None for r in self.chat(prompts, max_new_tokens, temperature, top_p, seeds)]

    def p_yes(self, questions: Sequence[str], solutions: Sequence[str], normalize: bool = False) -> list[float | None]:
        """P("Yes") to the verifier template from the first token's top log-probabilities (greedy,
        one token); a server without log-probabilities gives 1 / 0 for a "Yes" / "No" reply.
        None: the request failed, or neither Yes nor No is among the top tokens (counted `unparseable`)."""
        if len(questions) != len(solutions):
            raise ValueError(f"got {len(questions)} questions but {len(solutions)} solutions; pass one per question")
        prompts = [self.templates.verifier.format(question=q, solution=s) for q, s in zip(questions, solutions)]
        out: list[float | None] = []
        for reply in self.chat(prompts, max_tokens=1, temperature=0.0, logprobs=20):
            out.append(None if reply is None else self._yes_probability(reply, normalize))
        return out

    def _yes_probability(self, reply: Reply, normalize: bool) -> float | None:
        yes_word, no_word = self.templates.yes_word.lower(), self.templates.no_word.lower()
        if reply.logprobs:
            mass = {"yes": 0.0, "no": 0.0}
            for token, logprob in reply.logprobs[0].items():
                word = token.strip().lower()
                if word in (yes_word, no_word):
                    mass["yes" if word == yes_word else "no"] += math.exp(logprob)
            if mass["yes"] + mass["no"] > 0:
                return mass["yes"] / (mass["yes"] + mass["no"]) if normalize else mass["yes"]
        verdict = parse_yes_no(reply.text)
        if verdict is None:
            self.stats.failures["unparseable"] += 1
            return None
        return 1.0 if verdict else 0.0

    def judge_reference(self, questions: Sequence[str], references: Sequence[str], responses: Sequence[str],
                        max_tokens: int = 8) -> list[bool | None]:
        """Whether each response's final answer matches the reference (greedy Yes / No); None when
        the request failed or the reply is neither (counted `unparseable`)."""
        prompts = [self.templates.reference.format(question=q, answer=a, response=r) for q, a, r in zip(questions, references, responses)]
        out = []
        for reply in self.chat(prompts, max_tokens=max_tokens, temperature=0.0):
            verdict = parse_yes_no(reply.text) if reply is not None else None
            if reply is not None and verdict is None:
                self.stats.failures["unparseable"] += 1
            out.append(verdict)
        return out

    def pointwise_many(self, prompts: Sequence[str], responses: Sequence[Sequence[str]], k: int = 4, seed: int = 0,
                       max_new_tokens: int = 512, temperature: float = 1.0) -> list[PointwiseResult]:
        """`pointwise` for several prompts at once: all k x prompts judgments are sent concurrently.
        A failed request counts as an unparseable judgment (its reason in `stats`)."""
        from reward_models.local_judge import pointwise_prompt

        jobs, orders = [], []
        for g, (prompt, group) in enumerate(zip(prompts, responses)):
            if k < 1 or not group:
                raise ValueError(f"pointwise needs k >= 1 and at least one response, got k={k}, {len(group)} responses")
            rng = random.Random(seed)
            for j in range(k):
                order = rng.sample(range(len(group)), len(group))
                orders.append((g, order))
                jobs.append(pointwise_prompt(self.templates, prompt, group, order))
        replies = self.chat(jobs, max_new_tokens, temperature, seeds=[seed + j % k for j in range(len(jobs))])
        results = [PointwiseResult([0] * len(group), [[] for _ in group], k, 0) for group in responses]
        for (g, order), reply in zip(orders, replies):
            res = results[g]
            text = reply.text if reply is not None else None
            res.judgments.append(text or "")
            scores = parse_scores(text, len(order), self.templates.score_pattern) if text is not None else None
            if scores is None:
                res.n_unparseable += 1
                res.unparseable.append(text or "")
                if reply is not None:
                    self.stats.failures["unparseable"] += 1
                continue
            for shown, original in enumerate(order):
                res.scores[original] += scores[shown]
                res.votes[original].append(scores[shown])
        return results

    def pointwise(self, prompt: str, responses: Sequence[str], k: int = 4, seed: int = 0, max_new_tokens: int = 512,
                  temperature: float = 1.0) -> PointwiseResult:
        return self.pointwise_many([prompt], [responses], k, seed, max_new_tokens, temperature)[0]
