#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks bench/goals.tsv and scripts/bench's reading of it, without building or running a benchmark.

Usage: /usr/bin/python3 tests/bench_goals_test.py [SOURCE_DIR]   (default: this file's repository)

1. bench/goals.tsv parses, and every row names a CMake target, program or script and a benchmark family
   that exist in the sources (scripts/bench --check).
2. A malformed row is refused with its line number; a benchmark the program lacks prints as "missing";
   a worst-of aggregate, a same-run ratio goal and a script's JSON key are judged as the table says.
3. --readme replaces exactly the text between README.md's markers, and fails without them.
Exits 0 when every check passes, 1 otherwise (each failure on its own line).
"""

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def load_bench():
    loader = importlib.machinery.SourceFileLoader("scripts_bench", os.path.join(ROOT, "scripts", "bench"))
    spec = importlib.util.spec_from_loader("scripts_bench", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def goals_file(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False, encoding="utf-8")
    f.write(text)
    f.close()
    return f.name


def refused(bench, text, words):
    path = goals_file(text)
    try:
        bench.read_goals(path)
    except bench.GoalsError as error:
        return all(w in str(error) for w in words)
    finally:
        os.unlink(path)
    return False


def main():
    done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench"), "--check"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(done.returncode == 0, f"scripts/bench --check exited {done.returncode}:\n{done.stdout.strip()}")

    bench = load_bench()
    rows = bench.read_goals()
    check(len(rows) >= 10, f"bench/goals.tsv has {len(rows)} rows, issue 24's table has at least 10")

    good = ("1\tpaper\tbench_planner\t{build}/bench/bench_planner\tbm:BM_Exact_Paper7x10\tone\t<= 0.1 ms\t"
            "ratio brute BM_BruteForce_Paper7x10 >= 10000\n")
    check(refused(bench, "# header\n1\tcase\tbench_planner\n", ["line 2", "3 tab-separated cells"]),
          "a row with too few cells is not refused with its line number")
    check(refused(bench, good.replace("<= 0.1 ms", "<= 0.1 parsecs"), ["line 1", "goal"]),
          "a goal in an unknown unit is not refused")
    check(refused(bench, good.replace("bm:", "bench:"), ["measure"]), "an unknown measure is not refused")
    check(refused(bench, good + good, ["twice"]), "a repeated row label is not refused")

    path = goals_file(good)
    try:
        (row,) = bench.read_goals(path)
    finally:
        os.unlink(path)
    inv = bench.Invocation()
    inv.results = {"BM_Exact_Paper7x10": 0.08, "BM_BruteForce_Paper7x10/iterations:2": 1000.0}
    now, met, same, error = bench.evaluate(row, inv)
    check((now, met, error) == ("0.0800 ms", "yes", None) and "12,500×" in same,
          f"exact 0.08 ms beside brute force 1000 ms reads {now!r} {met!r} {same!r} {error!r}")
    inv.results["BM_BruteForce_Paper7x10/iterations:2"] = 500.0
    check(bench.evaluate(row, inv)[1] == "**no**", "a same-run ratio of 6,250× passes a goal of >= 10000")
    inv.results = {"BM_Exact_Paper7x10_Other": 0.01}
    check(bench.evaluate(row, inv)[:2] == ("missing", "missing"),
          "a benchmark the program lacks is not printed as missing (or a longer name matched)")

    worst = bench.Row(1, ["4", "seeds", "bench_planner", "{build}/bench/bench_planner",
                          "bm:BM_Exact_Target/types:100/quota:64/seed:.*", "max", "<= 2 ms", "-"])
    inv.results = {f"BM_Exact_Target/types:100/quota:64/seed:{s}": t for s, t in [(1, 0.5), (2, 2.5), (3, 1.0)]}
    inv.results["BM_Exact_Target/types:30/quota:32/seed:1"] = 9.0
    now, met, _, _ = bench.evaluate(worst, inv)
    check(now.startswith("2.50 ms (max of 3: seed:2)") and met == "**no**", f"worst of seeds reads {now!r} {met!r}")
    # A run whose program says "not met: WHY" (a planner search stopped at its step limit) has no time: the
    # row misses its goal with that reason, and nothing failed; the same message without the prefix fails.
    inv.unmet = {"BM_Exact_Target/types:100/quota:64/seed:2": "the search stopped at its step limit"}
    del inv.results["BM_Exact_Target/types:100/quota:64/seed:2"]
    check(bench.evaluate(worst, inv) == ("the search stopped at its step limit", "**no**", "", None),
          f"a stopped search reads {bench.evaluate(worst, inv)!r}")
    inv.unmet = {}
    report = {"benchmarks": [{"name": "BM_A", "run_name": "BM_A", "error_occurred": True,
                              "error_message": bench.NOT_MET + "stopped"},
                             {"name": "BM_B", "run_name": "BM_B", "error_occurred": True, "error_message": "crashed"}]}
    parsed = bench.read_report(report, ["bench_planner"], bench.Invocation())
    check(parsed.unmet == {"BM_A": "stopped"} and parsed.error == "bench_planner: BM_B: crashed",
          f"a not-met run and a failed one read {parsed.unmet!r} {parsed.error!r}")

    script = bench.Row(1, ["8", "fit", "spotdnn_cli", "bench/compare_scipy.py {build}/examples/spotdnn --json",
                           "key:call_ratio", "one", ">= 10 x", "show points"])
    inv.results = {"call_ratio": 12.34, "points": 100000}
    check(bench.evaluate(script, inv)[:3] == ("12.3×", "yes", "points = 100000"),
          f"a script's key reads {bench.evaluate(script, inv)!r}")
    inv.results = {"points": 100000}
    check(bench.evaluate(script, inv)[0] == "missing", "a key the script does not print is not missing")
    inv.error = "bench/compare_scipy.py exited 2"
    check(bench.evaluate(script, inv)[3] == inv.error, "a failed program is not reported as failed")

    path = goals_file("# Title\n\n## Performance\n\n<!-- bench:begin -->\nold\n<!-- bench:end -->\n\n## Next\n")
    bench.README = path
    try:
        bench.rewrite_readme("| row |\n|---|")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        check(text.startswith("# Title\n\n## Performance\n\n<!-- bench:begin -->\n") and "old" not in text
              and "| row |\n|---|\n<!-- bench:end -->\n\n## Next\n" in text,
              f"--readme does not replace exactly the text between the markers:\n{text}")
        with open(path, "w", encoding="utf-8") as f:
            f.write("# Title without markers\n")
        try:
            bench.rewrite_readme("| row |")
            check(False, "--readme on a README without markers does not fail")
        except RuntimeError:
            pass
    finally:
        os.unlink(path)

    for failure in failures:
        print(f"bench_goals_test: FAILED: {failure}")
    if not failures:
        print("bench_goals_test: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
