"""Assert-style tests that a solution cannot pass without passing them (used by the code sandbox).

Standard library only. Two processes, started by `verifiers/sandbox_boot.py`:

- the **solution host** (this file, copied into the sandbox and run as `python -I harness.py`):
  loads `solution.py` as module `solution`, then answers requests on fds 3 (in) and 4 (out):
  call this function, get this attribute, iterate this object, ... Every answer is *data*.
- the **test driver** (`drive`, in a separate process under another uid, which the solution
  cannot signal, trace or read): runs the gold test code, in which every name the solution
  defined stands for the solution's object. Calling one sends a request; the answer is decoded
  into plain Python values built here (numbers, strings, lists, tuples, dicts, sets, ...), so
  `==`, `<`, truth tests and hashing in the tests are decided by the driver's own values, never
  by the solution's methods. A result that is not plain data stays a handle (`Remote`): it can be
  called, its attributes read, iterated, `str()`ed, but comparing it or testing its truth fails
  the run (an always-true `__eq__` gets nowhere).

The driver reports "passed" (with the nonce it was given) only after the whole test code ran
without an exception; the report goes to the sandbox's init on a pipe the solution never holds.
Exiting early (`sys.exit(0)`, `os._exit(0)`, an `atexit` hook, a replaced `sys.excepthook`)
only ends the host: the driver sees the pipe close and reports a failure.

Only plain data crosses from the host: a name it sends (a module, `mock.ANY`) is never resolved
into an object of the driver. StopIteration from the solution ends an iteration only as the
answer to `next`; raised by a call (inside a `map(...)`, say) it is a RuntimeError (PEP 479).

Known limits (the run is reported, never passed): tests that hand one of their own functions to
the solution (e.g. a `key=lambda ...`) get verdict `error`; catching one of the solution's own
exception classes, or comparing two solution objects, fails the test.
"""

import ast
import builtins
import decimal
import fractions
import importlib
import importlib.util
import json
import os
import sys
import traceback
import types

MAX_DEPTH = 100  # nesting of one encoded value
MAX_LINE = 64 << 20  # bytes of one message
BIG_INT_BITS = 10_000  # larger ints travel as hex (decimal strings of > 4300 digits are refused by int())


class Unsupported(Exception):
    """The tests do something this harness cannot do across processes (verdict: error)."""


class Refused(BaseException):
    """A test compared (or tested the truth of) an object of the solution. Not an Exception, so
    a test's `except Exception` cannot swallow it; the driver also remembers it."""


class SolutionGone(BaseException):
    """The solution's process ended or answered garbage while the tests ran."""


class SolutionError(Exception):
    """An exception raised by the solution whose class is not a built-in one."""


# ------------------------------------------------------------------------------------------------
# values on the wire: JSON, with tagged objects for what JSON lacks


def _tag(name, value):
    return {"$": name, "v": value}


