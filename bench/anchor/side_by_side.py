#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""strag against the published what-if tool, side by side in one run (issue 15).

For each job the published tool (`analyzer/wia.py` of ByteDance-Seed/StragglerAnalysis, patched by
../shared/tools/published-tool/setup.sh to read the ops CSV) and `strag analyze FILE --json` run
alternately on the same file, N times each, as fresh processes. Each child's wall time (fork to
reaped) and peak RSS (os.wait4's ru_maxrss) are measured; S is read from both (the published
tool's dumped `blocking_slowdown`, strag's JSON `slowdown`) and must agree. Prints a markdown
table with the machine, the date and both tools' commits. README.md beside this file says more.

Jobs (--jobs, comma separated):
  ar            trace-AR as published (117,216 ops)
  arK           trace-AR tiled K times across DP, as strag_bench tiles (tile_ops_csv.py): ar16, ar64
  sim16k        `strag simulate` of DP 256 x PP 8 x TP 8 = 16,384 GPUs, 16 microbatches, 20 steps
                (the article-hybrid-4096 preset at 4x the DP; 3.9 M ops)
  sim-DxPxT-S   the same spec at DP D x PP P x TP T for S steps, e.g. sim-16x8x8-2 (a quick check)
Simulated starts are rebased per step (each step's earliest start becomes 0, exactly, as in the
published traces) before either tool reads them, unless --no-sim-rebase: see README.md.

Exit status: 0; 1 when a tool failed or the two S differ; 2 on bad arguments or a published tool
that is not set up.
"""

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
DATA = os.path.normpath(os.path.join(REPO, '..', 'shared', 'data', 'osdi25-whatif'))
SETUP = os.path.normpath(os.path.join(REPO, '..', 'shared', 'tools', 'published-tool', 'setup.sh'))
DEFAULT_MIRROR = '/work/.mirror/ByteDance-Seed+StragglerAnalysis/repo'
PYTHON = '/usr/bin/python3'
AR_OPS = 117216
# The keys the published tool's JobMeta takes (any other key is a TypeError there).
PUBLISHED_META_KEYS = ('trial_name', 'run_id', 'dp_size', 'pp_size', 'tp_size', 'dsp_size', 'vpp_size',
                       'world_size')

# The article-hybrid-4096 preset (src/sim/presets.cc) with DP, PP, TP and steps left open.
SIM_SPEC = """\
job: {{dp: {dp}, pp: {pp}, tp: {tp}, microbatches: 16, steps: {steps}, gpus_per_node: 8, seed: 1}}
model: {{layers: {layers}, loss_layer_cost: 0.8}}
compute: {{forward_ms: 8, backward_ms: 16, noise: {{dist: lognormal, sigma: 0.02}}}}
sequences: {{dist: lognormal, median: 2048, sigma: 0.05, max: 16384, per_microbatch: 4, linear: 1,
            quadratic: 0.00005}}
comm: {{p2p_ms: 0.3, dp_allgather_ms: 12, dp_reducescatter_ms: 18, noise: {{dist: lognormal, sigma: 0.05}}}}
stragglers:
  - {{kind: slow_worker, rank: {slow_rank}, factor: 1.2}}
  - {{kind: gc_pause, ranks: all, rate_per_step: 0.0005, pause_ms: 200}}
