"""The `code` kind beyond Python: C, C++, Java, JavaScript, Rust and Go, built and run in the sandbox.

The adversary is the program (and its tests' author only as far as the gold goes): it may send any source in
any of the languages, made to read host files at compile or run time, reach the network, fork or allocate
without end, leave files for the next item, signal the verifier, or make its compiler work without end.
The full canonical-solution set (30 problems per language) runs in bench/code_languages.py; here a few.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import time
import uuid

import pytest

from tests.verifiers.code_problem_set import fenced, problems
from verifiers import Verdict, verify
from verifiers import code_languages
from verifiers.code_kind import _floats, check_code_options, code_language, verify_code
from verifiers.code_languages import LANGUAGES, MissingToolchain, find_toolchain

COMPILED = ("c", "cpp", "java", "javascript", "rust", "go")
SLOW_BUILDS = {"java", "rust", "go"}  # a build takes seconds on 2 busy cores: their attack matrix is marked slow
LIMITS = {"cpu_seconds": 1, "wall_seconds": 4}


def needs(language: str) -> None:
    """Skip, with the reason, when the language's toolchain is not on this machine."""
    try:
        find_toolchain(language)
    except MissingToolchain as exc:
        pytest.skip(str(exc))


def lang_param(language: str):
    return pytest.param(language, marks=[pytest.mark.slow] if language in SLOW_BUILDS else [], id=language)


# ------------------------------------------------------------------------------------------------ canonical set


@pytest.mark.parametrize("language", ["python", *COMPILED])
def test_canonical_solutions_pass_and_every_wrong_variant_fails(language):
    # one stdin/stdout problem with all its variants, and one unit-test problem (the bench runs all 30)
    if language != "python":
        needs(language)
    chosen = [p for p in problems(language) if p.name in ("shift_reverse/3", "unit/5")]
    if language in SLOW_BUILDS:  # fewer builds: the right one and two wrong ones per problem
        chosen = [dataclasses.replace(p, programs={k: v for k, v in p.programs.items() if k in ("correct", "off_by_one", "crash")})
                  for p in chosen]
    for problem in chosen:
        for variant, code in problem.programs.items():
            result = verify_code(fenced(language, code), problem.gold, compare=problem.compare, language=language, **LIMITS)
            if variant == "correct":
                assert result.verdict == Verdict.CORRECT, (problem.name, result.detail)
            else:  # off by one / wrong format / crash: incorrect; too slow: timeout
                want = Verdict.TIMEOUT if variant == "too_slow" else Verdict.INCORRECT
                assert result.verdict == want, (problem.name, variant, result.verdict, result.detail)


def test_problem_set_has_30_problems_per_language_with_every_wrong_variant():
    for language in ["python", *COMPILED]:
        found = problems(language)
        assert len(found) >= 30
        stdin = [p for p in found if not p.name.startswith("unit")]
        assert all(set(p.programs) == {"correct", "off_by_one", "wrong_format", "too_slow", "crash"} for p in stdin)
        assert all(len(set(p.programs.values())) == len(p.programs) for p in found)  # variants differ from the right one


# ------------------------------------------------------------------------------------------------ options, fences


# (case, text, language option, expected language)
LANGUAGE_CASES = [
    ("cpp fence, no option", "```cpp\nint main(){}\n```", None, "cpp"),
    ("c++ tag", "```c++\nint main(){}\n```", None, "cpp"),
    ("rs tag", "```rs\nfn main(){}\n```", None, "rust"),
    ("a python block wins", "```cpp\nx\n```\n```python\nprint(1)\n```", None, "python"),
    ("unknown tag: python as before", "```text\nprint(1)\n```", None, "python"),
    ("no fence: python as before", "print(1)", None, "python"),
    ("option beats the fence", "```python\nx\n```", "go", "go"),
    ("option by tag", "x", "js", "javascript"),
]


@pytest.mark.parametrize("case,text,option,expected", LANGUAGE_CASES, ids=[c[0] for c in LANGUAGE_CASES])
def test_language_from_option_or_fence(case, text, option, expected):
    assert code_language(text, option) == expected


def test_bad_language_option_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown code language 'cobol'; valid: python, cpp"):
        check_code_options({"language": "cobol"})


# (got, want, tolerance, equal?)
FLOAT_CASES = [
    ("1.0000001\n", "1.0", 1e-6, True),  # within 1e-6
    ("1.00001", "1.0", 1e-6, False),
    ("2000000.1", "2000000.0", 1e-6, True),  # relative above 1
    ("1.5 x", "1.5 y", 1e-6, False),  # a word must match
    ("1 2", "1 2 3", 1e-6, False),
    ("nan", "nan", 1e-6, True),  # equal text
    ("nan", "1.0", 1e-6, False),
]


@pytest.mark.parametrize("got,want,tol,equal", FLOAT_CASES)
def test_floats_comparator(got, want, tol, equal):
    assert _floats(got, want, tol) is equal


