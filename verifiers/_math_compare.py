"""How the `math` kind compares two parsed answers (sympy objects from math-verify's parser).

Our rules decide numbers, containers and the relation / set cases below; everything else goes to
math-verify's `verify` (gold first, as its asymmetric rules expect), with the same settings.

- two numbers: `verifiers._numbers.numbers_match` (exact when both are exact, relative tolerance
  and the `precision` rounding rule when a decimal is involved); exact symbolic numbers (3*sqrt(2)
  vs sqrt(18)) at 60 digits, never with an absolute chop;
- tuples, matrices and intervals of numbers: element by element, by the number rule;
- sets: unordered, each gold element matched to its own prediction element by these same rules,
  so sets of tuples, of assignments (p=5, q=2; p=7, q=2 against (5,2), (7,2)) and of symbolic
  values are compared, not only sets of numbers. Inside a set of points, "(7, 11)" is the point,
  although alone it reads as the open interval;
- both sides assignments to the same name (n = 1, 2, 3; D = (0, 1)): the values are compared;
- two definitions of the same function up to renaming of its variables (f(t) = t^2 + 1 against
  f(x) = x^2 + 1), or the gold's right side alone in the gold's variables;
- a condition in one variable (an inequality, x != a, and their and / or) against a set: compared
  as the set it describes, always when the set is the prediction; when the set is the gold, always
  for a set that cannot be read as a point ((7, oo), [1/2, 8], a union), and for a membership
  gold (x in [-2, 7]) or an open pair of finite ends (a, b) only with `relation_as_set`
  (math-verify's `allow_set_relation_comp`, off by default there too);
- two linear equations: proportional; two polynomials with rational coefficients: by expansion.
A value that is undefined (a division by zero: "12:00" read as the ratio 12/0) is compared by its
written text in `verifiers.math_kind`, never here (zoo == zoo made 1:00 equal 12:00).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import sympy
from math_verify import verify
from math_verify.grader import is_assignment_relation, is_relation, take_last_relation, unwrap_fcs
from sympy import Basic, Float, MatrixBase, Rational, UnevaluatedExpr
from sympy.core.function import AppliedUndef

from verifiers._numbers import DEFAULT_PRECISION, DEFAULT_REL_TOL, DEFAULT_SIG_DIGITS, Num, numbers_match

EXACT_DIGITS = 60  # exact symbolic numbers are compared at this many significant digits
APPROX_DIGITS = 40  # an exact value compared with a decimal is evaluated to this many digits


@dataclass(frozen=True)
class Settings:
    """The options of the `math` kind that change a comparison (see `verifiers.fastpath.MATH_OPTIONS`)."""

    rel_tol: float = DEFAULT_REL_TOL
    precision: int = DEFAULT_PRECISION
    strict: bool = True
    relation_as_set: bool = False
    sig_digits: int = DEFAULT_SIG_DIGITS


def anchor_equal(gold: Any, pred: Any, s: Settings) -> bool:
    """math-verify's verdict with the same settings (it never raises: errors read as False)."""
    return bool(verify(gold, pred, float_rounding=s.precision, strict=s.strict,
                       allow_set_relation_comp=s.relation_as_set, timeout_seconds=None))


def undefined(expr: Any) -> bool:
    """A value that contains a division by zero (zoo) or an indeterminate form (nan)."""
    return isinstance(expr, Basic) and expr.has(sympy.zoo, sympy.nan)


# ---------------------------------------------------------------- numbers


def _is_pct(expr: Any) -> bool:
    return isinstance(expr, sympy.Mul) and len(expr.args) == 2 and expr.args[1] == UnevaluatedExpr(Rational(1, 100))


def numeric_value(expr: Any) -> Basic | None:
    """`expr` evaluated to a plain (possibly symbolic) number, or None when it is not one."""
    if not isinstance(expr, Basic) or isinstance(expr, (sympy.Set, sympy.Tuple)) or is_relation(expr):
        return None
    try:
        value = expr.doit()
        return value if value.is_number and not value.free_symbols else None
    except Exception:  # sympy raises many kinds of errors on odd input; then it is not a plain number
        return None


