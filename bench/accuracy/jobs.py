#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Real multi-process PyTorch jobs with a known straggler: the cases of the
real-run accuracy benchmark (bench/accuracy/README.md).

Each case is a small training job of 2-8 processes on the CPU
(torch.distributed with gloo on 127.0.0.1), traced with torch.profiler, with
one straggler injected on purpose (or none) and a fixed seed. Running a case
writes, under OUT:

  torch113/   the traces as the installed torch writes them (one per rank
              and profiling cycle; Debian's torch 1.13: a bare JSON array)
  sidecar/    per rank: what to_kineto2.py needs to re-export the traces
              (epoch time of each ProfilerStep start, recorded shapes, pid)
              and the injections the rank made
  truth.json  the ground truth: straggler rank(s), cause, persistence

The injected delays scale with the step time the job measures before it is
profiled (two unprofiled steps), so that the signal survives a loaded
2-core machine: on 2 cores shared by 4 ranks a fixed sleep fades when the
machine is slow.

usage: jobs.py list
       jobs.py run CASE --out DIR [--seed N]
Needs torch with gloo (Debian's python3-torch: run with /usr/bin/python3).
"""
import argparse
import datetime
import gc
import json
import math
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import List, Optional

WAIT, WARMUP, ACTIVE = 1, 2, 10  # profiler schedule (one cycle)
PRE_STEPS = 2  # unprofiled steps whose time sizes the injections


@dataclass
class Case:
    """A job and its ground truth. `ranks`: the straggler's rank(s) (the
    ranks of the heavy stage for stage_imbalance; those that most often
    hold the longest sequences for sequence_length_imbalance); empty for a
    healthy job."""
    name: str
    kind: str  # ddp | pipeline | seqlen
    world: int
    ranks: List[int]
    cause: str
    persistence: Optional[str]  # persistent | transient | None (healthy,
    #                             or computed from the data: seqlen)
    seed: int
    opts: dict = field(default_factory=dict)
    about: str = ""


def _cases():
    c = []
    add = c.append
    add(Case("ddp-healthy-2", "ddp", 2, [], "none", None, 101,
             about="DDP MLP, 2 ranks, nothing injected"))
    add(Case("ddp-healthy-4", "ddp", 4, [], "none", None, 102,
             about="DDP MLP, 4 ranks, nothing injected"))
    add(Case("ddp-slow-rank-2", "ddp", 2, [1], "faulty_worker", "persistent",
             103, {"batch_factor": 3},
             about="rank 1 computes 3x the batch every step"))
    add(Case("ddp-slow-rank-4", "ddp", 4, [2], "faulty_worker", "persistent",
             104, {"batch_factor": 3},
             about="rank 2 computes 3x the batch every step"))
    add(Case("ddp-slow-rank-8", "ddp", 8, [5], "faulty_worker", "persistent",
             105, {"batch_factor": 3, "active": 8},
             about="8 ranks; rank 5 computes 3x the batch every step"))
    add(Case("dataloader-slow-4", "ddp", 4, [1], "data_loading", "persistent",
             106, {"loader_share": 0.6, "loader_steps": "all"},
             about="rank 1's Dataset.__getitem__ sleeps: 0.6 step per batch, "
                   "every step"))
    add(Case("dataloader-stall-4", "ddp", 4, [3], "data_loading", "transient",
             107, {"loader_share": 1.5, "loader_steps": [3, 7]},
             about="rank 3's Dataset.__getitem__ stalls 1.5 steps at 2 of "
                   "10 steps"))
    add(Case("gc-pauses-4", "ddp", 4, [2], "host_pause", "transient", 108,
             {"gc_share": 1.5, "gc_steps": [2, 5, 8], "gc_annotate": False},
             about="rank 2 holds a large Python object graph and runs "
                   "gc.collect() mid-step at 3 of 10 steps (not annotated)"))
    add(Case("gc-annotated-2", "ddp", 2, [1], "host_pause", "persistent", 109,
             {"gc_share": 0.6, "gc_steps": "all", "gc_annotate": True},
             about="rank 1 runs gc.collect() mid-step every step, inside "
                   "record_function('gc.collect')"))
    add(Case("seqlen-4", "seqlen", 4, None, "sequence_length_imbalance",
             None, 110, {"long_rank": 1, "long_share": 0.4},
             about="embedding + attention + MLP; each rank's sequence "
                   "length is drawn per step (64-512 tokens, steps of 16; "
                   "rank 1's shard holds long documents: 400-512 in 40% "
                   "of its steps), record_shapes=True"))
    add(Case("pp2-gpipe-heavy-last", "pipeline", 2, [1], "stage_imbalance",
             "persistent", 111, {"stages": 2, "order": "gpipe", "p2p": "sync",
                                 "heavy": "last"},
             about="2 stages, GPipe, send/recv; the last stage has a large "
                   "output layer + loss"))
    add(Case("pp2-1f1b-heavy-first", "pipeline", 2, [0], "stage_imbalance",
             "persistent", 112, {"stages": 2, "order": "1f1b",
                                 "p2p": "async", "heavy": "first"},
             about="2 stages, 1F1B, isend/irecv; the first stage has 3x "
                   "the layers"))
    add(Case("pp4-gpipe-heavy-first", "pipeline", 4, [0], "stage_imbalance",
             "persistent", 113, {"stages": 4, "order": "gpipe",
                                 "p2p": "sync", "heavy": "first"},
             about="4 stages, GPipe, send/recv; the first stage has 3x the "
                   "layers"))
    add(Case("pp4-1f1b-heavy-last", "pipeline", 4, [3], "stage_imbalance",
             "persistent", 114, {"stages": 4, "order": "1f1b",
                                 "p2p": "async", "heavy": "last"},
             about="4 stages, 1F1B, isend/irecv; the last stage has a large "
                   "output layer + loss"))
    add(Case("dp2-pp2-1f1b-heavy-last", "pipeline", 4, [2, 3],
             "stage_imbalance", "persistent", 115,
             {"stages": 2, "order": "1f1b", "p2p": "async", "heavy": "last"},
             about="DP 2 x PP 2 (rank = stage * 2 + replica), 1F1B, "
                   "isend/irecv, gradient all-reduce per stage; the last "
                   "stage (ranks 2, 3) is heavy"))
    add(Case("tbnames-slow-rank-4", "ddp", 4, [2], "faulty_worker",
             "persistent", 116, {"batch_factor": 3,
                                 "file_names": "default"},
             about="tensorboard_trace_handler's default names "
                   "(host_pid.ms.pt.trace.json, no rank); rank 2 computes "
                   "3x the batch"))
    add(Case("repeat2-dataloader-4", "ddp", 4, [1], "data_loading",
             "persistent", 117, {"loader_share": 0.6, "loader_steps": "all",
                                 "repeat": 2, "active": 5,
                                 "file_names": "worker"},
             about="schedule(repeat=2): two 5-step cycles, two files per "
                   "rank (tensorboard_trace_handler, worker_name rank-R); "
                   "rank 1's loader sleeps 0.6 step per batch"))
    return {x.name: x for x in c}


CASES = _cases()


# --- Sequence lengths (a pure function of the seed: the truth and the
# --- workers compute the same table). ---------------------------------------

SEQ_CHOICES = tuple(range(64, 513, 16))  # few ties between ranks


LONG_CHOICES = SEQ_CHOICES[-8:]  # 400-512 tokens


def seq_lengths(seed, world, steps, long_rank=None, long_share=0.0):
    """lengths[rank][step] for every step the job runs. Uniform draws leave
    no rank the straggler (who holds the longest sequence is a tie of
    near-ties), so `long_rank`'s shard holds long documents: in a share
    `long_share` of its steps its length is drawn from the longest choices
    (a skewed data shard; the slowest rank still moves)."""
    import random
    rnd = random.Random(seed)
    out = []
    for rank in range(world):
        row = []
        for _ in range(steps):
            long = rank == long_rank and rnd.random() < long_share
            row.append(rnd.choice(LONG_CHOICES if long else SEQ_CHOICES))
        out.append(row)
    return out


def seqlen_truth_ranks(lengths, active_steps):
    """The ranks that hold the longest sequence in the most active steps
    (ties: all of them)."""
    wins = [0] * len(lengths)
    for s in active_steps:
        longest = max(r[s] for r in lengths)
        for rank, r in enumerate(lengths):
            if r[s] == longest:
                wins[rank] += 1
    best = max(wins)
    return [r for r, w in enumerate(wins) if w == best], wins


# --- The schedule. ------------------------------------------------------------

def schedule_args(case):
    return dict(wait=WAIT, warmup=WARMUP, active=case.opts.get(
        "active", ACTIVE), repeat=case.opts.get("repeat", 1))


def profiled_steps(case):
    """(total training steps, indices of the active steps), counting from
    the first profiled step (the unprofiled PRE_STEPS come before)."""
    a = schedule_args(case)
    cycle = a["wait"] + a["warmup"] + a["active"]
    active = [c * cycle + a["wait"] + a["warmup"] + i
              for c in range(a["repeat"]) for i in range(a["active"])]
    return cycle * a["repeat"] + 1, active


def steps_set(spec, n_active):
    return set(range(n_active)) if spec == "all" else set(spec or ())


# --- Jobs. ---------------------------------------------------------------------

class Ctx:
    def __init__(self, rank, case, out):
        self.rank, self.case, self.out = rank, case, out
        self.opts = case.opts
        self.injections = []  # {"active_step", "what", "ms"}
        self.groups = []  # the ranks of each dist.new_group, in order
        self.step_s = None  # mean unprofiled step time (seconds)
        self.total, self.active = profiled_steps(case)
        self.n_steps = PRE_STEPS + self.total

    def is_straggler(self):
        return self.rank in (self.case.ranks or [])


class SleepyDataset:
    """A map-style dataset of fixed random samples; on a slow rank every
    __getitem__ sleeps `item_delay_s` (set by the training loop), as a
    dataset reading from a slow disk or decoding on the host would."""

    def __init__(self, x, y):
        self.x, self.y = x, y
        self.item_delay_s = 0.0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.item_delay_s:
            time.sleep(self.item_delay_s)
        return self.x[i], self.y[i]


class DdpJob:
    """DDP over an MLP fed by a DataLoader (num_workers=0), as users write
    it. Stragglers: a larger batch (more compute), a slow dataset, or GC
    pauses between forward and backward."""
    WIDTH, LAYERS, BATCH = 256, 4, 192

    def __init__(self, ctx):
        import torch
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP
        self.ctx, self.torch, self.nn = ctx, torch, nn
        torch.manual_seed(ctx.case.seed)
        layers = []
        for _ in range(self.LAYERS):
            layers += [nn.Linear(self.WIDTH, self.WIDTH), nn.ReLU()]
        self.model = DDP(nn.Sequential(*layers, nn.Linear(self.WIDTH, 10)),
                         bucket_cap_mb=0.5)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        batch = self.BATCH
        if ctx.is_straggler() and "batch_factor" in ctx.opts:
            batch = int(batch * ctx.opts["batch_factor"])
        gen = torch.Generator().manual_seed(ctx.case.seed * 100 + ctx.rank)
        n = batch * ctx.n_steps
        self.dataset = SleepyDataset(
            torch.randn(n, self.WIDTH, generator=gen),
            torch.randint(0, 10, (n,), generator=gen))
        self.loader = torch.utils.data.DataLoader(
            self.dataset, batch_size=batch, shuffle=False, num_workers=0)
        self.batch = batch
        self.graph = None  # the GC straggler's live object graph

    def batches(self):
        return self.loader

    def prepare(self, step_s):
        """After the unprofiled steps: sizes the GC straggler's live
        object graph so that a full collection takes gc_share steps."""
        o = self.ctx.opts
        if not (self.ctx.is_straggler() and "gc_share" in o):
            return
        target = o["gc_share"] * step_s
        graph, chunk = [], 100_000
        while True:
            graph.extend([i] for i in range(chunk))
            t = time.perf_counter()
            gc.collect()
            took = time.perf_counter() - t
            if took >= target or len(graph) > 12_000_000:
                break
            # Grow towards the target (collection time ~ tracked objects).
            more = int(len(graph) * (target / max(took, 1e-4) - 1) * 0.9)
            chunk = max(50_000, min(more, 4_000_000))
        self.graph = graph
        self.ctx.gc_calibrated_ms = round(1e3 * took, 1)

    def before_fetch(self, active_index):
        """Sets the slow dataset's delay for the batch fetched next."""
        o, ctx = self.ctx.opts, self.ctx
        delay = 0.0
        if ctx.is_straggler() and "loader_share" in o and \
                active_index is not None and active_index in steps_set(
                    o["loader_steps"], len(ctx.active)):
            delay = o["loader_share"] * ctx.step_s
            ctx.injections.append({"active_step": active_index,
                                   "what": "dataloader sleep",
                                   "ms": round(1e3 * delay, 1)})
        self.dataset.item_delay_s = delay / self.batch

    def train(self, batch, active_index):
        import torch.profiler
        x, y = batch
        loss = self.nn.functional.cross_entropy(self.model(x), y)
        self.opt.zero_grad()
        o, ctx = self.ctx.opts, self.ctx
        if self.graph is not None and active_index is not None and \
                active_index in steps_set(o["gc_steps"], len(ctx.active)):
            t = time.perf_counter()
            if o.get("gc_annotate"):
                with torch.profiler.record_function("gc.collect"):
                    gc.collect()
            else:
                gc.collect()
            ctx.injections.append({"active_step": active_index,
                                   "what": "gc.collect",
                                   "ms": round(1e3 * (time.perf_counter() - t),
                                               1)})
        loss.backward()
        self.opt.step()


class SeqLenJob:
    """A one-block transformer-ish language model under DDP; each rank's
    batch of 4 sequences has a length drawn per step (seq_lengths), so the
    slowest rank moves between steps. Attention is quadratic in the
    length."""
    VOCAB, DIM, BATCH = 512, 128, 4

    def __init__(self, ctx):
        import torch
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP
        self.ctx, self.torch, self.nn = ctx, torch, nn
        torch.manual_seed(ctx.case.seed)
        d = self.DIM

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(SeqLenJob.VOCAB, d)
                self.qkv = nn.Linear(d, 3 * d)
                self.proj = nn.Linear(d, d)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                         nn.Linear(4 * d, d))
                self.head = nn.Linear(d, SeqLenJob.VOCAB)

            def forward(self, tokens):
                h = self.emb(tokens)
                q, k, v = self.qkv(h).chunk(3, dim=-1)
                att = (q @ k.transpose(1, 2)) / math.sqrt(d)
                h = h + self.proj(att.softmax(-1) @ v)
                h = h + self.mlp(h)
                return self.head(h)

        self.model = DDP(Block())
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.lengths = seq_lengths(
            ctx.case.seed, ctx.case.world, ctx.n_steps,
            ctx.case.opts.get("long_rank"),
            ctx.case.opts.get("long_share", 0.0))[ctx.rank]
        gen = torch.Generator().manual_seed(ctx.case.seed * 100 + ctx.rank)
        data = [torch.randint(0, self.VOCAB, (self.BATCH, s + 1),
                              generator=gen) for s in self.lengths]

        class Sequences(torch.utils.data.Dataset):
            def __len__(self):
                return len(data)

            def __getitem__(self, i):
                return data[i]
        # batch_size=None: each item is already a batch (one length each).
        self.loader = torch.utils.data.DataLoader(Sequences(),
                                                  batch_size=None)

    def batches(self):
        return self.loader

    def prepare(self, step_s):
        pass

    def before_fetch(self, active_index):
        pass

    def train(self, tokens, active_index):
        logits = self.model(tokens[:, :-1])
        loss = self.nn.functional.cross_entropy(
            logits.reshape(-1, self.VOCAB), tokens[:, 1:].reshape(-1))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