def test_missing_compiler_is_a_clear_error_naming_the_package(monkeypatch):
    monkeypatch.setitem(LANGUAGES, "go", dataclasses.replace(LANGUAGES["go"], tool="no-such-go-compiler"))
    find_toolchain.cache_clear()
    try:
        with pytest.raises(ValueError, match="install golang-go"):
            check_code_options({"language": "go"})
        result = verify_code("```go\npackage main\nfunc main() {}\n```", '[{"input": "", "output": ""}]')
        assert result.verdict == Verdict.ERROR and "golang-go" in result.detail
    finally:
        find_toolchain.cache_clear()


# ------------------------------------------------------------------------------------------------ compiling


C_ADD = "#include <stdio.h>\nint main(void) { long a, b; scanf(\"%ld %ld\", &a, &b); printf(\"%ld\\n\", a + b); return 0; }\n"
ADD_CASES = json.dumps([{"input": "1 2\n", "output": "3\n"}, {"input": "10 -4\n", "output": "6\n"}])


def test_compile_error_is_incorrect_with_the_compilers_first_lines():
    needs("cpp")
    result = verify_code("```cpp\nint main() { return undefined_name; }\n```", ADD_CASES)
    assert result.verdict == Verdict.INCORRECT
    assert "compilation failed" in result.detail and "undefined_name" in result.detail


def test_build_cache_by_source_compiler_and_flags(monkeypatch):
    needs("c")
    code_languages.clear_build_cache()
    program = fenced("c", C_ADD + f"// {uuid.uuid4().hex}\n")
    first = verify_code(program, ADD_CASES)
    second = verify_code(program, ADD_CASES)
    assert first.correct and second.correct
    assert first.extra["build_cached"] is False and second.extra["build_cached"] is True
    # other flags: another key, built again
    monkeypatch.setitem(LANGUAGES, "c", dataclasses.replace(LANGUAGES["c"], compile=LANGUAGES["c"].compile[:1] + ("-O0",) + LANGUAGES["c"].compile[1:]))
    assert verify_code(program, ADD_CASES).extra["build_cached"] is False


@pytest.fixture
def secret_file(tmp_path):
    """A host file only root can read, holding a random secret."""
    if os.geteuid() != 0:
        pytest.skip("the sandbox's uid differs from the caller's only when run as root")
    secret = f"secret-{uuid.uuid4().hex}"
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    path = folder / "secret.txt"
    path.write_text(secret + "\n")
    path.chmod(0o600)
    return str(path), secret


# (language, program that pulls the file into the build)
INCLUDE_ATTACKS = [
    ("c", '#include "@PATH@"\nint main(void) { return 0; }\n'),
    ("cpp", 'const char *s =\n#include "@PATH@"\n;\nint main() { return 0; }\n'),
    ("rust", 'const S: &str = include_str!("@PATH@");\nfn main() { println!("{}", S); }\n'),
    ("rust", '#[path = "@PATH@"]\nmod m;\nfn main() {}\n'),  # a host file as a module
    ("go", 'package main\n\nimport _ "embed"\n\n//go:embed @PATH@\nvar s string\n\nfunc main() { println(s) }\n'),
    ("go", 'package main\n\n/*\n#include "@PATH@"\n*/\nimport "C"\n\nfunc main() {}\n'),  # cgo (off: CGO_ENABLED=0)
]


@pytest.mark.parametrize("language,code", [pytest.param(l, c, marks=[pytest.mark.slow] if l in SLOW_BUILDS else []) for l, c in INCLUDE_ATTACKS])
def test_compiler_cannot_read_host_files(language, code, secret_file):
    needs(language)
    path, secret = secret_file
    result = verify_code(fenced(language, code.replace("@PATH@", path)), json.dumps([{"input": "", "output": secret}]))
    assert result.verdict == Verdict.INCORRECT and "compilation failed" in result.detail
    assert secret not in result.detail and secret not in json.dumps(result.extra)


def _small_compile_limits(monkeypatch, language):
    monkeypatch.setitem(LANGUAGES, language, dataclasses.replace(LANGUAGES[language], compile_cpu_seconds=2, compile_wall_seconds=6,
                                                                  compile_memory_mb=512))


TEMPLATE_BOMB = ("template<int N> struct B { enum { v = B<N - 1>::v + B<N - 2>::v + B<N - 3>::v }; };\n"
                 "template<> struct B<0> { enum { v = 1 }; }; template<> struct B<-1> { enum { v = 1 }; };\n"
                 "template<> struct B<-2> { enum { v = 1 }; };\n"
                 "template<int N> struct C { static const long v = C<N - 1>::v + sizeof(B<N % 40>); };\n"
                 "template<> struct C<0> { static const long v = 0; };\nint main() { return C<880>::v + B<60>::v; }\n")
