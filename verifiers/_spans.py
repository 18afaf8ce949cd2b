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

from verifiers._forms import is_unit_word

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


# between two boxes of one list: commas, spaces, '\quad', 'and' ('\boxed{(1, 2)}, \boxed{(2, 1)}')
_BOX_LIST_GAP_RE = re.compile(r"(?:\s|,|;|\\[,;: ]|\\q?quad\b|\\text\s*\{\s*,?\s*and\s*\}|\band\b)*")


def join_adjacent_boxes(text: str) -> str:
    """A list written as boxes side by side, one element each, read as one box: '\\boxed{(1, 2)},
    \\boxed{(2, 1)}' and '\\boxed{a} \\quad \\text{and} \\quad \\boxed{b}' -> '\\boxed{(1, 2), (2, 1)}'.
    Only boxes with nothing but separators between them are joined (never across words or 'or':
    '\\boxed{3} or \\boxed{4}' offers a choice). One pass; text without two boxes is returned as is.

    >>> join_adjacent_boxes("so \\\\boxed{1}, \\\\boxed{2} and \\\\boxed{5}.")
    'so \\\\boxed{1, 2, 5}.'
    >>> join_adjacent_boxes("\\\\boxed{3} or \\\\boxed{4}")
    '\\\\boxed{3} or \\\\boxed{4}'
    """
    boxes = list(_BOXED_RE.finditer(text))
    if len(boxes) < 2:
        return text
    spans = []  # (start of '\boxed', start of content, end after '}') of every complete box
    for m in boxes:
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            spans.append((m.start(), m.end(), i))
    out, at, k = [], 0, 0
    while k < len(spans):
        run = [spans[k]]
        while k + 1 < len(spans) and _BOX_LIST_GAP_RE.fullmatch(text, run[-1][2], spans[k + 1][0]):
            k += 1
            run.append(spans[k])
        start, content, _ = run[0]
        out.append(text[at:start])
        parts = list(dict.fromkeys(text[c:e - 1].strip() for _, c, e in run))  # a box repeated is one answer
        if len(parts) > 1:
            out.append("\\boxed{" + ", ".join(parts) + "}")
        else:
            out.append(text[start:run[0][2]])
        at = run[-1][2]
        k += 1
    return "".join(out) + text[at:]


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
_AFTER_BOX_RE = re.compile(r"^[\s$.,;:\\)\]\-\u2013\u2014]*\(?\s*(?:or|maybe|perhaps|possibly|alternatively|otherwise)\b(?=.*[\w$\\])",
                           re.I | re.S)
# between two formulas of the final line: "$3$ (or maybe $4$)", "either $x$ or $y$"
_BETWEEN_RE = re.compile(r"^[\s,;\-\u2013\u2014]*\(?\s*(?:or|maybe|perhaps|possibly)\b", re.I)
HEDGE_WORDS_RE = re.compile(r"\b(?:maybe|perhaps|possibly|probably|not sure|alternatively|otherwise|either)\b", re.I)


def after_last_box(text: str) -> str | None:
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
    tail = after_last_box(text)
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


def closing_formula(text: str) -> str | None:
    """The content of the formula the text ends with ($...$, \\(...\\), \\[...\\]; at most
    MAX_TAIL_AFTER_ANSWER characters of prose after it), or None.

    >>> closing_formula("First $t = 4$ So the result is $\\\\{1, 2\\\\}$."), closing_formula("It is $3$ and more words follow here, many.")
    ('\\\\{1, 2\\\\}', None)
    """
    tail = text[-2000:]
    last = None
    for last in _MATH_SEGMENT_RE.finditer(tail):
        pass
    if last is None or len(tail) - last.end() > MAX_TAIL_AFTER_ANSWER or re.search(r"\w", tail[last.end():]):
        return None
    body = next(g for g in last.groups() if g is not None).strip()
    return body or None


# ---------------------------------------------------------------- the answer region and its candidates