def _exact_numbers_equal(a: Basic, b: Basic, s: Settings) -> bool:
    if isinstance(a, Rational) and isinstance(b, Rational):
        return a == b
    if not (a.is_finite and b.is_finite):  # oo, -oo: only identical values match
        return a == b
    try:
        diff = abs(sympy.N(a - b, EXACT_DIGITS))
        scale = max(abs(sympy.N(a, EXACT_DIGITS)), abs(sympy.N(b, EXACT_DIGITS)))
        if scale == 0:
            return diff == 0
        if diff > scale * sympy.Float(10) ** (10 - EXACT_DIGITS):
            return False
        return sympy.simplify(a - b) == 0 or diff <= scale * sympy.Float(10) ** (5 - EXACT_DIGITS)
    except Exception:  # comparison not decidable numerically: let math-verify decide
        return anchor_equal(a, b, s)


def as_num(value: Basic) -> Num:
    """A sympy number as a `Num`: a bare decimal keeps the digits it was written with (0.33 ->
    2 places), anything else is its value to 40 digits (exact unless a float is inside)."""
    if isinstance(value, Float):
        text = format(Decimal(str(value)), "f")  # fixed point, every digit of its precision: '0.330000000000000'
        if "." in text:
            digits = text.rstrip("0")
            return Num(Fraction(text), exact=False, decimals=len(digits) - digits.index(".") - 1)
    return Num(Fraction(str(sympy.N(value, APPROX_DIGITS))), exact=not value.has(Float))


def _float_numbers_equal(a: Basic, b: Basic, s: Settings) -> bool:
    try:
        return numbers_match(as_num(a), as_num(b), s.rel_tol, s.precision, s.sig_digits)
    except (ValueError, TypeError, ArithmeticError):  # not a finite real number (complex, oo): math-verify decides
        return anchor_equal(a, b, s)


def _numbers_equal(gold: Basic, pred: Basic, s: Settings) -> bool:
    """Two plain numbers: exact when both are exact, the decimal rules otherwise; a percentage
    matches its fraction or its bare number (50% ~ 1/2 ~ 50)."""
    golds = [gold] + ([gold.args[0]] if _is_pct(gold) else [])
    preds = [pred] + ([pred.args[0]] if _is_pct(pred) else [])
    for g in golds:
        for p in preds:
            gv, pv = g.doit(), p.doit()
            exact = not (gv.has(Float) or pv.has(Float))
            if exact and _exact_numbers_equal(gv, pv, s):
                return True
            if not exact and _float_numbers_equal(gv, pv, s):
                return True
    return False


# ---------------------------------------------------------------- any two answers


def expr_equal(gold: Any, pred: Any, s: Settings) -> bool:
    """Numbers, containers, assignments and relation/set pairs by our rules; the rest by math-verify."""
    if not (isinstance(gold, (Basic, MatrixBase)) and isinstance(pred, (Basic, MatrixBase))):
        return anchor_equal(gold, pred, s)
    gold, pred = _unit_powers_evaluated(gold), _unit_powers_evaluated(pred)
    if is_assignment_relation(gold) and not is_relation(pred):
        gold = take_last_relation(gold).rhs  # "x = 2" vs "2"
    if is_relation(pred) and not is_relation(gold) and isinstance(take_last_relation(pred), sympy.Eq):
        pred = take_last_relation(pred).rhs  # "2" vs "x = 2"
    renamed = _function_renamed(gold, pred)
    if renamed is not None:  # f(t) = t^2 + 1 against f(x) = x^2 + 1: the bound variable renamed
        gold, pred = renamed
    if numeric_value(gold) is not None and numeric_value(pred) is not None:
        return _numbers_equal(gold, pred, s)
    decided = _container_equal(gold, pred, s)
    if decided is None:
        decided = _relation_set_equal(gold, pred, s)
    if decided is None:
        decided = conditions_equal(gold, pred)
    if decided is None and _assignments_to_same_name(gold, pred, s):
        decided = expr_equal(gold.rhs, pred.rhs, s)  # n = 1, 2, 3; D = (0, 1): compare the values
    if decided is not None:
        return decided
    if s.strict and _linear_equations(gold, pred):
        # two linear equations have the same solutions iff one is a multiple of the other;
        # math-verify reaches the same verdict through sympy.solve, far more slowly
        ratio = sympy.cancel((gold.lhs - gold.rhs) / (pred.lhs - pred.rhs))
        return bool(ratio.is_number and ratio != 0)
    if s.strict and _exact_polynomials(gold, pred):
        # expanded polynomials with rational coefficients are a canonical form: this decides
        # both ways, as sympy.simplify inside math-verify would, at a fraction of its cost
        return sympy.expand(gold - pred) == 0
    return anchor_equal(gold, pred, s)


