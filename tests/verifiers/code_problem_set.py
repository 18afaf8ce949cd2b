"""A canonical-solution set for every language of the `code` kind, generated from problem templates.

Six templates (five read stdin and print, one is a function checked by unit tests in the language) times five
constants K give 30 problems per language. Every problem has its canonical solution, written per language, and
wrong variants made from the same text: `off_by_one` (K + 1), `wrong_format` (an "answer: " prefix),
`too_slow` (an endless loop before the work), `crash` (a segfault, an exception or a panic). The test cases
come from a seeded generator and always hold elements equal to K and K + 1 (and a sum other than 0), so that every wrong variant differs on them.

Used by tests/verifiers/test_code_languages.py (a few problems per language) and bench/code_languages.py (all).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

KS = (2, 3, 5, 7, 11)
VARIANTS = ("correct", "off_by_one", "wrong_format", "too_slow", "crash")

# per language: (stdin skeleton, {template: body}, slow statement, crash statement, unit function, unit test line)
C_READ = ("#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n    int n; if (scanf(\"%d\", &n) != 1) return 1;\n"
          "    long long a[64]; for (int i = 0; i < n; i++) scanf(\"%lld\", &a[i]);\n    @SLOW@\n    @CRASH@\n    @BODY@\n"
          "    return 0;\n}\n")
CPP_READ = ("#include <cstdio>\n#include <iostream>\n#include <vector>\nint main() {\n    int n; std::cin >> n;\n"
            "    std::vector<long long> a(n); for (auto &x : a) std::cin >> x;\n    @SLOW@\n    @CRASH@\n    @BODY@\n"
            "    return 0;\n}\n")
C_BODIES = {
    "sum_plus": 'long long s = @K@; for (int i = 0; i < n; i++) s += a[i]; printf("@PRE@%lld\\n", s);',
    "max_times": 'long long m = a[0]; for (int i = 1; i < n; i++) if (a[i] > m) m = a[i]; printf("@PRE@%lld\\n", m * @K@);',
    "count_greater": 'int c = 0; for (int i = 0; i < n; i++) if (a[i] > @K@) c++; printf("@PRE@%d\\n", c);',
    "shift_reverse": 'printf("@PRE@"); for (int i = n - 1; i >= 0; i--) printf(i == n - 1 ? "%lld" : " %lld", a[i] + @K@); printf("\\n");',
    "mean_scaled": 'double s = 0; for (int i = 0; i < n; i++) s += a[i]; printf("@PRE@%.6f\\n", s / n * @K@);',
}
C_SLOW = "for (volatile unsigned long rl_i = 0;; rl_i++) {}"
C_CRASH = "{ volatile int *rl_p = 0; *rl_p = 1; }"
C_UNIT = "long long f(long long a, long long b) {\n    @SLOW@\n    @CRASH@\n    return a * @K@ + b;\n}\n"

LANGS: dict[str, dict] = {
    "python": dict(
        read="import sys\nd = list(map(int, sys.stdin.read().split()))\nn = d[0]\na = d[1:1 + n]\n@SLOW@\n@CRASH@\n@BODY@\n",
        bodies={
            "sum_plus": 'print("@PRE@" + str(sum(a) + @K@))',
            "max_times": 'print("@PRE@" + str(max(a) * @K@))',
            "count_greater": 'print("@PRE@" + str(sum(1 for x in a if x > @K@)))',
            "shift_reverse": 'print("@PRE@" + " ".join(str(x + @K@) for x in reversed(a)))',
            "mean_scaled": 'print("@PRE@" + "%.6f" % (sum(a) / n * @K@))',
        },
        slow="while True: pass", crash="raise RuntimeError('crash')",
        unit="def f(a, b):\n    @SLOW@\n    @CRASH@\n    return a * @K@ + b\n",
        test="assert f(@A@, @B@) == @R@"),
    "c": dict(read=C_READ, bodies=C_BODIES, slow=C_SLOW, crash=C_CRASH, unit=C_UNIT, test="    assert(f(@A@, @B@) == @R@);"),
    "cpp": dict(read=CPP_READ, bodies=C_BODIES, slow=C_SLOW, crash=C_CRASH, unit=C_UNIT, test="    assert(f(@A@, @B@) == @R@);"),
    "java": dict(
        read=("import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n"
              "        Scanner in = new Scanner(System.in);\n        int n = in.nextInt();\n        long[] a = new long[n];\n"
              "        for (int i = 0; i < n; i++) a[i] = in.nextLong();\n        @SLOW@\n        @CRASH@\n        @BODY@\n    }\n}\n"),
        bodies={
            "sum_plus": 'long s = @K@; for (long x : a) s += x; System.out.println("@PRE@" + s);',
            "max_times": 'long m = a[0]; for (long x : a) m = Math.max(m, x); System.out.println("@PRE@" + (m * @K@));',
            "count_greater": 'int c = 0; for (long x : a) if (x > @K@) c++; System.out.println("@PRE@" + c);',
            "shift_reverse": ('StringBuilder sb = new StringBuilder("@PRE@"); for (int i = n - 1; i >= 0; i--) '
                              '{ if (i < n - 1) sb.append(\' \'); sb.append(a[i] + @K@); } System.out.println(sb);'),
            "mean_scaled": 'double s = 0; for (long x : a) s += x; System.out.println(String.format("@PRE@%.6f", s / n * @K@));',
        },
        slow="while (System.nanoTime() != 0) {}", crash='if (System.nanoTime() != 0) throw new RuntimeException("crash");',
        unit="public class Solution {\n    static long f(long a, long b) {\n        @SLOW@\n        @CRASH@\n        return a * @K@ + b;\n    }\n}\n",
        test="        assert Solution.f(@A@, @B@) == @R@L;"),
    "javascript": dict(
        read=("const d = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconst n = d[0];\n"
              "const a = d.slice(1, 1 + n);\n@SLOW@\n@CRASH@\n@BODY@\n"),
        bodies={
            "sum_plus": 'let s = @K@; for (const x of a) s += x; console.log("@PRE@" + s);',
            "max_times": 'console.log("@PRE@" + (Math.max(...a) * @K@));',
            "count_greater": 'console.log("@PRE@" + a.filter((x) => x > @K@).length);',
            "shift_reverse": 'console.log("@PRE@" + a.slice().reverse().map((x) => x + @K@).join(" "));',
            "mean_scaled": 'console.log("@PRE@" + (a.reduce((p, x) => p + x, 0) / n * @K@).toFixed(6));',
        },
        slow="while (true) {}", crash='throw new Error("crash");',
        unit="function f(a, b) {\n    @SLOW@\n    @CRASH@\n    return a * @K@ + b;\n}\n",
        test="assert.strictEqual(f(@A@, @B@), @R@);"),
    "rust": dict(
        read=("use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n"
              "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
              "    let n = v[0] as usize;\n    let a = &v[1..1 + n];\n    @SLOW@\n    @CRASH@\n    @BODY@\n}\n"),
        bodies={
            "sum_plus": 'let t: i64 = a.iter().sum::<i64>() + @K@; println!("@PRE@{}", t);',
            "max_times": 'println!("@PRE@{}", a.iter().max().unwrap() * @K@);',
            "count_greater": 'println!("@PRE@{}", a.iter().filter(|&&x| x > @K@).count());',
            "shift_reverse": 'let o: Vec<String> = a.iter().rev().map(|x| (x + @K@).to_string()).collect(); println!("@PRE@{}", o.join(" "));',
            "mean_scaled": 'let t: i64 = a.iter().sum(); println!("@PRE@{:.6}", t as f64 / n as f64 * @K@ as f64);',
        },
        slow="loop { std::hint::black_box(0); }", crash='if std::hint::black_box(true) { panic!("crash"); }',
        unit="fn f(a: i64, b: i64) -> i64 {\n    @SLOW@\n    @CRASH@\n    a * @K@ + b\n}\n",
        test="    assert_eq!(f(@A@, @B@), @R@);"),
    "go": dict(
        read=("package main\n\nimport (\n\t\"bufio\"\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tr := bufio.NewReader(os.Stdin)\n"
              "\tvar n int\n\tfmt.Fscan(r, &n)\n\ta := make([]int64, n)\n\tfor i := range a {\n\t\tfmt.Fscan(r, &a[i])\n\t}\n"
              "\t@SLOW@\n\t@CRASH@\n\t@BODY@\n}\n"),
        bodies={
            "sum_plus": 's := int64(@K@); for _, x := range a { s += x }; fmt.Printf("@PRE@%d\\n", s)',
            "max_times": 'm := a[0]; for _, x := range a { if x > m { m = x } }; fmt.Printf("@PRE@%d\\n", m*@K@)',
            "count_greater": 'c := 0; for _, x := range a { if x > @K@ { c++ } }; fmt.Printf("@PRE@%d\\n", c)',
            "shift_reverse": ('out := []byte("@PRE@"); for i := n - 1; i >= 0; i-- { if i < n-1 { out = append(out, \' \') }; '
                              'out = append(out, fmt.Sprint(a[i]+@K@)...) }; fmt.Println(string(out))'),
            "mean_scaled": 's := 0.0; for _, x := range a { s += float64(x) }; fmt.Printf("@PRE@%.6f\\n", s/float64(n)*@K@)',
        },
        slow="for {\n\t}", crash='if len(os.Args) > 0 {\n\t\tpanic("crash")\n\t}',
        unit="package main\n\nimport \"os\"\n\nvar _ = os.Args\n\nfunc f(a, b int64) int64 {\n\t@SLOW@\n\t@CRASH@\n\treturn a*@K@ + b\n}\n",
        test='\tif f(@A@, @B@) != @R@ {\n\t\tpanic("f(@A@, @B@) != @R@")\n\t}'),
}
TEMPLATES = ("sum_plus", "max_times", "count_greater", "shift_reverse", "mean_scaled", "unit")


@dataclass(frozen=True)
class Problem:
    """One problem of one language: the gold (JSON cases or unit-test code), the comparator, the programs."""

    language: str
    name: str  # template/K
    gold: str
    compare: str
    programs: dict[str, str]  # variant -> source (unit-test problems have no wrong_format variant)


def _answer(template: str, k: int, a: list[int]) -> str:
    if template == "sum_plus":
        return f"{sum(a) + k}\n"
    if template == "max_times":
        return f"{max(a) * k}\n"
    if template == "count_greater":
        return f"{sum(x > k for x in a)}\n"
    if template == "shift_reverse":
        return " ".join(str(x + k) for x in reversed(a)) + "\n"
    return "%.6f\n" % (sum(a) / len(a) * k)


def _cases(template: str, k: int, rng: random.Random) -> list[dict[str, str]]:
    cases = []
    while len(cases) < 3:
        a = [rng.randint(-20, 20) for _ in range(rng.randint(1, 7))] + [k, k + 1]
        if sum(a) == 0:  # the mean would not tell K from K + 1
            continue
        rng.shuffle(a)
        cases.append({"input": f"{len(a)}\n{' '.join(map(str, a))}\n", "output": _answer(template, k, a)})
    return cases


def _fill(text: str, **parts: str) -> str:
    for key, value in parts.items():
        text = text.replace(f"@{key}@", value)
    return text


def problems(language: str, seed: int = 0) -> list[Problem]:
    """The 30 problems of `language` (fixed by `seed`)."""
    spec, out = LANGS[language], []
    for t_index, template in enumerate(TEMPLATES):
        for k in KS:
            rng = random.Random(f"{seed}/{template}/{k}")
            if template == "unit":
                pairs = [(rng.choice((-1, 1)) * rng.randint(1, 50), rng.randint(-50, 50)) for _ in range(4)]
                gold = "\n".join(_fill(spec["test"], A=str(x), B=str(y), R=str(x * k + y)) for x, y in pairs)
                make = lambda kk, slow="", crash="": _fill(spec["unit"], K=str(kk), SLOW=slow, CRASH=crash)  # noqa: E731
                programs = {"correct": make(k), "off_by_one": make(k + 1), "too_slow": make(k, slow=spec["slow"]),
                            "crash": make(k, crash=spec["crash"])}
                out.append(Problem(language, f"{template}/{k}", gold, "lines", programs))
                continue
            gold = json.dumps(_cases(template, k, rng))
            body = spec["bodies"][template]
            make = lambda kk, pre="", slow="", crash="": _fill(spec["read"], BODY=_fill(body, K=str(kk), PRE=pre),  # noqa: E731
                                                               SLOW=slow, CRASH=crash)
            programs = {"correct": make(k), "off_by_one": make(k + 1), "wrong_format": make(k, pre="answer: "),
                        "too_slow": make(k, slow=spec["slow"]), "crash": make(k, crash=spec["crash"])}
            compare = "floats" if template == "mean_scaled" else "lines"
            out.append(Problem(language, f"{template}/{k}", gold, compare, programs))
    return out


def fenced(language: str, code: str) -> str:
    """A completion holding `code` in a block tagged with the language."""
    return f"Here is my solution.\n```{language}\n{code}```\n"
