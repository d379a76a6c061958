# SPDX-License-Identifier: Apache-2.0
"""PyTorch glue: collective timing, optimizer and model hooks, captures.

Imported only when torch is. Works on torch 1.13 (instance-level
optimizer.step wrap) and 2.x (optimizer step hooks). Every hook catches
its own errors: the agent never raises into training.
"""
import inspect
import os
import tempfile
import threading
import time
import types

import torch

from ._agent import BWD, FWD, OPT, _warn

_pc = time.perf_counter_ns

# The agent the collective wrappers report to (the wrappers are global).
_state = types.SimpleNamespace(agent=None, patched={}, global_opt_handles=[])
_tls = threading.local()

COLLECTIVES = (
    "all_reduce", "all_gather", "all_gather_into_tensor", "_all_gather_base",
    "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base",
    "broadcast", "barrier", "monitored_barrier", "reduce", "all_to_all",
    "all_to_all_single", "gather", "scatter", "all_gather_object",
    "broadcast_object_list", "gather_object", "scatter_object_list",
    "all_reduce_coalesced", "all_gather_coalesced",
)
P2P = ("send", "recv", "isend", "irecv", "batch_isend_irecv")
_ALWAYS_ASYNC = ("isend", "irecv", "batch_isend_irecv")


def _version_tuple():
    try:
        v = torch.__version__.split("+")[0].split(".")
        return int(v[0]), int(v[1])
    except Exception:
        return (0, 0)


TORCH_2 = _version_tuple() >= (2, 0)


# ----------------------------------------------------------------------
# collectives


class _TimedWork(object):
    """A Work (async collective) whose wait() adds its blocking time to the
    step's collective time. Everything else goes to the real Work."""
    __slots__ = ("_w", "_agent", "_kind", "_done")

    def __init__(self, work, agent, kind):
        self._w = work
        self._agent = agent
        self._kind = kind
        self._done = False

    def wait(self, *args, **kwargs):
        t0 = _pc()
        try:
            return self._w.wait(*args, **kwargs)
        finally:
            if not self._done:
                self._done = True
                try:
                    a = self._agent
                    if a._on:
                        a._add_coll(self._kind, _pc() - t0, 0)
                except Exception:
                    pass

    def __getattr__(self, name):
        return getattr(self._w, name)

    def __repr__(self):
        return "<strag timed %r>" % (self._w,)


class _CollWrapper(object):
    """Times a torch.distributed function on the host clock.

    A callable object, not a function, so that it can compare equal to the
    function it wraps: torch checks `op in [isend, irecv]` for P2POp, and a
    caller may hold either one."""

    def __init__(self, name, orig):
        self._name = name
        self._orig = orig
        self.__wrapped__ = orig
        self.__name__ = getattr(orig, "__name__", name)
        self.__qualname__ = getattr(orig, "__qualname__", name)
        self.__doc__ = getattr(orig, "__doc__", None)
        self.__module__ = getattr(orig, "__module__", "torch.distributed")
        self._p2p = name in P2P
        self._always_async = name in _ALWAYS_ASYNC
        try:
            params = list(inspect.signature(orig).parameters)
        except (TypeError, ValueError):
            params = []
        self._gi = params.index("group") if "group" in params else None
        self._ai = params.index("async_op") if "async_op" in params else None

    def __eq__(self, other):
        return other is self or other is self._orig

    def __hash__(self):
        return hash(self._orig)

    def __get__(self, obj, cls=None):  # behave like a plain function
        return self if obj is None else types.MethodType(self, obj)

    def __call__(self, *args, **kwargs):
        agent = _state.agent
        if agent is None or not agent._on or getattr(_tls, "depth", 0):
            return self._orig(*args, **kwargs)
        t0 = _pc()
        _tls.depth = 1
        try:
            ret = self._orig(*args, **kwargs)
        finally:
            _tls.depth = 0
        t1 = _pc()
        try:
            return self._account(agent, args, kwargs, ret, t1 - t0)
        except Exception:
            agent._internal_error()
            return ret

    def _account(self, agent, args, kwargs, ret, d):
        if self._name == "batch_isend_irecv":
            ops = args[0] if args else kwargs.get("p2p_op_list") or []
            group = getattr(ops[0], "group", None) if ops else None
        else:
            gi = self._gi
            group = kwargs.get("group") if "group" in kwargs else (
                args[gi] if gi is not None and len(args) > gi else None)
        kind = agent._kind_of(group, self._p2p)
        agent._add_coll(kind, d, 1)
        if ret is None:
            return ret
        is_async = self._always_async
        if not is_async and self._ai is not None:
            ai = self._ai
            is_async = bool(kwargs.get("async_op") if "async_op" in kwargs
                            else (args[ai] if len(args) > ai else False))
        if not is_async:
            return ret
        if isinstance(ret, list):
            return [_TimedWork(w, agent, kind) if hasattr(w, "wait") else w
                    for w in ret]
        if hasattr(ret, "wait"):
            return _TimedWork(ret, agent, kind)
        return ret