def _unit_powers_evaluated(expr: Any) -> Any:
    """'x^{1}' parses to an unevaluated x**1, which neither sympy.expand nor math-verify's symbol check
    takes for x ('2x^{1}+1' against '2x+1', 't^1' against 't'): replaced by its base."""
    if not isinstance(expr, Basic) or not any(p.exp == 1 for p in expr.atoms(sympy.Pow)):
        return expr
    return expr.replace(lambda e: isinstance(e, sympy.Pow) and e.exp == 1, lambda e: e.base)


def _container_equal(gold: Any, pred: Any, s: Settings) -> bool | None:
    """Two containers of the same kind and size, element by element (sets unordered); None when
    they are not (then other rules, or math-verify, decide)."""
    if isinstance(gold, sympy.Tuple) and isinstance(pred, sympy.Tuple) and len(gold) == len(pred):
        return all(expr_equal(g, p, s) for g, p in zip(gold.args, pred.args))
    if isinstance(gold, sympy.FiniteSet) and isinstance(pred, sympy.FiniteSet) and len(gold) == len(pred):
        return _sets_equal(_points(gold.args), _points(pred.args), s)
    if isinstance(gold, MatrixBase) and isinstance(pred, MatrixBase) and gold.shape == pred.shape:
        pairs = list(zip(gold, pred))
    elif _vector_and_tuple(gold, pred) or _vector_and_tuple(pred, gold):
        # a column (or row) vector written as a tuple: (1, 2) for (1, 2)^T, entry by entry
        vector, entries = (gold, pred) if isinstance(gold, MatrixBase) else (pred, gold)
        values = _pair_entries(entries)
        return all(expr_equal(*((v, e) if vector is gold else (e, v)), s) for v, e in zip(vector, values))
    elif isinstance(gold, sympy.Interval) and isinstance(pred, sympy.Interval):
        if (gold.left_open, gold.right_open) != (pred.left_open, pred.right_open):
            return None
        pairs = [(gold.start, pred.start), (gold.end, pred.end)]
    else:
        return None
    if all(numeric_value(g) is not None and numeric_value(p) is not None for g, p in pairs):
        return all(_numbers_equal(g, p, s) for g, p in pairs)
    return None  # symbolic entries: math-verify compares matrices and intervals as a whole


def _pair_entries(expr: Any) -> tuple:
    """The entries of a tuple, or of (a, b) read as an open interval."""
    return tuple(expr.args) if isinstance(expr, sympy.Tuple) else (expr.start, expr.end)


def _vector_and_tuple(vector: Any, other: Any) -> bool:
    if not isinstance(vector, MatrixBase) or 1 not in vector.shape:
        return False
    if isinstance(other, sympy.Tuple):
        return len(other) == len(vector)
    return (isinstance(other, sympy.Interval) and other.left_open and other.right_open and len(vector) == 2
            and other.start.is_finite and other.end.is_finite)


def _sets_equal(golds: list, preds: list, s: Settings) -> bool:
    """Same number of elements; every gold element has its own equal prediction element."""
    values = [numeric_value(x) for x in golds + preds]
    if all(v is not None for v in values):  # numbers: pair them by value (tolerance is not transitive)
        try:
            key = lambda x: sympy.N(x, 30)  # noqa: E731
            return all(_numbers_equal(g, p, s) for g, p in zip(sorted(golds, key=key), sorted(preds, key=key)))
        except (TypeError, ValueError):  # not orderable (complex values): match them one by one below
            pass
    unused = list(preds)
    for g in golds:
        match = next((i for i, p in enumerate(unused) if expr_equal(g, p, s)), None)
        if match is None:
            return False
        unused.pop(match)
    return True