MACRO_BOMB = "#define A0 x x x x x x x x\n" + "".join(f"#define A{i} A{i - 1} A{i - 1} A{i - 1} A{i - 1}\n" for i in range(1, 16)) + "A15\nint main(){}\n"


@pytest.mark.parametrize("code", [TEMPLATE_BOMB, MACRO_BOMB], ids=["template expansion", "macro bomb"])
def test_compiler_bombs_end_at_the_compile_limits(monkeypatch, code):
    needs("cpp")
    _small_compile_limits(monkeypatch, "cpp")
    start = time.monotonic()
    result = verify_code(fenced("cpp", code), ADD_CASES)
    assert result.verdict in (Verdict.TIMEOUT, Verdict.INCORRECT), result.detail
    assert "compil" in result.detail and time.monotonic() - start < 20


def test_the_build_runs_confined_and_its_outputs_are_never_followed(monkeypatch, secret_file, tmp_path):
    # the compile step is the program's sandbox: a "compiler" that tries to write on the host and leaves its
    # output as a link to a host file gets a read-only host, and its link is never read
    path, secret = secret_file
    outside = tmp_path / f"written-{uuid.uuid4().hex}"
    script = f"echo pwned > {outside}; echo pwned > /root/rl-{uuid.uuid4().hex}; ln -s {path} main; exit 0"
    monkeypatch.setitem(LANGUAGES, "c", dataclasses.replace(LANGUAGES["c"], compile=("/bin/sh", "-c", script)))
    code_languages.clear_build_cache()
    result = verify_code(fenced("c", C_ADD), json.dumps([{"input": "", "output": secret}]))
    assert result.verdict == Verdict.INCORRECT and "compilation failed" in result.detail
    assert not outside.exists() and secret not in result.detail


# ------------------------------------------------------------------------------------------------ attacks per language


PROBES = {
    "c": ('#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n#include <arpa/inet.h>\n#include <sys/socket.h>\n'
          'int main(void) {\n    FILE *f = fopen("@SECRET@", "r"); char buf[256] = {0};\n'
          '    if (f && fgets(buf, sizeof buf, f)) printf("file:%s\\n", buf); else printf("file:denied\\n");\n'
          '    int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a; memset(&a, 0, sizeof a);\n'
          '    a.sin_family = AF_INET; a.sin_port = htons(@PORT@); a.sin_addr.s_addr = htonl(0x7f000001);\n'
          '    printf(s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? "net:connected\\n" : "net:denied\\n");\n'
          '    FILE *p = fopen("@PERSIST@", "r"); printf(p ? "persist:found\\n" : "persist:none\\n");\n'
          '    FILE *w = fopen("@PERSIST@", "w"); if (w) { fputs("x", w); fclose(w); }\n    return 0;\n}\n'),
    "javascript": ("const fs = require('fs'), net = require('net');\nconst out = [];\n"
                   "try { out.push('file:' + fs.readFileSync('@SECRET@', 'utf8')); } catch (e) { out.push('file:denied'); }\n"
                   "out.push(fs.existsSync('@PERSIST@') ? 'persist:found' : 'persist:none');\n"
                   "try { fs.writeFileSync('@PERSIST@', 'x'); } catch (e) {}\n"
                   "const s = net.connect(@PORT@, '127.0.0.1');\n"
                   "s.on('connect', () => { console.log([out[0], 'net:connected', out[1]].join('\\n')); process.exit(0); });\n"
                   "s.on('error', () => { console.log([out[0], 'net:denied', out[1]].join('\\n')); process.exit(0); });\n"),
    "java": ("import java.net.*;\nimport java.nio.file.*;\n\npublic class Main {\n    public static void main(String[] x) throws Exception {\n"
             "        String f; try { f = \"file:\" + new String(Files.readAllBytes(Paths.get(\"@SECRET@\"))); } catch (Exception e) { f = \"file:denied\"; }\n"
             "        String n; try (Socket s = new Socket()) { s.connect(new InetSocketAddress(\"127.0.0.1\", @PORT@), 1000); n = \"net:connected\"; } catch (Exception e) { n = \"net:denied\"; }\n"
             "        String p = Files.exists(Paths.get(\"@PERSIST@\")) ? \"persist:found\" : \"persist:none\";\n"
             "        try { Files.write(Paths.get(\"@PERSIST@\"), \"x\".getBytes()); } catch (Exception e) {}\n"
             "        System.out.println(f + \"\\n\" + n + \"\\n\" + p);\n    }\n}\n"),
    "rust": ("fn main() {\n    let f = match std::fs::read_to_string(\"@SECRET@\") { Ok(s) => format!(\"file:{}\", s), Err(_) => \"file:denied\".to_string() };\n"
             "    let n = if std::net::TcpStream::connect(\"127.0.0.1:@PORT@\").is_ok() { \"net:connected\" } else { \"net:denied\" };\n"
             "    let p = if std::path::Path::new(\"@PERSIST@\").exists() { \"persist:found\" } else { \"persist:none\" };\n"
             "    let _ = std::fs::write(\"@PERSIST@\", \"x\");\n    println!(\"{}\\n{}\\n{}\", f, n, p);\n}\n"),
    "go": ("package main\n\nimport (\n\t\"fmt\"\n\t\"net\"\n\t\"os\"\n)\n\nfunc main() {\n"
           "\tf := \"file:denied\"\n\tif b, err := os.ReadFile(\"@SECRET@\"); err == nil {\n\t\tf = \"file:\" + string(b)\n\t}\n"
           "\tn := \"net:denied\"\n\tif c, err := net.Dial(\"tcp\", \"127.0.0.1:@PORT@\"); err == nil {\n\t\tn = \"net:connected\"\n\t\tc.Close()\n\t}\n"
           "\tp := \"persist:none\"\n\tif _, err := os.Stat(\"@PERSIST@\"); err == nil {\n\t\tp = \"persist:found\"\n\t}\n"
           "\tos.WriteFile(\"@PERSIST@\", []byte(\"x\"), 0644)\n\tfmt.Println(f)\n\tfmt.Println(n)\n\tfmt.Println(p)\n}\n"),
}
PROBES["cpp"] = PROBES["c"]


