# SPDX-License-Identifier: Apache-2.0
"""strag_agent: live straggler monitoring for PyTorch training jobs.

Reports one record per training step of each rank (phase times, time
inside collectives by process-group kind, GC pauses, data waits) to a
`strag serve` collector over HTTP. Standard library only; never blocks or
raises into training. See README.md and docs/formats/agent-protocol.md.

    import strag_agent
    strag_agent.init(url="http://collector:8080", job="llm")  # or STRAG_URL
    for batch in strag_agent.loader(data):
        with strag_agent.phase("forward"):
            loss = model(batch)
        ...
        strag_agent.step()
"""
import atexit

from ._agent import NULL_CTX, Agent, Loader, __version__, _warn

__all__ = ["init", "step", "phase", "loader", "tokens", "flag", "group_kind",
           "watch", "stats", "flush", "shutdown", "get_agent", "enabled",
           "Agent", "__version__"]

_DISABLED = Agent(url="")  # every call a no-op
_current = _DISABLED


def init(url=None, job=None, rank=None, world_size=None, token=None,
         token_file=None, coords=None, flush_interval_s=1.0,
         buffer_records=20000, usd_per_gpu_hour=None, auto_step=True,
         model=None, optimizer=None, **kwargs):
    """Start the process's agent and return it.

    Defaults come from the environment: STRAG_URL, STRAG_JOB, STRAG_TOKEN or
    STRAG_TOKEN_FILE, and torchrun's RANK, WORLD_SIZE, LOCAL_RANK. Without a
    URL the agent is disabled and every call is a no-op. A second init()
    keeps the running agent and only attaches `model` / `optimizer`.
    Extra keyword arguments (collectives=, gc_pauses=, max_batch=,
    gzip_min_bytes=, timeout_s=, verbose=) go to Agent.
    """
    global _current
    if _current is not _DISABLED and _current.enabled:
        _current.watch(model=model, optimizer=optimizer)
        return _current
    try:
        a = Agent(url=url, job=job, rank=rank, world_size=world_size,
                  token=token, token_file=token_file, coords=coords,
                  flush_interval_s=flush_interval_s,
                  buffer_records=buffer_records,
                  usd_per_gpu_hour=usd_per_gpu_hour, auto_step=auto_step,
                  model=model, optimizer=optimizer, **kwargs)
    except Exception as e:
        _warn("disabled: %r" % (e,))
        a = _DISABLED
    _current = a if a.enabled else _DISABLED
    return a


def get_agent():
    """The running agent (a disabled one before init())."""
    return _current


def enabled():
    return _current.enabled


def step(n=None, tokens=None, seqs=None, sum_s2=None, flags=()):
    """Close the current step: number n (default: the previous + 1),
    optional tokens / seqs / sum_s2 of its batch, flags (warmup, ckpt, eval,
    skipped)."""
    _current.step(n, tokens, seqs, sum_s2, flags)


def phase(name):
    """`with strag_agent.phase("forward"):` times data, forward, backward or
    optimizer into the current step."""
    return _current.phase(name) if _current.enabled else NULL_CTX


def loader(iterable):
    """Wrap a data loader: the time inside its next() becomes data_ns. The
    wrapper checks the agent at each iter(), so it can be made before
    init()."""
    return _LazyLoader(iterable)


class _LazyLoader(Loader):
    def __init__(self, iterable):
        Loader.__init__(self, None, iterable)

    def __iter__(self):
        a = _current
        it = iter(self._strag_iterable)
        if not a.enabled:
            return it
        from ._agent import _LoaderIter
        return _LoaderIter(a, it)


def tokens(n=None, seqs=None, seqlens=None, sum_s2=None):
    """Add tokens / sequences (or the sequence lengths, for sum_s2) of a
    micro-batch to the current step. Pass CPU numbers, not GPU tensors."""
    _current.tokens(n, seqs, seqlens, sum_s2)


def flag(name):
    """Mark the current step: warmup, ckpt, eval or skipped."""
    _current.flag(name)


def group_kind(group, kind):
    """Map a torch.distributed process group to dp, pp, tp, cp, ep or other
    (the default group counts as dp, point-to-point as pp)."""
    _current.group_kind(group, kind)


def watch(model=None, optimizer=None):
    """Attach the automatic hooks to a model and/or an optimizer later."""
    _current.watch(model=model, optimizer=optimizer)


def stats():
    """Counters: records_sent, records_acked, records_dropped,
    batches_failed, retries, ... and per-field totals of the steps sent."""
    return _current.stats()


def flush(timeout=2.0):
    """Send what is buffered; wait up to timeout s. True when all is acked."""
    return _current.flush(timeout)


def shutdown(timeout=2.0):
    """Flush for up to timeout s and stop (atexit does this too)."""
    global _current
    a = _current
    _current = _DISABLED
    a.close(timeout)


@atexit.register
def _at_exit():
    from ._agent import _AGENTS
    for a in list(_AGENTS):
        try:
            a.close(2.0)
        except Exception:
            pass