def _points(elements: tuple) -> list:
    """Inside a set that holds pairs, "(7, 11)" is the point (7, 11), not the open interval the
    parser reads when the first number is the smaller one."""
    if not any(isinstance(e, sympy.Tuple) and len(e) == 2 for e in elements):
        return list(elements)
    return [sympy.Tuple(e.start, e.end) if isinstance(e, sympy.Interval) and e.left_open and e.right_open else e
            for e in elements]


def _function_renamed(gold: Any, pred: Any) -> tuple[Any, Any] | None:
    """(gold's right side, prediction's right side with its variables renamed to the gold's) when
    both define the same function of distinct plain variables: f(t) = t^2 + 1 against
    f(x) = x^2 + 1. A prediction that is only the right side (N(n) = ... against an expression in
    n) is compared with the gold's right side. None when neither applies."""
    g_def = _definition(gold)
    if g_def is None:
        return None
    g_fn, g_args, g_rhs = g_def
    p_def = _definition(pred)
    if p_def is None:
        if isinstance(pred, sympy.Expr) and not isinstance(pred, sympy.Symbol) and pred.free_symbols <= set(g_args):
            return g_rhs, pred
        return None
    p_fn, p_args, p_rhs = p_def
    if p_fn != g_fn or len(p_args) != len(g_args):
        return None
    if (p_rhs.free_symbols & set(g_args)) - set(p_args):
        return None  # f(t) = x^2 + 1 does not depend on t: it is not f(x) = x^2 + 1 renamed
    dummies = [sympy.Dummy() for _ in g_args]
    renamed = p_rhs.xreplace(dict(zip(p_args, dummies))).xreplace(dict(zip(dummies, g_args)))
    return g_rhs, renamed


def _definition(expr: Any) -> tuple[str, list, Any] | None:
    """(function name, its variables, its value) for 'f(x) = x + 1' with distinct plain variables."""
    if not isinstance(expr, sympy.Eq) or not isinstance(expr.lhs, AppliedUndef):
        return None
    args = list(expr.lhs.args)
    if not args or not all(isinstance(a, sympy.Symbol) for a in args) or len(set(args)) != len(args):
        return None
    if not isinstance(expr.rhs, sympy.Expr) or expr.rhs.has(AppliedUndef):
        return None
    return expr.lhs.func.__name__, args, expr.rhs


def _assignments_to_same_name(gold: Any, pred: Any, s: Settings) -> bool:
    if not (isinstance(gold, sympy.Eq) and isinstance(pred, sympy.Eq)):
        return False
    if not (is_assignment_relation(gold) and is_assignment_relation(pred)):
        return False
    return not s.strict or gold.lhs == pred.lhs


# ---------------------------------------------------------------- relations and sets


def _stated_set(expr: Any) -> tuple[Any, sympy.Set, bool] | None:
    """(variable or None, set, written as a membership) for a set ([-2, 7]) or a membership read
    as x = [-2, 7] or (x, y) = {(1, 1), (3, 2)}."""
    if isinstance(expr, sympy.Set):
        return None, expr, False
    if isinstance(expr, sympy.Eq) and isinstance(expr.rhs, sympy.Set) and isinstance(expr.lhs, (sympy.Symbol, sympy.Tuple)):
        return expr.lhs, expr.rhs, True
    return None


def is_condition(expr: Any) -> bool:
    """An inequality (or x != a), or 'and' / 'or' of them: a condition that describes a set."""
    if isinstance(expr, (sympy.And, sympy.Or)):
        return all(is_condition(a) for a in expr.args)
    return isinstance(expr, sympy.core.relational.Relational) and not isinstance(expr, sympy.Eq)