@pytest.mark.parametrize("language", [lang_param(l) for l in COMPILED])
def test_program_cannot_read_host_files_reach_the_network_or_leave_files(language, secret_file):
    needs(language)
    path, secret = secret_file
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    persist = f"/tmp/rl-persist-{uuid.uuid4().hex}"
    code = PROBES[language].replace("@SECRET@", path).replace("@PORT@", str(listener.getsockname()[1])).replace("@PERSIST@", persist)
    safe = json.dumps([{"input": "", "output": "file:denied\nnet:denied\npersist:none\n"}])
    try:
        for item in range(2):  # the second item must not see the first one's file
            result = verify_code(fenced(language, code), safe, **LIMITS)
            assert result.verdict == Verdict.CORRECT, (item, result.detail)  # every probe was refused
    finally:
        listener.close()
    assert not os.path.exists(persist)


# (language, fork bomb, memory bomb, signals: the parent, init, everything it can reach)
BOMBS = {
    "c": ("#include <unistd.h>\nint main(void) { for (;;) fork(); }\n",
          "#include <stdlib.h>\n#include <string.h>\nint main(void) { for (;;) { char *p = malloc(1 << 26); if (!p) return 3; memset(p, 1, 1 << 26); } }\n",
          "#include <signal.h>\n#include <unistd.h>\n#include <stdio.h>\nint main(void) { kill(getppid(), SIGKILL); kill(1, SIGKILL);"
          " printf(\"ok\\n\"); fflush(stdout); kill(-1, SIGKILL); return 0; }\n"),
    "javascript": ("const cp = require('child_process');\nfor (;;) { try { cp.spawn('/bin/sleep', ['987.654']); } catch (e) {} }\n",
                   "const a = [];\nfor (;;) a.push(new Array(1e6).fill(1.5));\n",
                   "for (const p of [process.ppid, 1]) { try { process.kill(p, 'SIGKILL'); } catch (e) {} }\n"
                   "console.log('ok');\ntry { process.kill(-1, 'SIGKILL'); } catch (e) {}\n"),
    "java": ("public class Main { public static void main(String[] a) { for (;;) { try { new ProcessBuilder(\"/bin/sleep\", \"987.654\").start(); } catch (Exception e) {} } } }\n",
             "import java.util.*;\npublic class Main { public static void main(String[] x) { List<long[]> a = new ArrayList<>(); for (;;) a.add(new long[1 << 24]); } }\n",
             "public class Main { public static void main(String[] x) { ProcessHandle.current().parent().ifPresent(p -> p.destroyForcibly());"
             " ProcessHandle.of(1).ifPresent(p -> p.destroyForcibly()); System.out.println(\"ok\"); System.out.flush();"
             " ProcessHandle.allProcesses().forEach(p -> p.destroyForcibly()); } }\n"),
    "rust": ("fn main() { loop { let _ = std::process::Command::new(\"/bin/sleep\").arg(\"987.654\").spawn(); } }\n",
             "fn main() { let mut v: Vec<Vec<u8>> = Vec::new(); loop { v.push(vec![1u8; 1 << 26]); } }\n",
             "extern \"C\" { fn kill(pid: i32, sig: i32) -> i32; fn getppid() -> i32; }\n"
             "fn main() { unsafe { kill(getppid(), 9); kill(1, 9); } println!(\"ok\"); unsafe { kill(-1, 9); } }\n"),
    "go": ("package main\n\nimport \"os/exec\"\n\nfunc main() {\n\tfor {\n\t\texec.Command(\"/bin/sleep\", \"987.654\").Start()\n\t}\n}\n",
           "package main\n\nfunc main() {\n\tvar a [][]byte\n\tfor {\n\t\tb := make([]byte, 1<<26)\n\t\tfor i := range b {\n\t\t\tb[i] = 1\n\t\t}\n\t\ta = append(a, b)\n\t}\n}\n",
           "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"syscall\"\n)\n\nfunc main() {\n\tsyscall.Kill(os.Getppid(), syscall.SIGKILL)\n"
           "\tsyscall.Kill(1, syscall.SIGKILL)\n\tfmt.Println(\"ok\")\n\tsyscall.Kill(-1, syscall.SIGKILL)\n}\n"),
}
BOMBS["cpp"] = BOMBS["c"]


