"""Answer forms: how a reader reads an answer written without delimiters, or in words, as LaTeX.

Pure Python (re), bounded work: an answer longer than MAX_FORM_CHARS is never rewritten, and
importing this never imports sympy. `verifiers.math_kind`
parses what these functions return; the comparisons stay in `verifiers._math_compare`.

- `bare_latex(text)`: a prediction with no `$`, `\\(`, `\\boxed`, "answer is" ("3\\sqrt{2}",
  "x = 2 or x = -3", "12 apples, 25 pears") is the answer itself. It is read as LaTeX (plain math
  is LaTeX too: "1/(2(n+1))", "x > 7") unless it is prose: a word of four or more letters that is
  not a function name or a unit after a number, or a short English word ("is", "the"), makes it
  prose, and prose keeps the usual reading (the stated answer, else the last number).
- `read(latex)`: the shape of an answer: its top-level parts (split at commas, ";", "or", "and",
  `\\text{ or }`, `\\quad`), whether they were joined by "and" (for inequalities: the
  intersection) or "or" (the union), and the unit words after each value ("12 apples" -> 12,
  'apple'). Words for sets ("all real numbers", "no solution") become `\\mathbb{R}` / `\\emptyset`,
  "145 degrees" becomes `145^\\circ`, "twelve" 12, "infinity" `\\infty`, "1 1/2" a mixed number,
  "sqrt(2)" `\\sqrt{2}`, a remark in parentheses after the value is dropped, a `cases` environment
  is the list of its rows, a set-builder `\\{x \\mid x > 5\\}` its condition, a number in
  e-notation (4.5e33) `4.5\\times 10^{33}`, and a tuple with `\\pm` the tuples of its sign choices.
- `description_key(text)`: an answer in words ("All even n", "$n$ is even") as the set of its
  content words, for comparing descriptions; None when it is not one.
- `angle_marks(text)`: whether an answer is written in degrees and whether it holds `\\pi`.

>>> bare_latex("x = 2 or x = -3")
'x = 2, x = -3'
>>> bare_latex("Adding them up we get 42") is None
True
>>> read("12 apples, 25 pears").units
('apple', 'pear')
>>> description_key("All even n") == description_key("$n$ is even")
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_FORM_CHARS = 2000  # longer answers are not rewritten (the usual reading applies)
MAX_SIGN_CHOICES = 3  # a tuple with more independent \pm signs than this is not expanded (2**n tuples)

_DELIMITERS = ("$", "\\(", "\\[", "\\boxed", "\\fbox")
_UNICODE = {"≤": r" \le ", "≥": r" \ge ", "≠": r" \ne ", "∞": r"\infty ", "π": r"\pi ", "√": r"\sqrt ", "∈": r" \in ",
            "∪": r" \cup ", "∩": r" \cap ", "±": r"\pm ", "∓": r"\mp ", "°": r"^\circ ", "×": r" \times ", "·": r" \cdot ",
            "−": "-", "∅": r"\emptyset ", "ℝ": r"\mathbb{R}"}
_ROOT_RE = re.compile(r"√\s*(\d+(?:\.\d+)?|[A-Za-z]|\([^()]*\))")
_UNICODE_RE = re.compile("|".join(map(re.escape, _UNICODE)))

# words that are math in an answer: functions written without a backslash, constants, "degrees"
FUNCTION_WORDS = frozenset("""sin cos tan cot csc arcsin arccos arctan sinh cosh tanh log ln lg exp sqrt max min gcd lcm
det mod lim floor ceil infty inf pi deg""".split())
# short English words that never stand for a product of variables in an answer
SHORT_WORDS = frozenset("""is it so we the of to in on at by be as if no not are was for all any get got has had let can but its our
you she he his her one two six ten yes may see use now how why who did do does an am or and then thus also than that this
with from each every such both only when where which there here some none odd""".split())
_CONNECTIVE_RE = re.compile(r"\s*\\text\s*\{\s*(or|and)\s*\}\s*|\s*,?\s+\b(or|and)\b\s+|\s*(;)\s*|\s*\\q?quad\s*", re.I)
_WORD_RE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]+")
_TEXT_CMD_RE = re.compile(r"\\(?:text|textrm|mathrm|mbox|operatorname)\s*\{([^{}]*)\}")
# a value followed by unit words: "12 apples", "864 square inches", "600/7 km/h", "5\text{ cm}^2", "0.001 cm",
# "576\pi\;m^{2}"; the unit is separated from the value (a space, a LaTeX space, \text{...})
_UNIT_TAIL_RE = re.compile(
    r"^(?P<value>.*?(?:[\d}).!]|\\pi))(?P<gap>\s*(?:\\[,;!: ]|~|\\ )*\s*)"
    r"(?P<unit>(?:\\(?:text|textrm|mathrm|mbox)\s*\{\s*~?\s*[A-Za-z][A-Za-z ./]*\}|[A-Za-z]+(?:\s*/\s*[A-Za-z]+)?)"
    r"(?:\s*(?:\^\s*\{?\s*[23]\s*\}?|/\s*[A-Za-z]+|\s+[A-Za-z]{2,}|\s*\\(?:text|mathrm)\s*\{[^{}]*\}))*)\s*\.?$")
# unit words of one to three letters (longer words after a value are units whatever they are)
SHORT_UNITS = frozenset("""cm mm km nm kg mg ml in ft yd mi hr hrs min mins sec secs mph kph lb lbs oz mol ev kev mev gev pc kpc
au ly cal kj atm pa kpa psi rad sq cu gal qt pt erg day yr yrs""".split())
_ALL_REALS_RE = re.compile(r"^(?:(?:the\s+)?set\s+of\s+)?(?:all|any|every)\s+real\s+(?:numbers?|values?|x|reals?)$|^all\s+reals$|^\\mathbb\s*\{?R\}?$", re.I)
_EMPTY_RE = re.compile(r"^(?:there\s+(?:is|are)\s+)?no\s+(?:real\s+)?(?:solutions?|such\s+\w+|values?)$|^none$|^(?:the\s+)?empty\s+set$"
                       r"|^\\(?:varnothing|emptyset|oslash|O)$|^\\\{\s*\\\}$|^\{\s*\}$", re.I)
_DEGREES_RE = re.compile(r"(\d|\})\s*(?:\\,|~|\\ )?\s*(?:\\text\s*\{\s*)?degrees?\b\}?", re.I)
_E_NOTATION_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([+-]?\d{1,4})(?![\w.])")
_SET_BUILDER_RE = re.compile(r"^\\\{\s*([A-Za-z](?:_\{?\w+\}?)?)\s*(?:\\mid|\||:|\\colon)\s*(.+?)\s*\\\}$")
_RELATION_RE = re.compile(r"<|>|\\[lg]eq?(?:slant)?(?![A-Za-z])|\\[lg]t(?![A-Za-z])|\\ne(?:q)?(?![A-Za-z])")
_PM_RE = re.compile(r"\\(pm|mp)(?![A-Za-z])")
_DECIMAL_COMMA_RE = re.compile(r"(?<![\d,.])(\d+),(\d+)(?![\d,.])")
_THOUSANDS_IN_TEXT_RE = re.compile(r"(?<![\d,.])[1-9]\d{0,2}(?:,\d{3})+(?![\d,])")
_THOUSANDS_RE = re.compile(r"^\s*(?:\\\$\s*)?-?\d{1,3}(?:,(?:\\!\s*)?\d{3})+(?:\.\d+)?\s*$")
_CASES_RE = re.compile(r"\\begin\{cases\}(.*?)\\end\{cases\}", re.S)
_REMARK_RE = re.compile(r"\s*(?:\((?=[^()]*[A-Za-z]{4})(?![^()]*\b(?:or|either|maybe|perhaps|possibly|not)\b)[A-Za-z ,'-]+\)"
                        r"|\\text\s*\{\s*\((?=[^()]*[A-Za-z]{4})(?![^()]*\b(?:or|either|maybe|perhaps|possibly|not)\b)[A-Za-z ,'-]+\)\s*\})\s*$", re.I)
_INFINITY_WORD_RE = re.compile(r"^(?:(?:positive|plus|negative|minus)\s+|[-+]\s*)?infinity$", re.I)
_MIXED_RE = re.compile(r"^(-?\d+)\s+(\d+)\s*/\s*(\d+)$")
_PLAIN_SQRT_RE = re.compile(r"(?<![\\A-Za-z])sqrt\s*\(([^()]*)\)")
_PLAIN_FUNCTION_RE = re.compile(r"(?<![\\A-Za-z])(?:(sin|cos|tan|cot|sec|csc|ln|log|exp|arcsin|arccos|arctan)(?=\s*\()|(pi)(?![A-Za-z]))")
_DEGREE_MARK_RE = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\bdegrees?\b|\\degree", re.I)


_WORKED_STEPS_RE = re.compile(r"[^\s=,;]+=[^\s=,;]+(?:\s+[^\s=,;]+=[^\s=,;]+)+")


def is_bare(text: str) -> bool:
    """A prediction with no delimiter and no answer statement, on one line: the answer itself.
    Worked steps separated by spaces (`97+5=102 102+41=143`) are a solution, not an answer: their
    answer is the last value, read as before.

    >>> is_bare("3\\sqrt{2}"), is_bare("x = 2 or x = -3"), is_bare("a=1, b=2"), is_bare("1+2=3 3+3=6")
    (True, True, True, False)
    """
    s = text.strip()
    return (0 < len(s) <= MAX_FORM_CHARS and "\n" not in s and not any(d in s for d in _DELIMITERS)
            and "answer" not in s.lower() and not _WORKED_STEPS_RE.fullmatch(s))


def unicode_to_latex(text: str) -> str:
    """'x ≥ 7' -> 'x  \\ge  7', '√20' -> '\\sqrt{20}': the math symbols a reader types, as the
    LaTeX the parser reads."""
    text = _ROOT_RE.sub(lambda m: "\\sqrt{" + m.group(1).strip("()") + "}", text)
    return _UNICODE_RE.sub(lambda m: _UNICODE[m.group()], text)


def split_top(text: str) -> list[tuple[str, str]]:
    """(part, joiner before the next part) at top level: commas, ';', 'or', 'and', \\text{or}, \\quad.
    Brackets of any kind nest ("[1,2)" counts as one level). A number with thousands separators
    ("58,500", "10,\\!080") is one part."""
    if _THOUSANDS_RE.match(text):
        return [(text.strip(), "")]
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth = max(0, depth - 1)
        elif depth == 0 and ch in " \\;," and text[i - 1: i] != "\\":  # '\\,' and '\\;' are spaces
            m = _CONNECTIVE_RE.match(text, i)
            if m and m.end() > i and (m.group(1) or m.group(2) or m.group(3) or "quad" in m.group()):
                parts.append((text[start:i], (m.group(1) or m.group(2) or m.group(3) or ",").lower()))
                start = i = m.end()
                continue
            if ch == "," and not text.startswith(",\\!", i):
                parts.append((text[start:i], ","))
                start = i = i + 1
                continue
        i += 1
    parts.append((text[start:], ""))
    return [(p.strip(), j) for p, j in parts]


def _strip_unit(part: str) -> tuple[str, str | None]:
    """'12 apples' -> ('12', 'apple'); '5\\text{ cm}^2' -> ('5', 'cm^2'); '2x' -> ('2x', None)."""
    m = _UNIT_TAIL_RE.match(part)
    if not m:
        return part, None
    written = m.group("unit")
    unit = _TEXT_CMD_RE.sub(r" \1 ", written).replace("~", " ")
    unit = " ".join(re.sub(r"[{}\s^]+", " ", unit).split()).lower()
    words = unit.split()
    if not words or not words[0][0].isalpha() or any(w in FUNCTION_WORDS for w in words):
        return part, None
    first = re.match(r"[a-z]+", words[0]).group()
    in_text = written.lstrip().startswith("\\")
    latex_gap = "\\" in m.group("gap") or "~" in m.group("gap")
    if not (in_text or len(first) > 3 or first in SHORT_UNITS or (latex_gap and len(first) == 1)):
        return part, None  # '2CR', '\\frac{1}{2}ab': variables, not units
    if not m.group("gap") and not in_text and not (m.group("value")[-1] in ")}" and (len(first) > 3 or first in SHORT_UNITS)):
        return part, None  # glued to a number ('5t', '2cm' stay as written); '36\\sqrt{7}cm^3' is a unit
    if any(w in SHORT_WORDS and w != "in" for w in words if w.isalpha()):
        return part, None
    if len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss") and "/" not in words[-1]:
        words[-1] = words[-1][:-1]  # apples -> apple, inches -> inche: only compared with itself
    return m.group("value").strip(), " ".join(words)


def is_prose(latex: str) -> bool:
    plain = _TEXT_CMD_RE.sub(" ", re.sub(r"\\(?:begin|end)\s*\{[A-Za-z*]+\}", " ", latex))
    for word in _WORD_RE.findall(plain):
        w = word.lower()
        if w in SHORT_WORDS or (len(w) > 3 and w not in FUNCTION_WORDS):
            return True
    return False


@dataclass(frozen=True)
class Reading:
    """An answer's shape: `latex` to parse (its parts joined by commas), the `parts` themselves,
    the `joiner` ('or', 'and', ',' or '' for one part), and the unit word of each part (None
    where a part has none; () when no part has one)."""

    latex: str
    parts: tuple[str, ...]
    joiner: str
    units: tuple[str | None, ...]
    changed: bool = False  # a rule above rewrote something (words, units, "or", \\pm in a tuple, ...)


_SUBSCRIPT_CMD_RE = re.compile(r"_\{\s*\\([A-Za-z]+)\s*\}")
_TEXT_TILDE_RE = re.compile(r"\\(mathrm|text)\s*\{\s*~\s*")


def _rewrite(part: str) -> str:
    part = part.strip().rstrip(".").strip()
    part = _SUBSCRIPT_CMD_RE.sub(r"_{\1}", part)  # m_{\max} -> m_{max}: a name, not an operator
    part = _TEXT_TILDE_RE.sub(r"\\\1{", part).replace("\\$", " ").strip()
    if _ALL_REALS_RE.match(part):
        return r"\mathbb{R}"
    if _EMPTY_RE.match(part):
        return r"\emptyset"
    m = _SET_BUILDER_RE.match(part)
    if m and _RELATION_RE.search(m.group(2)) and "\\in" not in m.group(2) and "," not in m.group(2):
        return m.group(2)  # {x | x > 5} -> x > 5: the set the condition describes
    part = _REMARK_RE.sub("", part).strip()  # 'x = 3 (double root)': a remark, not part of the value
    number = number_from_words(part)
    if number is not None:
        return number  # 'twelve' -> '12'
    if _INFINITY_WORD_RE.match(part):
        return ("-" if part.lstrip().startswith(("-", "neg", "minus")) else "") + "\\infty"
    m = _MIXED_RE.match(part)
    if m:  # '1 1/2' in plain text is a mixed number
        return f"{m.group(1)}\\frac{{{m.group(2)}}}{{{m.group(3)}}}"
    part = _PLAIN_SQRT_RE.sub(r"\\sqrt{\1}", part)  # 'sqrt(2)' -> '\\sqrt{2}'
    part = _PLAIN_FUNCTION_RE.sub(lambda m: "\\" + (m.group(1) or m.group(2)), part)  # 'sin(x)' -> '\\sin(x)', 'pi' -> '\\pi'
    part = _DEGREES_RE.sub(r"\1^\\circ", part)
    return _E_NOTATION_RE.sub(r"\1\\times 10^{\2}", part)


_NUMBER_WORDS = {w: i for i, w in enumerate("""zero one two three four five six seven eight nine ten eleven twelve thirteen
fourteen fifteen sixteen seventeen eighteen nineteen""".split())}
_TENS_WORDS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}


def number_from_words(text: str) -> str | None:
    """'twelve' -> '12', 'twenty-five' -> '25', 'one hundred and five' -> '105', 'a thousand' ->
    '1000': an answer that is a whole number in English words (up to 999,999); None otherwise."""
    words = re.split(r"[\s-]+", text.strip().lower().replace(" and ", " "))
    if not words or not all(w in _NUMBER_WORDS or w in _TENS_WORDS or w in ("hundred", "thousand", "a") for w in words):
        return None
    if words[0] == "a":
        if len(words) < 2 or words[1] not in ("hundred", "thousand"):
            return None  # 'a' alone is a variable
        words[0] = "one"
    total, current, seen = 0, 0, False
    for w in words:
        if w in _NUMBER_WORDS:
            current += _NUMBER_WORDS[w]
        elif w in _TENS_WORDS:
            current += _TENS_WORDS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w == "thousand":
            total, current = total + max(current, 1) * 1000, 0
        else:
            return None  # 'a' after the first word
        seen = True
    return str(total + current) if seen else None


def _sign_choices(part: str) -> list[str]:
    """'(\\pm 3, \\pm 2)' -> the four tuples; '(22 \\pm 8, 22 \\mp 8)' -> two (a \\mp follows its \\pm).
    A part that is not a parenthesised tuple, or has no sign, is returned as it is."""
    signs = _PM_RE.findall(part)
    if not signs or not (part.startswith("(") and part.endswith(")")) or "," not in part:
        return [part]
    linked = "mp" in signs
    n = 1 if linked else len(signs)
    if n > MAX_SIGN_CHOICES:
        return [part]
    out = []
    for choice in range(2 ** n):
        flips = iter(range(len(signs)))
        out.append(_PM_RE.sub(lambda m: "+-"[((choice >> (0 if linked else next(flips))) & 1) ^ (m.group(1) == "mp")], part))
    return out


_CHAIN_SPLIT_RE = re.compile(r"\s*(?:<|\\lt(?![A-Za-z]))\s*")
_CHAIN_DOWN_RE = re.compile(r"\s*(?:>|\\gt(?![A-Za-z]))\s*")


def ordered_chain(text: str) -> list[str] | None:
    """'\\sqrt{2} < 2 < 3' -> ['\\sqrt{2}', '2', '3']: three or more numbers (no variable) joined
    by one strict direction of inequality state an ordering; None for anything else."""
    for pattern in (_CHAIN_SPLIT_RE, _CHAIN_DOWN_RE):
        parts = pattern.split(text.strip())
        if len(parts) >= 3 and all(p and not re.search(r"[<>=]", p) for p in parts):
            if not any(re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", p)) for p in parts):
                return parts
    return None


def read(latex: str) -> Reading:
    """The shape of an answer written in LaTeX or plain math (see the module docstring)."""
    text = _CASES_RE.sub(lambda m: ", ".join(r.replace("&", " ").strip() for r in re.split(r"\\\\", m.group(1)) if r.strip()),
                         unicode_to_latex(latex.strip()))
    if len(text) > MAX_FORM_CHARS or ";" in text and "," in text:
        return Reading(text, (text,), "", ())
    chain = ordered_chain(text)
    if chain is not None:  # '\\sqrt{2} < 2 < 3': the values in the order asked for
        return Reading(", ".join(chain), tuple(chain), ",", (), True)  # "p=5,q=2;p=7,q=2": groups of a solution set, read by the parser
    split = split_top(text)
    joiners = {j for _, j in split[:-1]}
    joiner = "" if len(split) == 1 else "and" if joiners == {"and"} else "or" if joiners & {"or", ";"} else ","
    parts, units, changed = [], [], text != latex.strip() or joiner in ("or", "and")
    for part, _ in split:
        rewritten = _rewrite(part)
        value, unit = _strip_unit(rewritten)
        choices = _sign_choices(value)
        changed = changed or rewritten != part.strip().rstrip(".").strip() or len(choices) > 1
        for choice in choices:
            parts.append(choice)
            units.append(unit)
    parts = [p for p in parts if p]
    units_t = tuple(units) if any(u is not None for u in units) else ()
    return Reading(", ".join(parts), tuple(parts), joiner, units_t, changed or bool(units_t))


def bare_reading(text: str) -> Reading | None:
    """The reading of a bare answer (see `read`), or None when `text` is not one (prose,
    delimiters, several lines). In plain text a comma inside a number belongs to it ('x = 1,234',
    'x = 855,00', as `verifiers._numbers` reads plain text), unless the answer has brackets."""
    if not is_bare(text):
        return None
    text = text.strip().rstrip(".")
    if not re.search(r"[()\[\]{}]", text):
        text = _THOUSANDS_IN_TEXT_RE.sub(lambda m: m.group().replace(",", ""), text)
        commas = _DECIMAL_COMMA_RE.findall(text)
        if len(commas) == 1 and text.count(",") == 1 and (len(commas[0][1]) != 3 or commas[0][0].startswith("0")):
            text = _DECIMAL_COMMA_RE.sub(r"\1.\2", text)
    reading = read(text)
    if not reading.latex or is_prose(reading.latex):
        return None
    return reading


def bare_latex(text: str) -> str | None:
    """The LaTeX of a bare answer, or None when `text` is not one."""
    reading = bare_reading(text)
    return None if reading is None else reading.latex


_WORD_NUMBER = r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred)"
_NUMBER = rf"(?:-?(?:[1-9]\d{{0,2}}(?:,\d{{3}})+|\d+)(?:\.\d+)?(?:/\d+)?|{_WORD_NUMBER}\b)"
# joiners between alternatives: ", ", "or", "and", "and/or", "(or", with up to two words after them ("or maybe 3")
_HEDGE_WORDS = r"(?:maybe|perhaps|possibly|probably|even|also|just|else)"
_JOIN = rf"(?:\s*,\s+|\s*,?\s+(?:or|and|and/or)\s+)(?:{_HEDGE_WORDS}\s+){{0,2}}"
_ALTERNATIVES_RE = re.compile(rf"(?:^|(?<=[\s:=]))({_NUMBER}(?:{_JOIN}{_NUMBER})+)\s*[.!]?\s*$", re.I)
# '3 (or 4)', '3 (maybe four)': a second value in parentheses after the first
_PAREN_JOIN = rf"\s*\(\s*(?:(?:or|and/or)\s+|(?={_HEDGE_WORDS}\s))(?:{_HEDGE_WORDS}\s+){{0,2}}"
_PAREN_ALTERNATIVE_RE = re.compile(rf"(?:^|(?<=[\s:=]))({_NUMBER}{_PAREN_JOIN}{_NUMBER})\s*\)\s*[.!]?\s*$", re.I)
_SPLIT_ALTERNATIVES_RE = re.compile(rf"{_PAREN_JOIN}|{_JOIN}", re.I)


def trailing_alternatives(text: str) -> str | None:
    """'so it is 2 or 3.' -> '2, 3': text that ends with several numbers joined by "or", "and" or
    ", " states them all (a hedge is a set, never its last number); math delimiters and \\text{}
    are read through ('$3$ (or maybe $4$)'). None otherwise."""
    text = text[-MAX_FORM_CHARS:]
    if any(d in text for d in ("$", "\\(", "\\[", "\\text", "\\mathrm")):
        # with math in it, the alternatives must be joined in words outside the formulas: a comma
        # inside one formula ('$m = 1, 2, 3$') is the formula's own list, read by the parser
        prose = " ".join(re.findall(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}", text))
        prose += " " + re.sub(r"\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", " ", text)
        if not re.search(r"\b(?:or|and|maybe|perhaps|possibly)\b", prose, re.I):
            return None
        text = re.sub(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}", r"\1", text)
        text = re.sub(r"\$+|\\[()\[\]]", " ", text)
    m = _ALTERNATIVES_RE.search(text) or _PAREN_ALTERNATIVE_RE.search(text)
    if m is None or text[: m.start()].rstrip().endswith((",", ";")):
        return None  # '\\sqrt{7}, -\\sqrt{7}, 7, -6': the tail of a longer list, not alternatives
    values = [v.strip() for v in _SPLIT_ALTERNATIVES_RE.split(m.group(1)) if v.strip()]
    return ", ".join(number_from_words(v) or v.replace(",", "") for v in values)


# ---------------------------------------------------------------- descriptions

_STOP = frozenset("""all every each any the a an is are be being of for that which such there it its when whenever where with
as many number numbers integer integers value values condition wins win winner""".split())  # words that carry no meaning of their own here
_SYNONYMS = {"infinitely": "infinite", "infinity": "infinite", "solutions": "solution", "evens": "even", "odds": "odd"}


# words after which the order of a description matters ('sufficient but not necessary' is not
# 'necessary but not sufficient'); such a description is compared as a sequence, not as a set
_ORDER_WORDS = frozenset("not no neither nor but than without only except never non unless".split())


def description_key(text: str) -> frozenset[str] | tuple[str, ...] | None:
    """The content words of an answer in words, for comparing two descriptions: 'All even n' and
    '$n$ is even' give {'even', 'n'}. None when the text has no word of three or more letters (not
    a description) or names two or more variables (then word order matters: 'a divides b'). A
    description with a negation or a contrast ('but', 'than') is the sequence of its words."""
    plain = _TEXT_CMD_RE.sub(r" \1 ", text.replace("$", " "))
    plain = re.sub(r"\\[A-Za-z]+", " ", plain).lower()
    words = re.findall(r"[a-z]+|\d+", plain)
    if not any(len(w) >= 3 and w not in _STOP and w not in FUNCTION_WORDS for w in words):
        return None
    kept = tuple(_SYNONYMS.get(w, w) for w in words if w not in _STOP)
    key = frozenset(kept)
    if sum(len(w) == 1 for w in key) >= 2:
        return None
    if key & _ORDER_WORDS:
        return kept  # 'necessary but not sufficient': the order of the words is the meaning
    return key or None


def angle_marks(text: str) -> tuple[bool, bool]:
    """(written in degrees, holds \\pi) for an answer's text."""
    return bool(_DEGREE_MARK_RE.search(text)), "\\pi" in text or "π" in text