def _relation_set(expr: Any) -> tuple[Any, sympy.Set] | None:
    """(variable, set) for a condition in one variable (-2 <= x <= 7 -> x, [-2, 7]; x < 2 or x > 3
    -> x, the union), else None."""
    if not (is_relation(expr) or is_condition(expr)) or isinstance(expr, sympy.Eq):
        return None
    try:
        plain = unwrap_fcs(expr) if is_relation(expr) else expr  # 0 < f(x) < 1: the function is a name here, as in math-verify
        if len(plain.free_symbols) != 1:
            return None
        var = next(iter(plain.free_symbols))
        quick = _bound_set(plain, var)
        return var, quick if quick is not None else plain.as_set()
    except Exception:  # sympy cannot solve this relation for its variable: not a set we can compare
        return None


_BOUNDS = {sympy.StrictGreaterThan: (False, True), sympy.GreaterThan: (False, False),
           sympy.StrictLessThan: (True, True), sympy.LessThan: (True, False)}  # (variable below the bound, open)


def _bound_set(cond: Any, var: sympy.Symbol) -> sympy.Set | None:
    """The set of x < a, x >= a, x != a, and their 'and' / 'or', built directly (sympy's as_set
    solves each inequality, ~0.1 s); None for anything else (then as_set decides)."""
    if isinstance(cond, (sympy.And, sympy.Or)):
        parts = [_bound_set(a, var) for a in cond.args]
        if any(p is None for p in parts):
            return None
        return sympy.Intersection(*parts) if isinstance(cond, sympy.And) else sympy.Union(*parts)
    lhs, rhs = getattr(cond, "lhs", None), getattr(cond, "rhs", None)
    if lhs != var:
        if rhs != var:
            return None
        cond = cond.reversed  # 3 < x -> x > 3
        lhs, rhs = cond.lhs, cond.rhs
    if not (rhs.is_number and rhs.is_extended_real):
        return None
    if isinstance(cond, sympy.Ne):
        return sympy.Union(sympy.Interval.open(-sympy.oo, rhs), sympy.Interval.open(rhs, sympy.oo))
    shape = _BOUNDS.get(type(cond))
    if shape is None:
        return None
    below, is_open = shape
    if below:
        return sympy.Interval(-sympy.oo, rhs, True, is_open)
    return sympy.Interval(rhs, sympy.oo, is_open, True)


def _unmistakable(a_set: sympy.Set) -> bool:
    """A set no reader takes for a point: not (a, b) with two finite ends, which is also how an
    ordered pair is written."""
    if isinstance(a_set, sympy.Interval):
        return not (a_set.left_open and a_set.right_open and a_set.start.is_finite and a_set.end.is_finite)
    return True


def _relation_set_equal(gold: Any, pred: Any, s: Settings) -> bool | None:
    """A relation against a set, compared as sets; None when the pair is not one. A condition
    answer (x > 7) matches a set gold written as a set ((7, \\infty)) that cannot be read as a
    point; against a membership gold (x \\in [-2, 7]) only with `relation_as_set`, as in math-verify."""
    g_set, p_set = _stated_set(gold), _stated_set(pred)
    if p_set is not None and g_set is None:
        g_rel = _relation_set(gold)
        return None if g_rel is None else _same_set(g_rel, p_set[:2], s)
    if g_set is not None and p_set is None:
        p_rel = _relation_set(pred)
        if p_rel is None:
            return None
        membership = g_set[2]
        if membership and not s.relation_as_set:
            return False
        if not membership and not s.relation_as_set and not _unmistakable(g_set[1]):
            return None
        return _same_set(g_set[:2], p_rel, s)
    return None


def _same_set(a: tuple, b: tuple, s: Settings) -> bool:
    (a_var, a_set), (b_var, b_set) = a, b
    if s.strict and a_var is not None and b_var is not None and a_var != b_var:
        return False
    if isinstance(a_set, (sympy.Union, sympy.Complement, sympy.Intersection)) or isinstance(b_set, (sympy.Union, sympy.Complement)):
        try:
            if a_set == b_set or bool(sympy.simplify(sympy.SymmetricDifference(a_set, b_set)) == sympy.EmptySet):
                return True
        except Exception:  # sympy cannot decide this set identity: the comparison below decides
            pass
    return expr_equal(a_set, b_set, s)


# ---------------------------------------------------------------- fast symbolic decisions


