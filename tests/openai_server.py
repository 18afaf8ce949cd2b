"""A small OpenAI chat-completions server for the tests: real HTTP on 127.0.0.1, a scripted judge
behind it, and knobs to make it fail. It is bounded: it stops by itself after `max_requests`
requests or `lifetime` seconds, whichever comes first, and when its context manager exits.

The judge reads the last user message and answers as a judge template asks:
- "Reference answer: A ... Response: R" -> "Yes" when R's last number (or its spelled-out number
  word) equals A, else "No";
- "Question: Q ... Solution: S ... Is this solution correct?" -> "Yes" when S's last number equals
  the value of the arithmetic expression before "=" in Q (log-probabilities 0.9 / 0.1 in
  `top_logprobs` when asked);
- "Score for Response" (pointwise) -> one line per response: 9 if it answers Q right, else 2;
- "Which is the first incorrect step?" -> "-1".

Failures, set on `server.control`: `fail_first` (the first N requests answer `fail_status`, with
`retry_after` as a Retry-After header), `delay` (seconds before answering), `garbage_every` (every
Nth request answers text no parser reads), `malformed_every` (every Nth request answers JSON
without `choices`). Counters: `requests`, `max_in_flight`, `starts`
(monotonic request arrival times).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
         "sept": 7, "huit": 8}  # French: numbers the math verifier does not read (it reads English words)


def last_number(text: str) -> float | None:
    found = re.findall(r"-?\d+(?:\.\d+)?|\b(?:" + "|".join(WORDS) + r")\b", text.lower())
    if not found:
        return None
    last = found[-1]
    return float(WORDS[last]) if last in WORDS else float(last)


def expression_value(question: str) -> float | None:
    m = re.search(r"([-+*/() \d]+)=", question)
    if not m:
        return None
    try:
        return float(eval(m.group(1), {"__builtins__": {}}))  # noqa: S307 - digits and operators only
    except (SyntaxError, ZeroDivisionError, TypeError):
        return None


def judge_reply(content: str) -> tuple[str, dict[str, float] | None]:
    """(reply text, top log-probabilities of the first token or None)."""
    if "Reference answer:" in content:
        ref = re.search(r"Reference answer: (.*)\n", content).group(1)
        resp = content.split("Response:", 1)[1].rsplit("\nDoes the response", 1)[0]
        same = last_number(resp) is not None and last_number(resp) == last_number(ref)
        return ("Yes" if same else "No"), None
    if "Is this solution correct?" in content:
        question = re.search(r"Question: (.*)\n", content).group(1)
        solution = content.split("Solution:", 1)[1].rsplit("\nIs this solution correct?", 1)[0]
        right = expression_value(question) is not None and last_number(solution) == expression_value(question)
        yes, no = (0.9, 0.1) if right else (0.1, 0.9)
        import math

        return ("Yes" if right else "No"), {"Yes": math.log(yes), "No": math.log(no), " maybe": math.log(1e-4)}
    if "Score for Response" in content:
        question = content.split("Question:\n", 1)[1].split("\n\n", 1)[0]
        value = expression_value(question)
        blocks = re.findall(r"\[Response (\d+)\]\n(.*?)\n\[End of Response", content, re.S)
        lines = [f"Score for Response {i}: {9 if value is not None and last_number(text) == value else 2}" for i, text in blocks]
        return "Principles: be right.\n" + "\n".join(lines), None
    if "first incorrect step" in content:
        return "-1", None
    return "I cannot judge this.", None


@dataclass
class Control:
    fail_first: int = 0
    fail_status: int = 429
    retry_after: float | None = None
    delay: float = 0.0
    garbage_every: int = 0
    malformed_every: int = 0
    max_requests: int = 5000
    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    starts: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    server: "JudgeServer"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "judge", "object": "model"}]})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        c = self.server.control
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with c.lock:
            c.requests += 1
            number = c.requests
            c.starts.append(time.monotonic())
            c.in_flight += 1
            c.max_in_flight = max(c.max_in_flight, c.in_flight)
        try:
            if number > c.max_requests:
                self._send(503, {"error": "request budget spent"})
                threading.Thread(target=self.server.shutdown, daemon=True).start()
                return
            if c.delay:
                time.sleep(c.delay)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": "not found"})
                return
            if number <= c.fail_first:
                headers = {"Retry-After": str(c.retry_after)} if c.retry_after is not None else {}
                self._send(c.fail_status, {"error": {"message": "scripted failure"}}, headers)
                return
            if c.malformed_every and number % c.malformed_every == 0:
                self._send(200, {"id": f"chatcmpl-{number}", "object": "chat.completion"})
                return
            content = body["messages"][-1]["content"]
            text, top = judge_reply(content)
            if c.garbage_every and number % c.garbage_every == 0:
                text, top = "\u2639", None
            choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            if body.get("logprobs") and top is not None:
                first = max(top, key=top.get)
                choice["logprobs"] = {"content": [{"token": first, "logprob": top[first],
                                                   "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top.items()]}]}
            self._send(200, {"id": f"chatcmpl-{number}", "object": "chat.completion", "model": body.get("model"),
                             "choices": [choice]})
        finally:
            with c.lock:
                c.in_flight -= 1


class JudgeServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # connections waiting to be accepted (the default 5 refuses bursts)

    def __init__(self, control: Control) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.control = control

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextlib.contextmanager
def judge_server(lifetime: float = 120.0, **control) -> Iterator[JudgeServer]:
    """A running `JudgeServer` on a free loopback port; stopped when the block ends or after `lifetime` s."""
    server = JudgeServer(Control(**control))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    timer = threading.Timer(lifetime, server.shutdown)
    timer.daemon = True
    timer.start()
    try:
        yield server
    finally:
        timer.cancel()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
