#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Peer comparison for `spotdnn fit loss` (issue #4): the spotDNN prototype fits the loss model with SciPy's
curve_fit. This script generates the same loss traces for both, fits them with scipy.optimize.curve_fit and
with the spotdnn CLI, and prints parameter agreement and the time ratio.

Usage: /usr/bin/python3 bench/compare_scipy.py PATH/TO/spotdnn [--points N] [--noise SIGMA] [--repeat R]

Timing (wall clock, best of --repeat runs):
  * spotdnn: the whole CLI process (start-up, CSV parsing, grid start, 3 Levenberg-Marquardt solves,
    covariance), `spotdnn fit loss --trace F.csv --format json`;
  * SciPy: curve_fit alone on arrays already in memory (Levenberg-Marquardt, finite-difference Jacobian,
    started from the truth scaled by 1.2 - SciPy gets no start-up, parsing or start search), and separately
    numpy.loadtxt of the same CSV, so both can be compared with or without I/O.
Both use tolerances of 1e-15 so that they stop at the same optimum rather than at their defaults.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.optimize import curve_fit

TRUTH = np.array([876.5, -0.2, 2507.6, 0.5])  # the ResNet-110 preset's gamma (seed form), design §5
RUNS = [("n1", 1, 512.0), ("n2", 2, 1024.0), ("n4", 4, 1536.0), ("n8", 8, 2048.0)]


def seed_form(x, g1, g2, g3, g4):
    j, n, b = x
    return (g2 * b + g3) * np.sqrt(n) / (j + g1) + g4


def make_trace(points, noise, seed):
    rng = np.random.default_rng(seed)
    per_run = points // len(RUNS)
    rows = []
    for name, n, b in RUNS:
        j = np.linspace(0.0, 20000.0, per_run)
        f = seed_form((j, n, b), *TRUTH)
        if noise > 0:
            f = f * (1.0 + noise * rng.standard_normal(per_run))
        rows.append((name, np.full(per_run, n), np.full(per_run, b), j, f))
    return rows


def write_csv(rows, path):
    with open(path, "w") as out:
        out.write("run,workers,weighted_batch,iteration,loss\n")
        for name, n, b, j, f in rows:
            for k in range(len(j)):
                out.write(f"{name},{int(n[k])},{b[k]:.17g},{j[k]:.17g},{f[k]:.17g}\n")


def run_spotdnn(cli, path):
    started = time.perf_counter()
    done = subprocess.run([cli, "fit", "loss", "--trace", path, "--format", "json"], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"spotdnn failed ({done.returncode}): {done.stderr.strip() or done.stdout[:400]}")
    report = json.loads(done.stdout)
    gamma = np.array([p["value"] for p in report["fit"]["parameters"]])
    return gamma, elapsed, report["fit"]


def run_scipy(rows):
    j = np.concatenate([r[3] for r in rows])
    n = np.concatenate([r[1] for r in rows])
    b = np.concatenate([r[2] for r in rows])
    y = np.concatenate([r[4] for r in rows])
    started = time.perf_counter()
    popt, pcov = curve_fit(seed_form, (j, n, b), y, p0=TRUTH * 1.2, ftol=1e-15, xtol=1e-15, gtol=1e-15, maxfev=100000)
    return popt, time.perf_counter() - started, np.sqrt(np.diag(pcov))


def compare(cli, points, noise, repeat, workdir):
    rows = make_trace(points, noise, seed=2023)
    path = os.path.join(workdir, f"trace_{points}_{noise}.csv")
    write_csv(rows, path)
    best_spot = best_scipy = best_load = float("inf")
    for _ in range(repeat):
        gamma, t_spot, report = run_spotdnn(cli, path)
        popt, t_scipy, perr = run_scipy(rows)
        started = time.perf_counter()
        np.loadtxt(path, delimiter=",", skiprows=1, usecols=(1, 2, 3, 4))
        t_load = time.perf_counter() - started
        best_spot, best_scipy, best_load = min(best_spot, t_spot), min(best_scipy, t_scipy), min(best_load, t_load)
    rel = np.abs(gamma - popt) / np.abs(popt)
    print(f"\n== {len(rows) * len(rows[0][3])} points, noise {noise:g} (relative), status {report['status']}")
    print(f"{'':8}{'truth':>14}{'spotdnn':>22}{'scipy':>22}{'rel. diff':>12}{'se spotdnn':>14}{'se scipy':>14}")
    se = [p["standard_error"] for p in report["parameters"]]
    for k in range(4):
        print(f"gamma{k + 1:<3}{TRUTH[k]:>14.6g}{gamma[k]:>22.15g}{popt[k]:>22.15g}{rel[k]:>12.2e}"
              f"{(se[k] if se[k] is not None else float('nan')):>14.4g}{perr[k]:>14.4g}")
    print(f"max relative difference of gamma: {rel.max():.2e} (target <= 1e-6)")
    print(f"time: spotdnn CLI {best_spot * 1e3:.1f} ms (whole process, incl. CSV); scipy curve_fit {best_scipy * 1e3:.1f} ms "
          f"(+ numpy.loadtxt {best_load * 1e3:.1f} ms)")
    print(f"speed-up: {best_scipy / best_spot:.2f}x vs curve_fit alone, {(best_scipy + best_load) / best_spot:.2f}x incl. CSV loading"
          f" (best of {repeat})")
    return rel.max(), best_scipy / best_spot


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cli", help="path of the spotdnn executable")
    parser.add_argument("--points", type=int, default=100000, help="points of the large trace")
    parser.add_argument("--noise", type=float, default=0.01, help="relative noise of the large trace")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (best is kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        compare(args.cli, 164, 0.0, args.repeat, workdir)          # clean data: same optimum (the truth)
        compare(args.cli, 164, 0.05, args.repeat, workdir)         # noisy small trace
        compare(args.cli, args.points, 0.0, args.repeat, workdir)  # large clean trace
        compare(args.cli, args.points, args.noise, args.repeat, workdir)


if __name__ == "__main__":
    main()
