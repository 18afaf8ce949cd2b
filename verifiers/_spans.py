"""Where a completion states its final answer: the last \\boxed{...}, else the last "answer is X" /
"Answer: X" statement, else the last non-empty line. Pure Python, linear time.

>>> final_answer_span("Thinking... so \\\\boxed{\\\\frac{1}{2}}. Done")
'\\\\frac{1}{2}'
>>> final_answer_span("We get 3.\\nThe answer is Paris.")
'Paris'
>>> final_answer_span("first line\\n  last line  \\n")
'last line'
"""

from __future__ import annotations

import re

_BOXED_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")
_BRACE_RE = re.compile(r"[{}]")
_ANSWER_RE = re.compile(r"(?i)\banswer\b(?:\s+is)?\s*[:=]?\s*(?:\*\*)?\s*:?\s*([^\n]*)")
_WRAPPERS = (("**", "**"), ("$", "$"), ("\\(", "\\)"), ("`", "`"), ('"', '"'), ("*", "*"))


def boxed_contents(text: str) -> list[str]:
    """The contents of every complete \\boxed{...} / \\fbox{...} (balanced braces), in order of
    their start. One pass over the braces, so 10,000 nested or unclosed boxes stay linear."""
    starts = {m.end() - 1: m.end() for m in _BOXED_RE.finditer(text)}  # "{" position -> content start
    if not starts:
        return []
    found, stack = [], []
    for m in _BRACE_RE.finditer(text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            open_at = stack.pop()
            if open_at in starts:
                found.append((open_at, text[starts[open_at]: m.start()].strip()))
    return [content for _, content in sorted(found)]


def answer_statement(text: str) -> str | None:
    """The rest of the line after the last "answer is" / "Answer:" (trailing period removed)."""
    last = None
    for m in _ANSWER_RE.finditer(text):
        last = m
    if last is None:
        return None
    span = unwrap(last.group(1).strip().rstrip(".").strip())
    return span or None


def last_line(text: str) -> str | None:
    for line in reversed(text.splitlines()):
        if line.strip():
            return unwrap(line.strip())
    return None


def unwrap(span: str) -> str:
    """Strip markdown/LaTeX wrappers around a whole answer: **X**, $X$, \\(X\\), `X`, "X"."""
    changed = True
    while changed and span:
        changed = False
        for left, right in _WRAPPERS:
            if len(span) > len(left) + len(right) and span.startswith(left) and span.endswith(right):
                span, changed = span[len(left): -len(right)].strip(), True
    return span


def final_answer_span(text: str) -> str | None:
    boxed = boxed_contents(text)
    if boxed:
        return unwrap(boxed[-1]) or None
    return answer_statement(text) or last_line(text)


_CHOICE_GOLD_RE = re.compile(r"^\(?([A-Z])\)?\.?$")
_WRAPPER_RE = re.compile(r"^\\(?:boxed|text|textbf|mathrm)\s*\{(.*)\}$")


def strip_wrappers(text: str) -> str:
    """'\\boxed{\\text{(B)}}' -> '(B)': markdown/LaTeX wrappers around a whole answer removed."""
    text = unwrap(text.strip())
    m = _WRAPPER_RE.match(text)
    while m:
        text = unwrap(m.group(1).strip())
        m = _WRAPPER_RE.match(text)
    return text


def choice_gold_letter(gold: str) -> str | None:
    """The letter when a math gold is a multiple-choice answer: 'B', '(B)', 'B.', '\\boxed{B}'.

    >>> choice_gold_letter("\\\\boxed{(C)}"), choice_gold_letter("x")
    ('C', None)
    """
    m = _CHOICE_GOLD_RE.match(strip_wrappers(gold)) if len(gold) < 100 else None
    return m.group(1) if m else None
