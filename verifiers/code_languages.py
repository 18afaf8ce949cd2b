"""Languages of the `code` kind beyond Python: the toolchain table, compilation inside the sandbox, the binary cache.

Every step runs in `verifiers.sandbox.run_program`, with the isolation of a Python run (namespaces, read-only
host filesystem, seccomp, rlimits, uid 65534): the compiler too, with its own time, memory and process limits
(`Language.compile_limits`), since a compiler reads what the program names (`#include "/etc/shadow"`) and can be
made to work without end (template recursion, macro bombs). The compiler sees only its build folder (a private
tmpfs) and writes only there; the files the table names (`outputs`) are read back from that folder, without
following links, and handed to each test run as files of a fresh folder.

`compile_program` caches what a build gave (the files, or the compiler's error) by the SHA-256 of the sources, the
compiler's version line and the flags: an RL group repeats programs, and a repeat costs no compilation.

>>> LANGUAGES["cpp"].fence_tags[:3]
('cpp', 'c++', 'cxx')
>>> language_of_tag("rs")
'rust'
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import shutil
import subprocess
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from verifiers.code_checks import CheckPlan, expected_files, program_files, read_reports
from verifiers.sandbox import SandboxLimits, SandboxRun, run_cases, run_program

BUILD_CACHE_MB = 256  # compiled programs kept per process (least recently used dropped first)


@dataclass(frozen=True)
class Language:
    """How one language is built and run. Argument templates: {src} the source file, {main} Java's main class,
    {mem} the program's memory limit in MiB."""

    name: str
    fence_tags: tuple[str, ...]
    tool: str  # the compiler (or interpreter) looked up on PATH
    package: str  # what to install when `tool` is missing (Debian / Ubuntu)
    source: str  # the solution's file name
    compile: tuple[str, ...] | None  # None: interpreted, nothing to build
    run: tuple[str, ...]
    outputs: tuple[str, ...] = ()  # names (or "*.ext") the build leaves for the runs
    compile_cpu_seconds: float = 10.0
    compile_wall_seconds: float = 30.0
    compile_memory_mb: int = 1024
    compile_processes: int = 64
    runtime_reserve_mb: int = 0  # address space the runtime reserves beyond the program's own memory (JVM, V8)
    run_processes: int = 0  # at least this many threads/processes for the runtime's own threads
    env: dict[str, str] = field(default_factory=dict)
    flags_note: str = ""


LANGUAGES: dict[str, Language] = {
    "python": Language("python", ("python", "py", "python3"), "python3", "python3", "solution.py", None, ()),
    "cpp": Language(
        "cpp", ("cpp", "c++", "cxx", "cc"), "g++", "g++", "main.cpp",
        ("{tool}", "-std=gnu++17", "-O2", "-pipe", "-w", "-fmax-errors=20", "-ftemplate-depth=900",
         "-fconstexpr-ops-limit=33554432", "-o", "main", "{src}", "-lm"),
        ("./main",), outputs=("main",)),
    "c": Language(
        "c", ("c",), "gcc", "gcc", "main.c",
        ("{tool}", "-std=gnu11", "-O2", "-pipe", "-w", "-fmax-errors=20", "-o", "main", "{src}", "-lm"),
        ("./main",), outputs=("main",)),
    "java": Language(
        "java", ("java",), "javac", "openjdk-17-jdk-headless (or any JDK >= 11)", "{main}.java",
        ("{tool}", "-J-Xmx512m", "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1", "-J-XX:-UsePerfData",
         "-nowarn", "-encoding", "UTF-8", "-d", ".", "*.java"),
        ("{java}", "-Xmx{mem}m", "-Xss16m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
         "-XX:ReservedCodeCacheSize=64m", "-XX:CompressedClassSpaceSize=64m", "-ea", "-cp", ".", "{main}"),
        outputs=("*.class",), compile_memory_mb=2048, runtime_reserve_mb=1024, run_processes=64),
    "javascript": Language(
        "javascript", ("javascript", "js", "node", "nodejs"), "node", "nodejs", "main.js", None,
        ("{tool}", "--max-old-space-size={mem}", "--stack-size=8000", "main.js"),
        runtime_reserve_mb=1024, run_processes=64),
    "rust": Language(
        "rust", ("rust", "rs"), "rustc", "rustc (or rustup: https://rustup.rs)", "main.rs",
        ("{tool}", "--edition=2021", "-O", "-C", "debuginfo=0", "-C", "strip=symbols", "--cap-lints=allow", "-o", "main", "{src}"),
        ("./main",), outputs=("main",), compile_memory_mb=2048),
    "go": Language(
        "go", ("go", "golang"), "go", "golang-go", "main.go",
        ("{tool}", "build", "-ldflags=-s -w", "-o", "main", "*.go"),
        ("./main",), outputs=("main",), compile_memory_mb=2048,
        env={"GOCACHE": "/tmp/gocache", "GOPATH": "/tmp/gopath", "GO111MODULE": "off", "GOPROXY": "off",
             "CGO_ENABLED": "0", "GOTOOLCHAIN": "local", "GOMAXPROCS": "2"},
        runtime_reserve_mb=1024, run_processes=64),
}
_BY_TAG = {tag: lang.name for lang in LANGUAGES.values() for tag in lang.fence_tags}


