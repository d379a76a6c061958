#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes an ops CSV tiled K times across DP, and its metadata YAML.

The tiling is strag_bench's (`Tile` in bench/strag_bench.cc, docs/performance.md "Scale: trace-AR tiled
16 times"): copy c (0 <= c < K) of every row gets `dp_rank + dp * c` and `rank + world * c`
(trace-AR: dp 4, world 64), every other field unchanged; the copies follow one another (all rows
of copy 0 in the source's order, then copy 1, ...). The metadata is the source's with
`dp_size * K`, `world_size * K` and `trial_name` NAME-xK.

One difference from strag_bench on purpose: the fields are copied as text, byte for byte, so every
time is exactly the source's (strag_bench parses the table and writes it back with its own writer:
the same binary32 values, but starts as nanosecond digits, e.g. 2.688330412 for
2.6883304119110107). With the source's digits each copy is the source job itself, so S must come
out exactly as the source's, for both tools.

Streaming: the source is read again for each copy and the output written line by line, so K = 64
(7.5 M rows, 600 MB of text) needs a few MB of memory. The output is gzip (level 6, as strag's
writer) when its name ends in .gz.

usage: tile_ops_csv.py K OUT.csv[.gz] [--trace trace-AR.csv.gz] [--meta meta-AR.yaml]
                       [--meta-out FILE] [--level N]
The default --meta-out is OUT's `meta-X.yaml` for an OUT named `trace-X.csv[.gz]` (where
`strag analyze` looks for it), else OUT with `.yaml` in place of `.csv[.gz]`.
"""

import argparse
import gzip
import os
import re
import sys

DEFAULT_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'shared', 'data',
                            'osdi25-whatif')


def open_text(path, mode='rt', level=6, gz=None):
    if path.endswith('.gz') if gz is None else gz:
        if 'w' in mode:
            return gzip.open(path, mode, compresslevel=level, encoding='utf-8', newline='')
        return gzip.open(path, mode, encoding='utf-8', newline='')
    return open(path, mode, encoding='utf-8', newline='')


def read_meta(path):
    """The flat `key: value` YAML of the published traces, in order (no YAML library needed)."""
    meta = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            key, sep, value = line.partition(':')
            if not sep:
                sys.exit(f'{path}: not a flat key: value line: {line!r}')
            meta.append((key.strip(), value.strip()))
    return meta


def default_meta_out(out):
    base = os.path.basename(out)
    stem = re.sub(r'\.csv(\.gz)?$', '', base)
    if stem.startswith('trace-'):
        return os.path.join(os.path.dirname(out), 'meta-' + stem[len('trace-'):] + '.yaml')
    return os.path.join(os.path.dirname(out), stem + '.yaml')


def scan(trace):
    """Header fields, the dp_rank / rank column indices, and the DP ranks and largest rank of the rows."""
    with open_text(trace) as f:
        header = f.readline()
        cols = header.rstrip('\r\n').split(',')
        try:
            i_dp, i_rank = cols.index('dp_rank'), cols.index('rank')
        except ValueError:
            sys.exit(f'{trace}: header has no dp_rank / rank column: {header!r}')
        split = max(i_dp, i_rank) + 1
        max_dp = max_rank = -1
        for line in f:
            fields = line.split(',', split)
            max_dp = max(max_dp, int(fields[i_dp]))
            max_rank = max(max_rank, int(fields[i_rank]))
    return i_dp, i_rank, max_dp + 1, max_rank


def tile(k, trace, out, dp, world, i_dp, i_rank, level=6):
    """Writes `trace` tiled k times to `out` (copy c: dp_rank + dp c, rank + world c); returns the rows."""
    rows = 0
    split = max(i_dp, i_rank) + 1
    tmp = os.path.join(os.path.dirname(out), f'.{os.path.basename(out)}.tmp{os.getpid()}')
    with open_text(tmp, 'wt', level, gz=out.endswith('.gz')) as w:
        for c in range(k):
            with open_text(trace) as f:
                header = f.readline()
                if c == 0:
                    w.write(header)
                    for line in f:
                        w.write(line)
                        rows += 1
                    continue
                for line in f:
                    fields = line.split(',', split)
                    fields[i_dp] = str(int(fields[i_dp]) + dp * c)
                    fields[i_rank] = str(int(fields[i_rank]) + world * c)
                    w.write(','.join(fields))
                    rows += 1
    os.replace(tmp, out)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('k', type=int, help='copies (1 = the source itself, rewritten)')
    ap.add_argument('out', help='output ops CSV (.csv or .csv.gz)')
    ap.add_argument('--trace', default=os.path.join(DEFAULT_DATA, 'trace-AR.csv.gz'))
    ap.add_argument('--meta', help='source metadata (default: meta-X.yaml next to trace-X.csv[.gz])')
    ap.add_argument('--meta-out', help='output metadata YAML (default: see above)')
    ap.add_argument('--level', type=int, default=6, help='gzip level of a .gz output (default 6)')
    a = ap.parse_args()
    if a.k < 1:
        sys.exit('K must be at least 1')
    if not os.path.exists(a.trace):
        sys.exit(f'{a.trace}: not found (the reference data is ../shared/data/osdi25-whatif)')
    meta_in = a.meta or default_meta_out(a.trace)
    meta = read_meta(meta_in)
    m = dict(meta)
    i_dp, i_rank, dp, max_rank = scan(a.trace)
    if 'dp_size' in m and int(m['dp_size']) != dp:
        sys.exit(f'{meta_in}: dp_size {m["dp_size"]} but the trace has {dp} DP ranks')
    # The rank offset is the job's world (strag_bench: 64 for AR), not the largest traced rank + 1:
    # a trace holds one worker per TP group.
    world = int(m.get('world_size', max_rank + 1))
    if max_rank >= world:
        sys.exit(f'{meta_in}: world_size {world} but the trace has rank {max_rank}')
    rows = tile(a.k, a.trace, a.out, dp, world, i_dp, i_rank, a.level)
    out_meta = []
    for key, value in meta:
        if key == 'dp_size':
            value = str(dp * a.k)
        elif key == 'world_size':
            value = str(world * a.k)
        elif key == 'trial_name' and a.k > 1:
            value = f'{value}-x{a.k}'
        out_meta.append((key, value))
    meta_out = a.meta_out or default_meta_out(a.out)
    with open(meta_out, 'w', encoding='utf-8') as f:
        for key, value in out_meta:
            f.write(f'{key}: {value}\n')
    print(f'{a.out}: {rows} rows ({a.k} x {rows // a.k}), DP {dp * a.k}; metadata {meta_out}')


if __name__ == '__main__':
    main()
