#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Peer comparison for `spotdnn serverless fit`: FasDL fits its function-time model (docs/model.md eq. (S1))
with SciPy. This script generates the same synthetic Lambda traces for both (a = 60, b = 8, m = 200, k1 = 20,
k2 = -0.8; batches 8..128 x memories 512..3008 MB, plus larger grids), fits them with
scipy.optimize.least_squares (Levenberg-Marquardt, tolerances 1e-15, started from the truth x 1.2: an
advantage spotdnn does not get, it finds its own start) and with the CLI, and prints the coefficient
agreement and the time ratio.

Usage: /usr/bin/python3 bench/compare_scipy_serverless.py PATH/TO/spotdnn[-fit] [--repeat R] [--check TOL]

Timing (wall clock, best of --repeat runs), against the two least_squares calls alone on arrays in memory:
  1. "process vs call": the whole spotdnn process (exec, loading Ceres, CSV, scans, both solves, covariance,
     JSON output);
  2. "call vs call": spotdnn's own fit.solve_time_s (the fit_serverless_profile call: checks, both scans,
     every start's solve, covariance, R^2; no CSV).
With --check TOL the script exits 1 when any coefficient differs from SciPy's by more than TOL relative to
max(|SciPy's value|, its standard error) (the relative form alone would be unfair to a coefficient near 0).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    from scipy.optimize import least_squares
except ImportError as missing:  # ctest reads exit code 77 as "skipped"
    print(f"skipped: {missing}")
    sys.exit(77)

TRUTH = {"a": 60.0, "b": 8.0, "m": 200.0, "k1": 20.0, "k2": -0.8}
NAMES = ["a", "b", "m", "k1", "k2"]


def train_time(batch, memory, a, b, m):
    return a * (batch + b) / (memory + m)


def transform_time(memory, k1, k2):
    return k1 * memory ** k2


def make_trace(batches, memories, noise, seed, repeats=1):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(repeats):
        for memory in memories:
            for batch in batches:
                t = train_time(batch, memory, TRUTH["a"], TRUTH["b"], TRUTH["m"])
                rows.append((batch, memory, t * (1 + noise * rng.standard_normal()), None))
            t = transform_time(memory, TRUTH["k1"], TRUTH["k2"])
            rows.append((None, memory, None, t * (1 + noise * rng.standard_normal())))
    return rows


def write_csv(rows, path):
    with open(path, "w") as out:
        out.write("batch,memory_mb,train_time_s,transform_time_s\n")
        for batch, memory, train, transform in rows:
            cell = lambda v: "" if v is None else f"{v:.17g}"
            out.write(f"{cell(batch)},{cell(memory)},{cell(train)},{cell(transform)}\n")


def run_spotdnn(cli, path, relative):
    args = [cli, "serverless", "fit", "--trace", path, "--model-size-mb", "97.5", "--samples-per-epoch", "50000",
            "--format", "json"] + (["--relative"] if relative else [])
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"spotdnn failed ({done.returncode}): {done.stderr.strip() or done.stdout[:400]}")
    doc = json.loads(done.stdout)
    return {k: doc[k] for k in NAMES}, {k: doc["fit"][k]["std_error"] for k in NAMES}, elapsed, doc["fit"]["solve_time_s"]


def run_scipy(rows, relative):
    train = np.array([(b, m, t) for b, m, t, _ in rows if t is not None])
    trans = np.array([(m, t) for _, m, _, t in rows if t is not None])
    tol = dict(ftol=1e-15, xtol=1e-15, gtol=1e-15, max_nfev=100000, method="lm")
    started = time.perf_counter()

    def r_train(p):
        f = train_time(train[:, 0], train[:, 1], *p)
        return (f - train[:, 2]) / (train[:, 2] if relative else 1.0)

    def r_trans(p):
        f = transform_time(trans[:, 0], *p)
        return (f - trans[:, 1]) / (trans[:, 1] if relative else 1.0)

    fit_train = least_squares(r_train, [TRUTH["a"] * 1.2, TRUTH["b"] * 1.2, TRUTH["m"] * 1.2], **tol)
    fit_trans = least_squares(r_trans, [TRUTH["k1"] * 1.2, TRUTH["k2"] * 1.2], **tol)
    elapsed = time.perf_counter() - started
    values = dict(zip(NAMES, list(fit_train.x) + list(fit_trans.x)))
    return values, elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cli")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--check", type=float, default=None, metavar="TOL")
    args = parser.parse_args()
    cases = [
        ("5 batches x 6 memories, no noise", [8, 16, 32, 64, 128], [512, 1024, 1536, 2048, 2560, 3008], 0.0, 1, False),
        ("5 x 6, 2% noise, absolute", [8, 16, 32, 64, 128], [512, 1024, 1536, 2048, 2560, 3008], 0.02, 1, False),
        ("5 x 6, 2% noise, relative", [8, 16, 32, 64, 128], [512, 1024, 1536, 2048, 2560, 3008], 0.02, 1, True),
        ("8 x 20 x 10 repeats, 5% noise", [4, 8, 16, 32, 64, 128, 256, 512], list(range(512, 10241, 512)), 0.05, 10, False),
    ]
    worst = 0.0
    print(f"{'case':34} {'coef':>4} {'truth':>9} {'spotdnn':>14} {'scipy':>14} {'rel. diff':>10} {'std. error':>11}")
    with tempfile.TemporaryDirectory() as workdir:
        for label, batches, memories, noise, repeats, relative in cases:
            rows = make_trace(batches, memories, noise, seed=2025, repeats=repeats)
            path = os.path.join(workdir, "trace.csv")
            write_csv(rows, path)
            t_spot = t_scipy = t_call = float("inf")
            for _ in range(args.repeat):
                spot, errors, elapsed, call = run_spotdnn(args.cli, path, relative)
                t_spot = min(t_spot, elapsed)
                t_call = min(t_call, call)
                scipy_values, elapsed = run_scipy(rows, relative)
                t_scipy = min(t_scipy, elapsed)
            for k in NAMES:
                error = errors[k] if errors[k] is not None else 0.0
                diff = abs(spot[k] - scipy_values[k]) / max(abs(scipy_values[k]), error, 1e-300)
                worst = max(worst, diff)
                print(f"{label:34} {k:>4} {TRUTH[k]:9.4g} {spot[k]:14.9g} {scipy_values[k]:14.9g} {diff:10.2e} {error:11.3g}")
            print(f"{'':34} time ({len(rows)} rows): SciPy calls {t_scipy * 1e3:.2f} ms; spotdnn process {t_spot * 1e3:.1f} ms "
                  f"(ratio {t_spot / t_scipy:.2f}), spotdnn call {t_call * 1e3:.2f} ms (ratio {t_call / t_scipy:.2f})")
    print(f"largest relative difference from SciPy: {worst:.2e}")
    if args.check is not None and not worst <= args.check:
        print(f"FAIL: above the tolerance {args.check:g}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
