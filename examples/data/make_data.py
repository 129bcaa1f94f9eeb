#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the generated inputs of examples/data (see README.md there) from reference figures.

    /usr/bin/python3 examples/data/make_data.py [--check] [DIR]

loss-trace.csv: the seed loss form (docs/model.md eq. (6)) with the ResNet-110 preset's coefficients
gamma = (876.5, -0.2, 2507.6, 0.5), four profiling runs (1, 2, 4, 8 workers), a point every 200 PS
updates up to 20,000, 1% relative Gaussian noise (seed 42).

serverless-runs.csv: FasDL's function times (docs/model.md eq. (S1)) with the reference profile
a = 60, b = 8, m = 200, k1 = 20, k2 = -0.8, at five Lambda memories and three batches, two runs each,
2% relative Gaussian noise (seed 7); each row times one batch and one model transform.

Standard library only; the output is the same on every platform (random.Random with a fixed seed,
numbers printed with 6 significant digits). --check compares with the files in DIR instead of writing
them (exit 1 when one differs).
"""
import math
import random
import sys
from pathlib import Path

GAMMA = (876.5, -0.2, 2507.6, 0.5)  # seed form: gamma1..gamma4
LOSS_RUNS = (("n1", 1, 512), ("n2", 2, 1024), ("n4", 4, 1536), ("n8", 8, 2048))  # run, workers, weighted batch
LOSS_NOISE = 0.01

PROFILE = {"a": 60.0, "b": 8.0, "m": 200.0, "k1": 20.0, "k2": -0.8}
MEMORIES_MB = (512, 1024, 1536, 2048, 3008)
BATCHES = (16, 32, 64)
SERVERLESS_NOISE = 0.02


def seed_loss(iteration, workers, weighted_batch):
    """docs/model.md eq. (6), seed form: (g2*b_w + g3)*sqrt(n)/(j + g1) + g4."""
    g1, g2, g3, g4 = GAMMA
    return (g2 * weighted_batch + g3) * math.sqrt(workers) / (iteration + g1) + g4


def loss_trace():
    rng = random.Random(42)
    lines = ["run,workers,weighted_batch,iteration,loss"]
    for run, workers, weighted_batch in LOSS_RUNS:
        for step in range(101):
            iteration = 200 * step
            loss = seed_loss(iteration, workers, weighted_batch) * (1 + LOSS_NOISE * rng.gauss(0.0, 1.0))
            lines.append(f"{run},{workers},{weighted_batch},{iteration},{loss:.6g}")
    return "\n".join(lines) + "\n"


def serverless_runs():
    """docs/model.md eq. (S1): T_train(B, M) = a*(B + b)/(M + m), T_trans(M) = k1*M^k2."""
    rng = random.Random(7)
    p = PROFILE
    lines = ["batch,memory_mb,train_time_s,transform_time_s"]
    for memory in MEMORIES_MB:
        for batch in BATCHES:
            for _ in range(2):
                train = p["a"] * (batch + p["b"]) / (memory + p["m"]) * (1 + SERVERLESS_NOISE * rng.gauss(0.0, 1.0))
                transform = p["k1"] * memory ** p["k2"] * (1 + SERVERLESS_NOISE * rng.gauss(0.0, 1.0))
                lines.append(f"{batch},{memory},{train:.6g},{transform:.6g}")
    return "\n".join(lines) + "\n"


def main(argv):
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    directory = Path(rest[0]) if rest else Path(__file__).resolve().parent
    files = {"loss-trace.csv": loss_trace(), "serverless-runs.csv": serverless_runs()}
    status = 0
    for name, text in files.items():
        path = directory / name
        if check:
            if not path.is_file() or path.read_text() != text:
                print(f"{path}: differs from what make_data.py generates", file=sys.stderr)
                status = 1
        else:
            path.write_text(text)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
