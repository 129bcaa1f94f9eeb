#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Asynchronous parameter-server (ASP) training on PyTorch RPC, driven by the variables spotdnn's launcher
exports: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, SPOTDNN_ROLE, SPOTDNN_INSTANCE_TYPE, SPOTDNN_GPUS,
SPOTDNN_CHECKPOINT_DIR and SPOTDNN_RUN_ID. See README.md next to this file.

The PS (rank 0) holds the model and applies every pushed gradient at once under a lock; one global
iteration is one PS update. Workers are stateless: they push a gradient of their own mini-batch and get
the new, version-stamped weights back. Membership is static per *generation* (one torch.distributed.rpc
group with a fixed world size): a worker that dies is dropped and the others carry on; a worker that
joins triggers a coordinated restart of the group from the checkpoint the PS writes just before.
Dynamic RPC groups (init_rpc without world_size) exist in torch 1.13 but break once a member is killed
without leaving: the next joiner calls every registered member, fails on the dead one and keeps the
group's join token, so every later join blocks (torch/distributed/rpc/_utils.py has no try/finally).
"""

import argparse
import collections
import ctypes
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from urllib.parse import parse_qsl, urlparse

import torch
import torch.distributed as dist
import torch.distributed.rpc as rpc
from torch.distributed.rendezvous import register_rendezvous_handler

import cifar_models
import instance_profile as profiling

EXIT_DONE = 0
EXIT_FAILED = 1
EXIT_RESTART = 75  # a PS generation ended for a coordinated restart (child -> supervisor only)
EXIT_TERMINATED = 143  # stopped by SIGTERM after writing a checkpoint
EXIT_DIVERGED = 76  # a PS generation stopped because training diverged (child -> supervisor only)
DIVERGED_AFTER = 100  # consecutive non-finite pushes that stop the run: the weights no longer recover

CHECKPOINT_FORMAT = "spotdnn-ps-checkpoint"
CHECKPOINT_VERSION = 1
CHECKPOINT_NAME = re.compile(r"^ckpt-(\d{12})\.pt$")
LOSS_TRACE = "loss-trace.csv"
# The progress file next to the checkpoints (synced to S3 with them): the global iteration and loss of
# the newest checkpoint, which `spotdnn watch` reads to keep the run to its deadline.
PROGRESS_FILE = "progress.json"
PROGRESS_KIND = "spotdnn.progress"
THROUGHPUT_TRACE = "throughput-trace.csv"
LOSS_HEADER = "run,workers,weighted_batch,iteration,loss\n"
THROUGHPUT_HEADER = "cluster,iterations_per_s\n"


INSTANCE_TYPE = re.compile(r"[A-Za-z0-9._:-]{1,128}")

_role = "ps_train"


def _prefix():
    now = time.time()
    return time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d} ps_train[{_role}]"


def log(message):
    print(f"{_prefix()}: {message}", file=sys.stdout, flush=True)


def fail(message, code=EXIT_FAILED):
    sys.stdout.flush()
    print(f"{_prefix()}: error: {message}", file=sys.stderr, flush=True)
    sys.exit(code)


# --------------------------------------------------------------------------------------------------
# Options: every default comes from the launcher's environment.


def _env_int(name, default):
    text = os.environ.get(name, "")
    if text == "":
        return default
    try:
        return int(text)
    except ValueError:
        fail(f"{name} = {text!r}: expected a whole number", 2)


def parse_args(argv):
    gpus = _env_int("SPOTDNN_GPUS", 0)
    checkpoint_dir = os.environ.get("SPOTDNN_CHECKPOINT_DIR", "")
    p = argparse.ArgumentParser(
        description="Asynchronous parameter-server training on PyTorch RPC (spotdnn example).")
    p.add_argument("--role", choices=["ps", "worker"], default=os.environ.get("SPOTDNN_ROLE") or None,
                   help="ps or worker (default: $SPOTDNN_ROLE)")
    p.add_argument("--master-addr", default=os.environ.get("MASTER_ADDR", ""), help="the PS address (default: $MASTER_ADDR)")
    p.add_argument("--master-port", type=int, default=_env_int("MASTER_PORT", 0), help="the PS port (default: $MASTER_PORT)")
    p.add_argument("--rank", type=int, default=_env_int("RANK", 0), help="PS 0, workers 1..W (default: $RANK)")
    p.add_argument("--world-size", type=int, default=_env_int("WORLD_SIZE", 2),
                   help="PS + workers expected at start (default: $WORLD_SIZE)")
    p.add_argument("--instance-type", default=os.environ.get("SPOTDNN_INSTANCE_TYPE") or "local",
                   help="this worker's instance type, written to the throughput trace (default: $SPOTDNN_INSTANCE_TYPE)")
    p.add_argument("--checkpoint-dir", default=checkpoint_dir, help="PS checkpoints (default: $SPOTDNN_CHECKPOINT_DIR)")
    p.add_argument("--trace-dir", default=None, help="loss and throughput traces (default: the checkpoint directory)")
    p.add_argument("--run-id", default=os.environ.get("SPOTDNN_RUN_ID") or "run", help="run name prefix (default: $SPOTDNN_RUN_ID)")
    p.add_argument("--steps", type=int, default=2000, help="stop after this many PS updates in total (default 2000)")
    p.add_argument("--batch", type=int, default=32 * max(1, gpus),
                   help="this worker's mini-batch (default 32 per GPU of $SPOTDNN_GPUS, at least 32)")
    p.add_argument("--lr", type=float, default=0.005, help="SGD learning rate (default 0.005)")
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum (default 0.9)")
    p.add_argument("--checkpoint-every", type=int, default=100, help="PS updates between checkpoints (default 100)")
    p.add_argument("--keep-checkpoints", type=int, default=3, help="checkpoints kept (default 3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the dataset and the initial weights (default 0)")
    p.add_argument("--min-workers", type=int, default=1, help="workers needed to start a generation (default 1)")
    p.add_argument("--join-wait", type=float, default=30.0,
                   help="seconds the PS waits for the expected workers before starting with fewer (default 30)")
    p.add_argument("--join-batch", type=float, default=2.0,
                   help="seconds the PS gathers late joiners before restarting with them (default 2)")
    p.add_argument("--rpc-timeout", type=float, default=30.0, help="RPC and rendezvous timeout in seconds (default 30)")
    p.add_argument("--throughput-window", type=float, default=60.0,
                   help="seconds of updates per throughput row at most (default 60)")
    p.add_argument("--ping-timeout", type=float, default=5.0, help="seconds before a silent worker is dropped (default 5)")
    p.add_argument("--connect-timeout", type=float, default=120.0,
                   help="seconds a worker keeps trying to reach the PS (default 120)")
    p.add_argument("--model", choices=cifar_models.MODELS, default="mlp",
                   help="mlp (default: seconds on a CPU) or a CIFAR ResNet: resnet20, resnet32, resnet56, resnet110")
    p.add_argument("--dataset", default="synthetic",
                   help="synthetic (default, made in memory) or a CIFAR-10/100 binary copy: a .bin file or its directory")
    p.add_argument("--classes", type=int, choices=[10, 100], default=10, help="classes of the ResNets' data (default 10)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where a worker (and --profile) computes: auto (CUDA when present, the default), cpu or cuda")
    p.add_argument("--local-rank", type=int, default=_env_int("SPOTDNN_LOCAL_RANK", 0),
                   help="which GPU of a multi-GPU instance this worker uses, modulo their count (default: $SPOTDNN_LOCAL_RANK or 0)")
    p.add_argument("--precision", choices=profiling.PRECISIONS, default="fp32",
                   help="a worker's numeric precision: fp32 (default), tf32, bf16 or fp16 (autocast; see --profile)")
    p.add_argument("--profile", action="store_true",
                   help="profile this instance instead of training: time --profile-iterations iterations per batch size and "
                        "precision and write the profile JSON (no PS, no RPC)")
    p.add_argument("--profile-batches", default="32,64,128", help="per-GPU batch sizes to profile (default 32,64,128)")
    p.add_argument("--profile-precisions", default=None,
                   help="precisions to profile (default: fp32,tf32,bf16,fp16 on CUDA, fp32 on the CPU)")
    p.add_argument("--profile-iterations", type=int, default=20, help="timed iterations per batch size (default 20)")
    p.add_argument("--profile-warmup", type=int, default=5, help="untimed iterations before them (default 5)")
    p.add_argument("--profile-output", default="-", help="where the profile JSON goes (default: standard output)")
    p.add_argument("--generation", type=int, default=None, help=argparse.SUPPRESS)  # internal: PS child
    p.add_argument("--supervisor-pid", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    # The type goes into `TYPE=N;TYPE=N` cells and the run id into CSV run names: keep both plain.
    if not INSTANCE_TYPE.fullmatch(args.instance_type):
        p.error(f"--instance-type = {args.instance_type!r}: use letters, digits and . _ : - (at most 128)")
    if args.local_rank < 0:
        p.error(f"--local-rank = {args.local_rank}: must be at least 0")
    if args.model == "mlp" and args.dataset != "synthetic":
        p.error(f"--dataset = {args.dataset!r}: the mlp model trains on its synthetic teacher only (use a resnet)")
    if args.profile:
        if not 1 <= args.profile_iterations <= profiling.MAX_PROFILE_ITERATIONS:
            p.error(f"--profile-iterations = {args.profile_iterations}: must be from 1 to {profiling.MAX_PROFILE_ITERATIONS}")
        if not 0 <= args.profile_warmup <= profiling.MAX_PROFILE_ITERATIONS:
            p.error(f"--profile-warmup = {args.profile_warmup}: must be from 0 to {profiling.MAX_PROFILE_ITERATIONS}")
        try:
            profiling.batch_sizes(args.profile_batches)
            if args.profile_precisions is not None:
                profiling.parse_list("--profile-precisions", args.profile_precisions, str, profiling.PRECISIONS)
        except ValueError as e:
            p.error(str(e))
        return args
    if args.role not in ("ps", "worker"):  # argparse checks choices on the command line only, not defaults
        p.error(f"--role = {args.role!r}: give ps or worker (or set SPOTDNN_ROLE)")
    if not args.master_addr:
        p.error("--master-addr: give the PS address (or set MASTER_ADDR)")
    if not 0 < args.master_port < 65536:
        p.error(f"--master-port = {args.master_port}: give a port from 1 to 65535 (or set MASTER_PORT)")
    for name in ("steps", "batch", "checkpoint_every", "keep_checkpoints", "min_workers"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} = {getattr(args, name)}: must be at least 1")
    for name in ("lr", "join_wait", "join_batch", "rpc_timeout", "ping_timeout", "connect_timeout", "throughput_window"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            p.error(f"--{name.replace('_', '-')} = {value}: must be a positive number")
    if not (math.isfinite(args.momentum) and 0 <= args.momentum < 1):
        p.error(f"--momentum = {args.momentum}: must be in [0, 1)")
    args.run_id = re.sub(r"[^A-Za-z0-9._:-]", "_", args.run_id)[:128] or "run"
    if args.role == "ps":
        if not args.checkpoint_dir:
            p.error("--checkpoint-dir: the PS needs one (or set SPOTDNN_CHECKPOINT_DIR)")
        if args.trace_dir is None:
            args.trace_dir = args.checkpoint_dir
    return args


# --------------------------------------------------------------------------------------------------
# The model and the data are cifar_models.py's: the small MLP on its linear teacher (the default: the loss
# falls roughly like 1/j, from about 1 to 0.05 after 100 updates, in seconds on a CPU) or a CIFAR ResNet on
# synthetic or real CIFAR data. The PS keeps its copy on the CPU; a worker computes on its --device.


def make_optimizer(model, args):
    return torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)


# --------------------------------------------------------------------------------------------------
# Checkpoints: ckpt-<iteration, 12 digits>.pt, written atomically (temp file in the same directory,
# fsync, rename, fsync of the directory); the newest few are kept.
#
# Loading uses torch.load(weights_only=True): a checkpoint is a pickle, and an ordinary torch.load of a
# file someone else could write runs their code. torch 1.13's restricted unpickler accepts tensors, ints,
# strings, bools, None, lists, dicts and OrderedDicts but not floats, so a checkpoint holds only those:
# the model's state_dict, the momentum buffers (not the optimizer's state_dict, whose param_groups hold
# floats; lr and momentum come from the command line) and integers.


def checkpoint_path(directory, iteration):
    return os.path.join(directory, f"ckpt-{iteration:012d}.pt")


def list_checkpoints(directory):
    """(iteration, path) of every checkpoint in `directory`, newest first."""
    found = []
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    for name in names:
        match = CHECKPOINT_NAME.match(name)
        if match:
            found.append((int(match.group(1)), os.path.join(directory, name)))
    return sorted(found, reverse=True)


def fsync_directory(directory):
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(directory, final, mode, write):
    """Writes `final` in `directory` through a .ckpt-*.tmp file (which the S3 sync leaves out) that
    write(f) fills, fsynced and renamed into place: no reader, local or in S3, sees half a file."""
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".ckpt-", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, final)
        fsync_directory(directory)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def write_checkpoint(directory, state, keep):
    final = checkpoint_path(directory, state["iteration"])
    write_atomically(directory, final, "wb", lambda f: torch.save(state, f))
    for _, old in list_checkpoints(directory)[keep:]:
        os.unlink(old)
    return final


def write_progress(directory, run_id, iteration, loss):
    """Replaces PROGRESS_FILE in `directory` atomically: {"kind", "schema_version", "run_id", "iteration",
    "loss" (the mean of the last updates' losses, null before any), "time_unix_s"}."""
    document = {"kind": PROGRESS_KIND, "schema_version": 1, "run_id": run_id, "iteration": int(iteration),
                "loss": None if loss is None or not math.isfinite(loss) else float(loss), "time_unix_s": time.time()}
    write_atomically(directory, os.path.join(directory, PROGRESS_FILE), "w", lambda f: f.write(json.dumps(document) + "\n"))


def load_checkpoint(path, iteration, model):
    """The checkpoint at `path` (named for `iteration`), checked before it touches `model`."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError("not a spotdnn PS checkpoint")
    if state.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"checkpoint version {state.get('version')!r}, expected {CHECKPOINT_VERSION}")
    if state.get("iteration") != iteration:  # a renamed copy would put the trace out of step
        raise ValueError(f"it holds iteration {state.get('iteration')!r}, its name says {iteration}")
    weights, current = state.get("model"), model.state_dict()
    if not isinstance(weights, dict) or set(weights) != set(current) or any(
            not isinstance(weights[k], torch.Tensor) or weights[k].shape != v.shape for k, v in current.items()):
        raise ValueError("its weights do not match the model")
    momentum, params = state.get("momentum"), list(model.parameters())
    if not isinstance(momentum, list) or len(momentum) != len(params) or any(
            b is not None and (not isinstance(b, torch.Tensor) or b.shape != p.shape) for b, p in zip(momentum, params)):
        raise ValueError("its momentum buffers do not match the model")
    trace = state.get("trace")
    if not isinstance(trace, dict) or not all(isinstance(trace.get(k), int) and trace[k] >= 0
                                              for k in ("loss_bytes", "segments")):
        raise ValueError("the trace position is missing")
    model.load_state_dict(weights)
    return state


def restore_momentum(optimizer, momentum):
    for p, buffer in zip(optimizer.param_groups[0]["params"], momentum):
        if buffer is not None:
            optimizer.state[p]["momentum_buffer"] = buffer.clone()


# --------------------------------------------------------------------------------------------------
# Traces in the CSV formats `spotdnn fit` reads, appended across restarts (the header only into an
# empty file). A checkpoint records how long the loss trace was; a PS that resumes from it cuts off the
# rows written after it, whose iterations are trained again. Throughput rows measure wall-clock rates,
# which stay true whatever happens to the model, so that file is only ever appended to.


class Traces:
    def __init__(self, directory):
        os.makedirs(directory, exist_ok=True)
        self.loss_path = os.path.join(directory, LOSS_TRACE)
        self.throughput_path = os.path.join(directory, THROUGHPUT_TRACE)

    @staticmethod
    def _size(path):
        try:
            return os.path.getsize(path)
        except FileNotFoundError:
            return 0

    def cut_loss_to(self, size):
        current = self._size(self.loss_path)
        if current > size:
            log(f"{LOSS_TRACE}: dropping {current - size} bytes written after the checkpoint")
            os.truncate(self.loss_path, size)
        elif current < size:
            log(f"{LOSS_TRACE}: shorter than the checkpoint recorded ({current} < {size} bytes); appending")

    def write(self, events):
        """Appends the rows of `events` (("loss", segment), ("throughput", window), ("checkpoint",
        state)) in order, one fsync per file, and stamps each checkpoint with the length the loss trace
        had right after the rows it covers. Returns the checkpoints."""
        checkpoints = []
        if any(kind != "throughput" for kind, _ in events):
            with open(self.loss_path, "ab") as loss_file:  # binary: tell() is the byte length
                for kind, item in events:
                    if kind == "loss" and item["rows"]:
                        if loss_file.tell() == 0:
                            loss_file.write(LOSS_HEADER.encode())
                        loss_file.write("".join(
                            f"{item['run']},{item['workers']},{item['weighted_batch']:.10g},{j},{loss:.8g}\n"
                            for j, loss in item["rows"]).encode())
                    elif kind == "checkpoint":
                        item["trace"]["loss_bytes"] = loss_file.tell()
                        checkpoints.append(item)
                loss_file.flush()
                os.fsync(loss_file.fileno())
        windows = [item for kind, item in events if kind == "throughput"]
        if windows:
            with open(self.throughput_path, "ab") as f:
                if f.tell() == 0:
                    f.write(THROUGHPUT_HEADER.encode())
                f.write("".join(f"{w['cluster']},{w['rate']:.8g}\n" for w in windows).encode())
                f.flush()
                os.fsync(f.fileno())
        return checkpoints


# --------------------------------------------------------------------------------------------------
# Control plane: a TCPStore that the PS supervisor hosts on MASTER_PORT for its whole life. Workers
# announce themselves there (a ticket each); the supervisor seals each generation's members there;
# each generation's RPC group meets there too, under its own key prefix (the "spotdnn://" rendezvous).


def _spotdnn_rendezvous(url, **kwargs):
    """Rendezvous handler for init_rpc: the supervisor's store, under the generation's prefix."""
    parsed = urlparse(url)
    query = dict(parse_qsl(parsed.query))
    timeout = timedelta(seconds=float(query.get("timeout", "30")))
    store = dist.TCPStore(parsed.hostname, parsed.port, None, False, timeout, wait_for_workers=False)
    yield dist.PrefixStore("rpc/" + parsed.path.strip("/"), store), int(query["rank"]), int(query["world_size"])


register_rendezvous_handler("spotdnn", _spotdnn_rendezvous)


def init_rpc_group(args, name, rank, world_size, generation, on_hang, threads=16):
    """Joins generation `generation`'s static RPC group. A member that dies while the group forms
    must not hang the others: init_rpc builds a Gloo group whose store waits use
    rpc.constants.DEFAULT_PROCESS_GROUP_TIMEOUT, about 24.8 days in torch 1.13, so it is set to the
    RPC timeout first; a watchdog calls `on_hang` if joining still takes far longer."""
    import torch.distributed.rpc.constants as rpc_constants

    rpc_constants.DEFAULT_PROCESS_GROUP_TIMEOUT = timedelta(seconds=args.rpc_timeout)
    joined = threading.Event()

    def watchdog():
        if not joined.wait(3 * args.rpc_timeout + 10):
            log(f"joining generation {generation} hangs: giving up")
            on_hang()

    threading.Thread(target=watchdog, daemon=True).start()
    rpc.init_rpc(name, rank=rank, world_size=world_size,
                 rpc_backend_options=rpc_options(args, generation, threads))
    joined.set()


def rpc_options(args, generation, threads=16):
    host = args.master_addr if ":" not in args.master_addr else f"[{args.master_addr}]"
    # TCP (uv) only: a real cluster's PS and workers are on different hosts, and TensorPipe's shared-memory
    # transport, which it picks on one host, busy-polls: a PS and one ResNet-20 worker on 2 cores spent
    # 17.3 s of 23.6 s in the kernel with it and 2.2 s of 25.3 s without, so a local run's throughput
    # measured the polling.
    return rpc.TensorPipeRpcBackendOptions(
        num_worker_threads=threads, rpc_timeout=args.rpc_timeout, _transports=["uv"],
        init_method=f"spotdnn://{host}:{args.master_port}/gen{generation}?timeout={args.rpc_timeout}")


_ABSENT = "\x00absent"


def peek(store, key):
    """The value of `key` or None, without waiting (TCPStore in torch 1.13 has no check(): a
    compare_set whose expected value is never stored returns the current value or, if the key is
    absent, the expected value, and changes nothing)."""
    value = store.compare_set(key, _ABSENT, _ABSENT)
    return None if value == _ABSENT.encode() else value.decode("utf-8")


def store_json(store, key):
    return json.loads(store.get(key).decode("utf-8"))


def connect_store(args, timeout_s):
    return dist.TCPStore(args.master_addr, args.master_port, None, False, timedelta(seconds=timeout_s),
                         wait_for_workers=False)


# --------------------------------------------------------------------------------------------------
# The PS supervisor: hosts the control store, seals generations and runs each one as a child process
# (a fresh process per RPC group keeps torch's RPC state clean), restarting it when workers join.


class Supervisor:
    def __init__(self, args):
        self.args = args
        self.terminate = False
        self.child = None
        self.announced = {}  # ticket -> a worker's announcement
        self.ignored = set()  # tickets without a valid announcement
        self.unresolved = {}  # ticket -> when it was first seen without an announcement
        self.polled = 0  # tickets up to this one have been seen

    def _on_sigterm(self, signum, frame):
        self.terminate = True
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def _poll(self, store):
        """Reads the announcements of new tickets. A ticket whose announcement is malformed, or still
        missing after 5 s (its worker died between taking the ticket and announcing), is ignored."""
        issued = store.add("tickets", 0)
        now = time.monotonic()
        for t in range(self.polled + 1, issued + 1):
            self.unresolved[t] = now
        self.polled = max(self.polled, issued)
        for t, first_seen in list(self.unresolved.items()):
            info = peek(store, f"worker/{t}")
            if info is None:
                if now - first_seen > 5.0:
                    log(f"ticket {t} was never announced: ignored")
                    self.ignored.add(t)
                    del self.unresolved[t]
                continue
            del self.unresolved[t]
            try:
                info = json.loads(info)
                if not (INSTANCE_TYPE.fullmatch(info["instance_type"]) and type(info["batch"]) is int
                        and type(info["rank"]) is int):
                    raise ValueError(info)
                self.announced[t] = info
            except (ValueError, KeyError, TypeError):  # not from ps_train.py
                log(f"ticket {t}: malformed announcement ignored")
                self.ignored.add(t)

    def _gather(self, store, after, expected):
        """Waits for `expected` announced workers with tickets after `after` (or --join-wait with at
        least --min-workers). Returns (members, highest ticket considered), or (None, after) on SIGTERM."""
        args = self.args
        started = time.monotonic()
        last_note = started
        while True:
            self._poll(store)
            members = sorted(t for t in self.announced if t > after)
            waited = time.monotonic() - started
            if len(members) >= args.min_workers and (len(members) >= expected or waited >= args.join_wait):
                return members, max(members + [t for t in self.ignored if t > after])
            if self.terminate:
                return None, after
            if time.monotonic() - last_note >= 10:
                log(f"waiting for workers: {len(members)} of {expected} announced")
                last_note = time.monotonic()
            time.sleep(0.1)

    def run(self):
        args = self.args
        os.makedirs(args.checkpoint_dir, exist_ok=True)
        signal.signal(signal.SIGTERM, self._on_sigterm)
        try:
            store = dist.TCPStore(args.master_addr, args.master_port, None, True,
                                  timedelta(seconds=args.rpc_timeout), wait_for_workers=False)
        except RuntimeError as e:
            fail(f"cannot listen on port {args.master_port}: {e}")
        newest = list_checkpoints(args.checkpoint_dir)
        if newest and newest[0][0] >= args.steps:
            log(f"already done: {os.path.basename(newest[0][1])} reached --steps {args.steps}")
            store.set("done", "1")
            time.sleep(1.0)
            return EXIT_DONE
        considered = 0
        expected = max(args.world_size - 1, args.min_workers)
        generation = 0
        failures = 0
        while True:
            members, considered_now = self._gather(store, considered, expected)
            if members is None:
                log("stopped by SIGTERM while waiting for workers")
                return EXIT_TERMINATED
            considered = considered_now
            seal = {"generation": generation, "max_ticket": considered,
                    "members": [{"ticket": t, "rpc_rank": i + 1, "name": f"w{t}", **self.announced[t]}
                                for i, t in enumerate(members)]}
            store.set(f"gen/{generation}/seal", json.dumps(seal))
            store.set("generation", str(generation))
            names = ", ".join(f"w{t} (rank {self.announced[t]['rank']})" for t in members)
            log(f"generation {generation}: sealed with {names}")
            command = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:] + [
                "--generation", str(generation), "--supervisor-pid", str(os.getpid())]
            self.child = subprocess.Popen(command)
            if self.terminate:
                self.child.send_signal(signal.SIGTERM)
            joiners_since, joiners = None, 0
            while self.child.poll() is None:
                if not self.terminate and not joiners:
                    self._poll(store)
                    if any(t > considered for t in self.announced):
                        joiners_since = joiners_since or time.monotonic()
                    if joiners_since is not None and time.monotonic() - joiners_since >= args.join_batch:
                        # Every announcement so far is a joiner's: members announce again only once told to stop.
                        joiners = sum(1 for t in self.announced if t > considered)
                        log(f"{joiners} worker(s) joining: restarting the group from a checkpoint")
                        self.child.send_signal(signal.SIGUSR1)
                time.sleep(0.1)
            code = self.child.returncode
            self.child = None
            if code == EXIT_DONE:
                store.set("done", "1")
                time.sleep(1.0)  # workers still connecting read "done" and exit 0
                return EXIT_DONE
            if code == EXIT_DIVERGED:
                store.set("done", "1")  # workers still connecting exit; the ones told "diverged" exit 1
                time.sleep(1.0)
                return EXIT_FAILED
            if self.terminate or code == EXIT_TERMINATED:
                log(f"stopped by SIGTERM (generation {generation} exited with {code})")
                return EXIT_TERMINATED
            alive = peek(store, f"gen/{generation}/alive") or "0"
            alive = int(alive) if alive.isdigit() else 0
            if code == EXIT_RESTART:
                failures = 0
            else:
                failures += 1
                log(f"generation {generation} failed (exit {code}); {failures} failure(s) in a row")
                if failures >= 5:
                    return EXIT_FAILED
                alive = len(members)  # a failed rendezvous: the live ones re-announce
            expected = max(alive + joiners, args.min_workers)
            generation += 1


# --------------------------------------------------------------------------------------------------
# One PS generation: the RPC group, the server state and the monitor loop.


class PsServer:
    """The parameters and everything the RPC handlers touch, behind one lock."""

    def __init__(self, args, model, optimizer, iteration, segments, members):
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.params = list(model.parameters())
        self.lock = threading.Lock()
        self.iteration = iteration
        self.segments = segments  # closed segments so far (run names stay unique across restarts)
        self.members = {m["name"]: m for m in members}
        self.active = set(self.members)
        self.stop_reason = None
        self.told = set()
        # ("loss", segment), ("throughput", window) or ("checkpoint", state), written in this order
        self.events = collections.deque()
        self.recent_losses = collections.deque(maxlen=50)
        self.staleness_sum = 0
        self.updates = 0
        self.rejected = 0
        self.rejected_in_a_row = 0
        self._open_segment()
        self._open_window()

    # A loss segment: consecutive updates of one cluster, ended by a cluster change, a checkpoint or the
    # stop. It becomes one run of the loss trace: spotdnn needs one worker count and one weighted batch
    # per run, and the weighted batch is known only when the segment ends.
    def _open_segment(self):
        self.segment = {"workers": len(self.active), "rows": [], "samples": 0}

    def _close_segment(self):
        s = self.segment
        if s["rows"]:
            self.segments += 1
            self.events.append(("loss", {
                "run": f"{self.args.run_id}-n{s['workers']}-s{self.segments}",
                "workers": s["workers"],
                # samples per update = sum_i b_i (1/T_i) / sum_i (1/T_i): the throughput-weighted batch
                "weighted_batch": s["samples"] / len(s["rows"]),
                "rows": s["rows"],
            }))
        self._open_segment()

    # A throughput window: updates of one cluster, ended by a cluster change, the stop or its age.
    def _open_window(self):
        types = collections.Counter(self.members[name]["instance_type"] for name in self.active)
        self.window = {"cluster": ";".join(f"{t}={n}" for t, n in sorted(types.items())),
                       "count": 0, "first": None, "last": None}

    def _close_window(self):
        w = self.window
        if w["count"] >= 20 and w["last"] - w["first"] >= 1.0:
            w["rate"] = (w["count"] - 1) / (w["last"] - w["first"])
            self.events.append(("throughput", w))
        self._open_window()

    def _cluster_changed(self):
        self._close_segment()
        self._close_window()

    def _arrive(self, name):
        if name not in self.members:
            raise RuntimeError(f"unknown worker {name}")
        if name not in self.active:  # dropped by a missed ping, yet alive: the cluster changes again
            self.active.add(name)
            self._cluster_changed()
            log(f"{name} is back")

    def _weights(self):
        return [p.detach().clone() for p in self.params]

    def pull(self, name):
        with self.lock:
            if self.stop_reason is not None:
                self.told.add(name)
                return self.stop_reason, self.iteration, None
            self._arrive(name)
            return "ok", self.iteration, self._weights()

    def push(self, name, version, grads, loss, batch):
        with self.lock:
            if self.stop_reason is not None:
                self.told.add(name)
                return self.stop_reason, self.iteration, None
            self._arrive(name)
            if len(grads) != len(self.params) or any(g.shape != p.shape for g, p in zip(grads, self.params)):
                raise RuntimeError(f"{name} pushed gradients of the wrong shape")
            if not math.isfinite(loss) or not all(bool(torch.isfinite(g).all()) for g in grads):
                # Not applied and not counted (a NaN would also make the loss trace unreadable).
                self.rejected += 1
                self.rejected_in_a_row += 1
                if self.rejected in (1, 10, 100) or self.rejected % 1000 == 0:
                    log(f"{name} pushed a non-finite loss or gradient: skipped ({self.rejected} so far)")
                if self.rejected_in_a_row >= DIVERGED_AFTER:  # no update since: it would spin forever
                    self.stop_reason = "diverged"
                    self.told.add(name)
                    return self.stop_reason, self.iteration, None
                return "ok", self.iteration, self._weights()
            self.rejected_in_a_row = 0
            for p, g in zip(self.params, grads):
                p.grad = g.to(dtype=p.dtype)
            self.optimizer.step()
            self.iteration += 1
            now = time.monotonic()
            self.segment["rows"].append((self.iteration, float(loss)))
            self.segment["samples"] += int(batch)
            w = self.window
            w["count"] += 1
            w["first"] = now if w["first"] is None else w["first"]
            w["last"] = now
            if now - w["first"] >= self.args.throughput_window:
                self._close_window()
            self.recent_losses.append(float(loss))
            self.staleness_sum += self.iteration - 1 - version
            self.updates += 1
            if self.iteration % self.args.checkpoint_every == 0:
                self.events.append(("checkpoint", self._snapshot()))
            if self.iteration >= self.args.steps:
                self.stop_reason = "done"
            return "ok", self.iteration, self._weights()

    def recent_loss(self):
        """The mean loss of the last updates (up to 50), or None before the first."""
        with self.lock:
            losses = list(self.recent_losses)
        return sum(losses) / len(losses) if losses else None

    def _snapshot(self):
        """The checkpoint state at this iteration (call under the lock); closes the segment first."""
        self._close_segment()
        return {
            "format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "run_id": self.args.run_id,
            "iteration": self.iteration,
            "model": collections.OrderedDict((k, v.detach().clone()) for k, v in self.model.state_dict().items()),
            "momentum": [self.optimizer.state[p]["momentum_buffer"].clone()
                         if "momentum_buffer" in self.optimizer.state.get(p, {}) else None for p in self.params],
            "trace": {"segments": self.segments},  # byte positions are added when the rows are on disk
        }

    def drop(self, name, why):
        with self.lock:
            if name in self.active and name not in self.told:
                self.active.discard(name)
                self._cluster_changed()
                log(f"dropped {name} ({why}); {len(self.active)} worker(s) left")

    def begin_stop(self, reason):
        with self.lock:
            if self.stop_reason is None:
                self.stop_reason = reason
            return self.stop_reason

    def final_snapshot(self):
        with self.lock:
            self._close_window()
            return self._snapshot()


_SERVER = None  # the PS's server, reached by the RPC handlers below


def _ps_pull(name):
    return _SERVER.pull(name)


def _ps_push(name, version, grads, loss, batch):
    return _SERVER.push(name, version, grads, loss, batch)


def _worker_alive():
    return True


def _set_parent_death_signal(supervisor_pid):
    """The child gets SIGTERM (and checkpoints) if the supervisor dies (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != supervisor_pid:
        sys.exit(EXIT_TERMINATED)


def run_ps_generation(args):
    global _SERVER
    # The supervisor asks for a restart with SIGUSR1 (a signal, not a store key: nothing to poll).
    restart = threading.Event()
    signal.signal(signal.SIGUSR1, lambda signum, frame: restart.set())
    if args.supervisor_pid is not None:
        _set_parent_death_signal(args.supervisor_pid)
    generation = args.generation
    control = connect_store(args, args.rpc_timeout)
    seal = store_json(control, f"gen/{generation}/seal")
    members = seal["members"]

    for name in os.listdir(args.checkpoint_dir):  # temp files of a writer that died
        if name.startswith(".ckpt-") and name.endswith(".tmp"):
            os.unlink(os.path.join(args.checkpoint_dir, name))
    model = cifar_models.make_model(args.model, args.seed, args.classes)
    optimizer = make_optimizer(model, args)
    traces = Traces(args.trace_dir)
    iteration, segments = 0, 0
    checkpoints = list_checkpoints(args.checkpoint_dir)
    for number, path in checkpoints:
        try:
            state = load_checkpoint(path, number, model)
        except Exception as e:  # torn, foreign or hostile: set it aside and fall back to the one before
            log(f"skipping {os.path.basename(path)} (renamed to *.unreadable): {' '.join(str(e).split())[:300]}")
            try:
                os.replace(path, path + ".unreadable")
            except OSError:
                pass
            continue
        restore_momentum(optimizer, state["momentum"])
        iteration, segments = state["iteration"], state["trace"]["segments"]
        traces.cut_loss_to(state["trace"]["loss_bytes"])
        log(f"resumed from {path} at iteration {iteration}")
        break
    else:
        if any(name.endswith(".pt.unreadable") for name in os.listdir(args.checkpoint_dir)):
            fail(f"no readable checkpoint in {args.checkpoint_dir}, only *.unreadable ones; refusing to start over "
                 "from iteration 0 (move them away to start a new run)")
        traces.cut_loss_to(0)
        log("no checkpoint: starting at iteration 0")

    _SERVER = server = PsServer(args, model, optimizer, iteration, segments, members)
    try:
        init_rpc_group(args, "ps", 0, len(members) + 1, generation, lambda: os._exit(EXIT_FAILED),
                       threads=max(16, 2 * len(members) + 4))
    except Exception as e:  # a sealed worker never came: the supervisor starts the next generation
        fail(f"generation {generation}: the RPC group did not form: {str(e).splitlines()[0][:200]}")
    terminated = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: terminated.set())
    types = collections.Counter(m["instance_type"] for m in members)
    log(f"generation {generation} running with {len(members)} worker(s) "
        f"({';'.join(f'{t}={n}' for t, n in sorted(types.items()))}) from iteration {iteration}")

    pings = {}  # name -> its outstanding liveness RPC; polled here, so the loop never waits on a peer

    def ping_workers():
        for name, future in list(pings.items()):
            if future.done():
                del pings[name]
                try:
                    future.wait()
                except Exception as e:
                    server.drop(name, f"no answer: {str(e).splitlines()[0][:120]}")
        for name in server.members:
            if name in server.active and name not in pings:
                pings[name] = rpc.rpc_async(name, _worker_alive, timeout=args.ping_timeout)

    # Disk writes run in their own thread: fsync can take seconds on a busy disk, and the loop below must
    # keep answering SIGTERM, restarts and pings meanwhile.
    stop_writing = threading.Event()
    written = []

    def writer():
        try:
            while True:
                finishing = stop_writing.is_set()
                pending = [server.events.popleft() for _ in range(len(server.events))]
                if pending:
                    checkpoints = traces.write(pending)
                    if checkpoints:  # only the newest: the disk may be slower than the updates
                        written.append((checkpoints[-1]["iteration"],
                                        write_checkpoint(args.checkpoint_dir, checkpoints[-1], args.keep_checkpoints)))
                        write_progress(args.checkpoint_dir, args.run_id, checkpoints[-1]["iteration"], server.recent_loss())
                elif finishing:
                    return
                else:
                    time.sleep(0.05)
        except Exception as e:  # a full or failing disk: stop; the next generation resumes from the last good checkpoint
            print(f"{_prefix()}: error: writing traces or checkpoints failed: {e}", file=sys.stderr, flush=True)
            os._exit(EXIT_FAILED)

    writer_thread = threading.Thread(target=writer, daemon=True)
    writer_thread.start()

    last_report, last_iteration = time.monotonic(), iteration
    last_ping = 0.0
    reason = None
    while True:
        if time.monotonic() - last_ping >= 0.5:
            ping_workers()
            last_ping = time.monotonic()
        if terminated.is_set():
            reason = server.begin_stop("terminated")
        elif restart.is_set():
            reason = server.begin_stop("restart")
        else:
            reason = server.stop_reason
        if reason is not None:
            break
        now = time.monotonic()
        if now - last_report >= 1.0:
            with server.lock:
                done, recent = server.iteration, list(server.recent_losses)
                staleness = server.staleness_sum / max(server.updates, 1)
                active = len(server.active)
            if recent:
                log(f"iteration {done}  loss {sum(recent) / len(recent):.4f}  workers {active}  "
                    f"{(done - last_iteration) / (now - last_report):.0f} updates/s  staleness {staleness:.2f}")
            last_report, last_iteration = now, done
        time.sleep(0.05)

    # Stop: every live worker is told at its next push (or pull), then a last checkpoint.
    deadline = time.monotonic() + min(args.rpc_timeout, 10.0)
    while time.monotonic() < deadline:
        with server.lock:
            waiting = server.active - server.told
        if not waiting:
            break
        time.sleep(0.05)
    if reason == "diverged":  # the weights are what diverged: the last periodic checkpoint stays the newest
        print(f"{_prefix()}: error: training diverged: {DIVERGED_AFTER} pushes in a row had a non-finite loss or "
              f"gradient at iteration {server.iteration} (lower --lr, or resume from an earlier checkpoint; with --precision "
              "fp16 the fixed loss scale may overflow instead: try bf16)",
              file=sys.stderr, flush=True)
        stop_writing.set()
        writer_thread.join()
        time.sleep(0.3)  # let the last replies leave
        rpc.shutdown(graceful=False)
        os._exit(EXIT_DIVERGED)
    server.events.append(("checkpoint", server.final_snapshot()))
    stop_writing.set()
    writer_thread.join()
    final_iteration, path = written[-1]
    log(f"stopping ({reason}) at iteration {final_iteration}: wrote {os.path.basename(path)}")
    try:
        control.set(f"gen/{generation}/alive", str(len(server.told)))
    except RuntimeError:
        pass  # the supervisor is gone (this child got SIGTERM from it dying)
    time.sleep(0.3)  # let the last replies leave
    rpc.shutdown(graceful=False)
    code = {"done": EXIT_DONE, "restart": EXIT_RESTART}.get(reason, EXIT_TERMINATED)
    sys.stdout.flush()
    os._exit(code)  # RPC threads may linger; a normal interpreter exit could abort on them


# --------------------------------------------------------------------------------------------------
# A worker: announce, wait for a generation that includes it, train until told to stop. After a restart
# or a lost PS it re-executes itself (same PID, fresh RPC state) and announces again.


def reexecute():
    sys.stdout.flush()
    sys.stderr.flush()
    for entry in os.listdir("/proc/self/fd"):  # no socket of this incarnation survives exec
        fd = int(entry)
        if fd > 2:
            try:
                os.set_inheritable(fd, False)
            except OSError:
                pass
    os.environ["SPOTDNN_TRAIN_INCARNATION"] = str(int(os.environ.get("SPOTDNN_TRAIN_INCARNATION", "0")) + 1)
    os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:])


