"""Where a completion states its final answer: the last \\boxed{...}, else the last "answer is X" /
"Answer: X" statement, else the last non-empty line. Pure Python, linear time.

"Answer:" in other languages ("Réponse :", "Antwort:", "答案：", "Ответ:", ...) is read as
"Answer:" (`english_answer_prefix`): the prefixes of simple-evals' multilingual evals, plus Russian.

>>> final_answer_span("Thinking... so \\\\boxed{\\\\frac{1}{2}}. Done")
'\\\\frac{1}{2}'
>>> final_answer_span("We get 3.\\nThe answer is Paris.")
'Paris'
>>> final_answer_span("first line\\n  last line  \\n")
'last line'
"""

from __future__ import annotations

import re
import unicodedata

_BOXED_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")
_BRACE_RE = re.compile(r"[{}]")
_ANSWER_RE = re.compile(r"(?i)\banswer\b(?:\s+is)?\s*[:=]?\s*(?:\*\*)?\s*:?\s*([^\n]*)")
_WRAPPERS = (("**", "**"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("`", "`"), ('"', '"'), ("*", "*"))


# "Answer" in other languages, each followed by ':' or the full-width '：' (simple-evals' multilingual
# answer prefixes: Bengali, Hindi, German, Korean, Chinese, Arabic, Spanish, Italian, Japanese,
# Indonesian, French, Portuguese, Swahili, Yoruba; and Russian)
ANSWER_WORDS = (
    "উত্তর", "उत्तर", "Antwort", "답변", "정답", "답", "答案", "答复", "答曰", "答", "الإجابة النهائية",
    "الإجابة الصحيحة هي", "الإجابة الصحيحة", "الإجابة هي", "الإجابة", "الجواب", "إجابة", "Respuesta", "Risposta",
    "答え", "回答", "解答", "Jawaban", "Réponse", "Resposta", "Jibu", "Idahun", "Ìdáhùn", "Idáhùn", "Àmọ̀nà",
    "Àdáhùn", "Ànúgọ", "Àṣàyàn", "Ответ",
)


_COLON_RE = re.compile("[:：ঃ]")  # ASCII, full-width, and the Bengali visarga (উত্তরঃ)
# a prefix read backwards from its colon: one anchored match per colon, not a search of the text
_WORD_BEFORE_COLON_RE = re.compile(
    r"(?i)[ \t\u3164]*(?:" + "|".join(re.escape(w[::-1]) for w in sorted(ANSWER_WORDS + ("Answer",), key=len, reverse=True)) + ")"
)
_WINDOW = max(map(len, ANSWER_WORDS)) + 8


def _unspaced_script(ch: str) -> bool:
    """Chinese, Japanese and Korean words need no boundary before them (最终答案：)."""
    return any(tag in unicodedata.name(ch, "") for tag in ("CJK", "HANGUL", "HIRAGANA", "KATAKANA"))


def english_answer_prefix(text: str) -> str:
    """An answer prefix in another language becomes "Answer:", the one every reader here (and
    math-verify's extraction) looks for.

    >>> english_answer_prefix("Donc… Réponse : 42"), english_answer_prefix("最终答案：$x = 1$")
    ('Donc… Answer: 42', '最终Answer: $x = 1$')
    """
    parts, last = [], 0
    for colon in _COLON_RE.finditer(text):
        end = colon.start()
        word = _WORD_BEFORE_COLON_RE.match(text[max(0, end - _WINDOW): end][::-1])
        if word is None:
            continue
        start = end - word.end()
        if start > 0 and text[start - 1].isalnum() and not _unspaced_script(text[start]):
            continue  # part of a longer word ("Antworten:")
        if colon.group() == ":" and text[start:end].lower() == "answer":
            continue  # already the English prefix
        spaced = colon.end() == len(text) or text[colon.end()].isspace()
        parts += [text[last:start], "Answer:" if spaced else "Answer: "]
        last = colon.end()
    return "".join(parts) + text[last:] if parts else text


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
    """The rest of the line after the last "answer is" / "Answer:" (also in other languages, see
    `english_answer_prefix`; trailing period removed)."""
    last = None
    for m in _ANSWER_RE.finditer(english_answer_prefix(text)):
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


# ---------------------------------------------------------------- a second answer stated with the first

MAX_TAIL_AFTER_ANSWER = 40  # characters of prose after the last formula for it to be the stated answer
_MATH_SEGMENT_RE = re.compile(r"\$\$?([^$]+)\$\$?|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
# after the final box: an alternative offered ("or maybe 4", "(or 5)", ", perhaps x = 2")
_AFTER_BOX_RE = re.compile(r"^[\s$.,;:\\)\]]*\(?\s*(?:or|maybe|perhaps|possibly|alternatively|otherwise)\b(?=.*[\w$\\])",
                           re.I | re.S)
# between two formulas of the final line: "$3$ (or maybe $4$)", "either $x$ or $y$"
_BETWEEN_RE = re.compile(r"^[\s,;]*\(?\s*(?:or|maybe|perhaps|possibly)\b", re.I)
HEDGE_WORDS_RE = re.compile(r"\b(?:maybe|perhaps|possibly|probably|not sure|alternatively|otherwise|either)\b", re.I)


def _after_last_box(text: str) -> str | None:
    """The text after the closing brace of the last complete \\boxed{...}, or None without one."""
    starts = [m.end() for m in _BOXED_RE.finditer(text)]
    if not starts:
        return None
    depth, i = 1, starts[-1]
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[i:] if depth == 0 else None


def stated_alternative(text: str) -> str | None:
    """The words that offer a second answer next to the stated one, or None.

    A second answer after the final box ('\\\\boxed{3} or maybe 4'), or two formulas of the final
    line joined by 'or' / 'maybe' ('$3$ (or maybe $4$)', 'either $x=1$ or $x=2$'). Whether that is
    a hedge (one gold value) or a solution set (a gold with several values) is the caller's call.

    >>> stated_alternative("so \\\\boxed{3} or maybe 4."), stated_alternative("\\\\boxed{3}. Done.")
    ('or maybe 4', None)
    >>> stated_alternative("The answer is $3$ (or maybe $4$).")
    '(or maybe'
    """
    tail = _after_last_box(text)
    if tail is not None:
        m = _AFTER_BOX_RE.match(tail[:300])
        return tail[:300].strip(" $.\\])") if m else None
    line = last_line(text[-2000:]) or ""
    segments = list(_MATH_SEGMENT_RE.finditer(line))
    if len(segments) >= 2 and len(line) - segments[-1].end() <= MAX_TAIL_AFTER_ANSWER:
        left, right = segments[-2], segments[-1]  # the last two formulas, ending the text: the stated answer(s)
        between = line[left.end(): right.start()]
        if re.search(r"\beither\b", line[max(0, left.start() - 60): left.start()], re.I) and re.search(r"\bor\b", between, re.I):
            return f"either ... {between.strip()}"  # 'either A or B' offers a choice: a hedge, whatever the gold
        if _BETWEEN_RE.match(between):
            return between.strip()
    return None