# ---------------------------------------------------------------- normalisation of the writing

_STYLE_FRAC_RE = re.compile(r"\\[dt]frac(?![A-Za-z])")
_LOG_RE = re.compile(r"\\log(?![A-Za-z_])|\\operatorname\s*\{\s*ln\s*\}")  # \log without a base is the natural log
_ORDINAL_RE = re.compile(r"(\d+)\s*(?:\^\s*\{\s*\\(?:text|mathrm|textrm)\s*\{\s*(st|nd|rd|th)\s*\}\s*\}|(st|nd|rd|th)\b)")


def _ordinal(m: re.Match) -> str:
    """'7^{\\text{th}}', '21st' -> the number; a suffix English does not give that number ('3st', '2th':
    the product of a number and variables) is kept."""
    number, suffix = m.group(1), m.group(2) or m.group(3)
    n = int(number[-2:])
    right = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return number if suffix == right else m.group()


_BOLD_RE = re.compile(r"\\(?:textbf|mathbf|textit|emph)\s*\{")
_INTEGER_SET = r"\\mathbb\s*\{?\s*Z\s*\}?"
# ', k \in \mathbb{Z}', '(k \in \mathbb{Z})', '\text{ for } k \in \mathbb{Z}', '\text{ where } k \text{ is an integer}'
# (whitespace is taken by one quantifier, from the start of a run only: nested or adjacent quantifiers, or a retry
# at every blank of a long run, took seconds on a response ending in blank lines)
_PARAMETER_DOMAIN_RE = re.compile(
    r"(?<![\s,;\\])(?<!\\[:!])(?<!quad)(?:\s|,|;|\\[,;:! ]|\\q?quad)*(?:\\text\s*\{\s*(?:for|where|with)\s*(?:all|any|some|every)?\s*(?:integers?)?\s*\}\s*)?"
    r"(?:\(\s*)?[A-Za-z]\s*(?:\\in\s*" + _INTEGER_SET + r"|\\text\s*\{\s*(?:is\s+)?(?:an?\s+)?(?:any\s+)?integer\s*\})\s*\)?\s*(?=$|\$|\\\]|\\\)|\})")
