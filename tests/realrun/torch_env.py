# SPDX-License-Identifier: Apache-2.0
"""What the real-run tests and the accuracy benchmark (bench/accuracy) share:
finding an interpreter with torch and gloo, and running a job in a process
session of its own."""
import os
import shutil
import signal
import subprocess
import sys

TORCH_PROBE = ("import torch, torch.distributed as d; "
               "assert d.is_available() and d.is_gloo_available(); "
               "print(torch.__version__)")


def find_torch_python(explicit=None):
    """(interpreter, torch version) of the first candidate with torch and
    gloo, or (None, reasons) when there is none."""
    candidates = [explicit] if explicit else [
        os.environ.get("STRAG_TORCH_PYTHON"), "/usr/bin/python3",
        sys.executable, shutil.which("python3")]
    reasons = []
    for python in dict.fromkeys(c for c in candidates if c):
        try:
            probe = subprocess.run([python, "-c", TORCH_PROBE], timeout=120,
                                   capture_output=True, text=True)
        except (OSError, subprocess.TimeoutExpired) as e:
            reasons.append(f"{python}: {e}")
            continue
        if probe.returncode == 0:
            return python, probe.stdout.strip()
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        reasons.append(f"{python}: {last}")
    return None, "; ".join(reasons)


def run_group(command, timeout_s):
    """subprocess.run in a session of its own: on a timeout the job's worker
    processes are killed too, not left waiting in a collective."""
    with subprocess.Popen(command, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as process:
        try:
            out, err = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            err += f"\n(killed after {timeout_s} s)"
        return subprocess.CompletedProcess(command, process.returncode, out,
                                           err)
