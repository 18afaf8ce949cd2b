"""The `numeric`, `choice`, `string` and `regex` kinds and `extract_answer`, table-driven, in-process.
Each row: (prediction, gold, expected verdict[, options]) with a comment saying why."""

from __future__ import annotations

import pytest

from verifiers.extract import extract_answer
from verifiers.simple_kinds import verify_choice, verify_numeric, verify_regex, verify_string
from verifiers.types import Verdict

OK, NO, NA, BG = Verdict.CORRECT, Verdict.INCORRECT, Verdict.NO_ANSWER, Verdict.BAD_GOLD

NUMERIC = [
    ("42", "42", OK, {}),  # same integer
    ("43", "42", NO, {}),  # off by one
    ("The answer is 1,234.", "1234", OK, {}),  # thousands separator
    ("-7", "7", NO, {}),  # sign
    ("x = -7", "-7", OK, {}),  # negative in an assignment
    ("0.5", "1/2", OK, {}),  # decimal vs fraction
    (r"$\frac{1}{2}$", "0.5", OK, {}),  # latex fraction vs decimal
    ("The answer is $-\\frac{3}{4}$ m", "-0.75", OK, {}),  # negative latex fraction inside text
    ("2.5e-3", "0.0025", OK, {}),  # exponent notation
    ("2.5E3", "2500", OK, {}),  # capital E
    (r"1.5 \times 10^{3}", "1500", OK, {}),  # latex scientific notation
    ("1.5x10^3", "1500", OK, {}),  # plain scientific notation
    ("45%", "0.45", OK, {}),  # percent becomes a fraction
    ("0.0000002", "0.0000001", NO, {}),  # tiny values, 2x apart (relative tolerance)
    ("1.0000001", "1", OK, {}),  # within the default rel_tol 1e-6
    ("1.00001", "1", NO, {}),  # outside the default rel_tol
    ("1.00001", "1", OK, {"rel_tol": 1e-4}),  # inside a looser rel_tol
    ("0.001", "0", NO, {}),  # relative tolerance alone never accepts anything for gold 0
    ("0.001", "0", OK, {"abs_tol": 0.01}),  # absolute tolerance near zero
    ("0.1", "0", NO, {"abs_tol": 0.01}),  # outside the absolute tolerance
    ("3.14159", "3.1416", OK, {"rel_tol": 1e-4}),  # pi to different precisions
    ("3.14", "3.1416", NO, {"rel_tol": 1e-4}),  # too coarse
    ("1e10000", "1", NO, {}),  # a huge exponent is fine
    ("1e99999", "1", NA, {}),  # an absurd exponent is not expanded: no number read
    ("Answer: 12 apples", "12", OK, {}),  # trailing unit word
    ("The answer is \\boxed{12}. Later I wrote 13", "12", OK, {}),  # the box beats later numbers
    ("First 5, then 6", "6", OK, {}),  # last number
    ("First 5, then 6", "5", NO, {}),  # the earlier number does not count
    ("no numbers here", "5", NA, {}),  # nothing to read
    ("", "5", NA, {}),  # empty prediction
    ("5", "five", BG, {}),  # gold is not a number
    ("5", "", BG, {}),  # empty gold
    ("5", "1/0", BG, {}),  # gold divides by zero
    ("7/0", "7", NA, {}),  # a prediction dividing by zero is not a number
    ("  +8  ", "8", OK, {}),  # explicit plus sign
    ("−8", "-8", OK, {}),  # unicode minus sign
    ("12,345,678.9", "12345678.9", OK, {}),  # separators with decimals
    ("Ответ: 7\nПроверка: 7 + 1 = 8", "7", OK, {}),  # Russian answer prefix beats the last line
    ("Respuesta: 3.5 metros", "3.5", OK, {}),  # Spanish answer prefix
    ("1,23", "1.23", OK, {}),  # a whole answer '1,23' cannot be a thousands separator: decimal comma
    ("1,234", "1.234", NO, {}),  # '1,234' could be one: it stays 1234
    ("0,111", "0.111", OK, {}),  # a group starting with 0 is never a thousands group
    ("0,111", "111", NO, {}),  # ... so '0,111' is not 111
]