"""


def die(msg, code=2):
    print(f'side_by_side: {msg}', file=sys.stderr)
    sys.exit(code)


def setup_hint(dest):
    return (f'set it up with:\n'
            f'  1. the fetch tool: github:ByteDance-Seed/StragglerAnalysis (prints a git dir ending in /repo)\n'
            f'  2. {SETUP} THAT_GIT_DIR {dest}\n'
            f'  3. (for the commit in the report) git --git-dir=THAT_GIT_DIR rev-parse HEAD > {dest}/COMMIT\n'
            f'or point --published at where it is set up.')


def check_published(dest):
    wia = os.path.join(dest, 'analyzer', 'wia.py')
    if not os.path.isfile(wia):
        die(f'the published tool is not set up: {wia} not found.\n' + setup_hint(dest))
    with open(wia, encoding='utf-8') as f:
        if 'read_csv' not in f.read():
            die(f'{wia} is not patched to read the ops CSV (setup.sh applies csv-input.patch).\n' + setup_hint(dest))
    if not os.access(PYTHON, os.X_OK):
        die(f'{PYTHON} not found: the published tool runs on Debian\'s python3 with its packages.')
    probe = subprocess.run([PYTHON, '-c', 'import pandas, numpy, scipy, yaml, tqdm'], capture_output=True, text=True)
    if probe.returncode != 0:
        die(f'{PYTHON} cannot import the published tool\'s packages '
            f'({probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "?"}).\n'
            'setup.sh installs python3-pandas, -scipy, -tqdm, -yaml, -ujson; ' + setup_hint(dest))


def published_commit(dest, mirror):
    path = os.path.join(dest, 'COMMIT')
    if os.path.isfile(path):
        with open(path) as f:
            return f.read().strip()[:12]
    for git_dir in (mirror, DEFAULT_MIRROR):
        if git_dir and os.path.isdir(git_dir):
            r = subprocess.run(['git', '--git-dir', git_dir, 'rev-parse', 'HEAD'], capture_output=True, text=True)
            if r.returncode == 0:
                return r.stdout.strip()[:12] + f' (HEAD of {git_dir}; setup.sh copies HEAD)'
    return 'unknown (write it to DEST/COMMIT)'


def strag_version(strag):
    r = subprocess.run([strag, '--version'], capture_output=True, text=True)
    if r.returncode != 0:
        die(f'{strag} --version failed: {r.stderr.strip()}')
    line = r.stdout.strip()
    dirty = subprocess.run(['git', '-C', REPO, 'status', '--porcelain', '-uno'], capture_output=True, text=True)
    if dirty.returncode == 0 and dirty.stdout.strip():
        line += '; the checkout has uncommitted changes to tracked files'
    return line


def machine():
    model, cpus = platform.processor() or '?', os.cpu_count()
    try:
        out = subprocess.run(['lscpu'], capture_output=True, text=True).stdout
        for line in out.splitlines():
            key, _, value = line.partition(':')
            if key.strip() == 'Model name':
                model = value.strip()
    except OSError:
        pass
    try:
        with open('/proc/meminfo') as f:
            mem = int(f.readline().split()[1]) / 2**20
        mem = f', {mem:.0f} GiB'
    except (OSError, ValueError, IndexError):
        mem = ''
    return f'{model}, {cpus} cores{mem}; {platform.system()} {platform.release()}'


def python_versions():
    r = subprocess.run([PYTHON, '-c', 'import sys, pandas, numpy; '
                        'print(f"Python {sys.version.split()[0]}, pandas {pandas.__version__}, '
                        'numpy {numpy.__version__}")'], capture_output=True, text=True)
    return r.stdout.strip() or '?'


# ---------------------------------------------------------------- inputs

def read_flat_yaml(path):
    out = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                key, _, value = line.partition(':')
                out.append((key.strip(), value.strip()))
    return out


def write_published_meta(src, dst):
    """The metadata restricted to the published tool's JobMeta keys."""
    with open(dst, 'w', encoding='utf-8') as f:
        for key, value in read_flat_yaml(src):
            if key in PUBLISHED_META_KEYS:
                f.write(f'{key}: {value}\n')


def rebase_steps(src, dst):
    """Writes `src` with each step's starts less the step's earliest start (exact decimal arithmetic).

    Only start_ts changes; everything after it on a line is copied as is (a quoted seq_lens list
    with commas included)."""
    mins = {}
    with gzip.open(src, 'rt', encoding='utf-8', newline='') as f:
        cols = f.readline().rstrip('\r\n').split(',')
        i_step, i_start = cols.index('step'), cols.index('start_ts')
        split = max(i_step, i_start) + 1
        for line in f:
            p = line.split(',', split)
            t = Decimal(p[i_start])
            m = mins.get(p[i_step])
            if m is None or t < m:
                mins[p[i_step]] = t
    tmp = dst + '.tmp'
    with gzip.open(src, 'rt', encoding='utf-8', newline='') as f, \
            gzip.open(tmp, 'wt', compresslevel=6, encoding='utf-8', newline='') as w:
        w.write(f.readline())
        for line in f:
            p = line.split(',', split)
            m = mins[p[i_step]]
            if m:
                t = Decimal(p[i_start]) - m
                p[i_start] = format(t, 'f') if t else '0'
            w.write(','.join(p))
    os.replace(tmp, dst)


class Job:
    def __init__(self, key, title, trace, meta, published_meta, ops=None):
        self.key, self.title, self.trace, self.meta, self.published_meta = key, title, trace, meta, published_meta
        self.ops = ops