# '\text{all real } m \text{ with } m \ge 7' -> 'm \ge 7': a condition stated in words around it
_CONDITION_IN_WORDS_RE = re.compile(
    r"\\text\s*\{\s*(?:all|every|any)\b[^{}]*\}\s*([A-Za-z])\s*\\text\s*\{\s*(?:with|such\s+that|where|satisfying|for\s+which)\s*\}\s*(?=\1)")


_FLIP = {"<": ">", ">": "<", "\\le": "\\ge", "\\ge": "\\le", "\\leq": "\\geq", "\\geq": "\\leq"}
# '5 > m' -> 'm < 5' (a bound written first; not a chain 'a < x < b', which reads as it is)
_BOUND_FIRST_RE = re.compile(r"(?<![\w}<>=.\\])(?<![<>]\s)(-?\d+(?:\.\d+)?)\s*(<|>|\\[lg]eq?(?![A-Za-z]))\s*([A-Za-z])(?![\w({^_])(?!\s*(?:<|>|\\[lg]eq?(?![A-Za-z])))")


# 'a c' -> 'ac': single-letter factors written with spaces between them (the parser reads '2 a c' as 2)
_SPACED_FACTORS_RE = re.compile(r"(?<![\\A-Za-z])([A-Za-z])[ \t]+(?=[A-Za-z](?![A-Za-z{(]))")
# 'tr' alone (the factors t and r, '2tr'): the parser reads it as the trace and fails; '\\operatorname{tr}(A)' and 'tr(A)' stay
_TRACE_LETTERS_RE = re.compile(r"(?<![\\A-Za-z{])tr(?![A-Za-z{(])")