def wait_for_generation(store, args, info):
    """Announces this worker and waits for a sealed generation that includes it. Returns (seal, member)
    or None when the run is done."""
    ticket = store.add("tickets", 1)
    store.set(f"worker/{ticket}", json.dumps(info))
    seen = -1
    while True:
        if peek(store, "done") == "1":
            return None
        latest = peek(store, "generation")
        if latest is not None and latest.isdigit():
            latest = int(latest)
            for generation in range(max(seen + 1, latest), latest + 1):
                seal = store_json(store, f"gen/{generation}/seal")
                mine = [m for m in seal["members"] if m["ticket"] == ticket]
                if mine:
                    return seal, mine[0]
                if ticket <= seal["max_ticket"]:  # passed over (announced while sealing): announce again
                    ticket = store.add("tickets", 1)
                    store.set(f"worker/{ticket}", json.dumps(info))
            seen = latest
        time.sleep(0.1)


def run_worker(args):
    incarnation = int(os.environ.get("SPOTDNN_TRAIN_INCARNATION", "0"))
    try:
        store = connect_store(args, args.connect_timeout)
    except RuntimeError as e:
        fail(f"cannot reach the PS at {args.master_addr}:{args.master_port} within {args.connect_timeout:g} s: {e}")
    info = {"rank": args.rank, "instance_type": args.instance_type, "batch": args.batch, "pid": os.getpid()}
    try:
        found = wait_for_generation(store, args, info)
    except RuntimeError as e:
        fail(f"lost the PS at {args.master_addr}:{args.master_port} while waiting to join: {e}")
    if found is None:
        log("the run is done")
        return EXIT_DONE
    seal, me = found
    name = me["name"]
    log(f"generation {seal['generation']}: joining as {name} (rpc rank {me['rpc_rank']} of {len(seal['members']) + 1})")

    try:
        device = cifar_models.resolve_device(args.device)
        if device.type == "cuda":  # one GPU per worker process: several workers share a multi-GPU instance
            device = torch.device("cuda", args.local_rank % torch.cuda.device_count())
            torch.cuda.set_device(device)
        why = profiling.unsupported(device, args.precision)
        if why is not None:
            raise ValueError(f"--precision = {args.precision}: {why}")
        data = cifar_models.make_data(args.model, args.dataset, args.seed, args.classes)
    except ValueError as e:
        fail(str(e), 2)
    generator = torch.Generator().manual_seed(args.seed * 1_000_003 + args.rank * 10_007 + incarnation * 101 + me["ticket"])
    model = cifar_models.make_model(args.model, args.seed, args.classes).to(device)
    model.train()
    params = list(model.parameters())
    loss_fn = cifar_models.loss_function(args.model)
    precision = profiling.Precision(device, args.precision)
    grad_scale = 1024.0 if args.precision == "fp16" else 1.0  # fixed loss scaling; the gradients are unscaled below
    try:
        init_rpc_group(args, name, me["rpc_rank"], len(seal["members"]) + 1, seal["generation"], reexecute)
    except Exception as e:
        log(f"could not join generation {seal['generation']} ({str(e).splitlines()[0][:160]}); starting over")
        reexecute()
    outcome = "lost"
    try:
        status, version, weights = rpc.rpc_sync("ps", _ps_pull, args=(name,))
        if status == "ok" and (len(weights) != len(params) or any(w.shape != p.shape for w, p in zip(weights, params))):
            outcome = "mismatch"  # not a transient failure: announcing again would loop forever
            log(f"error: the PS trains another model: --model {args.model} --classes {args.classes} here does not match "
                "its weights (give the PS and every worker the same --model and --classes)")
            status = "mismatch"
        while status == "ok":
            with torch.no_grad():
                for p, w in zip(params, weights):
                    p.copy_(w)
            x, y = data.batch(args.batch, generator)
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            model.zero_grad(set_to_none=True)
            with precision:  # the TF32 switches hold for the backward pass too; autocast covers the forward only
                with precision.autocast():
                    loss = loss_fn(model(x), y)
                (loss * grad_scale if grad_scale != 1.0 else loss).backward()
            # Gradients travel to the PS on the CPU (TensorPipe moves CPU tensors everywhere).
            grads = [(p.grad.detach() / grad_scale if grad_scale != 1.0 else p.grad.detach()).cpu() for p in params]
            status, version, weights = rpc.rpc_sync("ps", _ps_push, args=(name, version, grads, loss.item(), args.batch))
        outcome = status
    except Exception as e:
        log(f"lost the PS ({str(e).splitlines()[0][:160]})")
    try:
        rpc.shutdown(graceful=False)
    except Exception:
        pass
    if outcome == "mismatch":
        sys.stdout.flush()
        os._exit(2)
    if outcome == "diverged":
        log("the PS stopped the run: training diverged (see its log)")
        sys.stdout.flush()
        os._exit(EXIT_FAILED)
    if outcome == "done":
        log("the run is done")
        sys.stdout.flush()
        os._exit(EXIT_DONE)
    log(f"generation {seal['generation']} ended ({outcome}); announcing again")
    reexecute()


def main(argv):
    global _role
    args = parse_args(argv)
    if args.profile:
        _role = "profile"
        try:
            profiling.check_output(args.profile_output)
            profiling.write_profile(profiling.run_profile(args), args.profile_output)
        except ValueError as e:
            fail(str(e), 2)
        except OSError as e:
            fail(f"--profile-output = {args.profile_output!r}: {e.strerror or e}")
        except RuntimeError as e:  # a non-finite loss, a CUDA or cuDNN error: one line, not a traceback
            fail(f"profiling failed: {' '.join(str(e).split())[:300]}")
        return EXIT_DONE
    if args.role == "ps":
        _role = "ps" if args.generation is None else f"ps/gen{args.generation}"
        if args.generation is not None:
            return run_ps_generation(args)
        return Supervisor(args).run()
    _role = f"worker{args.rank}"
    return run_worker(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
