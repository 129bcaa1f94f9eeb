# SPDX-License-Identifier: MIT
"""ps_train.py --profile (this module is instance_profile, not the standard library's profiling): what one instance type computes, measured on the instance it runs on.

For every batch size (per GPU) and numeric precision asked for, it runs `--profile-warmup` untimed and then
`--profile-iterations` timed training iterations of the model on one device (one GPU: a worker process uses
one GPU, several workers share a multi-GPU instance) and writes one JSON document (PROFILE_KIND, below; the
project's docs/formats.md "Profiles") with the median compute time per iteration, T_comp of spotdnn's model:
the forward and backward pass of one mini-batch, the device synchronised before the clock is read, without
the optimizer step (the PS applies it) and without moving the gradients off the device (the network model
covers the transfer). It also records the gradient (= model) bytes a worker pushes per update, the GPU's
name and count, and the versions that produced the figures.

Precisions: fp32 (strict: TF32 off), tf32 (PyTorch's TF32 matmuls and convolutions, CUDA on Ampere or newer),
bf16 and fp16 (torch.autocast mixed precision; fp16 with a gradient scaler's multiply, as trained). On the
CPU only fp32 and bf16 exist. A precision the device cannot run is listed under "skipped" with the reason,
never silently left out.
"""

import json
import math
import os
import platform
import statistics
import sys
import time
from contextlib import nullcontext

import torch

import cifar_models

PROFILE_KIND = "spotdnn.profile"
PROFILE_VERSION = 1
PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
MAX_PROFILE_BATCH = 65536
MAX_PROFILE_ITERATIONS = 100000


def parse_list(option, text, convert, allowed=None):
    """The comma-separated values of `option`, converted; ValueError naming the option and the bad value."""
    values = []
    for item in text.split(","):
        item = item.strip()
        try:
            value = convert(item)
        except ValueError:
            raise ValueError(f"{option} = {text!r}: {item!r} is not a valid value") from None
        if allowed is not None and value not in allowed:
            raise ValueError(f"{option} = {text!r}: {item!r} is not one of {', '.join(allowed)}")
        if value in values:
            raise ValueError(f"{option} = {text!r}: {item!r} is given twice")
        values.append(value)
    return values


def batch_sizes(text):
    sizes = parse_list("--profile-batches", text, int)
    for size in sizes:
        if not 1 <= size <= MAX_PROFILE_BATCH:
            raise ValueError(f"--profile-batches = {text!r}: {size} is not from 1 to {MAX_PROFILE_BATCH}")
    return sizes


def default_precisions(device):
    return "fp32,tf32,bf16,fp16" if device.type == "cuda" else "fp32"


def unsupported(device, precision):
    """Why `device` cannot run `precision`, or None when it can."""
    if device.type == "cpu":
        if precision in ("tf32", "fp16"):
            return f"{precision} is a CUDA precision; the CPU runs fp32 and bf16"
        if precision == "bf16" and not hasattr(torch, "autocast"):
            return "this PyTorch has no torch.autocast"
        return None
    # TF32 and native bf16 need Ampere (compute capability 8.0) or newer; torch.cuda.is_bf16_supported() also
    # answers True where bf16 is only emulated (PyTorch 2.x), which would time the emulation.
    major, minor = torch.cuda.get_device_capability(device)
    if precision in ("tf32", "bf16") and major < 8:
        return (f"{precision} needs compute capability 8.0 or newer; {torch.cuda.get_device_name(device)} has "
                f"{major}.{minor}")
    return None