class PipelineJob:
    """A pipeline of MLP stages over torch.distributed point-to-point ops:
    GPipe order with blocking send/recv, or 1F1B order with isend/irecv.
    With dp > 1 (world = stages x dp, rank = stage * dp + replica) each
    stage all-reduces its gradients over its replicas (a subgroup). One
    stage is heavy by design: 'first' (3x the layers) or 'last' (a large
    output layer and the loss)."""
    WIDTH, LAYERS, MICRO, MB = 256, 3, 4, 48
    HEAVY_LAYERS, VOCAB = 3, 1536

    def __init__(self, ctx):
        import torch
        import torch.distributed as dist
        import torch.nn as nn
        self.ctx, self.torch, self.dist, self.nn = ctx, torch, dist, nn
        o = ctx.opts
        self.stages = o["stages"]
        self.dp = ctx.case.world // self.stages
        self.stage, self.replica = divmod(ctx.rank, self.dp)
        self.prev = ctx.rank - self.dp if self.stage > 0 else None
        self.next = ctx.rank + self.dp if self.stage < self.stages - 1 \
            else None
        self.dp_group = None
        if self.dp > 1:  # every rank creates every group, in order
            for s in range(self.stages):
                ranks = [s * self.dp + r for r in range(self.dp)]
                ctx.groups.append(ranks)
                g = dist.new_group(ranks)
                if s == self.stage:
                    self.dp_group = g
        torch.manual_seed(ctx.case.seed + self.stage)
        w = self.WIDTH
        n = self.LAYERS
        first, last = self.stage == 0, self.stage == self.stages - 1
        if o["heavy"] == "first" and first:
            n *= self.HEAVY_LAYERS
        layers = []
        for _ in range(n):
            layers += [nn.Linear(w, w), nn.ReLU()]
        if last:
            vocab = self.VOCAB if o["heavy"] == "last" else 10
            layers.append(nn.Linear(w, vocab))
        self.vocab = vocab if last else None
        self.model = nn.Sequential(*layers)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.gen = torch.Generator().manual_seed(ctx.case.seed * 100 +
                                                 ctx.rank)

    def batches(self):
        for _ in range(self.ctx.n_steps):
            yield None

    def prepare(self, step_s):
        pass

    def before_fetch(self, active_index):
        pass

    # One microbatch forward / backward; p2p with the neighbour stages.
    def _recv(self, src, shape):
        t = self.torch.empty(shape)
        if self.ctx.opts["p2p"] == "async":
            self.dist.irecv(t, src=src).wait()
        else:
            self.dist.recv(t, src=src)
        return t

    def _send(self, t, dst):
        if self.ctx.opts["p2p"] == "async":
            self.pending.append(self.dist.isend(t, dst=dst))
        else:
            self.dist.send(t, dst=dst)

    def _forward(self, mb):
        torch = self.torch
        shape = (self.MB, self.WIDTH)
        if self.prev is None:
            x = torch.randn(shape, generator=self.gen)
        else:
            x = self._recv(self.prev, shape).requires_grad_(True)
        out = self.model(x)
        if self.next is not None:
            self._send(out.detach(), self.next)
        else:
            target = torch.randint(0, self.vocab, (self.MB,),
                                   generator=self.gen)
            out = self.nn.functional.cross_entropy(out, target)
        self.saved[mb] = (x, out)

    def _backward(self, mb):
        x, out = self.saved.pop(mb)
        if self.next is None:
            out.backward()
        else:
            grad = self._recv(self.next, out.shape)
            out.backward(grad)
        if self.prev is not None:
            self._send(x.grad, self.prev)

    def train(self, _, active_index):
        self.saved, self.pending = {}, []
        self.opt.zero_grad()
        m = self.MICRO
        if self.ctx.opts["order"] == "gpipe":
            for mb in range(m):
                self._forward(mb)
            for mb in range(m):
                self._backward(mb)
        else:  # 1F1B: warm-up forwards, steady 1F1B, cool-down backwards
            warm = min(self.stages - self.stage - 1, m)
            for mb in range(warm):
                self._forward(mb)
            for i in range(m - warm):
                self._forward(warm + i)
                self._backward(i)
            for mb in range(m - warm, m):
                self._backward(mb)
        for h in self.pending:
            h.wait()
        if self.dp_group is not None:
            for p in self.model.parameters():
                self.dist.all_reduce(p.grad, group=self.dp_group)
                p.grad /= self.dp
        self.opt.step()


