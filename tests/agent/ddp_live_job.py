#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A real multi-process DDP job (CPU, gloo) reporting live to a collector
through strag_agent, with one straggler injected on purpose.

--world processes (default 4) train a small MLP under
DistributedDataParallel, rendezvous over tcp://127.0.0.1:PORT, each with
strag_agent.init(url=--url, job=--job, model=ddp, optimizer=opt) and its
loader wrapped by strag_agent.loader (no explicit step(): the optimizer
hook closes the steps). Modes (on rank --rank only, from step --from on):

  healthy   nobody is slow (control)
  slow-mid  --delay-ms of extra real compute per step (matmuls in a loop
            until the delay has passed), before the forward: a slow GPU/host
  gc        real Python GC pauses: the rank keeps a large heap of
            long-lived objects and every --gc-every steps makes cyclic
            garbage and runs gc.collect()
  data      the rank's data loader stalls: its next() sleeps --delay-ms

Stops after --steps steps or --seconds seconds (the ranks agree on the stop
through a one-element all_reduce every 5 steps, timed as dp like any other
collective). Prints one JSON line per rank with what its agent measured and
sent, then one line for the job; exits 0 when every rank finished.

usage: ddp_live_job.py --url http://HOST:PORT --job NAME [--mode M] ...
Needs torch with gloo (Debian's python3-torch: /usr/bin/python3).
"""
import argparse
import gc
import json
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "agents", "python"))
MODES = ("healthy", "slow-mid", "gc", "data")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True, help="the collector, http://host:port")
    p.add_argument("--job", default="ddp-live")
    p.add_argument("--token", default=None,
                   help="bearer token (default: STRAG_TOKEN / STRAG_TOKEN_FILE)")
    p.add_argument("--mode", choices=MODES, default="healthy")
    p.add_argument("--rank", type=int, default=None,
                   help="the straggler's rank (default: world // 2)")
    p.add_argument("--delay-ms", type=float, default=60.0,
                   help="slow-mid: extra compute; data: loader stall")
    p.add_argument("--from", dest="from_step", type=int, default=10,
                   help="first step (1-based) with the straggler")
    p.add_argument("--gc-every", type=int, default=3,
                   help="gc mode: a collection every this many steps")
    p.add_argument("--gc-heap", type=int, default=1500000,
                   help="gc mode: long-lived objects kept on the heap")
    p.add_argument("--world", type=int, default=4)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--seconds", type=float, default=120.0)
    p.add_argument("--width", type=int, default=320)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--flush-interval", type=float, default=1.0)
    p.add_argument("--usd-per-gpu-hour", type=float, default=None)
    p.add_argument("--port", type=int, default=0, help="rendezvous; 0: free one")
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args(argv)
    if args.rank is None:
        args.rank = args.world // 2
    if not 0 <= args.rank < args.world:
        p.error("--rank %d is not in [0, %d)" % (args.rank, args.world))
    return args


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Batches(object):
    """An endless loader of random batches; in data mode the straggler's
    next() stalls."""

    def __init__(self, torch, args, rank, counter):
        self.torch = torch
        self.args = args
        self.rank = rank
        self.counter = counter  # [steps started], shared with the loop
        self.g = torch.Generator().manual_seed(args.seed + rank)

    def __iter__(self):
        return self

    def __next__(self):
        a = self.args
        step = self.counter[0] + 1
        if a.mode == "data" and self.rank == a.rank and step >= a.from_step:
            time.sleep(a.delay_ms / 1000.0)
        x = self.torch.randn(a.batch, a.width, generator=self.g)
        y = self.torch.randn(a.batch, a.width, generator=self.g)
        return x, y


def busy_compute(torch, ms, width):
    """Real compute (matmuls) for about ms milliseconds."""
    end = time.perf_counter() + ms / 1000.0
    m = torch.randn(width, width)
    n = 0
    while time.perf_counter() < end:
        m = torch.tanh(m @ m * 0.01)
        n += 1
    return n


def make_garbage(n):
    """n reference cycles: only the cyclic collector frees them."""
    for _ in range(n):
        a = {"x": [0] * 4}
        b = [a]
        a["b"] = b


def worker(rank, args, port, out_q=None):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    if AGENT_DIR not in sys.path:
        sys.path.insert(0, AGENT_DIR)
    import strag_agent

    torch.set_num_threads(1)
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(args.world),
                      LOCAL_RANK=str(rank))
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=args.world)
    torch.manual_seed(args.seed)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
    model = DDP(torch.nn.Sequential(*layers[:-1]))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    agent = strag_agent.init(url=args.url, job=args.job, token=args.token,
                             flush_interval_s=args.flush_interval,
                             usd_per_gpu_hour=args.usd_per_gpu_hour,
                             model=model, optimizer=opt)
    straggler = args.mode != "healthy" and rank == args.rank
    heap = None
    if args.mode == "gc" and straggler:
        heap = [[i] for i in range(args.gc_heap)]  # long-lived: slow full GCs
    counter = [0]
    t_start = time.monotonic()
    stop = torch.zeros(1)
    step = 0
    try:
        for x, y in strag_agent.loader(Batches(torch, args, rank, counter)):
            step = counter[0] + 1
            slow = straggler and step >= args.from_step
            if slow and args.mode == "slow-mid":
                busy_compute(torch, args.delay_ms, 128)
            if slow and args.mode == "gc" and step % args.gc_every == 0:
                make_garbage(200000)
                gc.collect()
            opt.zero_grad(set_to_none=True)
            out = model(x)
            loss = torch.nn.functional.mse_loss(out, y)
            loss.backward()
            opt.step()  # closes the step in the agent
            counter[0] = step
            if step % 5 == 0 or step >= args.steps:
                stop.fill_(1.0 if (step >= args.steps or
                                   time.monotonic() - t_start > args.seconds)
                           else 0.0)
                dist.all_reduce(stop, op=dist.ReduceOp.MAX)
                if stop.item() > 0:
                    break
        wall = time.monotonic() - t_start
        flushed = strag_agent.flush(10.0)
        s = strag_agent.stats()
        t = s.get("totals", {})
        n = max(1, t.get("steps", 0))
        coll = {k: round(v[0] / n / 1e6, 2) for k, v in t.get("coll", {}).items()}
        coll_ns = sum(v[0] for v in t.get("coll", {}).values())
        summary = {
            "rank": rank, "straggler": straggler, "mode": args.mode,
            "steps": step, "records_acked": s.get("records_acked"),
            "records_dropped": s.get("records_dropped"),
            "retries": s.get("retries"), "flushed": flushed,
            "state": s.get("state"), "wall_s": round(wall, 2),
            "mean_ms": {
                "step": round(t.get("step_ns", 0) / n / 1e6, 2),
                "busy": round((t.get("step_ns", 0) - coll_ns) / n / 1e6, 2),
                "data": round(t.get("data_ns", 0) / n / 1e6, 2),
                "fwd": round(t.get("fwd_ns", 0) / n / 1e6, 2),
                "bwd": round(t.get("bwd_ns", 0) / n / 1e6, 2),
                "opt": round(t.get("opt_ns", 0) / n / 1e6, 2),
                "gc": round(t.get("gc_ns", 0) / n / 1e6, 2),
                "coll": coll,
            },
            "gc_n": t.get("gc_n", 0),
        }
        emit(summary)
        strag_agent.shutdown(5.0)
        dist.barrier()
    finally:
        del heap
        dist.destroy_process_group()
    return agent


def emit(obj):
    """One JSON line in one write(2), so that the ranks' lines never mix."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (json.dumps(obj) + "\n").encode())


def main(argv=None):
    args = parse_args(argv)
    import torch.multiprocessing as mp
    port = args.port or free_port()
    t0 = time.monotonic()
    try:
        mp.spawn(worker, args=(args, port), nprocs=args.world, join=True)
    except Exception as e:
        print(json.dumps({"job": args.job, "ok": False, "error": repr(e)}),
              flush=True)
        return 1
    print(json.dumps({"job": args.job, "ok": True, "mode": args.mode,
                      "straggler": None if args.mode == "healthy" else args.rank,
                      "world": args.world,
                      "wall_s": round(time.monotonic() - t0, 2)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