def _patch_collectives():
    try:
        import torch.distributed as dist
        if not dist.is_available():
            return
        c10d = dist.distributed_c10d
    except Exception:
        return
    for name in COLLECTIVES + P2P:
        if name in _state.patched:
            continue
        orig = getattr(c10d, name, None) or getattr(dist, name, None)
        if orig is None or isinstance(orig, _CollWrapper):
            continue
        w = _CollWrapper(name, orig)
        _state.patched[name] = (orig, w)
        if getattr(c10d, name, None) is orig:
            setattr(c10d, name, w)
        if getattr(dist, name, None) is orig:
            setattr(dist, name, w)


def _unpatch_collectives():
    try:
        import torch.distributed as dist
        c10d = dist.distributed_c10d
    except Exception:
        return
    for name, (orig, w) in list(_state.patched.items()):
        if getattr(c10d, name, None) is w:
            setattr(c10d, name, orig)
        if getattr(dist, name, None) is w:
            setattr(dist, name, orig)
    _state.patched.clear()


# ----------------------------------------------------------------------
# optimizer


def _opt_begin(agent, opt):
    if not agent._on:
        return
    try:
        t = _pc()
        agent._t_opt0 = t
        ddp = agent._ddp
        if ddp is not None and agent._t_bwd_end:
            # the exposed DDP gradient sync: backward end -> optimizer start,
            # less the collectives we timed ourselves meanwhile
            gap = t - agent._t_bwd_end - (agent._coll_total - agent._coll_at_bwd_end)
            agent._t_bwd_end = 0
            if gap > 0:
                agent._add_coll(agent._kind_of(getattr(ddp, "process_group", None),
                                               False), gap, 1)
    except Exception:
        agent._internal_error()


def _opt_end(agent, opt):
    if not agent._on:
        return
    try:
        if agent._t_opt0:
            if not agent._phases["optimizer"].active:
                agent._acc[OPT] += _pc() - agent._t_opt0
            agent._t_opt0 = 0
        sid = agent._step_opt
        if sid is None:
            agent._step_opt = sid = id(opt)
        if sid == id(opt):
            agent._auto_close()
    except Exception:
        agent._internal_error()


def _global_pre(opt, args, kwargs):
    agent = _state.agent
    if agent is not None and id(opt) not in agent._watched_opts:
        _opt_begin(agent, opt)


def _global_post(opt, args, kwargs):
    agent = _state.agent
    if agent is not None and id(opt) not in agent._watched_opts:
        _opt_end(agent, opt)


def watch_optimizer(agent, opt):
    if id(opt) in agent._watched_opts:
        return
    agent._watched_opts.add(id(opt))
    if agent._step_opt is None or agent._step_opt not in agent._watched_opts:
        agent._step_opt = id(opt)  # an optimizer named by the user closes steps
    if hasattr(opt, "register_step_pre_hook"):  # torch >= 2.0
        agent._hook_handles.append(opt.register_step_pre_hook(
            lambda o, a, k: _opt_begin(agent, o)))
        agent._hook_handles.append(opt.register_step_post_hook(
            lambda o, a, k: _opt_end(agent, o)))
        return
    # torch 1.13: wrap the instance's step. A bound method, so that
    # lr_scheduler's with_counter (which needs __self__/__func__) still works;
    # functools-style attributes (e.g. _with_counter) are kept.
    orig = opt.step

    def step(self_, *args, **kwargs):
        _opt_begin(agent, self_)
        try:
            return orig(*args, **kwargs)
        finally:
            _opt_end(agent, self_)

    try:
        step.__dict__.update(getattr(orig, "__dict__", {}))
        step.__name__ = getattr(orig, "__name__", "step")
        step.__doc__ = getattr(orig, "__doc__", None)
    except Exception:
        pass
    step._strag_wrapped = orig
    opt.step = types.MethodType(step, opt)

    class _Undo(object):
        def remove(self_inner):
            cur = opt.__dict__.get("step")
            if getattr(cur, "__func__", None) is step:
                opt.step = orig
    agent._hook_handles.append(_Undo())


def _install_global_optimizer_hooks():
    if _state.global_opt_handles:
        return
    try:
        from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                           register_optimizer_step_pre_hook)
    except Exception:
        return  # torch 1.13: pass optimizer= or call step()
    _state.global_opt_handles = [register_optimizer_step_pre_hook(_global_pre),
                                 register_optimizer_step_post_hook(_global_post)]


def _remove_global_optimizer_hooks():
    for h in _state.global_opt_handles:
        try:
            h.remove()
        except Exception:
            pass
    _state.global_opt_handles = []


# ----------------------------------------------------------------------
# model: forward and backward


def _first_grad_tensor(out, depth=0):
    if isinstance(out, torch.Tensor):
        return out if out.requires_grad else None
    if depth > 2:
        return None
    if isinstance(out, dict):
        vals = out.values()
    elif isinstance(out, (list, tuple)):
        vals = out
    else:
        return None
    for v in vals:
        t = _first_grad_tensor(v, depth + 1)
        if t is not None:
            return t
    return None


