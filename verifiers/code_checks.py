"""Unit tests of the compiled languages (and JavaScript) judged outside the program under test.

The adversary is the program: it shares a process with whatever test code is compiled into it, runs before it
(static initialisers, `init`, a constructor attribute), after it (atexit, destructors) and beside it (threads),
reads that process's memory, files, arguments and stdin, redefines what the tests call (a macro named `assert`,
an `__assert_fail` of its own, a `macro_rules! assert_eq`, a package-level `func panic`, a patched
`assert.strictEqual`) and may print anything, exit 0 whenever it likes. So nothing the program's process can
know decides a pass: no nonce, no pass line.

Each top-level assertion of the tests becomes a *check*: its actual side (what the solution computes,
`f(1, 2)` of `assert(f(1, 2) == 5)`) and its expected side (`5`). The program under test is built with the
actual sides only, each replaced by a report of its value (`#rewardlab-check <i> <value>`, the value written by
a serialiser of the language); the expected sides are never in its source, its binary, its files or its memory.
They are evaluated apart: a plain integer literal by the verifier itself, anything else by a second program
built from the expected sides alone (no code of the solution), in a sandbox of its own. The item passes when
the program's reports are exactly one per check, in order, each equal to the expected value. Producing them
without computing them means knowing the expected values, which the program never sees.

What stays in the program's process: an assertion without an equality (`assert(is_prime(7))`) reports one
bit, whose expected value ("true") is known; statements that are not top-level assertions (set-up code, loops,
assertions nested in them) run in the program as written and are only as strong as the program lets them be.
An expected side that needs the solution (`assert(f(2) == g(3))`, a type the solution defines) cannot be
evaluated apart: the gold is refused (`bad_gold`), with the fix.

>>> plan = plan_checks("cpp", "std::vector<int> v{3};\\nassert(f(v) == 5);\\nassert(ok(v));")
>>> [(c.actual, c.expected) for c in plan.checks]
[('f(v)', '5'), ('ok(v)', None)]
>>> plan.known
{0: '5', 1: '1'}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARK = "#rewardlab-check"
TRUE = {"c": "1", "cpp": "1"}  # a condition's reported value when it holds (C and C++ print bools as 0 / 1)
_LITERAL_WORDS = {"true", "false", "null", "nullptr", "NULL", "undefined", "NaN", "Infinity", "None", "nil"}


@dataclass(frozen=True)
class Check:
    """One top-level assertion: `actual` is reported by the program, `expected` evaluated apart (None: a
    condition, which must hold)."""

    text: str
    actual: str
    expected: str | None


@dataclass(frozen=True)
class CheckPlan:
    """The tests of one item taken apart: the program's test body (each check replaced by its report), the
    checks, and the expected values the verifier knows without building anything."""

    language: str
    body: str
    checks: list[Check]
    known: dict[int, str] = field(default_factory=dict)

    def unknown(self) -> list[int]:
        """Checks whose expected side needs the expected-value program."""
        return [i for i in range(len(self.checks)) if i not in self.known]


# ------------------------------------------------------------------------------------------------ scanning


def _depth_map(text: str, language: str) -> list[int]:
    """For each character: its bracket depth, or -1 inside a string, character literal or comment."""
    out, depth, i, n = [-1] * len(text), 0, 0, len(text)
    quotes = "\"'`" if language in ("javascript", "go") else "\"'"
    while i < n:
        ch = text[i]
        if text.startswith("//", i) or (language == "python" and ch == "#"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if ch in quotes and not (ch == "'" and language == "rust" and not _rust_char(text, i)):
            end = _string_end(text, i, ch)
            i = end
            continue
        if ch in ")]}":
            depth = max(0, depth - 1)
        out[i] = depth
        if ch in "([{":
            depth += 1
        i += 1
    return out


def _rust_char(text: str, i: int) -> bool:
    """A Rust `'` opens a character literal ('a', '\\n'), not a lifetime ('a)."""
    return bool(re.match(r"'(\\.[^']*|[^'\\])'", text[i:i + 12]))


def _string_end(text: str, i: int, quote: str) -> int:
    j = i + 1
    while j < len(text):
        if text[j] == "\\" and quote != "`":
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        if text[j] == "\n" and quote != "`":
            return j
        j += 1
    return len(text)


def _statements(text: str, language: str) -> list[tuple[int, int]]:
    """(start, end) of the top-level statements of `text`: ended by `;` at depth 0, by a `}` back to depth 0
    that no `else`, `catch`, `;` or `,` follows, and in Go by a line end after an operand."""
    depth, spans, start = _depth_map(text, language), [], 0
    for i, ch in enumerate(text):
        if depth[i] != 0:
            continue
        end = None
        if ch == ";":
            end = i + 1
        elif ch == "}":
            rest = text[i + 1:].lstrip(" \t")
            if not re.match(r"(else\b|catch\b|finally\b|while\b|[;,)\].])", rest):
                end = i + 1
        elif ch == "\n" and language == "go":
            last = text[start:i].rstrip()
            if last and (last[-1].isalnum() or last[-1] in ")]}\"'`_" or last.endswith(("++", "--"))):
                end = i
        if end is not None:
            if text[start:end].strip(" \t\n;"):
                spans.append((start, end))
            start = end
    if text[start:].strip(" \t\n;"):
        spans.append((start, len(text)))
    return spans


def _top(text: str, language: str) -> list[int]:
    """Indexes of the characters of `text` at depth 0 outside strings and comments."""
    return [i for i, d in enumerate(_depth_map(text, language)) if d == 0]


def _split_args(text: str, language: str) -> list[str]:
    top = set(_top(text, language))
    parts, start = [], 0
    for i, ch in enumerate(text):
        if ch == "," and i in top:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p] if parts != [""] else []