KINDS = {"ddp": DdpJob, "seqlen": SeqLenJob, "pipeline": PipelineJob}


# --- One rank. ------------------------------------------------------------------

def _trace_handler(ctx, trace_dir, files):
    """on_trace_ready: writes this cycle's trace with the file name the case
    asks for, and keeps the recorded shapes for the re-export (torch 1.13
    does not write them into the Chrome trace)."""
    import torch.profiler
    mode = ctx.opts.get("file_names", "rank")
    if mode == "default":
        writer = torch.profiler.tensorboard_trace_handler(trace_dir)
    elif mode == "worker":
        writer = torch.profiler.tensorboard_trace_handler(
            trace_dir, worker_name=f"rank-{ctx.rank}")
    else:
        def writer(prof):
            prof.export_chrome_trace(os.path.join(
                trace_dir, f"rank-{ctx.rank}.pt.trace.json"))

    def handler(prof):
        before = set(os.listdir(trace_dir))
        writer(prof)
        # The ranks write into one folder at once: only this rank's names.
        prefix = {"default": f"{socket.gethostname()}_{os.getpid()}.",
                  "worker": f"rank-{ctx.rank}."}.get(
                      mode, f"rank-{ctx.rank}.pt.trace.json")
        new = sorted(n for n in set(os.listdir(trace_dir)) - before
                     if n.startswith(prefix))
        if len(new) != 1:
            raise RuntimeError(f"rank {ctx.rank}: cannot tell its trace "
                               f"file among {new}")
        shapes = []
        if ctx.case.kind == "seqlen":
            for e in prof.events():
                if any(e.input_shapes or ()):
                    shapes.append([e.name, e.time_range.start,
                                   e.time_range.end - e.time_range.start,
                                   e.thread, e.input_shapes])
        files.append({"trace": new[0], "shapes": shapes})
    return handler


