# SPDX-License-Identifier: Apache-2.0
"""The agent: what runs on the training thread.

The hot path (step boundaries, phases, loader next(), collective wrappers,
the GC callback) only reads perf_counter_ns, adds into a small list and, once
per step, appends one tuple to a bounded deque. Everything else (records,
JSON, gzip, HTTP, retries) happens on the sender thread (_sender.py).
Nothing here may raise into training: every entry point catches.
"""
import collections
import gc
import os
import re
import socket
import sys
import time
import weakref

from . import _sender

__version__ = "0.1.0"

_pc = time.perf_counter_ns
_wall = time.time_ns
_getpid = os.getpid

# Indices into the per-step accumulator list; at the step's end the same
# list gets the record's other fields appended (SEQ ...) and is queued.
DATA, FWD, BWD, OPT, GC_NS, GC_N, GC_GEN = range(7)
SEQ = 7
PHASE_INDEX = {"data": DATA, "forward": FWD, "fwd": FWD, "backward": BWD,
               "bwd": BWD, "optimizer": OPT, "opt": OPT, "optim": OPT}
KINDS = ("dp", "pp", "tp", "cp", "ep", "other")
FLAGS = ("warmup", "ckpt", "eval", "skipped", "capture")
_JOB_RE = re.compile(r"[^A-Za-z0-9._:-]")

# Every live agent, for the fork and exit handlers.
_AGENTS = weakref.WeakSet()


_warn = _sender._warn


def _env_int(name, default):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        return default


def _clean_job(job):
    job = _JOB_RE.sub("_", str(job))[:128]
    return job or "job"


class _NullCtx(object):
    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


NULL_CTX = _NullCtx()


class _Phase(object):
    """A reusable context manager timing one phase into the current step.

    One object per phase name: phases of one name do not nest (a nested
    enter restarts the clock of the outer one, which is then not counted)."""
    __slots__ = ("_agent", "_idx", "_t0", "active")

    def __init__(self, agent, idx):
        self._agent = agent
        self._idx = idx
        self._t0 = 0
        self.active = False

    def __enter__(self):
        self.active = True
        self._t0 = _pc()
        return self

    def __exit__(self, *exc):
        try:
            d = _pc() - self._t0
            if self.active:
                self.active = False
                self._agent._acc[self._idx] += d
        except Exception:
            pass
        return False


class _LoaderIter(object):
    __slots__ = ("_agent", "_it", "_phase")

    def __init__(self, agent, it):
        self._agent = agent
        self._it = it
        self._phase = agent._phases["data"]

    def __iter__(self):
        return self

    def __next__(self):
        t0 = _pc()
        try:
            return next(self._it)
        finally:
            try:
                if not self._phase.active:  # an explicit data phase counts it
                    self._agent._acc[DATA] += _pc() - t0
            except Exception:
                pass

    def __getattr__(self, name):
        return getattr(self._it, name)


class Loader(object):
    """An iterable that times next() of the wrapped iterable as `data_ns`.

    Other attributes (len, sampler, dataset, set_epoch, ...) pass through."""

    def __init__(self, agent, iterable):
        self._strag_agent = agent
        self._strag_iterable = iterable

    def __iter__(self):
        it = iter(self._strag_iterable)
        if not self._strag_agent._on:
            return it
        return _LoaderIter(self._strag_agent, it)

    def __len__(self):
        return len(self._strag_iterable)

    def __getattr__(self, name):
        if name.startswith("_strag_"):
            raise AttributeError(name)
        return getattr(self._strag_iterable, name)