def watch_model(agent, model):
    engine = torch.autograd.Variable._execution_engine
    fwd_phase = agent._phases["forward"]
    bwd_phase = agent._phases["backward"]

    def bwd_end():
        try:
            t = _pc()
            if agent._bwd_open:
                agent._bwd_open = False
                if not bwd_phase.active:
                    agent._acc[BWD] += t - agent._t_bwd0
            agent._t_bwd_end = t
            agent._coll_at_bwd_end = agent._coll_total
        except Exception:
            pass

    def bwd_start(grad):
        try:
            if agent._on and not agent._bwd_open:
                agent._bwd_open = True
                agent._t_bwd0 = _pc()
                engine.queue_callback(bwd_end)
        except Exception:
            agent._bwd_open = False
        return None

    def pre(module, inputs):
        try:
            if agent._on:
                agent._t_fwd0 = _pc()
        except Exception:
            pass
        return None

    def post(module, inputs, out):
        try:
            if not agent._on or not agent._t_fwd0:
                return None
            if not fwd_phase.active:
                agent._acc[FWD] += _pc() - agent._t_fwd0
            agent._t_fwd0 = 0
            if torch.is_grad_enabled():
                t = _first_grad_tensor(out)
                if t is not None:
                    t.register_hook(bwd_start)
        except Exception:
            pass
        return None

    agent._hook_handles.append(model.register_forward_pre_hook(pre))
    agent._hook_handles.append(model.register_forward_hook(post))
    try:
        from torch.nn.parallel import DistributedDataParallel
        if isinstance(model, DistributedDataParallel):
            agent._ddp = model
    except Exception:
        pass


# ----------------------------------------------------------------------
# targeted capture (torch.profiler), run at step boundaries


class _Capture(object):
    __slots__ = ("cid", "first", "last", "upload", "prof", "rec")


def capture_tick(agent, closed):
    """Called on the training thread right after step `closed` closed."""
    try:
        cap = agent._cap
        upcoming = closed + 1
        if cap is not None:
            _end_step_mark(cap)
            if closed >= cap.last:
                _finish(agent, cap)
            else:
                _begin_step_mark(cap, upcoming)
                return
        orders = agent._orders
        if not orders or agent._cap is not None:
            return
        for o in list(orders):
            cid, start, steps, upload = o
            last = start + steps - 1
            if last < upcoming:  # too late for it
                orders.remove(o)
                agent._sender.count("captures_missed")
                _warn("capture %s (steps %d-%d) came too late (now at step %d)"
                      % (cid, start, last, upcoming))
            elif start <= upcoming:
                orders.remove(o)
                _start(agent, cid, upcoming, last, upload)
                break
    except Exception:
        agent._cap = None
        agent._internal_error()


def _start(agent, cid, first, last, upload):
    t0 = _pc()
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU]
    try:
        if torch.cuda.is_available():
            acts.append(ProfilerActivity.CUDA)
    except Exception:
        pass
    cap = _Capture()
    cap.cid, cap.first, cap.last, cap.upload = cid, first, last, upload
    cap.rec = None
    try:
        cap.prof = profile(activities=acts, record_shapes=True)
        cap.prof.start()
    except Exception as e:
        agent._sender.count("captures_failed")
        _warn("capture %s: the profiler did not start: %r" % (cid, e))
        return
    agent._sender.count("captures_started")
    agent._cap = cap
    _begin_step_mark(cap, first)
    # the profiler's start-up is not the next step's work
    agent._t_last += _pc() - t0


def _begin_step_mark(cap, n):
    try:
        cap.rec = torch.autograd.profiler.record_function("ProfilerStep#%d" % n)
        cap.rec.__enter__()
    except Exception:
        cap.rec = None


def _end_step_mark(cap):
    if cap.rec is not None:
        try:
            cap.rec.__exit__(None, None, None)
        except Exception:
            pass
        cap.rec = None


def _finish(agent, cap):
    t0 = _pc()
    agent._cap = None
    try:
        cap.prof.stop()
        fd, path = tempfile.mkstemp(prefix="strag-capture-%s-rank%d-"
                                    % (_safe(cap.cid), agent.rank),
                                    suffix=".pt.trace.json")
        os.close(fd)
        cap.prof.export_chrome_trace(path)
    except Exception as e:
        agent._sender.count("captures_failed")
        _warn("capture %s: the profiler export failed: %r" % (cap.cid, e))
        return
    finally:
        agent._t_last += _pc() - t0
    agent._sender.add_upload(path, cap.upload, agent.rank)


def abort_capture(agent):
    cap = agent._cap
    agent._cap = None
    if cap is not None:
        _end_step_mark(cap)
        try:
            cap.prof.stop()
        except Exception:
            pass


def _safe(s):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(s))[:64]


# ----------------------------------------------------------------------


def attach(agent, collectives=True):
    """Make `agent` the one the global hooks report to. The global optimizer
    hooks (torch >= 2.0) always time opt_ns and the DDP gap; they close
    steps only while the agent is in automatic mode."""
    _state.agent = agent
    if collectives:
        _patch_collectives()
    _install_global_optimizer_hooks()


def detach(agent):
    if _state.agent is agent:
        _state.agent = None
        _remove_global_optimizer_hooks()
        _unpatch_collectives()