# '8 r s' -> '8r s' (then '8rs'): a number before single-letter factors written with spaces ('5 m' stays a unit)
_SPACED_COEFFICIENT_RE = re.compile(r"(?<![\w.])(\d+)[ \t]+([A-Za-z])(?=[ \t]+[A-Za-z](?![A-Za-z{(]))")
# '76 \\text{ percent}', '76 percent' -> '76\\%'
_PERCENT_WORD_RE = re.compile(r"(\d)\s*(?:\\text\s*\{\s*(?:percent|per\s*cent)\s*\}|\b(?:percent|per\s*cent)\b)", re.I)


# '3\\binom{10}{5}' is 3 times the binomial (the parser reads a mixed number there: 3 + 252)
_NUMBER_BINOM_RE = re.compile(r"(\d)\s*\\[dt]?binom(?![A-Za-z])")


# '16\\,267', '16{,}267', '16\\ 267', '16 267' (a thin space): thousands separators in LaTeX, groups of three digits
_LATEX_THOUSANDS_RE = re.compile(r"(?<![\d.,])\d{1,3}(?:(?:\\[,!; ]|\{,\}|\u2009|\u202f)\d{3})+(?![\d])(?!\{,\})(?!\\[,!; ]\d)")
_LATEX_SEPARATOR_RE = re.compile(r"\\[,!; ]|\{,\}|\u2009|\u202f")


