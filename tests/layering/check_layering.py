#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks the house rules the compiler cannot: includes run one way through the pipeline, each heavy
dependency is included only where it is used, and no file refers outside the repository.

Usage: check_layering.py REPOSITORY_ROOT. Prints every violation on its own line and exits 1 if any.

Layers, lowest first; a header may include headers of its own layer or of a lower one:
  base        errors, status, units, limits, version, progress, and detail/ (which includes only base)
  data        catalog, availability_zone, region_choice, placement_score, cluster, workload, presets
  model/ -> fit/ -> plan/ (with plan/detail/) -> revocation/ -> serverless/ -> io/ -> launcher/
  umbrellas   planner.hpp, revocation.hpp, fit.hpp, launcher.hpp, serverless.hpp (include anything)

<spotdnn/planner.hpp> (model, planners, presets) needs the standard library alone: it must not reach a
third-party header, a spotdnn header above plan/, or the heavy standard headers of I/O and threads.
"""
import pathlib
import re
import subprocess
import sys

LAYERS = ["base", "data", "model", "fit", "plan", "revocation", "serverless", "io", "launcher", "umbrella"]
BASE_FILES = {"errors.hpp", "status.hpp", "units.hpp", "limits.hpp", "version.hpp", "progress.hpp"}
DATA_FILES = {"catalog.hpp", "availability_zone.hpp", "region_choice.hpp", "placement_score.hpp", "cluster.hpp", "workload.hpp", "presets.hpp"}
UMBRELLAS = {"planner.hpp", "revocation.hpp", "fit.hpp", "launcher.hpp", "serverless.hpp"}

# Which folders (layers) may include each third-party library directly.
THIRD_PARTY = {
    "ceres/": {"fit"},
    "glog/": {"fit"},
    "Eigen/": {"fit"},
    "nlohmann/": {"io", "launcher"},
    "csv.h": {"io"},
    "boost/math/distributions/students_t": {"fit"},
    "boost/math/distributions/beta": {"revocation"},
    "boost/": {"fit", "revocation"},
}

# Single headers outside those folders that may include a library anyway, and which ones (prefixes).
# serverless/profile_fit.hpp fits the FasDL function-time coefficients with Ceres: it sits beside the model
# it differentiates (serverless/function_time.hpp); every other serverless header (planning) stays Ceres-free.
THIRD_PARTY_FILE_EXCEPTIONS = {
    "serverless/profile_fit.hpp": {"ceres/", "glog/", "Eigen/", "boost/math/distributions/students_t"},
}

# What <spotdnn/planner.hpp> must not pull in, directly or through another header: third-party headers
# (prefixes), standard headers (exact names) and spotdnn layers above plan/.
PLANNER_MUST_NOT_REACH = ["ceres/", "glog/", "Eigen/", "boost/", "nlohmann/", "csv.h", "libfccp/"]
PLANNER_MUST_NOT_REACH_STD = {"iostream", "istream", "ostream", "sstream", "fstream", "thread", "mutex", "atomic",
                              "condition_variable", "future", "random", "regex", "locale", "system_error"}
PLANNER_MUST_NOT_REACH_LAYERS = ["revocation", "serverless", "io", "launcher"]

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def layer_of(relative: str) -> str:
    """The layer of a header given relative to include/spotdnn/."""
    parts = relative.split("/")
    if len(parts) == 1:
        if relative in BASE_FILES:
            return "base"
        if relative in DATA_FILES:
            return "data"
        if relative in UMBRELLAS:
            return "umbrella"
        return "unassigned"
    folder = parts[0]
    if folder == "detail":
        return "base"
    return folder if folder in LAYERS else "unassigned"


def check_includes(include_root: pathlib.Path, problems: list) -> dict:
    graph = {}
    for path in sorted(include_root.rglob("*.hpp")):
        relative = path.relative_to(include_root).as_posix()
        layer = layer_of(relative)
        if layer == "unassigned":
            problems.append(f"{relative}: in no layer: put it in the folder of its stage (see tests/layering/check_layering.py)")
            continue
        text = path.read_text(encoding="utf-8")
        graph[relative] = []
        for included in INCLUDE.findall(text):
            if included.startswith("spotdnn/"):
                target = included[len("spotdnn/"):]
                graph[relative].append(target)
                target_layer = layer_of(target)
                if relative.startswith("detail/") and target_layer != "base":
                    problems.append(f"{relative}: includes {included}: detail/ includes only base headers")
                elif target_layer in LAYERS and LAYERS.index(target_layer) > LAYERS.index(layer):
                    problems.append(f"{relative} ({layer}) includes {included} ({target_layer}): includes must run "
                                    f"one way, {' -> '.join(LAYERS[:-1])}")
                continue
            graph[relative].append("@" + included)
            for prefix, allowed in THIRD_PARTY.items():
                if included.startswith(prefix):
                    excepted = any(included.startswith(e) for e in THIRD_PARTY_FILE_EXCEPTIONS.get(relative, ()))
                    if layer not in allowed and layer != "umbrella" and not excepted:
                        problems.append(f"{relative}: includes <{included}>, which only {', '.join(sorted(allowed))}/ may include")
                    break
    return graph


def reach(graph: dict, start: str) -> set:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        for target in graph.get(node, []):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def check_planner(graph: dict, problems: list) -> None:
    reached = reach(graph, "planner.hpp")
    for prefix in PLANNER_MUST_NOT_REACH:
        hits = sorted(t[1:] for t in reached if t.startswith("@" + prefix))
        if hits:
            problems.append(f"planner.hpp reaches <{hits[0]}>: planning must not need {prefix.rstrip('/')}")
    for name in sorted(PLANNER_MUST_NOT_REACH_STD):
        if "@" + name in reached:
            problems.append(f"planner.hpp reaches <{name}>: planning must not need it (include it where it is used)")
    for target in sorted(t for t in reached if not t.startswith("@")):
        if layer_of(target) in PLANNER_MUST_NOT_REACH_LAYERS:
            problems.append(f"planner.hpp reaches spotdnn/{target}: it belongs in its own umbrella (e.g. revocation.hpp)")


OUTSIDE = re.compile(r"design(\.md)?\s*§|\bdesign\.md\b|\.\./shared\b|shared/data/|§\s*\d+(\.\d+)?\b")


def check_stands_alone(root: pathlib.Path, problems: list) -> None:
    files = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard"], check=True,
                           capture_output=True, text=True).stdout.split()
    for name in files:
        path = root / name
        if name.startswith("tests/golden/") or not path.is_file() or path.suffix in {".png", ".pdf", ".gz"}:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if name == "tests/layering/check_layering.py":
                break
            if OUTSIDE.search(line):
                problems.append(f"{name}:{number}: refers outside the repository: {line.strip()[:120]}")


def main() -> int:
    root = pathlib.Path(sys.argv[1]).resolve()
    problems = []
    graph = check_includes(root / "include" / "spotdnn", problems)
    check_planner(graph, problems)
    check_stands_alone(root, problems)
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s) in {len(graph)} headers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
