#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Peer comparison for `spotdnn fit loss` (issue #4): the spotDNN prototype fits the loss model with SciPy's
curve_fit. This script generates the same loss traces for both, fits them with scipy.optimize.curve_fit and
with the spotdnn CLI, and prints parameter agreement and the time ratio.

Usage: /usr/bin/python3 bench/compare_scipy.py PATH/TO/spotdnn [--points N] [--noise SIGMA] [--repeat R] [--json]

With --json it fits only the large noisy trace (--points, --noise; best of --repeat runs, 3 by default there)
and prints one JSON object instead of the tables: {"points", "noise", "repeat", "curve_fit_call_s",
"spotdnn_fit_call_s", "spotdnn_process_s", "scipy_process_s", "call_ratio" (curve_fit call / spotdnn's
solve_time_s), "process_ratio" (curve_fit call / the whole spotdnn process), "process_process_ratio",
"max_relative_difference"} (times in seconds).

Timing (wall clock, best of --repeat runs), three ratios, from strictest for spotdnn to like-for-like:
  1. "process vs call": the whole spotdnn CLI process (exec, dynamic loading, CSV parsing, start search,
     Levenberg-Marquardt, covariance, JSON output: `spotdnn fit loss --trace F.csv --format json`) against
     the curve_fit call alone on arrays already in memory. This charges spotdnn for work SciPy is not
     charged for; it is the number the issue's 3x target was first stated against.
  2. "call vs call" (fair, in-process): spotdnn's own `solve_time_s` (the whole fit_loss_model call on the
     parsed columns, inside the fresh CLI process: validation, start search, solve, covariance, R^2; no CSV)
     against the curve_fit call (its checks, solve and covariance; no CSV, no interpreter).
  3. "process vs process" (fair, end to end): the spotdnn CLI process against a python3 process that
     imports numpy/scipy, reads the same CSV with numpy.loadtxt, runs curve_fit and prints JSON.
SciPy is also given an advantage spotdnn does not get: it starts from the truth scaled by 1.2, while spotdnn
finds its own start. Both use tolerances of 1e-15 so that they stop at the same optimum rather than at
their defaults (Levenberg-Marquardt in both; SciPy uses a finite-difference Jacobian, spotdnn a closed form).
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

TRUTH = np.array([876.5, -0.2, 2507.6, 0.5])  # the ResNet-110 preset's gamma (seed form), docs/model.md section 3
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


SCIPY_PROCESS = r"""
import json, sys
import numpy as np
from scipy.optimize import curve_fit
def seed_form(x, g1, g2, g3, g4):
    j, n, b = x
    return (g2 * b + g3) * np.sqrt(n) / (j + g1) + g4
data = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, usecols=(1, 2, 3, 4))
p0 = np.array([876.5, -0.2, 2507.6, 0.5]) * 1.2
popt, pcov = curve_fit(seed_form, (data[:, 2], data[:, 0], data[:, 1]), data[:, 3], p0=p0,
                       ftol=1e-15, xtol=1e-15, gtol=1e-15, maxfev=100000)
print(json.dumps({"gamma": popt.tolist(), "standard_error": np.sqrt(np.diag(pcov)).tolist()}))
"""


def run_scipy_process(path, workdir):
    script = os.path.join(workdir, "scipy_fit.py")
    with open(script, "w") as out:
        out.write(SCIPY_PROCESS)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the SciPy process failed: {done.stderr.strip()}")
    return np.array(json.loads(done.stdout)["gamma"]), elapsed


def run_scipy(rows):
    j = np.concatenate([r[3] for r in rows])
    n = np.concatenate([r[1] for r in rows])
    b = np.concatenate([r[2] for r in rows])
    y = np.concatenate([r[4] for r in rows])
    started = time.perf_counter()
    popt, pcov = curve_fit(seed_form, (j, n, b), y, p0=TRUTH * 1.2, ftol=1e-15, xtol=1e-15, gtol=1e-15, maxfev=100000)
    return popt, time.perf_counter() - started, np.sqrt(np.diag(pcov))