MAX_REGION_CHARS = 600  # characters of the answer region searched for a second candidate
# the statement of a final answer: 'the answer is', 'Answer:', 'final answer =' (not 'to answer this')
_STATEMENT_RE = re.compile(r"(?i)\banswers?\s*(?:is\b|are\b|:|=)")
_SENTENCE_END_RE = re.compile(r"[.!?](?:\s|$)")
# a number written in prose: not part of a word ('2nd', 'x2'), of a formula's braces, or a decimal's digits
_PLAIN_NUMBER_RE = re.compile(r"(?<![\w.\\^_{])[-+]?(?:\d+\s+\d+\s*/\s*\d+|\d+(?:,\d{3})*(?:\.\d+|,\d+)?(?:\s*/\s*\d+)?)(?![\w]|\.\d|-[A-Za-z])")  # '421,00': a decimal comma; not '5-year' (a word)
# a choice letter offered in prose: '(B)'
_PLAIN_LETTER_RE = re.compile(r"(?<![\w\\])\(([A-Z])\)")
# a computation written in prose ('2 * 3 = 6', '40 + 2', '3^2=9'): one candidate, its value a check of the answer
_NUM = r"\d+(?:\.\d+)?"
_PLAIN_COMPUTATION_RE = re.compile(rf"(?<![\w.\\^_])\(?\s*[-+]?{_NUM}\s*\)?(?:\s*(?:[-+*/^×·=]|\\cdot|\\times)\s*\(?\s*[-+]?{_NUM}\s*\)?)+(?![\w])")
_NAME_RE = re.compile(r"\s*[A-Za-z]+(?:_\{?\w+\}?)?(?:\s*\([A-Za-z, ]*\))?\s*")  # '$n$', '$f(x)$', '$ABCD$', '$a_n$'
_VALUE_RE = re.compile(r"\d|^\s*\(\s*[A-Z]\s*\)\s*$|^\s*\\textbf\s*\{\s*\(?[A-Z]\)?\s*\}\s*$")
_UNIT_AFTER_RE = re.compile(r"\s*([A-Za-z]+)\b")
_NUMBER_WORDS_RE = re.compile(r"(?i)\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
                              r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|"
                              r"ninety|hundred)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?\b")


# the modulus an answer is stated in ('\\equiv \\boxed{9} \\pmod{11}', '(\\text{mod } 11)'): part of the answer, not a value
_MODULUS_RE = re.compile(r"\\pmod\s*\{[^{}]*\}|\\pmod\s*\d+|\(\s*(?:\\(?:bmod|mod)|\\text\s*\{\s*mod\s*\}|mod)\s*\{?\s*\d+\s*\}?\s*\)")


# a formula in prose without delimiters: a sign, digits and LaTeX commands with their braces ('-\\frac{19}{5}', '2\\sqrt{3}')
_BARE_LATEX_RE = re.compile(r"[-+]?\d*(?:\\[A-Za-z]+\s*(?:\{[^{}$]*\}\s*)+|\\pi\b)(?:\s*[-+]?\s*\d*(?:\\[A-Za-z]+\s*(?:\{[^{}$]*\}\s*)+|\\pi\b))*")


MAX_REMARK_CHARS = 160  # prose after the last formula line read with it (a remark: '(0.9 by the other method).')