def worker(rank, case_name, out, port):
    import torch
    import torch.distributed as dist
    import torch.profiler

    case = CASES[case_name]
    ctx = Ctx(rank, case, out)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=case.world,
                            timeout=datetime.timedelta(seconds=120))
    job = KINDS[case.kind](ctx)
    trace_dir = os.path.join(out, "torch113")
    files, anchors, step_times = [], [], []
    sched = torch.profiler.schedule(**schedule_args(case))
    active = {s: i for i, s in enumerate(ctx.active)}
    it = enumerate(job.batches())  # the loop users write, unrolled

    # Unprofiled steps first: their mean time sizes the injections.
    for _ in range(PRE_STEPS):
        job.before_fetch(None)
        t = time.perf_counter()
        _, batch = next(it)
        job.train(batch, None)
        step_times.append(time.perf_counter() - t)
    # The slowest rank's time: the same on every rank (a barrier per step).
    t = torch.tensor([sum(step_times) / len(step_times)])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    ctx.step_s = float(t)
    job.prepare(ctx.step_s)
    dist.barrier()

    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched,
            record_shapes=case.kind == "seqlen",
            on_trace_ready=_trace_handler(ctx, trace_dir, files)) as prof:
        for step in range(ctx.total):
            job.before_fetch(active.get(step))
            _, batch = next(it)
            job.train(batch, active.get(step))
            prof.step()
            # ProfilerStep#<step_num> has just begun: the epoch clock of
            # its start, for the re-export.
            anchors.append([prof.step_num, time.time_ns()])
    dist.barrier()  # no rank leaves while another still exports
    side = {"rank": rank, "world_size": case.world, "pid": os.getpid(),
            "host": socket.gethostname(), "case": case.name,
            "step_s": ctx.step_s, "files": files, "step_anchors": anchors,
            "injections": ctx.injections,
            "gc_calibrated_ms": getattr(ctx, "gc_calibrated_ms", None),
            "record_shapes": case.kind == "seqlen", "groups": ctx.groups}
    with open(os.path.join(out, "sidecar", f"rank-{rank}.json"), "w") as f:
        json.dump(side, f)
    dist.destroy_process_group()


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def truth_of(case, seed=None):
    total, active = profiled_steps(case)
    t = {"schema": "strag.accuracy-truth/1", "case": case.name,
         "kind": case.kind, "world_size": case.world,
         "seed": case.seed if seed is None else seed,
         "straggler_ranks": case.ranks, "cause": case.cause,
         "persistence": case.persistence, "profiled_steps": len(active),
         "schedule": schedule_args(case), "about": case.about,
         "opts": case.opts}
    if case.kind == "seqlen":
        lengths = seq_lengths(case.seed, case.world, PRE_STEPS + total,
                              case.opts.get("long_rank"),
                              case.opts.get("long_share", 0.0))
        act = [PRE_STEPS + s for s in active]
        ranks, wins = seqlen_truth_ranks(lengths, act)
        t["straggler_ranks"] = ranks
        # Persistent when the straggler holds the longest sequence in at
        # least half the steps (strag's rule for a finding's step share).
        t["persistence"] = ("persistent" if 2 * max(wins) >= len(act)
                            else "transient")
        t["longest_sequence_steps_per_rank"] = wins
        t["seq_lengths_active"] = [[r[s] for s in act] for r in lengths]
    if case.kind == "pipeline":
        dp = case.world // case.opts["stages"]
        t["layout"] = {"pp": case.opts["stages"], "dp": dp,
                       "rank": "stage * dp + replica"}
    return t