def compare(cli, points, noise, repeat, workdir, quiet=False):
    rows = make_trace(points, noise, seed=2023)
    path = os.path.join(workdir, f"trace_{points}_{noise}.csv")
    write_csv(rows, path)
    best = {"spot": float("inf"), "spot_fit": float("inf"), "scipy": float("inf"), "load": float("inf"),
            "scipy_process": float("inf")}
    for _ in range(repeat):
        gamma, t_spot, report = run_spotdnn(cli, path)
        popt, t_scipy, perr = run_scipy(rows)
        started = time.perf_counter()
        np.loadtxt(path, delimiter=",", skiprows=1, usecols=(1, 2, 3, 4))
        t_load = time.perf_counter() - started
        gamma_process, t_process = run_scipy_process(path, workdir)
        for key, value in (("spot", t_spot), ("spot_fit", report["solve_time_s"]), ("scipy", t_scipy),
                           ("load", t_load), ("scipy_process", t_process)):
            best[key] = min(best[key], value)
    rel = np.abs(gamma - popt) / np.abs(popt)
    rel_process = np.abs(gamma_process - popt) / np.abs(popt)
    ratios = (best["scipy"] / best["spot"], best["scipy"] / best["spot_fit"], best["scipy_process"] / best["spot"])
    if quiet:
        return {"points": len(rows) * len(rows[0][3]), "noise": noise, "repeat": repeat,
                "curve_fit_call_s": best["scipy"], "spotdnn_fit_call_s": best["spot_fit"],
                "spotdnn_process_s": best["spot"], "scipy_process_s": best["scipy_process"],
                "call_ratio": ratios[1], "process_ratio": ratios[0], "process_process_ratio": ratios[2],
                "max_relative_difference": float(rel.max()), "status": report["status"]}
    print(f"\n== {len(rows) * len(rows[0][3])} points, noise {noise:g} (relative), status {report['status']}, "
          f"{report['iterations']} iterations, {report['starts']} start(s)")
    print(f"{'':8}{'truth':>14}{'spotdnn':>22}{'scipy':>22}{'rel. diff':>12}{'se spotdnn':>14}{'se scipy':>14}")
    se = [p["standard_error"] for p in report["parameters"]]
    for k in range(4):
        print(f"gamma{k + 1:<3}{TRUTH[k]:>14.6g}{gamma[k]:>22.15g}{popt[k]:>22.15g}{rel[k]:>12.2e}"
              f"{(se[k] if se[k] is not None else float('nan')):>14.4g}{perr[k]:>14.4g}")
    print(f"max relative difference of gamma: {rel.max():.2e} (target <= 1e-6; SciPy process vs call {rel_process.max():.1e})")
    print(f"time (best of {repeat}): spotdnn CLI process {best['spot'] * 1e3:.1f} ms, of which fit_loss_model "
          f"{best['spot_fit'] * 1e3:.1f} ms; curve_fit call {best['scipy'] * 1e3:.1f} ms (+ numpy.loadtxt "
          f"{best['load'] * 1e3:.1f} ms); SciPy process {best['scipy_process'] * 1e3:.1f} ms")
    print(f"speed-up of spotdnn: {ratios[0]:.2f}x process vs call (strict), {ratios[1]:.2f}x call vs call (fair), "
          f"{ratios[2]:.2f}x process vs process (fair)")
    return rel.max(), ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cli", help="path of the spotdnn executable")
    parser.add_argument("--points", type=int, default=100000, help="points of the large trace")
    parser.add_argument("--noise", type=float, default=0.01, help="relative noise of the large trace")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs per measurement (best is kept; default 1, with --json 3)")
    parser.add_argument("--json", action="store_true",
                        help="only the large noisy trace; print one JSON object (see the top of this file)")
    args = parser.parse_args()
    if args.repeat is None:
        args.repeat = 3 if args.json else 1
    if args.repeat < 1 or args.points < 8:
        parser.error("--repeat must be at least 1 and --points at least 8")
    with tempfile.TemporaryDirectory() as workdir:
        if args.json:
            print(json.dumps(compare(args.cli, args.points, args.noise, args.repeat, workdir, quiet=True)))
            return
        compare(args.cli, 164, 0.0, args.repeat, workdir)          # clean data: same optimum (the truth)
        compare(args.cli, 164, 0.05, args.repeat, workdir)         # noisy small trace
        compare(args.cli, args.points, 0.0, args.repeat, workdir)  # large clean trace
        compare(args.cli, args.points, args.noise, args.repeat, workdir)


if __name__ == "__main__":
    main()