def language_of_tag(tag: str) -> str | None:
    """The language a fence tag names (```cpp, ```rs, ...), or None."""
    return _BY_TAG.get(tag.strip().lower())


def check_language(name: object) -> str:
    """The canonical name of a language option; ValueError naming the valid ones."""
    if isinstance(name, str) and name.strip().lower() in LANGUAGES:
        return name.strip().lower()
    if isinstance(name, str) and language_of_tag(name):
        return language_of_tag(name)  # type: ignore[return-value]
    raise ValueError(f"unknown code language {name!r}; valid: {', '.join(LANGUAGES)} (or a fence tag such as c++, js, rs)")


@dataclass(frozen=True)
class Toolchain:
    """A language's tool as found on this machine: the real path of the executable, the folders to expose to
    the sandbox's uid, and the version line that goes into the build cache's key."""

    tool: str
    expose: tuple[str, ...]
    version: str
    java: str = ""  # the `java` launcher beside `javac`


class MissingToolchain(RuntimeError):
    """The compiler or interpreter of a language is not installed here."""


@functools.lru_cache(maxsize=None)
def find_toolchain(language: str) -> Toolchain:
    """The toolchain of `language`; MissingToolchain naming the package to install."""
    lang = LANGUAGES[language]
    found = shutil.which(lang.tool) or shutil.which(lang.tool, path=os.pathsep.join(_extra_path()))
    if not found:
        raise MissingToolchain(f"the {language} toolchain is missing: '{lang.tool}' is not on PATH; install {lang.package} "
                               f"(scripts/install.sh installs it on Debian/Ubuntu)")
    tool, expose = os.path.realpath(found), []
    if language == "rust":  # rustup's proxy: run the toolchain's own rustc (the proxy needs the caller's HOME)
        sysroot = _output([found, "--print", "sysroot"]).strip()
        tool, expose = os.path.join(sysroot, "bin", "rustc"), [sysroot]
    elif language == "go":
        expose = [_output([found, "env", "GOROOT"]).strip()]
    elif language == "java":
        expose = [os.path.dirname(os.path.dirname(tool))]
    version = _output([tool, "version" if language == "go" else "--version"]).strip().splitlines()[:1]
    java = os.path.join(os.path.dirname(tool), "java") if language == "java" else ""
    return Toolchain(tool, tuple(p for p in expose if p), version[0] if version else "", java)


def _extra_path() -> list[str]:
    home = os.path.expanduser("~")
    return [os.path.join(home, ".cargo", "bin"), "/usr/local/go/bin", "/usr/lib/go/bin"]