def answer_region(text: str) -> tuple[str, str] | None:
    """(how the final answer is stated, the region that states it): the region starts at the final
    answer and runs to the end of the text (at most MAX_REGION_CHARS):
    - 'boxed': the last box's content and everything after the box;
    - 'statement': what follows the last 'the answer is' / 'Answer:' (also when it comes after the
      last box: 'The final answer is $10,455$' after a step's box);
    - 'line': the last sentence of the last line that holds a formula ($...$, \\(...\\)), and the lines
      after it when they are a short remark ('It is $\\frac{4}{5}$', then '(0.9 by the other method).').
    None for a text with none of these (a bare answer is its own region, read whole).

    >>> answer_region("We get \\\\boxed{3}, though 4 is possible.")
    ('boxed', '3}, though 4 is possible.')
    >>> answer_region("So the answer is 3 or maybe 4")
    ('statement', '3 or maybe 4')
    """
    starts = [m.end() for m in _BOXED_RE.finditer(text)]
    english = english_answer_prefix(text)
    statements = list(_STATEMENT_RE.finditer(english))
    last_box = [m.end() for m in _BOXED_RE.finditer(english)][-1:]
    if starts and not (statements and last_box and statements[-1].start() > last_box[0]):
        return "boxed", text[starts[-1]:][:MAX_REGION_CHARS]
    if statements:  # no box, or 'The final answer is $10,455$' after the last box (a step's)
        return "statement", english[statements[-1].end():][:MAX_REGION_CHARS].strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    with_formula = [i for i, ln in enumerate(lines) if _MATH_SEGMENT_RE.search(ln)]
    if not with_formula:
        return None
    line, after = lines[with_formula[-1]], "\n".join(lines[with_formula[-1] + 1:])
    after = after if len(after) <= MAX_REMARK_CHARS else ""  # a short remark after it is part of the region; paragraphs are working
    formulas = list(_MATH_SEGMENT_RE.finditer(line))
    inside = [(m.start(), m.end()) for m in formulas]
    ends = [m.end() for m in _SENTENCE_END_RE.finditer(line, 0, formulas[-1].start())
            if not any(a <= m.start() < b for a, b in inside)]
    # a formula that ends a sentence without a full stop: '$y = 6$ So, the pair is $(7, 6)$.'
    ends += [m.end() for m in formulas[:-1] if re.match(r"\s+[A-Z][a-z]*\b", line[m.end():])]
    ends.sort()
    region = line[ends[-1] if ends else 0:] + ("\n" + after if after else "")
    return "line", region[:MAX_REGION_CHARS]


def answer_candidates(text: str) -> list[tuple[int, str]]:
    """Every value the answer region of `text` states (see `answer_region`), in order: the parts of
    every box's content (split where the box offers alternatives, '3 \\text{ or } 4'), and in the
    region's prose each formula ($...$, \\(...\\), \\[...\\]) and each number (digits, or an
    English number word above one, a choice letter '(B)'); a computation written in prose ('2 * 3 = 6')
    is one candidate. Each comes with the number of its sentence in the region (0 for the boxes), so
    that a sentence that checks the answer ('Check: 7 + 5 = 12, then 3') can be read as one.
    [] for a text with no answer region. The caller decides which candidates differ from the answer.

    >>> answer_candidates("We get \\\\boxed{3}, but it could also be $4$. Check: 2+1 = 3")
    [(0, '3'), (0, '4'), (1, '2+1 = 3')]
    """
    region = answer_region(text)
    if region is None:
        return []
    mode, prose = region
    found: list[tuple[int, str]] = []
    if mode == "boxed":  # every box, then the prose after the last one
        boxes = boxed_contents(text)
        found.extend((-1, part) for box in boxes for part in _box_parts(box))
        depth, i = 1, 0
        while i < len(prose) and depth:
            depth += {"{": 1, "}": -1}.get(prose[i], 0)
            i += 1
        closing = _closing_delimiter(_before_last_box(text))
        at = prose.find(closing, i) if closing else -1
        if at >= 0:  # the box sits in a formula: the rest of the formula ('\\text{ or } 4$') is read as prose
            prose = prose[:at] + " " * len(closing) + prose[at + len(closing):]
        prose = " " * i + prose[i:]
    prose = _MODULUS_RE.sub(lambda m: " " * len(m.group()), prose.replace("\\$", " "))  # '\\boxed{9} \\pmod{11}'

    def blank(m: re.Match) -> None:
        nonlocal prose
        prose = prose[: m.start()] + " " * (m.end() - m.start()) + prose[m.end():]

    for m in list(_MATH_SEGMENT_RE.finditer(prose)):
        body = next(g for g in m.groups() if g is not None)
        if not (mode == "boxed" and boxed_contents(body)):  # boxes are counted above
            # a formula in the prose states a value unless it is a name: '$n$', '$f(x)$', '$ABCD$'
            # (a choice letter '$(B)$' is a value)
            found.extend((m.start(), part) for part in _box_parts(body) if _VALUE_RE.search(part) or not _NAME_RE.fullmatch(part))
        blank(m)
    for m in list(_BARE_LATEX_RE.finditer(prose)):  # 'Answer: \\frac{19}{5}': a formula written without delimiters
        found.append((m.start(), m.group()))
        blank(m)
    for m in list(_PLAIN_NUMBER_RE.finditer(prose)):  # mixed numbers first ('4 7/10' is one number)
        if " " in m.group().strip():
            found.append((m.start(), m.group().strip()))
            blank(m)
    for m in list(_PLAIN_COMPUTATION_RE.finditer(prose)):
        if not re.fullmatch(r"[-+]?\d+\s*/\s*\d+", m.group().strip()):  # '7/10' is a number, read below
            found.append((m.start(), _balanced(m.group().strip())))
            blank(m)
    for m in _PLAIN_NUMBER_RE.finditer(prose):  # with its unit when a unit word follows ('about 5 cm')
        unit = _UNIT_AFTER_RE.match(prose, m.end())
        named = unit is not None and is_unit_word(unit.group(1))
        found.append((m.start(), m.group().replace(" ", "") + (f" {unit.group(1)}" if named else "")))
    found.extend((m.start(), m.group()) for m in _NUMBER_WORDS_RE.finditer(prose))
    found.extend((m.start(), m.group()) for m in _PLAIN_LETTER_RE.finditer(prose))
    ends = [m.start() for m in re.finditer(r"[.;!?](?:\s|$)|\n", prose)]
    return [(sum(e < at for e in ends), c) for at, c in sorted(found, key=lambda x: x[0])]