def _host_processes_with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("language", [lang_param(l) for l in COMPILED])
def test_fork_bombs_memory_bombs_and_signals_stay_inside(language):
    needs(language)
    fork_bomb, memory_bomb, signals = BOMBS[language]
    gold = json.dumps([{"input": "", "output": "ok\n"}])
    start = time.monotonic()
    for name, code in (("fork bomb", fork_bomb), ("memory bomb", memory_bomb)):
        result = verify_code(fenced(language, code), gold, **LIMITS)
        assert result.verdict in (Verdict.INCORRECT, Verdict.TIMEOUT), (name, result.verdict, result.detail)
    assert time.monotonic() - start < 60
    assert not _host_processes_with("987.654")  # the fork bomb's children died with its pid namespace
    result = verify_code(fenced(language, signals), gold, **LIMITS)
    assert result.verdict in (Verdict.CORRECT, Verdict.INCORRECT), result.detail  # a verdict: the caller was not hit
    assert verify_code(fenced("c" if language != "c" else "cpp", C_ADD), ADD_CASES).correct or not _has("c")


def _has(language: str) -> bool:
    try:
        find_toolchain(language)
        return True
    except MissingToolchain:
        return False


# ------------------------------------------------------------------------------------------------ unit tests, spec


def test_unit_tests_cannot_pass_by_exiting_early():
    # a program that exits 0 before the tests ran printed no pass line: incorrect
    needs("c")
    code = "#include <stdlib.h>\n__attribute__((constructor)) static void quit(void) { exit(0); }\nint add(int a, int b) { return a - b; }\n"
    result = verify_code(fenced("c", code), "assert(add(1, 2) == 3);", language="c")
    assert result.verdict == Verdict.INCORRECT and "did not finish" in result.detail


