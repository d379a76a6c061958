# SPDX-License-Identifier: Apache-2.0
"""Zero-code integration: run a training script with the agent attached.

    python -m strag_agent.run [--url URL] [--job JOB] [--token-file F] -- train.py ARGS...
    python -m strag_agent.run [...] -- -m package.module ARGS...
    torchrun --nproc_per_node=8 -m strag_agent.run -- train.py ARGS...

Before the script runs, the agent starts (URL, job and token from the
options or STRAG_URL / STRAG_JOB / STRAG_TOKEN(_FILE); rank from torchrun's
environment) and patches, for this process only:
  - torch.distributed collectives (time inside them, by group kind);
  - step boundaries: the global optimizer hooks on torch >= 2.0; on 1.13,
    every optimizer built afterwards gets its step wrapped (the first one to
    step closes the steps);
  - DistributedDataParallel.__init__: the DDP model gets the forward /
    backward hooks and its exposed gradient-sync wait is measured;
  - DataLoader.__iter__: time inside next() becomes data_ns.
The script then runs as __main__ with its own argv.
"""
import argparse
import os
import runpy
import sys


def _parse(argv):
    if "--" in argv:
        i = argv.index("--")
        ours, rest = argv[:i], argv[i + 1:]
    else:
        ours, rest = [], argv
        # options of ours come first; the script is the first other word
        while rest and rest[0].startswith("--") and rest[0] != "--":
            ours.append(rest.pop(0))
            if ours[-1] in ("--url", "--job", "--token-file", "--flush-interval") and rest:
                ours.append(rest.pop(0))
    p = argparse.ArgumentParser(prog="python -m strag_agent.run",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--url", help="the collector (default: STRAG_URL)")
    p.add_argument("--job", help="the job name (default: STRAG_JOB)")
    p.add_argument("--token-file", help="bearer token file (default: "
                   "STRAG_TOKEN / STRAG_TOKEN_FILE)")
    p.add_argument("--flush-interval", type=float, default=1.0)
    p.add_argument("--no-dataloader", action="store_true",
                   help="do not patch DataLoader.__iter__")
    args = p.parse_args(ours)
    if not rest:
        p.error("no script: python -m strag_agent.run [options] -- script.py ARGS")
    return args, rest


def _patch_torch(agent, dataloader=True):
    try:
        import torch
    except Exception:
        return
    from . import _agent, _torch

    # step boundaries on torch 1.13: wrap each optimizer as it is built
    if not _torch._state.global_opt_handles:
        Optimizer = torch.optim.Optimizer
        orig_init = Optimizer.__init__
        if not getattr(orig_init, "_strag_patched", False):
            def __init__(self, *args, **kwargs):
                orig_init(self, *args, **kwargs)
                try:
                    agent.watch(optimizer=self)
                except Exception:
                    pass
            __init__._strag_patched = True
            Optimizer.__init__ = __init__

    try:
        from torch.nn.parallel import DistributedDataParallel as DDP
        orig_ddp = DDP.__init__
        if not getattr(orig_ddp, "_strag_patched", False):
            def ddp_init(self, *args, **kwargs):
                orig_ddp(self, *args, **kwargs)
                try:
                    if agent._ddp is None:
                        agent.watch(model=self)
                except Exception:
                    pass
            ddp_init._strag_patched = True
            DDP.__init__ = ddp_init
    except Exception:
        pass

    if dataloader:
        try:
            from torch.utils.data import DataLoader
            orig_iter = DataLoader.__iter__
            if not getattr(orig_iter, "_strag_patched", False):
                def dl_iter(self):
                    it = orig_iter(self)
                    if agent.enabled:
                        return _agent._LoaderIter(agent, it)
                    return it
                dl_iter._strag_patched = True
                DataLoader.__iter__ = dl_iter
        except Exception:
            pass


def main(argv=None):
    args, rest = _parse(sys.argv[1:] if argv is None else argv)
    import strag_agent
    kw = {}
    if args.token_file:
        kw["token_file"] = args.token_file
    agent = strag_agent.init(url=args.url, job=args.job,
                             flush_interval_s=args.flush_interval, **kw)
    if agent.enabled:
        _patch_torch(agent, dataloader=not args.no_dataloader)
    else:
        sys.stderr.write("strag_agent.run: no collector URL (--url or "
                         "STRAG_URL): running without the agent\n")
    if rest[0] == "-m":
        if len(rest) < 2:
            sys.exit("strag_agent.run: -m needs a module name")
        sys.argv = [rest[1]] + rest[2:]
        runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = rest
        sys.path.insert(0, os.path.dirname(os.path.abspath(rest[0])))
        runpy.run_path(rest[0], run_name="__main__")


if __name__ == "__main__":
    main()