def _call(text: str, name: str, language: str) -> str | None:
    """The argument text of `text` when it is exactly one call `name(...)` (or `name!(...)`, any bracket)."""
    match = re.match(rf"{name}\s*([(\[{{])", text)
    if not match:
        return None
    open_at = match.end() - 1
    depth = _depth_map(text, language)
    closes = [i for i in range(open_at + 1, len(text)) if depth[i] == 0 and text[i] in ")]}"]
    if not closes or closes[0] != len(text) - 1:
        return None
    return text[open_at + 1:-1]


def _equality(cond: str, language: str) -> tuple[str, str] | None:
    """(left, right) of a condition that is one equality at its top level (`a == b`, `a === b`,
    `a.equals(b)`, `Arrays.equals(a, b)`), else None (a condition with `&&`, `|`, `?`, `!=`, ...)."""
    top = _top(cond, language)
    ops = "".join(cond[i] for i in top)
    if any(op in ops for op in ("&&", "||", "?", "!=")) or re.search(r"(?<![&|])[&|^](?![&|=])", ops):
        return None
    hits = [i for i in top if cond.startswith("==", i) and (i == 0 or cond[i - 1] not in "=!<>")]
    if len(hits) == 1:
        i = hits[0]
        width = 3 if cond.startswith("===", i) else 2
        left, right = cond[:i].strip(), cond[i + width:].strip()
        return (left, right) if left and right and "=" not in (left[-1], right[:1]) else None
    if language == "java":
        for name in ("Arrays.equals", "Arrays.deepEquals", "Objects.equals", "java.util.Objects.equals"):
            args = _call(cond, re.escape(name), language)
            if args is not None and len(_split_args(args, language)) == 2:
                return tuple(_split_args(args, language))  # type: ignore[return-value]
        match = re.match(r"(.*?)\.equals\s*\(", cond, re.S)
        if match and not hits and _call(cond[match.end() - 1:], "", language) is not None:
            left = match.group(1).strip()
            outer = "".join(left[i] for i in _top(left, language))
            if left and re.fullmatch(r"[\w.$()\[\]{}\"']*", outer):
                return left, cond[match.end():-1].strip()
    return None


