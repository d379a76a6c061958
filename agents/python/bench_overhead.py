#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-step cost of the agent on the training thread.

Times a loop of N steps, each with a loader next() and the forward,
backward and optimizer phases as context managers, then step(); with the
agent enabled (sender asleep: a long flush interval, so only the training
thread's work is timed) and disabled (the same calls as no-ops), and prints
the difference in µs per step. Also the sender's cost per record (encoding
to NDJSON plus gzip), which runs on its own thread but takes the GIL.

  python3 bench_overhead.py [--steps N] [--repeat R] [--torch]

--torch also times the automatic hooks (root-module forward hooks, the
backward callback, the optimizer wrap / hooks) on a tiny model.
"""
import argparse
import gzip
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from strag_agent import _agent  # noqa: E402

DEAD_URL = "http://127.0.0.1:9"  # never contacted: the sender sleeps


def loop(n, a):
    phase = a.phase
    step = a.step
    t0 = time.perf_counter_ns()
    for _ in a.loader(range(n)) if a.enabled else range(n):
        with phase("forward"):
            pass
        with phase("backward"):
            pass
        with phase("optimizer"):
            pass
        step()
    return time.perf_counter_ns() - t0


def loop_step_only(n, a):
    step = a.step
    t0 = time.perf_counter_ns()
    for _ in range(n):
        step()
    return time.perf_counter_ns() - t0


def best(fn, n, a, repeat):
    return min(fn(n, a) for _ in range(repeat)) / n / 1000.0


def make_agent(n):
    return _agent.Agent(url=DEAD_URL, job="bench", rank=0, world_size=1,
                        flush_interval_s=3600, buffer_records=n + 16,
                        auto_step=False, collectives=False)


def bench_torch(n, repeat):
    import torch
    torch.set_num_threads(1)
    model = torch.nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2, 4)

    def run(a):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            out = model(x)
            out.sum().backward()
            opt.step()
            opt.zero_grad()
        return time.perf_counter_ns() - t0

    base = min(run(None) for _ in range(repeat)) / n / 1000.0
    a = _agent.Agent(url=DEAD_URL, job="bench", rank=0, world_size=1,
                     flush_interval_s=3600, buffer_records=n * repeat + 16,
                     model=model, optimizer=opt)
    hooked = min(run(a) for _ in range(repeat)) / n / 1000.0
    steps = a.stats()["steps"]
    a._sender._closing = True  # no flush to the dead URL
    a.close(0)
    return base, hooked, steps


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=100000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--torch", action="store_true")
    args = p.parse_args()
    n, r = args.steps, args.repeat

    off = _agent.Agent(url="")
    base = best(loop, n, off, r)
    base_step = best(loop_step_only, n, off, r)

    a = make_agent(n)
    # warm up, then measure each repeat on a fresh buffer
    loop(1000, a)
    times, times_step = [], []
    for _ in range(r):
        a._q.clear()
        times.append(loop(n, a) / n / 1000.0)
        a._q.clear()
        times_step.append(loop_step_only(n, a) / n / 1000.0)
    on, on_step = min(times), min(times_step)

    # the sender's side: encode + gzip per record
    recs = list(a._q)[:20000]
    s = a._sender
    t0 = time.perf_counter_ns()
    lines = [s._encode_step(x, a.job, a.rank, a.epoch) for x in recs]
    t1 = time.perf_counter_ns()
    gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=1)
    t2 = time.perf_counter_ns()
    a._sender._closing = True
    a.close(0)

    print("python %s" % sys.version.split()[0])
    print("step() + loader next() + 3 phases: %.2f µs/step with the agent, "
          "%.2f µs/step disabled: agent cost %.2f µs/step"
          % (on, base, on - base))
    print("step() alone: %.2f µs/step (disabled %.2f): agent cost %.2f µs/step"
          % (on_step, base_step, on_step - base_step))
    print("sender thread: encode %.2f µs/record, gzip -1 %.2f µs/record"
          % ((t1 - t0) / len(recs) / 1000.0, (t2 - t1) / len(recs) / 1000.0))
    if args.torch:
        tb, th, steps = bench_torch(max(1000, n // 20), r)
        print("torch %s, tiny model forward+backward+opt.step: %.2f µs/step "
              "bare, %.2f µs/step with model+optimizer hooks: hooks cost "
              "%.2f µs/step (%d steps recorded)"
              % (__import__("torch").__version__, tb, th, th - tb, steps))


if __name__ == "__main__":
    main()