# The pass of unit tests in a compiled language (and JavaScript), attacked by the program under test. Every
# attack below has a wrong `f` (a * K + b + 1); the tests expect f(a, b) = a * K + b. Old design: the tests ran
# in the program's process and passed on a line that echoed the nonce read from stdin.
UNIT_F = {
    "c": "long long f(long long a, long long b) { return a * 5 + b + 1; }\n",
    "cpp": "long long f(long long a, long long b) { return a * 5 + b + 1; }\n",
    "java": "public class Solution {\n    static long f(long a, long b) { return a * 5 + b + 1; }\n@EXTRA@\n}\n",
    "javascript": "function f(a, b) { return a * 5 + b + 1; }\n",
    "rust": "fn f(a: i64, b: i64) -> i64 { a * 5 + b + 1 }\n",
    "go": "package main\n\nimport (\n\t\"bufio\"\n\t\"fmt\"\n\t\"os\"\n)\n\nvar _ = bufio.NewReader\nvar _ = fmt.Print\n"
          "var _ = os.Exit\n\nfunc f(a, b int64) int64 { return a*5 + b + 1 }\n",
}
# print a report-looking line, echo whatever stdin holds (the old nonce) and exit 0 before the tests: from the
# language's code that runs first (a constructor, a static initialiser, init(), top-level code, .init_array)
ECHO_AND_EXIT = {
    "c": ("#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void forge(void) {\n"
          "    char b[128] = {0};\n    printf(\"#rewardlab-check 0 1\\n\");\n"
          "    if (scanf(\"%127s\", b) == 1) printf(\"%s\\n\", b);\n    fflush(stdout);\n    _exit(0);\n}\n"),
    "cpp": ("#include <cstdio>\n#include <iostream>\n#include <string>\n#include <unistd.h>\nstruct Forge { Forge() {\n"
            "    std::cout << \"#rewardlab-check 0 1\" << std::endl;\n"
            "    std::string s; std::getline(std::cin, s); std::cout << s << std::endl; _exit(0);\n} } forge_;\n"),
    "java": ("    static { System.out.println(\"#rewardlab-check 0 true\");\n"
             "        java.util.Scanner in = new java.util.Scanner(System.in);\n"
             "        if (in.hasNext()) System.out.println(in.next());\n        System.out.flush(); System.exit(0); }\n"),
    "javascript": ("process.stdout.write('#rewardlab-check 0 true\\n' + require('fs').readFileSync(0, 'utf8'));\n"
                   "process.exit(0);\n"),
    "rust": ("extern \"C\" fn forge() {\n    use std::io::Write;\n    let mut s = String::new();\n"
             "    let _ = std::io::stdin().read_line(&mut s);\n    print!(\"#rewardlab-check 0 true\\n{}\\n\", s.trim());\n"
             "    let _ = std::io::stdout().flush();\n    std::process::exit(0);\n}\n"
             "#[used]\n#[link_section = \".init_array\"]\nstatic FORGE: extern \"C\" fn() = forge;\n"),
    "go": ("func init() {\n\tfmt.Println(\"#rewardlab-check 0 true\")\n\tline, _ := bufio.NewReader(os.Stdin).ReadString('\\n')\n"
           "\tfmt.Println(line)\n\tos.Exit(0)\n}\n"),
}
# make a failed assertion harmless: the language's assertion machinery replaced by the program's own
NEUTRALISE_ASSERT = {
    "c": "void __assert_fail(const char *a, const char *b, unsigned c, const char *d) { (void)a; (void)b; (void)c; (void)d; }\n",
    "cpp": ("extern \"C\" void __assert_fail(const char *, const char *, unsigned, const char *) noexcept {}\n"
            "#define assert(x) ((void)0)\n"),
    "java": "    static { ClassLoader.getSystemClassLoader().setDefaultAssertionStatus(false); }\n",
    "javascript": ("const rlAssert = require('assert');\nrlAssert.strictEqual = () => {};\nrlAssert.deepStrictEqual = () => {};\n"),
    "rust": "macro_rules! assert_eq { ($($t:tt)*) => {}; }\n",
    "go": "func panic(v interface{}) {}\n",
}
UNIT_GOLD = {
    "c": "    assert(f(2, 3) == 13);\n    assert(f(-1, 4) == -1);", "cpp": "    assert(f(2, 3) == 13);\n    assert(f(-1, 4) == -1);",
    "java": "        assert Solution.f(2, 3) == 13L;\n        assert Solution.f(-1, 4) == -1L;",
    "javascript": "assert.strictEqual(f(2, 3), 13);\nassert.strictEqual(f(-1, 4), -1);",
    "rust": "    assert_eq!(f(2, 3), 13);\n    assert_eq!(f(-1, 4), -1);",
    "go": "\tif f(2, 3) != 13 {\n\t\tpanic(\"f(2, 3)\")\n\t}\n\tif f(-1, 4) != -1 {\n\t\tpanic(\"f(-1, 4)\")\n\t}",
}


def _unit_program(language: str, attack: str) -> str:
    if language == "java":
        return UNIT_F["java"].replace("@EXTRA@", attack)
    if language == "go":
        return UNIT_F["go"] + attack
    return attack + UNIT_F[language] if language in ("c", "cpp") else UNIT_F[language] + attack


@pytest.mark.parametrize("language", [lang_param(x) for x in COMPILED])
@pytest.mark.parametrize("attack", ["echo_and_exit", "neutralise_assert"])
def test_unit_tests_cannot_be_forged_by_the_program(language, attack):
    needs(language)
    honest = _unit_program(language, "").replace("+ 1", "")
    assert verify_code(fenced(language, honest), UNIT_GOLD[language], language=language, **LIMITS).correct
    code = _unit_program(language, (ECHO_AND_EXIT if attack == "echo_and_exit" else NEUTRALISE_ASSERT)[language])
    result = verify_code(fenced(language, code), UNIT_GOLD[language], language=language, **LIMITS)
    assert result.verdict in (Verdict.INCORRECT, Verdict.TIMEOUT), (result.verdict, result.detail)
    assert result.extra.get("passed", 0) < 2


@pytest.mark.parametrize("language", [lang_param(x) for x in COMPILED])
def test_expected_values_never_enter_the_program_under_test(language, monkeypatch):
    # what the program could read (its sources, its binary, its stdin) never holds an expected value: a
    # distinctive one is looked for in everything the sandbox is given
    needs(language)
    seen: list[bytes] = []
    real = code_languages.run_program

    def spy(argv, files, stdin="", limits=None, **program):
        seen.append(repr((argv, files, stdin, program.get("binary_files"))).encode())
        return real(argv, files, stdin, limits, **program)

    monkeypatch.setattr(code_languages, "run_program", spy)
    monkeypatch.setattr(code_languages, "run_cases", lambda argv, stdins, limits=None, **program: (
        seen.append(repr((argv, stdins, program)).encode()) or code_languages.__dict__["_real_run_cases"](argv, stdins, limits, **program)))
    monkeypatch.setitem(code_languages.__dict__, "_real_run_cases", __import__("verifiers.sandbox", fromlist=["x"]).run_cases)
    code_languages.clear_build_cache()
    secret = 918273645  # f(2, 918273635) with f = a * 5 + b
    gold = UNIT_GOLD[language].replace("13", str(secret)).replace("f(2, 3)", "f(2, 918273635)")
    result = verify_code(fenced(language, _unit_program(language, "")), gold, language=language, **LIMITS)
    assert result.verdict == Verdict.INCORRECT and "check 1/2" in result.detail
    program_runs = [blob for blob in seen if b"rewardlab-check" not in blob or b"918273635" in blob]
    assert program_runs and not any(str(secret).encode() in blob for blob in program_runs)