def encode(value, to_handle=None, depth=0):
    """JSON-ready form of `value`. The host passes `to_handle` (object -> id) and converts
    generously (subclasses, numpy); whatever is not plain data becomes a handle, never a name
    (a module, a library function or class of the solution stays the solution's object). The
    driver passes None and sends only exact plain types, handles it received, and modules,
    functions and classes of importable modules by name (the host imports them itself)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested more than {MAX_DEPTH} levels deep")
    host = to_handle is not None
    kind = type(value)
    if value is None or kind in (bool, str, float):
        return value
    if kind is int:
        return value if value.bit_length() <= BIG_INT_BITS else _tag("int", format(value, "x"))
    if kind is list:
        return [encode(v, to_handle, depth + 1) for v in value]
    if kind is tuple:
        return _tag("tuple", [encode(v, to_handle, depth + 1) for v in value])
    if kind is dict:
        return _tag("dict", [[encode(k, to_handle, depth + 1), encode(v, to_handle, depth + 1)] for k, v in value.items()])
    if kind in (set, frozenset):
        return _tag(kind.__name__, [encode(v, to_handle, depth + 1) for v in value])
    if kind in (bytes, bytearray):
        return _tag(kind.__name__, bytes(value).hex())
    if kind is complex:
        return _tag("complex", [value.real, value.imag])
    if kind is range:
        return _tag("range", [value.start, value.stop, value.step])
    if kind is fractions.Fraction:
        return _tag("fraction", [encode(value.numerator), encode(value.denominator)])
    if kind is decimal.Decimal:
        return _tag("decimal", str(value))
    if isinstance(value, Remote):
        return {"$": "h", "id": value._id}
    if not host:
        ref = _reference(value)
        if ref is not None:  # a module, or a function / class of an importable module: sent by name
            return ref
        raise Unsupported(f"the tests pass a {kind.__name__} to the solution; only plain values (numbers, strings, "
                          f"containers of them), functions and classes of importable modules, and the solution's own "
                          f"objects can be passed")
    # host side: what the solution returned, as data where it is data
    for base in (bool, int, float, str, complex):
        if isinstance(value, base):
            return encode(base(value), to_handle, depth)
    for base in (list, tuple, dict, set, frozenset, bytes, bytearray):
        if isinstance(value, base):  # e.g. a namedtuple, a Counter, an OrderedDict
            return encode(base(value), to_handle, depth)
    if kind.__module__ == "numpy" and hasattr(value, "tolist"):
        return encode(value.tolist(), to_handle, depth)
    return {"$": "h", "id": to_handle(value), "type": kind.__name__}


def _reference(value):
    """{"$": "ref", ...} naming `value` when it is a module, or a function or class that its
    module exposes under its qualified name (e.g. `math.sqrt`, `len`, `fractions.Fraction`); else None.
    The receiver imports the module itself, so a name can never bring the sender's object along."""
    if isinstance(value, types.ModuleType):
        return {"$": "ref", "module": value.__name__, "name": ""}
    module, name = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(name, str)) or module in ("solution", "__main__", "__tests__"):
        return None
    try:
        if _resolve(module, name, imported_only=True) is value:
            return {"$": "ref", "module": module, "name": name}
    except (ImportError, AttributeError, ValueError):
        pass
    return None


def _resolve(module, name, imported_only=False):
    """The object `module.name` (dotted name allowed) of this process's own import of `module`."""
    if not module or module.startswith(".") or module in ("solution", "__main__", "__tests__"):
        raise ValueError(f"not an importable module: {module!r}")
    found = sys.modules.get(module) if imported_only else importlib.import_module(module)
    if found is None:
        raise ImportError(module)
    for part in name.split(".") if name else ():
        if part.startswith("_") and part != "__init__":
            raise ValueError(f"private name {name!r}")
        found = getattr(found, part)
    return found


def decode(data, from_handle, depth=0, refs=False):
    """The value of an encoded `data`, built from this process's own types; handles become
    `from_handle(id, type name)`. References by name (`{"$": "ref"}`) are resolved only with
    `refs` (the host, reading the driver's requests); the driver never resolves a name the
    solution's process sent (it could name an object of the driver that equals anything, such
    as `unittest.mock.ANY`). ValueError for anything malformed."""
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested more than {MAX_DEPTH} levels deep")
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list:
        return [decode(v, from_handle, depth + 1, refs) for v in data]
    if kind is not dict or not isinstance(data.get("$"), str):
        raise ValueError(f"malformed value of type {kind.__name__}")
    tag, v = data["$"], data.get("v")
    items = lambda: [decode(x, from_handle, depth + 1, refs) for x in _list(v)]  # noqa: E731
    if tag == "h":
        return from_handle(_int(data.get("id")), str(data.get("type", "object")))
    if tag == "ref":
        if not refs:
            raise ValueError("a reference by name from the solution's process (only plain data and handles are read)")
        try:
            return _resolve(_str(data.get("module")), _str(data.get("name")))
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"cannot import {data.get('module')}.{data.get('name')}: {exc}") from None
    if tag == "int":
        return int(_str(v), 16)
    if tag == "tuple":
        return tuple(items())
    if tag == "dict":
        return {decode(k, from_handle, depth + 1, refs): decode(x, from_handle, depth + 1, refs) for k, x in (_pair(p) for p in _list(v))}
    if tag == "set":
        return set(items())
    if tag == "frozenset":
        return frozenset(items())
    if tag in ("bytes", "bytearray"):
        raw = bytes.fromhex(_str(v))
        return raw if tag == "bytes" else bytearray(raw)
    if tag == "complex":
        re_, im = _pair(v)
        return complex(_number(re_), _number(im))
    if tag == "range":
        start, stop, step = (_int(x) for x in _list(v, 3))
        return range(start, stop, step)
    if tag == "fraction":
        num, den = _pair(v)
        return fractions.Fraction(_int(decode(num, from_handle, depth + 1, refs)), _int(decode(den, from_handle, depth + 1, refs)))
    if tag == "decimal":
        return decimal.Decimal(_str(v))
    raise ValueError(f"unknown tag {tag!r}")