def prepare(key, workdir, strag, rebase):
    """Makes (or reuses) the job's files in workdir; returns a Job."""
    if key == 'ar':
        trace, meta = os.path.join(DATA, 'trace-AR.csv.gz'), os.path.join(DATA, 'meta-AR.yaml')
        if not os.path.exists(trace):
            die(f'{trace}: not found (the reference data, ../shared/data/osdi25-whatif)')
        return Job(key, 'trace-AR', trace, meta, meta, AR_OPS)
    m = re.fullmatch(r'ar(\d+)', key)
    if m:
        k = int(m.group(1))
        d = os.path.join(workdir, key)
        os.makedirs(d, exist_ok=True)
        trace, meta = os.path.join(d, f'trace-AR-x{k}.csv.gz'), os.path.join(d, f'meta-AR-x{k}.yaml')
        if not (os.path.exists(trace) and os.path.exists(meta)):
            print(f'[prepare] tiling trace-AR x{k} -> {trace}', file=sys.stderr, flush=True)
            subprocess.run([sys.executable, os.path.join(HERE, 'tile_ops_csv.py'), str(k), trace], check=True)
        return Job(key, f'trace-AR x{k} (DP {4 * k})', trace, meta, meta, AR_OPS * k)
    m = re.fullmatch(r'sim16k|sim-(\d+)x(\d+)x(\d+)-(\d+)', key)
    if m:
        dp, pp, tp, steps = (256, 8, 8, 20) if key == 'sim16k' else map(int, m.groups())
        if pp > 64 or 64 % pp:
            die(f'{key}: PP must divide the 64 layers of the spec')
        name = f'sim-{dp}x{pp}x{tp}-{steps}'
        d = os.path.join(workdir, name)
        spec = os.path.join(workdir, name + '.yaml')
        raw_dir = os.path.join(d, 'raw')
        raw = os.path.join(raw_dir, 'ops.csv.gz')
        world = dp * pp * tp
        os.makedirs(d, exist_ok=True)
        if not os.path.exists(raw):
            with open(spec, 'w') as f:
                f.write(SIM_SPEC.format(dp=dp, pp=pp, tp=tp, steps=steps, layers=64,
                                        slow_rank=min(1842, world - 1)))
            print(f'[prepare] {strag} simulate {spec} --out {raw_dir} --no-truth', file=sys.stderr, flush=True)
            subprocess.run([strag, 'simulate', spec, '--out', raw_dir, '--no-truth'], check=True,
                           stdout=subprocess.DEVNULL)
        trace = raw
        if rebase:
            trace = os.path.join(d, 'ops-rebased.csv.gz')
            if not os.path.exists(trace):
                print(f'[prepare] rebasing each step of {raw} on its earliest start -> {trace}', file=sys.stderr,
                      flush=True)
                rebase_steps(raw, trace)
        meta = os.path.join(raw_dir, 'meta.yaml')
        published_meta = os.path.join(d, 'meta-published.yaml')
        write_published_meta(meta, published_meta)
        title = f'sim DP {dp} x PP {pp} x TP {tp} = {world:,} GPUs, {steps} steps'
        return Job(key, title, trace, meta, published_meta)
    die(f'unknown job {key!r} (ar, arK, sim16k, sim-DPxPPxTP-STEPS)')


# ---------------------------------------------------------------- runs

def run_child(argv, cwd, env, log):
    """Runs argv; returns (exit status, wall s, peak RSS MB, user + sys CPU s)."""
    with open(log, 'wb') as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: keep Popen from waiting again
    return p.returncode, wall, ru.ru_maxrss / 1024.0, ru.ru_utime + ru.ru_stime


def tail(path, n=15):
    with open(path, errors='replace') as f:
        return ''.join(f.readlines()[-n:])


def run_published(job, dest, outdir, run):
    dump = os.path.join(outdir, f'published-{run}')
    shutil.rmtree(dump, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=dest)
    argv = [PYTHON, 'analyzer/wia.py', '--metadata', os.path.abspath(job.published_meta),
            '--trace', os.path.abspath(job.trace), '--dump-dir', dump]
    log = dump + '.log'
    rc, wall, rss, cpu = run_child(argv, dest, env, log)
    if rc != 0:
        die(f'the published tool failed on {job.title} (exit {rc}); {log}:\n{tail(log)}', 1)
    trial = dict(read_flat_yaml(job.published_meta)).get('trial_name')
    with open(os.path.join(dump, f'{trial}.json')) as f:
        s = json.load(f)['blocking_slowdown']
    return wall, rss, cpu, s, ' '.join(argv)