class Agent(object):
    """One process's agent. Build it with strag_agent.init()."""

    def __init__(self, url=None, job=None, rank=None, world_size=None,
                 token=None, token_file=None, coords=None,
                 flush_interval_s=1.0, buffer_records=20000,
                 usd_per_gpu_hour=None, auto_step=True, model=None,
                 optimizer=None, collectives=True, gc_pauses=True,
                 max_batch=1000, gzip_min_bytes=4096, timeout_s=5.0,
                 verbose=None):
        self._on = False
        self._closed = False
        self._acc = [0, 0, 0, 0, 0, 0, -1]
        self._coll = {}
        self._phases = {}
        for name, idx in PHASE_INDEX.items():
            # aliases share one object, so "fwd" and "forward" are one phase
            canon = {FWD: "forward", BWD: "backward", OPT: "optimizer",
                     DATA: "data"}[idx]
            if canon not in self._phases:
                self._phases[canon] = _Phase(self, idx)
            self._phases[name] = self._phases[canon]
        self._sender = None
        self._verbose = (os.environ.get("STRAG_VERBOSE", "") not in ("", "0")
                         if verbose is None else bool(verbose))
        self._internal_errors = 0
        url = url if url is not None else os.environ.get("STRAG_URL")
        self.url = url or None
        if not self.url:
            return  # disabled: every call is a no-op

        self.job = _clean_job(job if job is not None else
                              os.environ.get("STRAG_JOB") or
                              os.environ.get("TORCHELASTIC_RUN_ID") or "job")
        self.token = self._resolve_token(token, token_file)
        self._torch = sys.modules.get("torch")
        if self._torch is None:
            try:
                import importlib
                self._torch = importlib.import_module("torch")
            except Exception:
                self._torch = None
        self._dist = self._dist_module()
        self.rank = self._resolve_rank(rank)
        self.world_size = self._resolve_world(world_size)
        self.local_rank = _env_int("LOCAL_RANK", -1)
        self._coords_arg = dict(coords) if coords else None
        self.usd_per_gpu_hour = usd_per_gpu_hour
        self.epoch = _wall()
        self._pid = _getpid()

        # training-thread state
        self._seq = 1  # seq 1 is the rank record (the sender sends it first)
        self._last_step = 0
        self._first = True
        self._auto = bool(auto_step)  # auto boundaries until step() is called
        self._last_auto = False
        self._step_opt = None  # id of the optimizer whose step closes a step
        self._watched_opts = set()
        self._t_last = _pc()
        self._t_fwd0 = 0
        self._t_bwd0 = 0
        self._bwd_open = False
        self._t_bwd_end = 0
        self._coll_at_bwd_end = 0
        self._t_opt0 = 0
        self._coll_total = 0
        self._ddp = None  # the DDP model whose sync gap is measured
        self._extra = None  # tokens()/flag() for the current step
        self._gc_t0 = 0
        self._group_map = {}
        self._group_refs = []
        self._kind_cache = {}
        self._q = collections.deque(maxlen=max(1, int(buffer_records)))
        self._orders = []  # capture orders, appended by the sender
        self._cap = None  # the running capture, if any
        self._hook_handles = []
        self._gc_installed = False

        self._on = True
        _AGENTS.add(self)
        self._sender = _sender.Sender(
            self, self.url, self.token, flush_interval_s=flush_interval_s,
            max_batch=max_batch, gzip_min_bytes=gzip_min_bytes,
            timeout_s=timeout_s)
        if gc_pauses:
            try:
                gc.callbacks.append(self._gc_cb)
                self._gc_installed = True
            except Exception:
                pass
        if self._torch is not None:
            try:
                from . import _torch
                self._torch_glue = _torch
                _torch.attach(self, collectives=collectives)
            except Exception as e:
                _warn("torch integration disabled: %r" % (e,))
                self._torch_glue = None
        else:
            self._torch_glue = None
        self.watch(model=model, optimizer=optimizer)
        self._sender.start()

    # ------------------------------------------------------------------
    # resolution of who we are

    def _dist_module(self):
        if self._torch is None:
            return None
        try:
            import torch.distributed as dist
            return dist if dist.is_available() else None
        except Exception:
            return None

    def _dist_ready(self):
        try:
            return self._dist is not None and self._dist.is_initialized()
        except Exception:
            return False

    @staticmethod
    def _resolve_token(token, token_file):
        if token:
            return str(token).strip()
        path = token_file or None
        if not path and os.environ.get("STRAG_TOKEN"):
            return os.environ["STRAG_TOKEN"].strip()
        path = path or os.environ.get("STRAG_TOKEN_FILE")
        if path:
            try:
                with open(path) as f:
                    return f.read().strip()
            except OSError as e:
                _warn("cannot read the token file %s: %s" % (path, e))
        return None

    def _resolve(self, given, env, getter, default):
        """`given`, else torchrun's environment variable `env`, else
        torch.distributed's `getter`, else `default`."""
        if given is not None:
            return int(given)
        v = _env_int(env, None)
        if v is None and self._dist_ready():
            try:
                v = getattr(self._dist, getter)()
            except Exception:
                v = None
        return v if v is not None else default

    def _resolve_rank(self, rank):
        return self._resolve(rank, "RANK", "get_rank", 0)

    def _resolve_world(self, world_size):
        return self._resolve(world_size, "WORLD_SIZE", "get_world_size", 1)

    def _coords(self):
        keys = ("dp", "pp", "tp", "cp", "dp_size", "pp_size", "tp_size",
                "cp_size", "microbatches")
        c = self._coords_arg
        if c:
            return {k: int(c[k]) for k in keys if c.get(k) is not None}
        ps = sys.modules.get("megatron.core.parallel_state")
        if ps is not None:
            try:
                if ps.model_parallel_is_initialized():
                    out = {
                        "dp": ps.get_data_parallel_rank(),
                        "pp": ps.get_pipeline_model_parallel_rank(),
                        "tp": ps.get_tensor_model_parallel_rank(),
                        "dp_size": ps.get_data_parallel_world_size(),
                        "pp_size": ps.get_pipeline_model_parallel_world_size(),
                        "tp_size": ps.get_tensor_model_parallel_world_size(),
                    }
                    try:
                        out["cp"] = ps.get_context_parallel_rank()
                        out["cp_size"] = ps.get_context_parallel_world_size()
                    except Exception:
                        out["cp"], out["cp_size"] = 0, 1
                    return out
            except Exception:
                pass
        # nothing else known: pure data parallelism
        return {"dp": self.rank, "pp": 0, "tp": 0, "cp": 0,
                "dp_size": self.world_size, "pp_size": 1, "tp_size": 1,
                "cp_size": 1}

    def _device(self):
        t = self._torch
        try:
            if t is not None and t.cuda.is_available():
                if self.local_rank >= 0:
                    return "cuda:%d" % self.local_rank
                if t.cuda.is_initialized():
                    return "cuda:%d" % t.cuda.current_device()
                return "cuda"
        except Exception:
            pass
        return "cpu"

    def _rank_record(self):
        """The "rank" record (seq 1), built by the sender at its first send,
        so that a torch.distributed initialised after init() is seen."""
        if self._dist_ready():
            try:
                if _env_int("WORLD_SIZE", None) is None:
                    self.world_size = self._dist.get_world_size()
            except Exception:
                pass
        r = {"kind": "rank", "job": self.job, "rank": self.rank,
             "epoch": self.epoch, "seq": 1, "world_size": self.world_size}
        r.update(self._coords())
        r["local_rank"] = self.local_rank
        r["pid"] = self._pid
        r["host"] = socket.gethostname()
        r["device"] = self._device()
        r["torch"] = getattr(self._torch, "__version__", "") if self._torch else ""
        r["agent"] = "strag_agent " + __version__
        if self.usd_per_gpu_hour is not None:
            r["usd_per_gpu_hour"] = float(self.usd_per_gpu_hour)
        return r

    # ------------------------------------------------------------------
    # public API (each also exists at module level)

    @property
    def enabled(self):
        return self._on

    def step(self, n=None, tokens=None, seqs=None, sum_s2=None, flags=()):
        """Close the current step (number n, default previous + 1)."""
        if not self._on:
            return
        try:
            if self._auto:
                # The first explicit call turns automatic boundaries off.
                # When it directly follows an automatic boundary (nothing
                # measured in between) it is that boundary: no new record.
                self._auto = False
                acc = self._acc
                if (self._last_auto and not (acc[0] or acc[1] or acc[2] or
                                             acc[3]) and not self._coll):
                    if n is not None:
                        self._last_step = int(n)
                    return
            self._close(n, tokens, seqs, sum_s2, flags)
            self._last_auto = False
        except Exception:
            self._internal_error()

    def phase(self, name):
        """A context manager timing a phase: data, forward, backward,
        optimizer (aliases fwd, bwd, opt)."""
        if not self._on:
            return NULL_CTX
        p = self._phases.get(name)
        return p if p is not None else NULL_CTX

    def loader(self, iterable):
        """Wrap a data loader (any iterable): next() is timed as data_ns."""
        return Loader(self, iterable)

    def tokens(self, n=None, seqs=None, seqlens=None, sum_s2=None):
        """Add to the current step's tokens / sequences / sum of squared
        sequence lengths (call once per micro-batch; CPU numbers only)."""
        if not self._on:
            return
        try:
            e = self._extra_state()
            if seqlens is not None:
                s = [int(x) for x in seqlens]
                e[0] += sum(s) if n is None else float(n)
                e[1] += len(s) if seqs is None else float(seqs)
                e[2] += float(sum(x * x for x in s)) if sum_s2 is None else float(sum_s2)
            else:
                if n is not None:
                    e[0] += float(n)
                if seqs is not None:
                    e[1] += float(seqs)
                if sum_s2 is not None:
                    e[2] += float(sum_s2)
            e[4] = True
        except Exception:
            self._internal_error()

    def flag(self, name):
        """Mark the current step: warmup, ckpt, eval, skipped."""
        if not self._on:
            return
        try:
            self._extra_state()[3].add(str(name))
        except Exception:
            self._internal_error()

    def group_kind(self, group, kind):
        """Say what a process group is: dp, pp, tp, cp, ep or other."""
        if not self._on:
            return
        if kind not in KINDS:
            _warn("group_kind: unknown kind %r (one of %s)" % (kind, ", ".join(KINDS)))
            return
        key = id(group) if group is not None else 0
        self._group_map[key] = kind
        self._group_refs.append(group)
        try:
            world = self._dist.GroupMember.WORLD if self._dist else None
            if group is world or group is None:
                self._group_map[0] = kind
                if world is not None:
                    self._group_map[id(world)] = kind
        except Exception:
            pass
        self._kind_cache = {}

    def watch(self, model=None, optimizer=None):
        """Attach automatic hooks to a model (root module: forward, backward,
        the DDP sync gap) and/or an optimizer (step boundary, opt time)."""
        if not self._on or self._torch_glue is None:
            return
        try:
            if model is not None:
                self._torch_glue.watch_model(self, model)
            if optimizer is not None:
                for opt in (optimizer if isinstance(optimizer, (list, tuple))
                            else [optimizer]):
                    self._torch_glue.watch_optimizer(self, opt)
        except Exception as e:
            _warn("watch() failed: %r" % (e,))

    def stats(self):
        """Counters: records sent, acked, dropped, batches failed, retries..."""
        if self._sender is None:
            return {"enabled": False, "state": "disabled"}
        s = self._sender.stats()
        s["enabled"] = self._on
        s["steps"] = self._seq - 1
        s["internal_errors"] = self._internal_errors
        return s

    def flush(self, timeout=2.0):
        """Send what is buffered now; wait up to timeout s. True if empty."""
        if self._sender is None:
            return True
        return self._sender.flush(timeout)

    def close(self, timeout=2.0):
        """Flush (up to timeout s) and stop. Called at exit."""
        if self._closed:
            return
        self._closed = True
        if self._sender is None:
            return
        try:
            if self._cap is not None and self._torch_glue is not None:
                self._torch_glue.abort_capture(self)
        except Exception:
            pass
        self._on = False
        try:
            self._sender.close(timeout)
        except Exception:
            pass
        self._remove_hooks()

    shutdown = close

    # ------------------------------------------------------------------
    # internals

    def _extra_state(self):
        e = self._extra
        if e is None:
            e = self._extra = [0.0, 0.0, 0.0, set(), False]
        return e

    def _internal_error(self):
        self._internal_errors += 1
        if self._internal_errors == 1 or self._verbose:
            import traceback
            _warn("internal error (ignored):\n" + traceback.format_exc())

    def _close(self, n, tokens, seqs, sum_s2, flags):
        """Close the current step at now. O(1)."""
        t = _pc()
        if self._pid != _getpid():  # a fork the at-fork hook did not see
            self._on = False
            return
        if n is None:
            n = self._last_step + 1
        self._last_step = n
        acc = self._acc
        self._acc = [0, 0, 0, 0, 0, 0, -1]
        coll = self._coll
        if coll:
            self._coll = {}
        else:
            coll = None
        e = self._extra
        if e is not None:
            self._extra = None
            if e[4]:
                if tokens is None and e[0]:
                    tokens = e[0]
                if seqs is None and e[1]:
                    seqs = e[1]
                if sum_s2 is None and e[2]:
                    sum_s2 = e[2]
            if e[3]:
                flags = tuple(flags) + tuple(e[3])
        if self._cap is not None:
            flags = tuple(flags) + ("capture",)
        if self._first:
            self._first = False
            flags = tuple(flags) + ("warmup",)
        seq = self._seq + 1
        self._seq = seq
        # the accumulator list becomes the record: one object per step
        acc += (seq, n, _wall(), t - self._t_last, coll, tokens, seqs, sum_s2,
                flags)
        self._q.append(acc)
        self._t_last = t
        if self._orders or self._cap is not None:
            self._torch_glue.capture_tick(self, n)

    def _auto_close(self):
        """A step boundary from the optimizer hook."""
        if self._auto:
            self._close(None, None, None, None, ())
            self._last_auto = True

    def _add_coll(self, kind, d, count=1):
        c = self._coll.get(kind)
        if c is None:
            self._coll[kind] = [d, count]
        else:
            c[0] += d
            c[1] += count
        self._coll_total += d

    def _kind_of(self, group, p2p):
        key = (id(group) if group is not None else 0, p2p)
        k = self._kind_cache.get(key)
        if k is None:
            k = self._resolve_kind(group, p2p)
            self._kind_cache[key] = k
        return k

    def _resolve_kind(self, group, p2p):
        m = self._group_map
        if group is not None and id(group) in m:
            return m[id(group)]
        world = None
        try:
            world = self._dist.GroupMember.WORLD if self._dist else None
        except Exception:
            pass
        if group is None or group is world:
            if 0 in m:
                return m[0]
            return "pp" if p2p else "dp"
        # a named group (Megatron and torchtitan name theirs)
        desc = ""
        for attr in ("group_desc", "group_name"):
            try:
                v = getattr(group, attr, "")
                desc += " " + str(v() if callable(v) else v).upper()
            except Exception:
                pass
        for words, kind in ((("PIPELINE", "PP_", "_PP"), "pp"),
                            (("TENSOR", "TP_", "_TP"), "tp"),
                            (("CONTEXT", "CP_", "_CP"), "cp"),
                            (("EXPERT", "EP_", "_EP", "MOE"), "ep"),
                            (("DATA_PARALLEL", "DP_", "_DP", "FSDP", "SHARD", "REPLICATE"), "dp")):
            if any(w in desc for w in words):
                return kind
        return "pp" if p2p else "other"

    def _gc_cb(self, phase, info):
        try:
            if not self._on:
                return
            if phase == "start":
                self._gc_t0 = _pc()
                return
            t0 = self._gc_t0
            if t0:
                self._gc_t0 = 0
                acc = self._acc
                acc[GC_NS] += _pc() - t0
                acc[GC_N] += 1
                g = info.get("generation", 0)
                if g > acc[GC_GEN]:
                    acc[GC_GEN] = g
        except Exception:
            pass

    def _remove_hooks(self):
        if self._gc_installed:
            try:
                gc.callbacks.remove(self._gc_cb)
            except ValueError:
                pass
            self._gc_installed = False
        for h in self._hook_handles:
            try:
                h.remove()
            except Exception:
                pass
        self._hook_handles = []
        if self._torch_glue is not None:
            try:
                self._torch_glue.detach(self)
            except Exception:
                pass

    def _disable_in_child(self):
        """After fork(): the child (a DataLoader worker) reports nothing."""
        self._on = False
        self._closed = True
        self._q = collections.deque(maxlen=1)
        self._orders = []
        self._cap = None
        if self._sender is not None:
            self._sender.forked()
        if self._gc_installed:
            try:
                gc.callbacks.remove(self._gc_cb)
            except ValueError:
                pass
            self._gc_installed = False


def _after_fork_in_child():
    for a in list(_AGENTS):
        try:
            a._disable_in_child()
        except Exception:
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