def _linear_equations(gold: Any, pred: Any) -> bool:
    """Both sides single equations whose (lhs - rhs) are polynomials of degree 1 with rational
    coefficients in the same symbols."""
    if not (isinstance(gold, sympy.Eq) and isinstance(pred, sympy.Eq)):
        return False
    if not all(isinstance(side, sympy.Expr) for side in (gold.lhs, gold.rhs, pred.lhs, pred.rhs)):
        return False  # n = {1, 2, 3}: a set is not a side of a linear equation
    g, p = gold.lhs - gold.rhs, pred.lhs - pred.rhs
    if not g.free_symbols or g.free_symbols != p.free_symbols or not _exact_polynomials(g, p):
        return False
    symbols = sorted(g.free_symbols, key=str)
    try:
        return sympy.Poly(g, *symbols).total_degree() == 1 and sympy.Poly(p, *symbols).total_degree() == 1
    except sympy.PolynomialError:
        return False


def _exact_polynomials(gold: Any, pred: Any) -> bool:
    """Both sides polynomials in plain symbols with integer/rational coefficients (no floats, no
    constants like e or pi, no bare symbol, which math-verify compares by name)."""
    if not (isinstance(gold, sympy.Expr) and isinstance(pred, sympy.Expr)):
        return False
    if isinstance(gold, sympy.Symbol) or isinstance(pred, sympy.Symbol):
        return False
    if not (gold.free_symbols or pred.free_symbols):
        return False
    atoms = gold.atoms() | pred.atoms()
    if not all(isinstance(a, (sympy.Symbol, sympy.Integer, sympy.Rational)) for a in atoms):
        return False
    try:
        return gold.is_polynomial() and pred.is_polynomial()
    except Exception:  # is_polynomial raises on some unevaluated forms: then not a plain polynomial
        return False


# ---------------------------------------------------------------- degrees and radians


def radians_to_degrees(expr: Any) -> Any:
    """Each value that is a multiple of pi (pi/3, 3*pi/4), in degrees (60, 135); inside tuples
    and sets too. None when no value is one."""
    changed = False

    def convert(e: Any) -> Any:
        nonlocal changed
        if isinstance(e, (sympy.Tuple, sympy.FiniteSet)):
            return type(e)(*[convert(a) for a in e.args])
        if isinstance(e, sympy.Interval):  # (pi/4, pi/3) read as an interval: convert both ends
            return sympy.Interval(convert(e.start), convert(e.end), e.left_open, e.right_open)
        if isinstance(e, sympy.Expr) and e.has(sympy.pi):
            ratio = e.as_coefficient(sympy.pi)  # c for c*pi, else None (cheaper than simplifying e/pi)
            if ratio is not None and ratio.is_number:
                changed = True
                return ratio * 180
        return e

    out = convert(expr)
    return out if changed else None


def degrees_to_radians(expr: Any) -> Any:
    """A number of degrees (60) in radians (pi/3); None for anything else."""
    value = numeric_value(expr)
    if value is None or value.has(sympy.pi):
        return None
    return value * sympy.pi / 180


# ---------------------------------------------------------------- the imaginary unit


def has_symbol_i(*exprs: Any) -> bool:
    return any(isinstance(e, Basic) and any(s.name == "i" for s in e.free_symbols) for e in exprs)


def with_imaginary_unit(expr: Any) -> Any:
    """The parser reads 'i' as a plain symbol; substituting sympy.I only ever adds equalities that
    hold for complex numbers (i^2 = -1), so it is tried only after the plain comparison fails."""
    if not isinstance(expr, Basic):
        return expr
    return expr.subs({s: sympy.I for s in expr.free_symbols if s.name == "i"})


# ---------------------------------------------------------------- free symbols renamed

MAX_RENAMED = 3  # at most this many free symbols are matched up (3! orders)
PARAMETER_NAMES = frozenset("k n m l j t".split())  # the usual names of an integer parameter of a family