def run_strag(job, strag, outdir, run, threads):
    out = os.path.join(outdir, f'strag-{run}.json')
    argv = [strag, 'analyze', job.trace, '--meta', job.meta, '--json', out, '--quiet']
    if threads is not None:
        argv += ['--threads', str(threads)]
    log = os.path.join(outdir, f'strag-{run}.log')
    rc, wall, rss, cpu = run_child(argv, REPO, None, log)
    if rc != 0:
        die(f'strag failed on {job.title} (exit {rc}); {log}:\n{tail(log)}', 1)
    with open(out) as f:
        report = json.load(f)
    if job.ops is None:
        job.ops = report.get('job', {}).get('ops')
    return wall, rss, cpu, report['slowdown'], ' '.join(argv)


def warm(path):
    """Reads the file once so that every run finds it in the page cache."""
    with open(path, 'rb') as f:
        while f.read(1 << 22):
            pass


def fmt_wall(s):
    return f'{s:.2f} s' if s >= 1 else f'{s * 1e3:.0f} ms'


def fmt_s(a, b):
    if a == b:
        return f'{a!r} (both, every digit)'
    return f'published {a!r} / strag {b!r} (rel. diff {abs(a - b) / abs(b):.1e})'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--jobs', default='ar,ar16,ar64,sim16k', help='comma separated (default: ar,ar16,ar64,sim16k)')
    ap.add_argument('--runs', type=int, default=3, help='runs of each tool per job, interleaved (default 3)')
    ap.add_argument('--quick', action='store_true', help='trace-AR only (--jobs ar)')
    ap.add_argument('--strag', default=os.path.join(REPO, 'build', 'strag'), help='strag binary (default build/strag)')
    ap.add_argument('--strag-threads', type=int, help='strag --threads N (default: strag\'s, one per core)')
    ap.add_argument('--published', default='/tmp/published-tool', help='where setup.sh put the published tool')
    ap.add_argument('--published-git', help='its git dir, for the commit (default: DEST/COMMIT, else the mirror)')
    ap.add_argument('--workdir', default='/tmp/anchor-work', help='inputs and outputs (default /tmp/anchor-work)')
    ap.add_argument('--no-sim-rebase', action='store_true',
                    help='feed simulated traces as strag simulate wrote them (S then differs, see README.md)')
    ap.add_argument('--prepare-only', action='store_true',
                    help='only make the jobs\' input files in --workdir (tiling, simulation), measure nothing')
    ap.add_argument('--json-out', help='also write every measurement as JSON to this file')
    a = ap.parse_args()
    if a.runs < 1:
        die('--runs must be at least 1')
    jobs = ['ar'] if a.quick else [j.strip() for j in a.jobs.split(',') if j.strip()]
    if not jobs:
        die('no jobs')
    if not os.access(a.strag, os.X_OK):
        die(f'{a.strag}: not an executable (build it: make; or pass --strag)')
    a.strag = os.path.abspath(a.strag)
    os.makedirs(a.workdir, exist_ok=True)
    if a.prepare_only:
        for key in jobs:
            job = prepare(key, a.workdir, a.strag, not a.no_sim_rebase)
            print(f'{job.title}: {job.trace} ({os.path.getsize(job.trace) / 2**20:.1f} MB), '
                  f'metadata {job.meta} (published tool: {job.published_meta})')
        return
    check_published(a.published)

    header = {
        'date': datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z'),
        'machine': machine(),
        'strag': strag_version(a.strag),
        'published': f'ByteDance-Seed/StragglerAnalysis {published_commit(a.published, a.published_git)} '
                     f'with setup.sh\'s CSV-input patch; {python_versions()}',
        'strag_threads': 'default (one per core)' if a.strag_threads is None else a.strag_threads,
        'runs': a.runs,
    }
    try:
        load = os.getloadavg()
        header['load_before'] = f'{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}'
    except OSError:
        pass

    results, mismatches = [], []
    for key in jobs:
        job = prepare(key, a.workdir, a.strag, not a.no_sim_rebase)
        outdir = os.path.join(a.workdir, 'runs', key)
        os.makedirs(outdir, exist_ok=True)
        warm(job.trace)
        pub, stg = [], []
        for run in range(a.runs):
            order = ('published', 'strag') if run % 2 == 0 else ('strag', 'published')
            for tool in order:
                if tool == 'published':
                    r = run_published(job, a.published, outdir, run)
                    pub.append(r)
                else:
                    r = run_strag(job, a.strag, outdir, run, a.strag_threads)
                    stg.append(r)
                print(f'[{job.title}] run {run + 1}/{a.runs} {tool:9s} wall {fmt_wall(r[0]):>9s}  '
                      f'peak RSS {r[1]:7.1f} MB  CPU {r[2]:6.2f} s  S {r[3]!r}', file=sys.stderr, flush=True)
        s_pub, s_stg = {r[3] for r in pub}, {r[3] for r in stg}
        if len(s_pub) != 1 or len(s_stg) != 1:
            mismatches.append(f'{job.title}: S varies between runs of one tool: {sorted(s_pub)} / {sorted(s_stg)}')
        sp, ss = pub[0][3], stg[0][3]
        if sp != ss:
            mismatches.append(f'{job.title}: {fmt_s(sp, ss)}')
        med = lambda rs, i: statistics.median(r[i] for r in rs)
        results.append({
            'job': job.title, 'key': key, 'trace': job.trace, 'ops': job.ops,
            'published': {'wall_s': [r[0] for r in pub], 'peak_rss_mb': [r[1] for r in pub],
                          'cpu_s': [r[2] for r in pub], 'S': sp, 'command': pub[0][4]},
            'strag': {'wall_s': [r[0] for r in stg], 'peak_rss_mb': [r[1] for r in stg],
                      'cpu_s': [r[2] for r in stg], 'S': ss, 'command': stg[0][4]},
            'median': {'published_wall': med(pub, 0), 'published_rss': med(pub, 1), 'published_cpu': med(pub, 2),
                       'strag_wall': med(stg, 0), 'strag_rss': med(stg, 1), 'strag_cpu': med(stg, 2)},
        })

    try:
        load = os.getloadavg()
        header['load_after'] = f'{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}'
    except OSError:
        pass
    print(f'## strag vs the published tool, side by side ({header["date"]})\n')
    print(f'- machine: {header["machine"]}; load average before {header.get("load_before", "?")}, '
          f'after {header.get("load_after", "?")}')
    print(f'- strag: {header["strag"]}; threads: {header["strag_threads"]}')
    print(f'- published tool: {header["published"]}')
    print(f'- {a.runs} fresh-process run(s) of each tool per job, interleaved; medians; wall = fork to exit, '
          f'peak RSS = ru_maxrss of the child\n')
    print('| job | ops | published tool (median wall / peak RSS) | strag (median wall / peak RSS) | ratio (wall) '
          '| ratio (RSS) | CPU s (published / strag) | S |')
    print('|---|---|---|---|---|---|---|---|')
    for r in results:
        m = r['median']
        ops = f'{r["ops"]:,}' if r['ops'] else '?'
        print(f'| {r["job"]} | {ops} | {fmt_wall(m["published_wall"])} / {m["published_rss"]:.0f} MB '
              f'| {fmt_wall(m["strag_wall"])} / {m["strag_rss"]:.0f} MB '
              f'| {m["published_wall"] / m["strag_wall"]:.1f}x | {m["published_rss"] / m["strag_rss"]:.1f}x '
              f'| {m["published_cpu"]:.2f} / {m["strag_cpu"]:.2f} '
              f'| {fmt_s(r["published"]["S"], r["strag"]["S"])} |')
    print('\nEvery run (wall s):')
    for r in results:
        print(f'- {r["job"]}: published {", ".join(f"{x:.3f}" for x in r["published"]["wall_s"])}; '
              f'strag {", ".join(f"{x:.3f}" for x in r["strag"]["wall_s"])}')
    print('\nCommands (the first run of each):')
    for r in results:
        print(f'- `cd {a.published} && PYTHONPATH={a.published} {r["published"]["command"]}`')
        print(f'- `{r["strag"]["command"]}`')
    if a.json_out:
        with open(a.json_out, 'w') as f:
            json.dump({'header': header, 'results': results}, f, indent=2)
    if mismatches:
        print('\nS DIFFERS:\n' + '\n'.join('- ' + m for m in mismatches))
        sys.exit(1)


if __name__ == '__main__':
    main()