def run_case(name, out):
    """Runs the case into `out` (see the module doc); returns the truth."""
    import torch.multiprocessing as mp  # import torch once, before fork
    case = CASES[name]
    for sub in ("torch113", "sidecar"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    start = time.monotonic()
    # fork: the workers need not import torch again (seconds on 2 cores).
    mp.start_processes(worker, args=(name, out, _free_port()),
                       nprocs=case.world, join=True, start_method="fork")
    truth = truth_of(case)
    truth["wall_s"] = round(time.monotonic() - start, 2)
    sides = []
    for r in range(case.world):
        with open(os.path.join(out, "sidecar", f"rank-{r}.json")) as f:
            sides.append(json.load(f))
    truth["files"] = {f["trace"]: s["rank"] for s in sides
                      for f in s["files"]}
    truth["injections"] = {s["rank"]: s["injections"] for s in sides
                           if s["injections"]}
    truth["measured_step_s"] = sides[0]["step_s"]
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    return truth


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    r = sub.add_parser("run")
    r.add_argument("case", choices=sorted(CASES))
    r.add_argument("--out", required=True)
    args = p.parse_args(argv)
    if args.cmd == "list":
        for c in CASES.values():
            print(f"{c.name:26} {c.world} ranks  {c.cause:26} {c.about}")
        return 0
    print(json.dumps(run_case(args.case, args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