def normalise_writing(text: str) -> str:
    """One writing for what is written many ways, before anything is read: \\dfrac / \\tfrac ->
    \\frac, thousands separators in LaTeX ('16\\,267', '16{,}267') dropped, \\log without a base ->
    \\ln (the natural log), '2 a c' -> '2ac' ('2tr' -> '2t r'), '76 percent' -> '76\\%', a bound written first ('5 > m') -> 'm < 5', ordinals
    '7^{\\text{th}}' / '7th' -> 7, bold / italic wrappers -> \\text, the domain of a family's
    parameter (', k \\in \\mathbb{Z}') dropped, a condition stated in words around it reduced to the
    condition.

    >>> normalise_writing("\\\\dfrac{1}{2} + \\\\log 3, the 7^{\\\\text{th}}")
    '\\\\frac{1}{2} + \\\\ln 3, the 7'
    >>> normalise_writing("x = 2k\\\\pi, \\\\ k \\\\in \\\\mathbb{Z}")
    'x = 2k\\\\pi'
    """
    text = _STYLE_FRAC_RE.sub(r"\\frac", text)
    text = _LATEX_THOUSANDS_RE.sub(lambda m: _LATEX_SEPARATOR_RE.sub("", m.group()), text)
    text = _LOG_RE.sub(r"\\ln", text)
    text = _ORDINAL_RE.sub(_ordinal, text)
    text = _BOLD_RE.sub(r"\\text{", text)
    text = _PARAMETER_DOMAIN_RE.sub("", text)
    text = _PERCENT_WORD_RE.sub(r"\1\\%", text)
    text = _SPACED_COEFFICIENT_RE.sub(r"\1\2", text)
    text = _SPACED_FACTORS_RE.sub(r"\1", text)
    text = _TRACE_LETTERS_RE.sub("t r", text)
    text = _NUMBER_BINOM_RE.sub(r"\1 \\cdot \\binom", text)
    text = _BOUND_FIRST_RE.sub(lambda m: f"{m.group(3)} {_FLIP[m.group(2)]} {m.group(1)}", text)
    return _CONDITION_IN_WORDS_RE.sub("", text)