# ------------------------------------------------------------------------------------------------ assertions


def _assertion(statement: str, language: str) -> tuple[str, str | None] | None:
    """(actual, expected or None) of a top-level assertion statement in `language`, else None."""
    s = statement.strip().rstrip(";").strip()
    pair = None
    if language in ("c", "cpp"):
        args = _call(s, "assert", language)
        pair = _condition(args, language) if args is not None else None
    elif language == "java":
        match = re.match(r"assert\b(.*)$", s, re.S)
        if match:
            cond = match.group(1).strip()
            colon = [i for i in _top(cond, language) if cond[i] == ":" and cond[i - 1:i + 1] != "::"
                     and cond[i:i + 2] != "::"]
            pair = _condition(cond[:colon[0]].strip() if colon and "?" not in cond else cond, language)
    elif language == "javascript":
        pair = _js_assertion(s)
    elif language == "rust":
        pair = _rust_assertion(s)
    elif language == "go":
        pair = _go_assertion(s)
    return pair


def _condition(cond: str, language: str) -> tuple[str, str | None] | None:
    if not cond.strip():
        return None
    equal = _equality(cond.strip(), language)
    return _oriented(*equal) if equal else (cond.strip(), None)


def _oriented(left: str, right: str) -> tuple[str, str]:
    """(actual, expected): the expected side is the right one, unless only the left one is a constant."""
    return (right, left) if _constant(left) and not _constant(right) else (left, right)


def _constant(text: str) -> bool:
    """No name in `text` (outside strings) but literal words and the standard library's (a macro such as
    `vec!`, a `std::` path, a type after `new`, a method of a library value): a literal, or one built from
    literals, which the expected-value program can evaluate."""
    bare = re.sub(r"\"(\\.|[^\"\\])*\"|'(\\.|[^'\\])*'", "0", text)
    bare = re.sub(r"\b\d[\w.]*", "0", bare)
    for match in re.finditer(r"(?<![\w.:])([A-Za-z_]\w*)(?!\w)", bare):
        word, after, before = match.group(1), bare[match.end():].lstrip(), bare[:match.start()].rstrip()
        if word in _LITERAL_WORDS or word in _LIBRARY_WORDS or after.startswith(("!", "::")) or before.endswith("new"):
            continue
        return False
    return True


_LIBRARY_WORDS = {
    "new", "int", "long", "short", "byte", "char", "bool", "boolean", "float", "double", "unsigned", "signed", "auto",
    "const", "String", "str", "Integer", "Long", "Double", "Boolean", "Character", "Arrays", "List", "Set", "Map",
    "std", "Some", "Ok", "Err", "None", "Vec", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "map", "interface",
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32", "f64",
    "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "string",
    "rune", "Number", "BigInt", "Object", "Array", "Math", "JSON"}


def _js_assertion(s: str) -> tuple[str, str | None] | None:
    for name in ("strictEqual", "deepStrictEqual", "equal", "deepEqual"):
        args = _call(s, rf"assert\s*\.\s*{name}", "javascript")
        if args is not None:
            parts = _split_args(args, "javascript")
            return (parts[0], parts[1]) if len(parts) in (2, 3) else None
    args = _call(s, r"assert(?:\s*\.\s*ok)?", "javascript")
    if args is None:
        return None
    parts = _split_args(args, "javascript")
    return _condition(parts[0], "javascript") if len(parts) in (1, 2) else None


def _rust_assertion(s: str) -> tuple[str, str | None] | None:
    for name in ("assert_eq!", "debug_assert_eq!"):
        args = _call(s, re.escape(name), "rust")
        if args is not None:
            parts = _split_args(args, "rust")
            return _oriented(parts[0], parts[1]) if len(parts) >= 2 else None
    for name in ("assert!", "debug_assert!"):
        args = _call(s, re.escape(name), "rust")
        if args is not None:
            parts = _split_args(args, "rust")
            return _condition(parts[0], "rust") if parts else None
    return None