CHOICE = [
    ("Réponse : B", "B", OK, {}),  # French answer prefix
    ("Antwort: C", "B", NO, {}),  # German answer prefix, wrong letter
    ("答案：B", "B", OK, {}),  # Chinese, full-width colon
    ("정답: A", "B", NO, {}),  # Korean, wrong letter
    (r"\boxed{B}", "B", OK, {}),  # boxed letter
    (r"\boxed{(B)}", "B", OK, {}),  # boxed parenthesised letter
    (r"\boxed{\text{B}}", "B", OK, {}),  # boxed text letter
    ("(B)", "B", OK, {}),  # parenthesised letter alone
    ("B)", "B", OK, {}),  # letter with closing parenthesis
    ("**B**", "B", OK, {}),  # markdown bold
    ("Answer: B", "B", OK, {}),  # answer label
    ("The answer is B.", "B", OK, {}),  # answer sentence
    ("The answer is (b).", "B", OK, {}),  # lower-case letter in parentheses
    ("The correct option is C", "C", OK, {}),  # "option" anchor
    ("I think it's (A) because... Answer: (C)", "C", OK, {}),  # the last answer statement counts
    ("Reasoning.\nB) 42 apples", "B", OK, {}),  # last line with the option text
    ("Reasoning.\nC", "C", OK, {}),  # letter alone on the last line
    (r"\boxed{C}", "B", NO, {}),  # wrong boxed letter
    ("The answer is D.", "B", NO, {}),  # wrong letter in a sentence
    ("Answer: A or B", "B", NO, {}),  # hedge between two letters: INCORRECT (ambiguous)
    ("Answer: A, C", "A", NO, {}),  # two letters listed
    (r"\boxed{A} or \boxed{B}", "B", NO, {}),  # hedge across two boxes
    (r"First \boxed{A}. Wait, no. \boxed{B}", "B", OK, {}),  # a corrected box is not a hedge
    ("Answer: B and that's final", "B", OK, {}),  # "and" followed by words, not a letter
    ("I choose nothing.", "B", NA, {}),  # the pronoun I is not the letter I
    ("I think so.", "I", NA, {}),  # not even when I is a valid option
    ("The answer is a prime number.", "A", NA, {}),  # the article 'a' is not option A
    ("", "B", NA, {}),  # empty prediction
    ("Answer: E", "B", NA, {"n_options": 4}),  # E is not among A-D
    ("Answer: E", "E", OK, {"letters": "ABCDE"}),  # explicit letter set
    ("Answer: B", "F", BG, {"n_options": 4}),  # gold outside the valid letters
    ("Answer: B", "42", BG, {}),  # gold is not a letter
    ("Answer: B", "(B)", OK, {}),  # parenthesised gold
    ("Answer: B", r"\boxed{B}", OK, {}),  # boxed gold
    ("Answer: B", "b", OK, {}),  # lower-case gold letter
    ("Answer: [B]", "B", OK, {}),  # bracketed letter
]

STRING = [
    ("Paris", "Paris", OK, {}),  # identical
    ("The answer is paris.", "Paris", OK, {}),  # case and sentence folding
    ("Answer:  New   York ", "new york", OK, {}),  # whitespace folding
    (r"\boxed{\text{Eiffel Tower}}", "Eiffel Tower", OK, {}),  # boxed text
    ("The answer is Eiffel-Tower!", "eiffel tower", NO, {}),  # hyphen removal joins the words
    ("The answer is Eiffel Tower!", "eiffel tower", OK, {}),  # punctuation dropped
    ("London", "Paris", NO, {}),  # different answer
    ("Paris, France", "Paris", NO, {}),  # extra words
    ("paris", "Paris", NO, {"case_sensitive": True}),  # case matters when asked
    ("Paris.", "Paris", NO, {"ignore_punctuation": False}),  # punctuation matters when asked
    ("New  York", "New York", NO, {"fold_whitespace": False}),  # whitespace matters when asked
    ("Café", "Café", OK, {}),  # NFKC: composed vs decomposed accent
    ("The capital is Paris.\nParis", "Paris", OK, {}),  # last line
    ("Paris is the answer", "Paris", NO, {"extract": False}),  # whole prediction compared
    ("", "Paris", NA, {}),  # empty prediction
    ("...", "Paris", NA, {}),  # only punctuation
    ("Paris", "", BG, {}),  # empty gold
    ("Paris", "!!!", BG, {}),  # gold empty after normalisation
]

REGEX = [
    ("The answer is 42 apples", r"42\s*apples?", OK, {}),  # fullmatch on the answer span
    ("The answer is 42 apples", r"42", NO, {}),  # fullmatch needs the whole span
    ("The answer is 42 apples", r"42", OK, {"mode": "search"}),  # search anywhere in the span
    ("The answer is 41 apples", r"42", NO, {"mode": "search"}),  # search finds nothing
    ("Answer: YES", r"yes", NO, {}),  # case-sensitive by default
    ("Answer: YES", r"yes", OK, {"ignore_case": True}),  # ignore_case
    ("x = 3.50", r"x = 3\.50?", OK, {}),  # last line
    ("blah 7 blah", r".*7.*", OK, {"extract": False}),  # whole prediction
    ("abc", r"(", BG, {}),  # invalid pattern
    ("abc", r"a{2,1}", BG, {}),  # invalid repeat
    ("", r".*", NA, {}),  # empty prediction
    (r"\boxed{x^2}", r"x\^2", OK, {}),  # boxed content
]