class Precision:
    """Sets the TF32 switches for `precision` on entry and restores them on exit; autocast() is the region
    the forward pass runs in."""

    def __init__(self, device, precision):
        self.device, self.precision = device, precision

    # PyTorch 2.9 replaced the allow_tf32 switches (deprecated there) by fp32_precision = "tf32" | "ieee"
    # on torch.backends.cuda.matmul, torch.backends.cudnn.conv and torch.backends.cudnn.rnn; older versions
    # have only allow_tf32 (cudnn's covers convolutions and RNNs). With the new API set, the legacy readers
    # (allow_tf32, torch.get_float32_matmul_precision) raise: do not call them inside this region.
    @staticmethod
    def _switches():
        try:  # torch 1.13's matmul raises AssertionError, not AttributeError, for an unknown attribute
            new_api = isinstance(torch.backends.cuda.matmul.fp32_precision, str) and hasattr(torch.backends.cudnn, "conv")
        except (AttributeError, AssertionError):
            new_api = False
        if new_api:
            owners = [torch.backends.cuda.matmul, torch.backends.cudnn.conv]
            if hasattr(torch.backends.cudnn, "rnn"):
                owners.append(torch.backends.cudnn.rnn)
            return "fp32_precision", owners, ("tf32", "ieee")
        return "allow_tf32", [torch.backends.cuda.matmul, torch.backends.cudnn], (True, False)

    def __enter__(self):
        self.name, owners, (on, off) = self._switches()
        self.saved = [(owner, getattr(owner, self.name)) for owner in owners]
        for owner in owners:
            setattr(owner, self.name, on if self.precision == "tf32" else off)
        return self

    def __exit__(self, *exc):
        for owner, value in self.saved:
            setattr(owner, self.name, value)
        return False

    def autocast(self):
        if self.precision in ("bf16", "fp16"):
            dtype = torch.bfloat16 if self.precision == "bf16" else torch.float16
            return torch.autocast(device_type=self.device.type, dtype=dtype)
        return nullcontext()


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_iterations(model, loss_fn, data, device, precision, batch, warmup, iterations, seed):
    """Seconds of each timed forward + backward pass of `batch` samples at `precision` on `device`."""
    generator = torch.Generator().manual_seed(seed)
    x, y = data.batch(batch, generator)
    x, y = x.to(device), y.to(device)
    scale = 1024.0 if precision == "fp16" else 1.0  # a gradient scaler's multiply, as fp16 training does
    times = []
    with Precision(device, precision) as p:
        for step in range(warmup + iterations):
            synchronize(device)
            start = time.perf_counter()
            model.zero_grad(set_to_none=True)
            with p.autocast():
                loss = loss_fn(model(x), y)
            (loss * scale if scale != 1.0 else loss).backward()
            synchronize(device)
            if step >= warmup:
                times.append(time.perf_counter() - start)
            if not math.isfinite(loss.item()):
                raise RuntimeError(f"the loss became {loss.item()} at batch {batch}, {precision}")
    return times


def run_profile(args):
    """The profile document of args.model on args.device (see the module's docstring)."""
    device = cifar_models.resolve_device(args.device)
    if device.type == "cuda":
        device = torch.device("cuda", args.local_rank % torch.cuda.device_count())
    sizes = batch_sizes(args.profile_batches)
    precisions = parse_list("--profile-precisions", args.profile_precisions or default_precisions(device), str, PRECISIONS)
    data = cifar_models.make_data(args.model, args.dataset, args.seed, args.classes)
    model = cifar_models.make_model(args.model, args.seed, args.classes).to(device)
    model.train()
    loss_fn = cifar_models.loss_function(args.model)
    measurements, skipped = [], []
    for precision in precisions:
        why = unsupported(device, precision)
        if why is not None:
            skipped.append({"precision": precision, "reason": why})
            continue
        for batch in sizes:
            try:
                times = time_iterations(model, loss_fn, data, device, precision, batch, args.profile_warmup,
                                        args.profile_iterations, args.seed)
            except RuntimeError as e:  # torch.cuda.OutOfMemoryError (2.x) is one too
                if "out of memory" not in str(e):
                    raise
                if device.type == "cuda":
                    torch.cuda.empty_cache()
                skipped.append({"precision": precision, "batch_per_gpu": batch, "reason": "out of device memory"})
                continue
            median = statistics.median(times)
            measurements.append({
                "batch_per_gpu": batch,
                "precision": precision,
                "warmup_iterations": args.profile_warmup,
                "iterations": len(times),
                "compute_time_s": median,
                "compute_time_min_s": min(times),
                "compute_time_max_s": max(times),
                "samples_per_s": batch / median,
            })
    gradient_bytes = cifar_models.parameter_bytes(model)
    return {
        "kind": PROFILE_KIND,
        "version": PROFILE_VERSION,
        "instance_type": args.instance_type,
        "model": args.model,
        "classes": args.classes if args.model != "mlp" else None,
        "dataset": data.description,
        "parameters": sum(p.numel() for p in model.parameters()),
        "param_bytes": gradient_bytes,
        "gradient_bytes": gradient_bytes,
        "device": device.type,
        "gpu_name": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "gpu_count": torch.cuda.device_count() if device.type == "cuda" else 0,
        "cpu_threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "python_version": platform.python_version(),
        "measurements": measurements,
        "skipped": skipped,
    }


def check_output(output):
    """Refuses an --profile-output that cannot be written, before anything is timed (ValueError)."""
    if output == "-":
        return
    directory = os.path.dirname(os.path.abspath(output))
    if os.path.isdir(output) or not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise ValueError(f"--profile-output = {output!r}: not a file in a writable directory")


def write_profile(document, output):
    text = json.dumps(document, indent=2) + "\n"
    if output == "-":
        sys.stdout.write(text)
        return
    directory = os.path.dirname(os.path.abspath(output))
    temporary = os.path.join(directory, f".{os.path.basename(output)}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w") as f:
            f.write(text)
        os.replace(temporary, output)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