def _go_assertion(s: str) -> tuple[str, str | None] | None:
    """`if A != B { panic(...) }`, `if !reflect.DeepEqual(A, B) { panic(...) }`, `if C { panic(...) }`."""
    match = re.match(r"if\s+(.*?)\s*\{\s*(panic\s*\(.*\))\s*\}$", s, re.S)
    if not match or _call(match.group(2), r"panic", "go") is None:
        return None
    cond = match.group(1)
    depth = _depth_map(s, "go")
    if any(depth[i] == 0 and s[i] == "{" for i in range(match.start(1), match.end(1))):
        return None
    args = _call(cond, r"!\s*reflect\.DeepEqual", "go")
    if args is not None and len(_split_args(args, "go")) == 2:
        return _oriented(*_split_args(args, "go"))
    top = _top(cond, "go")
    ops = "".join(cond[i] for i in top)
    hits = [i for i in top if cond.startswith("!=", i)]
    if len(hits) == 1 and not any(op in ops for op in ("&&", "||")):
        return _oriented(cond[:hits[0]].strip(), cond[hits[0] + 2:].strip())
    return (f"!({cond})", None)


# ------------------------------------------------------------------------------------------------ the plan


def plan_checks(language: str, tests: str) -> CheckPlan:
    """The checks of `tests` (unit-test code of `language`) and the program's test body; ValueError when the
    tests hold no top-level assertion (nothing could be judged outside the program)."""
    checks, pieces, last = [], [], 0
    for start, end in _statements(tests, language):
        statement = tests[start:end]
        found = _assertion(statement, language)
        if found is None:
            continue
        actual, expected = found
        pieces += [tests[last:start], "\n" + report_call(language, len(checks), actual, condition=expected is None)]
        last = end
        checks.append(Check(" ".join(statement.split())[:200], actual, expected))
    pieces.append(tests[last:])
    if not checks:
        raise ValueError(f"the {language} unit tests hold no top-level assertion to check: write each check as its own "
                         f"statement ({_FORMS[language]})")
    known = {}
    for i, check in enumerate(checks):
        if check.expected is None:
            known[i] = TRUE.get(language, "true")
        elif (value := _plain_int(check.expected, language)) is not None:
            known[i] = value
    return CheckPlan(language, "".join(pieces), checks, known)


_FORMS = {
    "c": "assert(f(x) == 5);", "cpp": "assert(f(x) == 5);", "java": "assert Solution.f(x) == 5;",
    "javascript": "assert.strictEqual(f(x), 5);", "rust": "assert_eq!(f(x), 5);",
    "go": "if f(x) != 5 { panic(\"f\") }",
}
_INT = re.compile(r"(-?)\s*(0|[1-9][0-9_]*)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU]|_?[iu](?:8|16|32|64|128|size))?")


def _plain_int(text: str, language: str) -> str | None:
    """The decimal text of an integer literal (`5`, `-7L`, `3_000i64`), which every serialiser writes as is."""
    match = _INT.fullmatch(text.strip())
    if not match:
        return None
    value = int(match.group(1) + match.group(2).replace("_", ""))
    if language == "javascript" and abs(value) > 2 ** 53 or language == "java" and not -2 ** 63 <= value < 2 ** 63:
        return None
    return str(value)


def report_call(language: str, index: int, expression: str, condition: bool = False) -> str:
    """The statement that reports `expression`'s value as check `index` (a condition: as a boolean)."""
    expr = f"({expression})"
    if language == "c":
        return f"rewardlab_check_({index}, {'(int)!!' + expr if condition else expr});"
    if language == "cpp":
        return f"rewardlab_::check({index}, {'static_cast<bool>' + expr if condition else expr});"
    if language == "java":
        return f"RewardlabCheck.check({index}, {'(boolean)' + expr if condition else expr});"
    if language == "javascript":
        return f"rewardlabCheck_({index}, {'!!' + expr if condition else expr});"
    if language == "rust":
        return f"rewardlab_check({index}, &{expr});"
    return f"rewardlabCheck({index}, {expr})"