def _output(argv: list[str]) -> str:
    """Output of a trusted toolchain query (never with user input)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MissingToolchain(f"'{argv[0]}' does not run: {exc}") from None
    return done.stdout or done.stderr


# ------------------------------------------------------------------------------------------------ sources


def java_main_class(source: str) -> str:
    """The class that holds `main` (else the public class, else `Main`): the file name and what `java` runs.
    One pass over the class declarations (each class's text runs to the next one): linear in the source."""
    clean = _JAVA_COMMENTS.sub("", source)
    starts = list(_JAVA_CLASS.finditer(clean))
    for match, following in zip(starts, [*starts[1:], None]):
        body = clean[match.end() : following.start() if following else len(clean)]
        if _JAVA_MAIN.search(body):
            return match.group(1)
    return _public_class(clean) or "Main"


_JAVA_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_JAVA_CLASS = re.compile(r"\bclass\s+([A-Za-z_]\w*)")
_JAVA_MAIN = re.compile(r"\b(?:static\s+void|void\s+static)\s+main\s*\(")
_JAVA_PUBLIC = re.compile(r"\bpublic\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_]\w*)")


def _public_class(source: str) -> str | None:
    public = _JAVA_PUBLIC.search(_JAVA_COMMENTS.sub("", source))
    return public.group(1) if public else None


def source_files(language: str, code: str, plan: CheckPlan | None = None) -> tuple[dict[str, str], str]:
    """({file name: text}, Java's main class or "") of a program; with the unit tests' `plan`
    (`verifiers.code_checks`), the program under test: the solution, the serialiser and the test body, whose
    checks report the values they compute (the expected sides are never in it)."""
    java_class = ""
    if language == "java":
        java_class = _public_class(code) or (java_main_class(code) if plan is None else "Solution")
    if plan is not None:
        return program_files(plan, code, java_class)
    if language == "java":
        return {f"{java_class}.java": code}, java_main_class(code)
    return {LANGUAGES[language].source: code}, ""


# ------------------------------------------------------------------------------------------------ build and run


@dataclass(frozen=True)
class Build:
    """What compiling gave: the files for the runs, or the compiler's failure."""

    files: dict[str, bytes]  # empty when the build failed
    error: str | None  # the compiler's first lines (or the limit it hit); None on success
    timed_out: bool = False
    setup_error: str | None = None
    seconds: float = 0.0
    cached: bool = False


_cache: OrderedDict[str, Build] = OrderedDict()
_cache_bytes = 0
_cache_lock = threading.Lock()


def compile_limits(lang: Language) -> SandboxLimits:
    """The compiler's own limits (never the program's: a build is allowed more memory and time, not more access)."""
    return SandboxLimits(cpu_seconds=lang.compile_cpu_seconds, wall_seconds=lang.compile_wall_seconds,
                         memory_mb=lang.compile_memory_mb, max_processes=lang.compile_processes, file_size_mb=256,
                         open_files=256, tmpfs_mb=1024, max_output_kb=256)


def build_key(language: str, files: dict[str, str], toolchain: Toolchain) -> str:
    """SHA-256 of the sources, the compiler's version line and the flags."""
    lang = LANGUAGES[language]
    text = repr((language, sorted(files.items()), toolchain.tool, toolchain.version, lang.compile, lang.env))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def compile_program(language: str, files: dict[str, str]) -> Build:
    """Build `files` in the sandbox (cached); an interpreted language's build is its sources."""
    lang, toolchain = LANGUAGES[language], find_toolchain(language)
    if lang.compile is None:
        return Build({k: v.encode("utf-8", "surrogatepass") for k, v in files.items()}, None)
    key = build_key(language, files, toolchain)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return dataclasses.replace(hit, cached=True)
    argv = _argv(lang.compile, toolchain, files, lang.source, "", 0)
    run = run_program(argv, files, "", compile_limits(lang), collect=list(lang.outputs), env=lang.env,
                      expose=list(toolchain.expose))
    build = _build_of(run, lang)
    if build.setup_error is None and not build.timed_out:  # a machine's failure is tried again next time
        _remember(key, build)
    return build


def _build_of(run: SandboxRun, lang: Language) -> Build:
    if run.setup_error:
        return Build({}, f"sandbox failed: {run.setup_error}", setup_error=run.setup_error, seconds=run.wall)
    if run.timed_out:
        return Build({}, f"compilation exceeded its limits ({lang.compile_cpu_seconds:g} s CPU, "
                         f"{lang.compile_wall_seconds:g} s wall)", timed_out=True, seconds=run.wall)
    text = (run.stderr + run.stdout).strip()
    if run.output_limited:
        return Build({}, "compilation failed: compiler output over its limit: " + _first_lines(text), seconds=run.wall)
    if run.returncode != 0 or not run.collected:
        how = f"killed by {run.signal}" if run.signal else f"exit code {run.returncode}"
        if run.signal in ("SIGKILL", "SIGSEGV", "SIGABRT") or "memory" in text.lower() and not text.count("error:"):
            how += f", memory limit {lang.compile_memory_mb} MiB"
        return Build({}, f"compilation failed ({how}): " + (_first_lines(text) or "no output"), seconds=run.wall)
    return Build(dict(run.collected), None, seconds=run.wall)


def _first_lines(text: str, lines: int = 8, chars: int = 800) -> str:
    return "\n".join(text.splitlines()[:lines])[:chars]


def _remember(key: str, build: Build) -> None:
    global _cache_bytes
    size = sum(len(v) for v in build.files.values()) + 1024
    with _cache_lock:
        if key in _cache:
            return
        _cache[key] = build
        _cache_bytes += size
        while _cache_bytes > BUILD_CACHE_MB << 20 and len(_cache) > 1:
            _, old = _cache.popitem(last=False)
            _cache_bytes -= sum(len(v) for v in old.files.values()) + 1024


def clear_build_cache() -> None:
    """Forget every cached build."""
    global _cache_bytes
    with _cache_lock:
        _cache.clear()
        _cache_bytes = 0


def _argv(template: tuple[str, ...], toolchain: Toolchain, files: dict[str, str], source: str, main: str,
          memory_mb: int) -> list[str]:
    out = []
    for part in template:
        if part == "*.java" or part == "*.go":
            out += sorted(name for name in files if name.endswith(part[1:]))
            continue
        out.append(part.format(tool=toolchain.tool, java=toolchain.java, src=source, main=main, mem=memory_mb))
    return out


def run_limits(lang: Language, limits: SandboxLimits) -> SandboxLimits:
    """A test run's limits: the caller's, with the address space a managed runtime reserves on top (its heap is
    capped at `memory_mb` by its own flag) and room for the runtime's threads."""
    return dataclasses.replace(limits, memory_mb=limits.memory_mb + lang.runtime_reserve_mb,
                               max_processes=max(limits.max_processes, lang.run_processes))


def run_built(language: str, build: Build, main: str, stdins: list[str], limits: SandboxLimits) -> list[SandboxRun]:
    """Run a built program once per stdin, in one sandbox (`run_cases`), with the caller's per-test limits;
    it stops after the first run that fails."""
    lang, toolchain = LANGUAGES[language], find_toolchain(language)
    argv = _argv(lang.run, toolchain, {}, lang.source, main, limits.memory_mb)
    executable = [name for name in build.files if name in ("main",)]
    return run_cases(argv, stdins, run_limits(lang, limits), binary_files=build.files, exec_files=executable,
                     env=lang.env, expose=list(toolchain.expose))


_expected: OrderedDict[str, dict[int, str]] = OrderedDict()


def expected_values(plan: CheckPlan, limits: SandboxLimits) -> tuple[dict[int, str] | None, str]:
    """({check: expected value text}, "") of the unit tests' checks, or (None, why the expected sides cannot
    be evaluated apart). The values the verifier does not know are reported by the expected-value program
    (`code_checks.expected_files`: no code of the solution), built and run in a sandbox of their own; the
    values are cached with the build."""
    values = dict(plan.known)
    if not plan.unknown():
        return values, ""
    language = plan.language
    files, main = expected_files(plan)
    key = build_key(language, files, find_toolchain(language))
    with _cache_lock:
        if key in _expected:
            _expected.move_to_end(key)
            return {**values, **_expected[key]}, ""
    build = compile_program(language, files)
    if build.error is not None:
        return None, (f"the expected side of a check does not build without the solution (it must be a value of the "
                      f"language or its standard library, e.g. a literal): {build.error}")
    run = run_built(language, build, main, [""], limits)[-1]
    reports = read_reports(run.stdout)
    if not run.ok or [i for i, _ in reports] != plan.unknown():
        why = f"exit code {run.returncode}, signal {run.signal}" if not run.ok else "it reported other checks"
        return None, f"the expected sides of the checks did not evaluate ({why}): {run.stderr.strip()[:300]}"
    found = dict(reports)
    with _cache_lock:
        _expected[key] = found
        while len(_expected) > 4096:
            _expected.popitem(last=False)
    return {**values, **found}, ""