def _list(v, n=None):
    if type(v) is not list or (n is not None and len(v) != n):
        raise ValueError("malformed value: expected a list" + (f" of {n}" if n else ""))
    return v


def _pair(v):
    return tuple(_list(v, 2))


def _int(v):
    if type(v) is not int:
        raise ValueError("malformed value: expected an integer")
    return v


def _number(v):
    if type(v) not in (int, float):
        raise ValueError("malformed value: expected a number")
    return v


def _str(v):
    if type(v) is not str:
        raise ValueError("malformed value: expected a string")
    return v


# ------------------------------------------------------------------------------------------------
# the solution host (runs in the sandbox as the untrusted program)


def serve(source_path="solution.py", rfd=3, wfd=4):
    """Load the solution, send its names, then answer requests until the driver is done."""
    reader, writer = os.fdopen(rfd, "rb"), os.fdopen(wfd, "wb")
    objects, ids = {}, {}

    def to_handle(obj):
        key = id(obj)
        if key not in ids:
            ids[key] = len(objects) + 1
            objects[ids[key]] = obj
        return ids[key]

    def from_handle(number, _type):
        if number not in objects:
            raise ValueError(f"unknown handle {number}")
        return objects[number]

    def send(message):
        writer.write(json.dumps(message).encode() + b"\n")
        writer.flush()

    module = types.ModuleType("solution")
    module.__file__ = source_path
    sys.modules["solution"] = module
    try:
        with open(source_path, encoding="utf-8", errors="surrogatepass") as fh:
            code = compile(fh.read(), source_path, "exec")
        exec(code, module.__dict__)
        names = {name: encode(value, to_handle) for name, value in vars(module).items() if not name.startswith("__")}
    except BaseException as exc:  # noqa: BLE001 - reported to the driver, which fails the run
        send({"exc": type(exc).__name__, "msg": str(exc)[:1000], "where": "load"})
        return
    send({"names": names})
    for line in reader:
        request = None
        try:
            request = json.loads(line)
            send(_answer(request, objects, to_handle, from_handle))
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, StopIteration) and type(request) is dict and request.get("op") == "next":
                send({"stop": True})  # the end of an iteration; anywhere else it is an error (the driver says so)
            else:
                send({"exc": type(exc).__name__, "msg": str(exc)[:1000]})


def _answer(request, objects, to_handle, from_handle):
    op, target = request["op"], from_handle(request["h"], "")
    if op == "call":
        args = [decode(a, from_handle, refs=True) for a in request["args"]]
        kwargs = {k: decode(v, from_handle, refs=True) for k, v in request["kwargs"].items()}
        result = target(*args, **kwargs)
        mutable = (list, dict, set, bytearray)
        back = {str(i): encode(a, to_handle) for i, a in enumerate(args) if type(a) in mutable}
        back.update({k: encode(v, to_handle) for k, v in kwargs.items() if type(v) in mutable})
        return {"ok": encode(result, to_handle), "back": back}
    if op == "getattr":
        return {"ok": encode(getattr(target, request["name"]), to_handle)}
    if op == "getitem":
        return {"ok": encode(target[decode(request["key"], from_handle, refs=True)], to_handle)}
    if op == "len":
        return {"ok": len(target)}
    if op == "iter":
        return {"ok": encode(iter(target), to_handle)}
    if op == "next":
        return {"ok": encode(next(target), to_handle)}
    if op in ("str", "repr"):
        return {"ok": (str if op == "str" else repr)(target)}
    raise ValueError(f"unknown request {op!r}")


# ------------------------------------------------------------------------------------------------
# the test driver (a separate process the solution cannot reach)


