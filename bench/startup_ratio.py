#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Process CPU time of `spotdnn predict` (embedded ResNet-110 preset) divided by a minimal C++ program's.

Usage: startup_ratio.py SPOTDNN MINIMAL [--runs N] [--json]

Runs each program N times (default 200), alternating them so that load from other processes falls on
both alike, and sums each child's CPU time (user + system, from os.wait4's resource usage). Prints the
per-run means and their ratio; with --json one object
{"runs": N, "spotdnn_predict_cpu_s": a, "minimal_cpu_s": b, "ratio": a / b} (per-run means).
Exits 1, with one line on stderr and no ratio, if either program cannot run or exits non-zero.
"""

import argparse
import json
import os
import subprocess
import sys

# The README's predict example: a mixed cluster on the embedded preset.
PREDICT_ARGS = ["predict", "--cluster", "p3.2xlarge=2,g3.8xlarge=4", "--target-loss", "0.8"]


def cpu_seconds(argv):
    """Runs argv once with stdout and stderr to /dev/null; returns its user + system CPU seconds."""
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=null, stderr=null)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError("{} exited {}".format(" ".join(argv), process.returncode))
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spotdnn", help="the spotdnn program (build/X/examples/spotdnn)")
    parser.add_argument("minimal", help="the minimal program (build/X/bench/bench_minimal_process)")
    parser.add_argument("--runs", type=int, default=200, help="runs of each program (default 200)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1, got {}".format(args.runs))

    spotdnn = [os.path.abspath(args.spotdnn)] + PREDICT_ARGS
    minimal = [os.path.abspath(args.minimal)]
    try:
        # One untimed run each: the page cache holds both programs and their libraries before timing.
        cpu_seconds(spotdnn)
        cpu_seconds(minimal)
        spotdnn_s = 0.0
        minimal_s = 0.0
        for _ in range(args.runs):
            spotdnn_s += cpu_seconds(spotdnn)
            minimal_s += cpu_seconds(minimal)
    except (OSError, RuntimeError) as error:
        print("startup_ratio.py: error: {}".format(error), file=sys.stderr)
        return 1
    spotdnn_mean = spotdnn_s / args.runs
    minimal_mean = minimal_s / args.runs
    if minimal_mean <= 0.0:
        print("startup_ratio.py: error: the minimal program used no measurable CPU time in {} runs".format(args.runs),
              file=sys.stderr)
        return 1
    ratio = spotdnn_mean / minimal_mean
    if args.json:
        print(json.dumps({"runs": args.runs, "spotdnn_predict_cpu_s": spotdnn_mean, "minimal_cpu_s": minimal_mean,
                          "ratio": ratio}))
    else:
        print("spotdnn predict: {:.3f} ms CPU per run; minimal C++ program: {:.3f} ms; ratio {:.2f} ({} runs each)".format(
            spotdnn_mean * 1e3, minimal_mean * 1e3, ratio, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