def read_reports(stdout: str) -> list[tuple[int, str]]:
    """The program's report lines, in order, as (check index, value text). Untrusted data: any line the program
    printed with the mark is taken, so an extra, a missing or a reordered one fails the comparison."""
    out = []
    for line in stdout.split("\n"):
        if line.startswith(MARK + " "):
            number, _, value = line[len(MARK) + 1:].partition(" ")
            out.append((int(number) if number.isdigit() and len(number) < 9 else -1, value.rstrip("\r")))
    return out


# ------------------------------------------------------------------------------------------------ the programs
# Each language's serialiser writes a value on one line the same way in the program under test and in the
# expected-value program: integers in decimal (a char as its code; C and C++ bools as 0 / 1, as they compare),
# floating point values with 17 significant digits, strings quoted with escapes, sequences as [a, b], tuples as
# (a, b). Equal values of the language give equal text; the verifier compares the text.

C_REPORTER = r"""
#include <stdio.h>
static void rewardlab_int_(int i, long long v) { printf("\n#rewardlab-check %d %lld\n", i, v); fflush(stdout); }
static void rewardlab_uint_(int i, unsigned long long v) { printf("\n#rewardlab-check %d %llu\n", i, v); fflush(stdout); }
static void rewardlab_dbl_(int i, long double v) { printf("\n#rewardlab-check %d %.17Lg\n", i, v); fflush(stdout); }
static void rewardlab_str_(int i, const char *s) {
    printf("\n#rewardlab-check %d ", i);
    if (!s) { printf("null\n"); fflush(stdout); return; }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 32) printf("\\x%02x", (unsigned char)*s);
        else putchar(*s);
    }
    printf("\"\n"); fflush(stdout);
}
#define rewardlab_check_(i, x) _Generic((x), char *: rewardlab_str_, const char *: rewardlab_str_, \
    float: rewardlab_dbl_, double: rewardlab_dbl_, long double: rewardlab_dbl_, unsigned char: rewardlab_uint_, \
    unsigned short: rewardlab_uint_, unsigned int: rewardlab_uint_, unsigned long: rewardlab_uint_, \
    unsigned long long: rewardlab_uint_, default: rewardlab_int_)(i, x)
"""

CPP_REPORTER = r"""
#include <cstdio>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
namespace rewardlab_ {
template <class T, class = void> struct iterable : std::false_type {};
template <class T> struct iterable<T, std::void_t<decltype(std::begin(std::declval<const T &>())),
                                                  decltype(std::end(std::declval<const T &>()))>> : std::true_type {};
template <class T, class = void> struct tuple_like : std::false_type {};
template <class T> struct tuple_like<T, std::void_t<decltype(std::tuple_size<T>::value)>> : std::true_type {};
inline void quote(std::string &o, std::string_view s) {
    o += '"';
    for (char c : s) {
        if (c == '"' || c == '\\') { o += '\\'; o += c; }
        else if ((unsigned char)c < 32) { char b[8]; std::snprintf(b, sizeof b, "\\x%02x", (unsigned char)c); o += b; }
        else o += c;
    }
    o += '"';
}
template <class T> void show(std::string &o, const T &v) {
    using U = std::decay_t<T>;
    if constexpr (std::is_same_v<U, bool>) o += v ? "1" : "0";
    else if constexpr (std::is_enum_v<U>) show(o, static_cast<std::underlying_type_t<U>>(v));
    else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) o += std::to_string(static_cast<long long>(v));
    else if constexpr (std::is_integral_v<U>) o += std::to_string(static_cast<unsigned long long>(v));
    else if constexpr (std::is_floating_point_v<U>) {
        char b[64]; std::snprintf(b, sizeof b, "%.17Lg", static_cast<long double>(v)); o += b;
    } else if constexpr (std::is_convertible_v<const U &, std::string_view>) {
        if constexpr (std::is_pointer_v<U>) { if (!v) { o += "null"; return; } }
        quote(o, std::string_view(v));
    } else if constexpr (iterable<U>::value) {
        o += '['; bool first = true;
        for (const auto &x : v) { if (!first) o += ", "; first = false; show(o, x); }
        o += ']';
    } else if constexpr (tuple_like<U>::value) {
        o += '('; bool first = true;
        std::apply([&](const auto &...x) { ((o += first ? "" : ", ", first = false, show(o, x)), ...); }, v);
        o += ')';
    } else { std::ostringstream s; s << v; o += s.str(); }
}
template <class T> void check(int i, const T &v) {
    std::string o = "\n#rewardlab-check " + std::to_string(i) + " ";
    show(o, v);
    o += "\n";
    std::fwrite(o.data(), 1, o.size(), stdout);
    std::fflush(stdout);
}
}  // namespace rewardlab_
"""