_UNIT_NAMES = {
    "m": "meter metre meters metres", "cm": "centimeter centimetre centimeters centimetres", "mm": "millimeter millimetre",
    "km": "kilometer kilometre kilometers kilometres", "g": "gram grams gm", "kg": "kilogram kilograms kilo kilos",
    "s": "sec secs second seconds", "min": "mins minute minutes", "h": "hr hrs hour hours", "l": "liter litre liters litres",
    "ml": "milliliter millilitre", "ft": "foot feet", "in": "inch inches inche", "day": "days", "yr": "yrs year years",
    "dollar": "dollars usd", "cent": "cents", "degree": "degrees deg \\circ",
}
_UNIT_ALIASES = {alias: short for short, names in _UNIT_NAMES.items() for alias in names.split()}


_DIMENSIONS = {"length": "m cm mm km ft in", "mass": "g kg", "time": "s min h day yr", "volume": "l ml",
               "money": "dollar cent", "angle": "degree"}
_DIMENSION_OF = {unit: name for name, units in _DIMENSIONS.items() for unit in units.split()}
DIMENSIONS = frozenset(_DIMENSIONS)  # the measured kinds (a count noun is its own kind, not one of these)


def unit_dimension(unit: str | None) -> str | None:
    """What a unit measures ('cm' and 'feet' -> 'length', 'hours' -> 'time'); a count noun is its own
    kind ('apples' -> 'apple'). Two quantities of different kinds are never two answers to one question.

    >>> unit_dimension("feet"), unit_dimension("hrs"), unit_dimension("apples"), unit_dimension(None)
    ('length', 'time', 'apple', None)
    """
    u = canonical_unit(unit)
    return _DIMENSION_OF.get(u, u) if u else None


def is_unit_word(word: str) -> bool:
    """Whether a word after a number names a unit ('cm', 'meters', 'hrs'; not 'is' or 'apples')."""
    w = word.lower()
    return w in _UNIT_ALIASES or w in _UNIT_NAMES or w in SHORT_UNITS


def canonical_unit(unit: str | None) -> str | None:
    """One name per unit: 'meters' / 'm' -> 'm', 'hours' / 'hr' -> 'h'; other words as written
    (singular), so 'apple' and 'pear' stay different."""
    if not unit:
        return None
    u = unit.strip().lower()
    return _UNIT_ALIASES.get(u, u[:-1] if len(u) > 3 and u.endswith("s") and not u.endswith("ss") else u)