def test_unit_test_checks_report_what_failed_and_refuse_what_cannot_be_judged_apart():
    needs("cpp")
    wrong = verify_code(fenced("cpp", UNIT_F["cpp"]), UNIT_GOLD["cpp"], language="cpp", **LIMITS)
    assert wrong.verdict == Verdict.INCORRECT and wrong.detail.startswith("check 1/2 (assert(f(2, 3) == 13);): got 14")
    # an expected side that needs the solution cannot be evaluated without it: bad gold, naming the fix
    needs_solution = verify_code(fenced("cpp", UNIT_F["cpp"]), "assert(f(2, 3) == f(1, 1) + 7);", language="cpp", **LIMITS)
    assert needs_solution.verdict == Verdict.BAD_GOLD and "without the solution" in needs_solution.detail
    none = verify_code(fenced("cpp", UNIT_F["cpp"]), "f(1, 2);", language="cpp", **LIMITS)
    assert none.verdict == Verdict.BAD_GOLD and "no top-level assertion" in none.detail
    # containers and strings through the expected-value program; a condition reports one bit
    code = "#include <string>\n#include <vector>\nstd::vector<int> v() { return {1, 2}; }\nstd::string s() { return \"a\\nb\"; }\n"
    gold = 'assert(v() == std::vector<int>{1, 2});\nassert(s() == "a\\nb");\nassert(v().size() == 2u);\nassert(!v().empty());'
    assert verify_code(fenced("cpp", code), gold, language="cpp", **LIMITS).correct
    assert not verify_code(fenced("cpp", code), gold.replace("{1, 2}", "{2, 1}"), language="cpp", **LIMITS).correct


def test_reward_spec_and_verify_accept_the_language_option():
    needs("cpp")
    from rewards.spec import build_reward

    reward = build_reward("verifier:code:language=cpp")
    program = "```\n#include <cstdio>\nint main() { long a, b; scanf(\"%ld %ld\", &a, &b); printf(\"%ld\\n\", a + b); }\n```"
    assert reward(["p"], [program], answer=[ADD_CASES]) == [1.0]
    assert verify(program, ADD_CASES, kind="code", language="cpp", timeout=30).correct
    assert verify(program, ADD_CASES, kind="code", timeout=30).verdict != Verdict.CORRECT  # untagged: python


def test_code_environment_runs_tests_in_the_rows_language():
    needs("cpp")
    from rewards.environments import build_env

    env = build_env("code:language=cpp")()
    env.reset({"prompt": "add", "answer": ADD_CASES})
    assert env.run_tests("```cpp\nint main() { return 1; }\n```").startswith("test 1/2")
    env.step("```cpp\n#include <cstdio>\nint main() { long a, b; scanf(\"%ld %ld\", &a, &b); printf(\"%ld\\n\", a + b); }\n```")
    assert env.reward() == 1.0


# ------------------------------------------------------------------------------------------------ the cases' init
# The test cases of one item run in one sandbox whose init starts each case. The adversary is the program: from
# any case it may try to stop, slow, read or limit init (to lose or forge a later case's result), or change what
# the next case starts from (its input file, the program, the folder) - which must make its own item fail
# (incorrect), never pass and never turn into a sandbox error (an error is no reward at all, not a 0).