# a choice letter written alone in a formula: '$D$', '\\((B)\\)'
_LONE_LETTER_RE = re.compile(r"(?:\$|\\\()\s*\(?\s*([A-J])\s*\)?\s*(?:\$|\\\))")


def offered_letters(text: str) -> set[str]:
    """The choice letters the answer region of `text` offers: '(B)' in prose, a box's letter, a letter
    alone in a formula ('... but it could also be $D$'). More than one is a hedge on a choice question.

    >>> sorted(offered_letters("So the answer is \\\\boxed{(B)}; but it could also be $D$."))
    ['B', 'D']
    """
    letters = {choice_gold_letter(c) for _, c in answer_candidates(text)} - {None}
    return letters | set(_LONE_LETTER_RE.findall((answer_region(text) or ("", ""))[1]))


def _balanced(text: str) -> str:
    """A computation cut out of prose without the parenthesis it does not close ('2*3 = 6)')."""
    while text.count("(") < text.count(")") and text.endswith(")"):
        text = text[:-1].rstrip()
    while text.count("(") > text.count(")") and text.startswith("("):
        text = text[1:].lstrip()
    return text


def _before_last_box(text: str) -> str:
    starts = [m.start() for m in _BOXED_RE.finditer(text)]
    return text[: starts[-1]] if starts else text


def _closing_delimiter(before: str) -> str | None:
    """The delimiter that closes the formula `before` ends inside ('$', '$$', '\\]', '\\)'), or None."""
    dollars = re.findall(r"(?<!\\)\$\$?", before)  # '$$' is one delimiter, not two
    if dollars.count("$$") % 2:
        return "$$"
    if dollars.count("$") % 2:
        return "$"
    for left, right in (("\\[", "\\]"), ("\\(", "\\)")):
        if before.rfind(left) > before.rfind(right):
            return right
    return None


_BOX_OR_RE = re.compile(r"\\text\s*\{\s*(?:,\s*)?(?:or|and/or|maybe|perhaps|possibly|or\s+(?:maybe|perhaps|possibly))\s*\}"
                        r"|\s\bor\b\s|\\(?:lor|vee)(?![A-Za-z])", re.I)


def _box_parts(content: str) -> list[str]:
    """A box's content split where it offers alternatives ('3 \\text{ or } 4' -> ['3', '4'])."""
    return [p.strip() for p in _BOX_OR_RE.split(content) if p.strip()]