def _ids(cases):
    return [f"{i}:{c[0][:20]!r}~{c[1][:15]!r}" for i, c in enumerate(cases)]


@pytest.mark.parametrize("prediction, gold, expected, options", NUMERIC, ids=_ids(NUMERIC))
def test_numeric(prediction, gold, expected, options):
    res = verify_numeric(prediction, gold, **options)
    assert res.verdict is expected, res.detail


@pytest.mark.parametrize("prediction, gold, expected, options", CHOICE, ids=_ids(CHOICE))
def test_choice(prediction, gold, expected, options):
    res = verify_choice(prediction, gold, **options)
    assert res.verdict is expected, res.detail


@pytest.mark.parametrize("prediction, gold, expected, options", STRING, ids=_ids(STRING))
def test_string(prediction, gold, expected, options):
    res = verify_string(prediction, gold, **options)
    assert res.verdict is expected, res.detail


@pytest.mark.parametrize("prediction, gold, expected, options", REGEX, ids=_ids(REGEX))
def test_regex(prediction, gold, expected, options):
    res = verify_regex(prediction, gold, **options)
    assert res.verdict is expected, res.detail


def test_whole_suite_size():
    from test_math_table import CASES as MATH  # this folder is on sys.path (pytest's rootdir-less import)

    rows = MATH + NUMERIC + CHOICE + STRING + REGEX
    negatives = sum(1 for r in rows if r[2] is not OK)
    assert len(rows) >= 300 and negatives >= 100, (len(rows), negatives)


KIND_FNS = [verify_numeric, verify_choice, verify_string, verify_regex]


@pytest.mark.parametrize("fn", KIND_FNS)
def test_unknown_option_is_a_type_error_naming_valid_ones(fn):
    with pytest.raises(TypeError, match="unknown option.*'bogus'.*valid options"):
        fn("a", "a", bogus=1)


@pytest.mark.parametrize("fn, options, field", [
    (verify_numeric, {"rel_tol": -1}, "rel_tol"),  # negative tolerance
    (verify_numeric, {"abs_tol": "x"}, "abs_tol"),  # not a number
    (verify_choice, {"n_options": 0}, "n_options"),  # no options
    (verify_choice, {"letters": "A1"}, "letters"),  # not letters
    (verify_regex, {"mode": "match"}, "mode"),  # unknown mode
])
def test_bad_option_values_name_the_field(fn, options, field):
    with pytest.raises(ValueError, match=field):
        fn("A", "A", **options)


@pytest.mark.parametrize("fn, gold", [(verify_numeric, "7"), (verify_choice, "B"), (verify_string, "x"), (verify_regex, "x")])
def test_hostile_predictions_are_fast_and_clean(fn, gold):
    import time

    for prediction in ["\x00" * 10, "\ud800\udfff", "", "a" * 1_000_000, "7 " * 500_000, "(" * 100_000]:
        start = time.perf_counter()
        res = fn(prediction, gold)
        assert res.verdict in (OK, NO, NA) and time.perf_counter() - start < 1.0


EXTRACT = [
    ("so the answer is 1,234.", "math", "1234"),  # separators dropped
    (r"\boxed{\frac{2}{4}}", "math", "1/2"),  # exact value of a latex fraction
    ("The answer is 0.5", "math", "1/2"),  # a decimal votes with its fraction
    (r"\boxed{x^2+1}", "math", "x^2+1"),  # an expression as math-verify reads it
    ("no answer", "math", None),  # nothing stated
    ("so it is 1,234.5 m", "numeric", "2469/2"),  # numeric reads the last number
    ("Answer: (C)", "choice", "C"),  # letter
    ("Answer: A or C", "choice", None),  # a hedge votes for nothing
    ("The answer is  New York.", "string", "New York"),  # span, whitespace folded
]


@pytest.mark.parametrize("text, kind, expected", EXTRACT)
def test_extract_answer(text, kind, expected):
    assert extract_answer(text, kind) == expected


def test_extract_answer_bad_arguments():
    with pytest.raises(ValueError, match="valid kinds"):
        extract_answer("x", kind="code")
    with pytest.raises(TypeError, match="text must be a string"):
        extract_answer(None)  # type: ignore[arg-type]