JAVA_REPORTER = r"""
final class RewardlabCheck {
    static void check(int i, java.lang.Object v) {
        java.lang.StringBuilder o = new java.lang.StringBuilder("\n#rewardlab-check ").append(i).append(' ');
        show(o, v, 0);
        java.lang.System.out.print(o.append('\n').toString());
        java.lang.System.out.flush();
    }
    static void show(java.lang.StringBuilder o, java.lang.Object v, int depth) {
        if (v == null || depth > 100) { o.append("null"); return; }
        if (v instanceof java.lang.Character) { o.append((int) (java.lang.Character) v); return; }
        if (v instanceof java.lang.Float || v instanceof java.lang.Double) {
            double d = ((java.lang.Number) v).doubleValue();
            if (d == java.lang.Math.rint(d) && java.lang.Math.abs(d) < 1e15) o.append((long) d); else o.append(d);
            return;
        }
        if (v instanceof java.lang.Number || v instanceof java.lang.Boolean) { o.append(v.toString()); return; }
        if (v instanceof java.lang.CharSequence) {
            o.append('"');
            for (char c : v.toString().toCharArray()) {
                if (c == '"' || c == '\\') o.append('\\').append(c);
                else if (c < 32) o.append(java.lang.String.format("\\x%02x", (int) c));
                else o.append(c);
            }
            o.append('"');
            return;
        }
        if (v.getClass().isArray()) {
            o.append('[');
            for (int k = 0; k < java.lang.reflect.Array.getLength(v); k++) {
                if (k > 0) o.append(", ");
                show(o, java.lang.reflect.Array.get(v, k), depth + 1);
            }
            o.append(']');
            return;
        }
        if (v instanceof java.util.Map) v = ((java.util.Map<?, ?>) v).entrySet();
        if (v instanceof java.util.Map.Entry) {
            o.append('(');
            show(o, ((java.util.Map.Entry<?, ?>) v).getKey(), depth + 1);
            o.append(", ");
            show(o, ((java.util.Map.Entry<?, ?>) v).getValue(), depth + 1);
            o.append(')');
            return;
        }
        if (v instanceof java.lang.Iterable) {
            o.append('[');
            boolean first = true;
            for (java.lang.Object x : (java.lang.Iterable<?>) v) {
                if (!first) o.append(", ");
                first = false;
                show(o, x, depth + 1);
            }
            o.append(']');
            return;
        }
        o.append(java.lang.String.valueOf(v).replace('\n', ' '));
    }
}
"""

JS_REPORTER = r"""
function rewardlabCheck_(i, v) {
    const text = require('util').inspect(v, { depth: null, breakLength: Infinity, compact: true, sorted: true,
                                               maxArrayLength: null, maxStringLength: null });
    require('fs').writeSync(1, '\n#rewardlab-check ' + i + ' ' + text.replace(/\n/g, '\\n') + '\n');
}
"""