class _Connection:
    """The driver's end of the pipes to the host."""

    def __init__(self, rfd, wfd):
        self.reader, self.writer = os.fdopen(rfd, "rb"), os.fdopen(wfd, "wb")
        self.refused = None  # why the run failed even if a test swallowed the exception
        self.requests = 0

    def receive(self):
        try:
            line = self.reader.readline(MAX_LINE)
            if not line.endswith(b"\n"):
                raise self._gone("the solution's process ended" if not line else "the solution sent an oversized answer")
            return json.loads(line)
        except (ValueError, RecursionError, MemoryError):
            raise self._gone("the solution's process answered garbage") from None

    def _gone(self, why):
        self.refused = self.refused or why
        return SolutionGone(why)

    def request(self, op, remote, **fields):
        self.requests += 1
        try:
            self.writer.write(json.dumps({"op": op, "h": remote._id, **fields}).encode() + b"\n")
            self.writer.flush()
        except OSError:
            raise self._gone("the solution's process ended") from None
        answer = self.receive()
        if type(answer) is not dict:
            raise self._gone("the solution's process answered garbage")
        if answer.get("stop") is True and op == "next":
            raise StopIteration
        if "exc" in answer or "stop" in answer:
            raise _solution_exception(answer, op)
        try:
            return answer, decode(answer.get("ok"), self.remote)
        except (ValueError, TypeError, RecursionError, OverflowError) as exc:
            raise self._gone(f"the solution's answer cannot be read ({exc})") from None

    def remote(self, number, type_name):
        return Remote(self, number, type_name)

    def call(self, remote, args, kwargs):
        encoded = [encode(a) for a in args]
        encoded_kw = {str(k): encode(v) for k, v in kwargs.items()}
        answer, result = self.request("call", remote, args=encoded, kwargs=encoded_kw)
        back = answer.get("back") if type(answer.get("back")) is dict else {}
        originals = {**{str(i): a for i, a in enumerate(args)}, **kwargs}
        for key, data in back.items():  # arguments the solution changed in place (e.g. a list it sorted)
            original = originals.get(key)
            try:
                new = decode(data, self.remote)
            except (ValueError, TypeError, RecursionError, OverflowError):
                continue
            if type(original) is list and type(new) is list:
                original[:] = new
            elif type(original) is dict and type(new) is dict or type(original) is set and type(new) is set:
                original.clear()
                original.update(new)
            elif type(original) is bytearray and type(new) is bytearray:
                original[:] = new
        return result


def _solution_exception(answer, op):
    """The exception to raise in the tests for an error of the solution. StopIteration and
    StopAsyncIteration become a RuntimeError (as PEP 479 does for generators) except as the end
    of a `next`: raised by a call inside `map(...)` or a generator, they would end the iteration
    early and let `all(...)` or a `for` loop over the cases pass."""
    name, message = str(answer.get("exc", "StopIteration")), str(answer.get("msg", ""))
    if name in ("StopIteration", "StopAsyncIteration") or (op != "next" and answer.get("stop") is True):
        return RuntimeError(f"the solution raised {name} during a {op} request" + (f": {message}" if message else ""))
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == "builtins":
        try:
            return cls(message)
        except Exception:  # noqa: BLE001 - e.g. an exception class with required arguments
            pass
    if name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        return SolutionGone(f"the solution raised {name} during a call")
    return SolutionError(f"{name}: {message}")