def _counts_periods(value: Basic, x: Basic) -> bool:
    """Whether `value` is linear in `x` with a rational multiple of pi as its coefficient (k in
    '\\frac{\\pi}{4} + 2k\\pi', whatever its name)."""
    try:
        coeff = sympy.diff(value, x)
        return not coeff.free_symbols and coeff != 0 and bool((coeff / sympy.pi).is_rational)
    except Exception:  # sympy cannot differentiate it: not a family
        return False


def _has_offset(value: Basic, x: Basic) -> bool:
    """A family stated with its offset ('\\frac{\\pi}{6} + a\\pi'): a nonzero rational multiple of pi
    where the parameter is 0. A bare '2\\pi r' (no offset, no 'x =') is the question's r, not a parameter."""
    try:
        rest = value.subs(x, 0)
        return not rest.free_symbols and rest != 0 and bool((rest / sympy.pi).is_rational)
    except Exception:  # not decidable: not a family
        return False


def free_parameters(gold: Any) -> set | None:
    """The gold's symbols that the question does not fix, so an answer may name them otherwise:
    - the constants of a function definition (a, b in f(x) = ax + b; x is fixed);
    - the integer parameter of a family of angles (k in x = 2k\\pi; x is fixed): a symbol the answer is
      linear in with a rational multiple of pi as its coefficient, named as parameters usually are
      (`PARAMETER_NAMES`) or in a family stated with 'x =' or with an offset ('\\frac{\\pi}{4} + a\\pi');
    - the one symbol of a tuple or set of expressions ((n, n + 2)).
    None for any other answer: the symbols of an expression, an equation or a relation are the
    question's own (x^2 + 1 is not y^2 + 1)."""
    if not isinstance(gold, Basic):
        return None
    definition = _definition(gold)
    if definition is not None:
        return set(definition[2].free_symbols) - set(definition[1]) or None
    value = gold.rhs if is_assignment_relation(gold) else gold
    if isinstance(value, Basic) and value.has(sympy.pi):
        params = {x for x in value.free_symbols if _counts_periods(value, x)
                  and (str(x) in PARAMETER_NAMES or is_assignment_relation(gold) or _has_offset(value, x))}
        return params or None
    if isinstance(gold, (sympy.Tuple, sympy.FiniteSet, sympy.Interval)) and len(gold.free_symbols) == 1:
        return set(gold.free_symbols)
    return None


def equal_up_to_renaming(gold: Any, pred: Any, s: Settings) -> str | None:
    """'k -> n' when the prediction equals the gold once its own free symbols are renamed, one to
    one, to the gold's free parameters (`free_parameters`); None otherwise. The symbols the gold
    fixes keep their names; a prediction with more or fewer free symbols is never renamed."""
    if isinstance(pred, sympy.Eq) and isinstance(pred.lhs, sympy.Symbol) and not is_relation(gold):
        pred = pred.rhs  # 'x = 2k\\pi' for '2m\\pi': the equation form on the answer's side only, as in `expr_equal`
    params = free_parameters(gold)
    if not params or not isinstance(pred, Basic) or len(params) > MAX_RENAMED:
        return None
    fixed = set(gold.free_symbols) - params
    definition = _definition(pred)
    if definition is not None:
        fixed |= set(definition[1])  # f(t) = ...: t is the function's own variable
    theirs = sorted(set(pred.free_symbols) - fixed, key=str)
    if len(theirs) != len(params):
        return None
    dummies = [sympy.Dummy() for _ in theirs]
    for order in itertools.permutations(sorted(params, key=str)):
        renamed = pred.xreplace(dict(zip(theirs, dummies))).xreplace(dict(zip(dummies, order)))
        if expr_equal(gold, renamed, s):
            return ", ".join(f"{a} -> {b}" for a, b in zip(theirs, order) if a != b)
    return None


def conditions_equal(gold: Any, pred: Any) -> bool | None:
    """Two conditions on the same one variable ('m < 5' and '5 > m'): the same set of solutions;
    None when they are not two such conditions."""
    if not (is_condition(gold) and is_condition(pred)):
        return None
    symbols = gold.free_symbols
    if len(symbols) != 1 or pred.free_symbols != symbols:
        return None
    try:
        return gold.as_set() == pred.as_set()
    except Exception:  # sympy cannot solve it (NotImplementedError and others): math-verify decides
        return None