RUST_REPORTER = r"""
#[allow(dead_code)]
fn rewardlab_check<T: std::fmt::Debug + ?Sized>(i: usize, v: &T) {
    use std::io::Write;
    let text = format!("{:?}", v).replace('\n', "\\n");
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "\n#rewardlab-check {} {}\n", i, text);
    let _ = out.flush();
}
"""

GO_REPORTER = """
func rewardlabCheck(i int, v interface{}) {
\tos.Stdout.WriteString(fmt.Sprintf("\\n#rewardlab-check %d %s\\n", i, strings.ReplaceAll(fmt.Sprintf("%#v", v), "\\n", "\\\\n")))
}
"""
GO_HEADER = "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n)\n\nvar _ = fmt.Sprint\nvar _ = os.Stdout\nvar _ = strings.ReplaceAll\n"
C_HEADERS = "#include <limits.h>\n#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n"
CPP_HEADERS = "".join(f"#include <{h}>\n" for h in (
    "algorithm", "array", "climits", "cmath", "cstdint", "deque", "map", "set", "string", "tuple", "unordered_map",
    "unordered_set", "utility", "vector"))


def program_files(plan: CheckPlan, code: str, java_class: str = "") -> tuple[dict[str, str], str]:
    """({file name: text}, Java's main class or "") of the program under test: the solution, the serialiser,
    and a `main` that runs the test body (its checks replaced by reports). No expected side is in it."""
    language, body = plan.language, plan.body
    if language in ("c", "cpp"):
        reporter = C_REPORTER if language == "c" else CPP_REPORTER
        main = "int main(void)" if language == "c" else "int main()"
        text = f"{code}\n\n#undef NDEBUG\n#include <assert.h>\n{reporter}\n{main} {{\n{body}\n    return 0;\n}}\n"
        return {"main.c" if language == "c" else "main.cpp": text}, ""
    if language == "java":
        runner = f"public class RewardlabTests {{\n    public static void main(String[] args) throws Exception {{\n{body}\n    }}\n}}\n"
        return {f"{java_class}.java": code, "RewardlabTests.java": runner, "RewardlabCheck.java": JAVA_REPORTER}, "RewardlabTests"
    if language == "javascript":
        return {"main.js": f"{code}\n;{JS_REPORTER}\n{{\nconst assert = require('assert');\n{body}\n}}\n"}, ""
    if language == "rust":
        return {"main.rs": f"{code}\n{RUST_REPORTER}\nfn main() {{\n{body}\n}}\n"}, ""
    runner = f"{GO_HEADER}{GO_REPORTER}\nfunc main() {{\n{body}\n}}\n"
    return {"main.go": code, "rewardlab_tests.go": runner}, ""


def expected_files(plan: CheckPlan) -> tuple[dict[str, str], str]:
    """The expected-value program: the serialiser and one report per check whose expected side the verifier
    does not know; nothing of the solution (it is built and run in a sandbox of its own)."""
    language = plan.language
    reports = "\n".join("    " + report_call(language, i, plan.checks[i].expected or "") for i in plan.unknown())
    if language in ("c", "cpp"):
        headers, reporter = (C_HEADERS, C_REPORTER) if language == "c" else (CPP_HEADERS, CPP_REPORTER)
        return {f"main.{language}": f"{headers}{reporter}\nint main() {{\n{reports}\n    return 0;\n}}\n"}, ""
    if language == "java":
        main = f"import java.util.*;\n\npublic class RewardlabExpected {{\n    public static void main(String[] args) {{\n{reports}\n    }}\n}}\n"
        return {"RewardlabExpected.java": main, "RewardlabCheck.java": JAVA_REPORTER}, "RewardlabExpected"
    if language == "javascript":
        return {"main.js": f"{JS_REPORTER}\n{reports}\n"}, ""
    if language == "rust":
        return {"main.rs": f"{RUST_REPORTER}\nfn main() {{\n{reports}\n}}\n"}, ""
    return {"main.go": f"{GO_HEADER}{GO_REPORTER}\nfunc main() {{\n{reports}\n}}\n"}, ""