class Remote:
    """An object that lives in the solution's process (a function, a class, an instance)."""

    __slots__ = ("_conn", "_id", "_type")

    def __init__(self, conn, number, type_name):
        self._conn, self._id, self._type = conn, number, type_name

    def __call__(self, *args, **kwargs):
        return self._conn.call(self, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._conn.request("getattr", self, name=name)[1]

    def __getitem__(self, key):
        return self._conn.request("getitem", self, key=encode(key))[1]

    def __len__(self):
        n = self._conn.request("len", self)[1]
        if type(n) is not int or n < 0:
            raise self._conn._gone("the solution's len() answer is not a count")
        return n

    def __iter__(self):
        return self._conn.request("iter", self)[1]

    def __next__(self):
        return self._conn.request("next", self)[1]

    def __str__(self):
        text = self._conn.request("str", self)[1]
        if type(text) is not str:
            raise self._conn._gone("the solution's str() answer is not a string")
        return text

    def __repr__(self):
        return f"<solution {self._type} object>"

    def _refuse(self, *_):
        why = (f"a test compared or tested the truth of a {self._type} object returned by the solution; "
               f"only plain values (numbers, strings, lists, tuples, dicts, sets) are compared")
        self._conn.refused = self._conn.refused or why
        raise Refused(why)

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __contains__ = _refuse
    __hash__ = None


def _test_line(exc, source):
    """(line number, source line) of the innermost frame of the test code, or (None, "")."""
    lines = source.splitlines()
    found = (None, "")
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<tests>" and frame.lineno and frame.lineno <= len(lines):
            found = (frame.lineno, lines[frame.lineno - 1].strip())
    return found


def _assumed_modules(tests):
    """Names the test code uses only as `name.attribute` (never calls, passes or compares them) and
    that name an importable module: the tests assume the module (`math.isclose` without
    `import math`), so the driver imports it itself; the solution's object of that name (its own
    `math`, a class with an `isclose` that says True) never stands in for it."""
    uses = {}
    tree = ast.parse(tests)
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                as_base = isinstance(parent, ast.Attribute) and parent.value is child
                uses[child.id] = uses.get(child.id, True) and as_base
    out = {}
    for name, only_as_base in uses.items():
        if only_as_base and not hasattr(builtins, name):
            try:
                if importlib.util.find_spec(name) is not None:
                    out[name] = importlib.import_module(name)
            except Exception:  # noqa: BLE001 - not importable here: the name stays as the tests left it
                pass
    return out


def _test_namespace(tests, names, conn):
    """The globals the test code runs in. Its names resolve, in this order, to what the tests bind
    themselves (they run after), the built-ins, the modules the tests assume (`_assumed_modules`),
    and only then to the solution's functions, classes and objects: those stay handles, so a
    comparison with one fails the test. A plain value the solution defines (a constant the tests
    might compare a result with), a dunder and a built-in's name are never taken from the solution."""
    namespace = {"__builtins__": builtins, "__name__": "__tests__"}
    modules = _assumed_modules(tests)
    for name, value in names.items():
        if not (isinstance(name, str) and name.isidentifier()) or name.startswith("__") or hasattr(builtins, name):
            continue
        if name in modules or not (type(value) is dict and value.get("$") == "h"):
            continue
        try:
            namespace[name] = decode(value, conn.remote)
        except ValueError:
            pass  # malformed: the name stays undefined for the tests
    namespace.update(modules)
    return namespace


def drive(tests, rfd, wfd, nonce):
    """Run the test code against the host on (rfd, wfd); the report as a dict: `passed` with
    the nonce, or a `verdict` ("incorrect" / "error") and a `detail`."""
    conn = _Connection(rfd, wfd)

    def failed(detail, verdict="incorrect"):
        return {"passed": False, "verdict": verdict, "detail": detail[:2000], "requests": conn.requests}

    try:
        hello = conn.receive()
    except SolutionGone as exc:
        return failed(f"{exc} before the tests ran")
    if type(hello) is not dict or "names" not in hello:
        exc = hello.get("exc", "?") if type(hello) is dict else "?"
        message = hello.get("msg", "") if type(hello) is dict else ""
        return failed(f"loading the solution raised {exc}: {message}".rstrip(": "))
    try:
        code = compile(tests, "<tests>", "exec")
        namespace = _test_namespace(tests, dict(hello["names"]), conn)
        exec(code, namespace)
    except Unsupported as exc:
        return failed(f"the tests cannot run isolated from the solution: {exc}", verdict="error")
    except BaseException as exc:  # noqa: BLE001 - every way the tests can fail is a failed run
        number, line = _test_line(exc, tests)
        where = f" at test line {number}: {line}" if number else ""
        if isinstance(exc, AssertionError):
            return failed(f"AssertionError{where}" + (f" ({exc})" if str(exc) else ""))
        if isinstance(exc, (Refused, SolutionGone)):
            return failed(f"{exc}{where}")
        return failed(f"{type(exc).__name__}: {exc}{where}")
    if conn.refused:  # a test caught the exception, the failure stands
        return failed(conn.refused)
    return {"passed": True, "nonce": nonce, "requests": conn.requests}


if __name__ == "__main__":
    serve()
