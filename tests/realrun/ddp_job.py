#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small multi-process DDP job on the CPU (gloo) traced with torch.profiler,
with one straggler injected on purpose.

Each of --world processes trains the same small MLP under
DistributedDataParallel, profiles --steps steps (torch.profiler schedule:
1 wait, 2 warm-up, then the active steps) and writes its trace to
OUT/rank-<r>.pt.trace.json (Chrome-trace JSON as the installed torch writes
it). Seeds are fixed; the rendezvous uses a free TCP port on 127.0.0.1.

Stragglers (on rank --rank only):
  none                  balanced control
  larger-batch          --batch-factor times the batch (more compute per step)
  sleep-before-forward  sleeps at the start of every step, before it makes
                        its batch and runs its forward (a slow host / data
                        loader: a gap before the step's first op)
  few-pauses            sleeps between its forward and its backward at the
                        active steps in --pause-steps (0-based) only (a
                        transient host pause in the middle of a step)

The sleeps scale with the machine: max(--sleep-ms, --sleep-share x the mean
warm-up step time) and max(--pause-ms, --pause-share x it), as the straggler
measured it. On 2 cores shared by 4 ranks a sleeping rank frees CPU for the
others, so a fixed sleep fades into the noise when the machine is slow.

usage: ddp_job.py --out DIR [--straggler KIND] [--rank R] [--world N] ...
Needs torch (e.g. Debian's python3-torch: run it with /usr/bin/python3).
Prints a line of JSON per injected sleep ({"rank", "active_step",
"sleep_ms"}), then one with the job's ground truth and its wall time.
"""
import argparse
import datetime
import json
import os
import socket
import sys
import time

KINDS = ("none", "larger-batch", "sleep-before-forward", "few-pauses")
WAIT, WARMUP = 1, 2  # profiler schedule before the active steps


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder for the traces")
    p.add_argument("--straggler", choices=KINDS, default="none")
    p.add_argument("--rank", type=int, default=2, help="the straggler's rank")
    p.add_argument("--world", type=int, default=4, help="processes")
    p.add_argument("--steps", type=int, default=10, help="profiled steps")
    p.add_argument("--batch", type=int, default=192)
    p.add_argument("--batch-factor", type=int, default=3)
    p.add_argument("--sleep-ms", type=float, default=40.0)
    p.add_argument("--sleep-share", type=float, default=0.5)
    p.add_argument("--pause-ms", type=float, default=150.0)
    p.add_argument("--pause-share", type=float, default=1.5)
    p.add_argument("--pause-steps", default="3,7",
                   help="active steps (0-based) with a pause")
    p.add_argument("--width", type=int, default=256, help="hidden width")
    p.add_argument("--layers", type=int, default=4, help="hidden layers")
    p.add_argument("--bucket-mb", type=float, default=0.5,
                   help="DDP bucket size, the first bucket's too: the "
                        "default gives 2 all-reduces per step")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--port", type=int, default=0, help="0: pick a free one")
    args = p.parse_args(argv)
    if not 0 <= args.rank < args.world:
        p.error(f"--rank {args.rank} is not in [0, {args.world})")
    args.pause_steps = sorted({int(s) for s in args.pause_steps.split(",") if s})
    return args


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def host_delays_s(args, rank, active_step, warmup_step_s):
    """(before the step, before the backward): seconds this rank sleeps at
    this active step (negative: a warm-up step, no straggler there), given
    the mean warm-up step time it measured."""
    if rank != args.rank or active_step < 0:
        return 0.0, 0.0
    if args.straggler == "sleep-before-forward":
        return max(args.sleep_ms / 1e3, args.sleep_share * warmup_step_s), 0.0
    if args.straggler == "few-pauses" and active_step in args.pause_steps:
        return 0.0, max(args.pause_ms / 1e3, args.pause_share * warmup_step_s)
    return 0.0, 0.0


def make_model(args):
    import torch.nn as nn
    layers, width = [], args.width
    for _ in range(args.layers):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


def worker(rank, args):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)  # same initial weights everywhere
    # A bounded timeout: a lost worker fails the job instead of hanging it.
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}",
                            rank=rank, world_size=args.world,
                            timeout=datetime.timedelta(seconds=120))
    if hasattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES"):  # else 1 MB: 1 bucket
        dist._DEFAULT_FIRST_BUCKET_BYTES = int(args.bucket_mb * 2**20)
    model = DDP(make_model(args), bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batch = args.batch
    if args.straggler == "larger-batch" and rank == args.rank:
        batch *= args.batch_factor
    gen = torch.Generator().manual_seed(args.seed + rank)
    path = os.path.join(args.out, f"rank-{rank}.pt.trace.json")

    schedule = torch.profiler.schedule(wait=WAIT, warmup=WARMUP,
                                       active=args.steps, repeat=1)
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU],
            schedule=schedule,
            on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        warmup_s, mark = [], time.monotonic()
        for step in range(WAIT + WARMUP + args.steps):
            mean_warmup_s = sum(warmup_s) / max(len(warmup_s), 1)
            before_step, before_backward = host_delays_s(
                args, rank, step - WAIT - WARMUP, mean_warmup_s)
            if before_step + before_backward and rank == args.rank:
                print(json.dumps({"rank": rank, "active_step":
                                  step - WAIT - WARMUP, "sleep_ms": round(
                                      1e3 * (before_step + before_backward))}),
                      flush=True)
            if before_step:
                time.sleep(before_step)  # host-side: no op in the trace
            x = torch.randn(batch, args.width, generator=gen)
            y = torch.randint(0, 10, (batch,), generator=gen)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            if before_backward:
                time.sleep(before_backward)
            loss.backward()  # DDP all-reduces the gradient buckets
            opt.step()
            prof.step()
            if WAIT <= step < WAIT + WARMUP:
                warmup_s.append(time.monotonic() - mark)
            mark = time.monotonic()
    dist.barrier()  # no rank exits while another still exports
    dist.destroy_process_group()


def main(argv=None):
    args = parse_args(argv)
    import torch.multiprocessing as mp  # imports torch once, before fork
    os.makedirs(args.out, exist_ok=True)
    if args.port == 0:
        args.port = free_port()
    start = time.monotonic()
    # fork: the workers need not import torch again (seconds on 2 cores).
    mp.start_processes(worker, args=(args,), nprocs=args.world, join=True,
                       start_method="fork")
    truth = {"straggler": args.straggler,
             "rank": args.rank if args.straggler != "none" else None,
             "world": args.world, "steps": args.steps,
             "wall_s": round(time.monotonic() - start, 2)}
    print(json.dumps(truth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