INIT_ATTACKS_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <unistd.h>
int main(void) {
    long a, b;
    if (scanf("%ld %ld", &a, &b) != 2) return 1;
    const char *hit = "none";
    struct rlimit zero = {0, 0};
    int kinds[] = {RLIMIT_NOFILE, RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NPROC};
    for (int i = 0; i < 5; i++) if (prlimit(1, kinds[i], &zero, NULL) == 0) hit = "prlimit";
    if (open("/proc/1/environ", O_RDONLY) >= 0) hit = "environ";
    if (open("/proc/1/mem", O_RDONLY) >= 0) hit = "mem";
    if (open("/proc/1/fd", O_RDONLY | O_DIRECTORY) >= 0) hit = "fds";
    if (ptrace(PTRACE_ATTACH, 1, 0, 0) == 0) hit = "ptrace";
    setpriority(PRIO_PROCESS, 1, 19);
    int sigs[] = {SIGSTOP, SIGTERM, SIGXCPU, SIGSEGV, SIGKILL};
    for (int i = 0; i < 5; i++) kill(1, sigs[i]);
    printf("%ld\nattacks:%s\n", a + b, hit);
    return 0;
}
"""
THREE_CASES = [(f"{i} {i * 5}\n", f"{i * 6}\nattacks:none\n") for i in (1, 2, 3)]


def _binary(code: str) -> dict[str, bytes]:
    build = code_languages.compile_program("c", {"main.c": code})
    assert build.error is None, build.error
    return build.files


def _run_cases(files: dict[str, bytes], stdins: list[str], **limits) -> list[dict]:
    from verifiers.sandbox import SandboxLimits, run_cases

    runs = run_cases(["./main"], stdins, SandboxLimits(**{**LIMITS, **limits}), binary_files=files, exec_files=["main"])
    return [{"ok": r.ok, "stdout": r.stdout, "stderr": r.stderr, "setup_error": r.setup_error, "exit": r.returncode,
             "signal": r.signal, "timed_out": r.timed_out} for r in runs]


@pytest.mark.parametrize("memory_mb", [512, 48], ids=["init-starts-cases", "init-forks-cases"])
def test_a_case_cannot_stop_slow_read_or_limit_the_init_that_runs_the_next(memory_mb):
    # 512 MiB: init takes the program's limits and starts each case itself; 48 MiB: too little for init's own
    # Python, so each case is forked from a privileged init (both ways hold)
    needs("c")
    files = _binary(INIT_ATTACKS_C)
    runs = _run_cases(files, [stdin for stdin, _ in THREE_CASES], memory_mb=memory_mb)
    assert [r["stdout"] for r in runs] == [out for _, out in THREE_CASES], runs
    assert all(r["ok"] for r in runs), runs


def test_init_attacks_hold_for_an_ordinary_user_too():
    # as an ordinary user the sandbox is a user namespace that maps one id only: init cannot take another saved
    # id than the program's, and the program's seccomp filter refuses prlimit on any process but itself
    needs("c")
    from tests.verifiers.test_code_sandbox import _as_unprivileged_user

    if os.geteuid() != 0:
        pytest.skip("switching to another uid needs root")
    files = _binary(INIT_ATTACKS_C)
    out = _as_unprivileged_user(lambda: {"runs": _run_cases(files, [stdin for stdin, _ in THREE_CASES])})
    if "skip" in out:
        pytest.skip(out["skip"])
    assert "error" not in out, out
    assert [r["stdout"] for r in out["runs"]] == [o for _, o in THREE_CASES], out


# each changes, from the first case, what the second starts from
TAMPERS = {
    "program deleted": "unlink(\"main\");",
    "program replaced by a script": "unlink(\"main\"); FILE *f = fopen(\"main\", \"w\"); fputs(\"#!/bin/sh\\necho 0\\n\", f); fclose(f); chmod(\"main\", 0755);",
    "input made a fifo": "unlink(\"case-1.txt\"); mkfifo(\"case-1.txt\", 0600);",
    "input made a link to init's files": "unlink(\"case-1.txt\"); symlink(\"/proc/1/environ\", \"case-1.txt\");",
    "input deleted": "unlink(\"case-1.txt\");",
    "folder renamed": "rename(\"/tmp/sandbox\", \"/tmp/elsewhere\"); mkdir(\"/tmp/sandbox\", 0755);",
}


@pytest.mark.parametrize("memory_mb", [512, 48], ids=["init-starts-cases", "init-forks-cases"])
@pytest.mark.parametrize("tamper", list(TAMPERS), ids=list(TAMPERS))
def test_a_case_that_changes_what_the_next_starts_from_fails_its_own_item(tamper, memory_mb):
    # a program right on the first case only (prints 0 after it), which then changes what the second starts
    # from: the item is incorrect (the second case did not pass) - never correct, never a sandbox error
    needs("c")
    code = ("#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n#include <sys/stat.h>\n"
            "static int runs(void) { FILE *f = fopen(\"/tmp/runs\", \"a+\"); int n = 0; char c;"
            " while (fread(&c, 1, 1, f) == 1) n++; fputc('x', f); fclose(f); return n; }\n"
            "int main(void) { long a, b; if (scanf(\"%ld %ld\", &a, &b) != 2) return 1;"
            " if (runs() > 0) { printf(\"0\\n\"); return 0; }"
            f" printf(\"%ld\\n\", a + b); fflush(stdout); {TAMPERS[tamper]} return 0; }}\n")
    gold = json.dumps([{"input": "1 2\n", "output": "3\n"}, {"input": "10 -4\n", "output": "6\n"}])
    result = verify_code(fenced("c", code), gold, **LIMITS, memory_mb=memory_mb)
    assert result.verdict == Verdict.INCORRECT, (tamper, result.verdict, result.detail)
    assert result.detail.startswith("test 2/2"), result.detail
