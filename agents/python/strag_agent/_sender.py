# SPDX-License-Identifier: Apache-2.0
"""The sender thread: batches, encodes and POSTs records; retries; uploads
capture traces; reads commands from the acks.

Protocol: docs/formats/agent-protocol.md. One request in flight; a batch
is removed only on a 200 (the collector acks after its COMMIT, and drops
resent records by seq), so retrying until a 200 loses and duplicates
nothing. Records the training thread adds while the buffer (a bounded
deque) is full push out the oldest waiting ones; the sender sees the hole
in the seq numbers and sends one "drop" record in their place
(first_seq..last_seq, seq = last_seq), so the stream stays consecutive.
"""
import gzip
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time
import urllib.parse

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True,
                          allow_nan=False).encode

MAX_BACKOFF_S = 30.0
BASE_BACKOFF_S = 0.5
MAX_RETRY_AFTER_S = 300.0
UPLOAD_ATTEMPTS = 8


def _warn(msg):
    try:
        sys.stderr.write("strag_agent: %s\n" % msg)
        sys.stderr.flush()
    except Exception:
        pass


def backoff_s(n, rand=random.random):
    """Full jitter: U(0, min(30, 0.5 * 2^n)) for the n-th retry (n >= 0)."""
    return rand() * min(MAX_BACKOFF_S, BASE_BACKOFF_S * (2.0 ** min(n, 16)))


def _num(x):
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x
    f = float(x)
    if f != f or f in (float("inf"), float("-inf")):
        return 0
    return int(f) if f.is_integer() else f


class _Batch(object):
    """Encoded lines and, per line, the seq range it stands for."""
    __slots__ = ("lines", "ranges", "body", "gz")

    def __init__(self, lines, ranges):
        self.lines = lines
        self.ranges = ranges  # (first covered seq, seq) per line
        self.body = None
        self.gz = False

    def first(self):
        return self.ranges[0][0]

    def last(self):
        return self.ranges[-1][1]

    def split(self):
        h = len(self.lines) // 2
        return (_Batch(self.lines[:h], self.ranges[:h]),
                _Batch(self.lines[h:], self.ranges[h:]))


class Sender(object):
    def __init__(self, agent, url, token, flush_interval_s=1.0,
                 max_batch=1000, gzip_min_bytes=4096, timeout_s=5.0):
        self._agent = agent
        u = urllib.parse.urlsplit(url if "://" in url else "http://" + url)
        if u.scheme not in ("http", "https"):
            raise ValueError("strag_agent: url must be http:// or https://")
        self._https = u.scheme == "https"
        self._host = u.hostname or "127.0.0.1"
        self._port = u.port or (443 if self._https else 80)
        self._prefix = u.path.rstrip("/")
        self._token = token
        self.interval = max(0.01, float(flush_interval_s))
        self._max_batch = max(1, min(int(max_batch), 10000))
        self._gzip_min = int(gzip_min_bytes)
        self._timeout = float(timeout_s)
        self._conn = None
        self._wake = threading.Event()
        self._closing = False
        self._deadline = None
        self._stopped = False  # 401: no more sending
        self._forked = False
        self._rank_sent = False
        self._next_seq = 2  # the first seq after the rank record
        self._drop_first = None  # start of a lost range not yet reported
        self._batches = []  # in flight: the front one is sent (413 splits)
        self._fails = 0  # consecutive failures, for the backoff
        self._uploads = []  # [path, url, attempts, next_try]
        self._seen_orders = set()
        self._idle = True
        self._flush_req = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._main,
                                        name="strag-agent-sender", daemon=True)
        self._warned = set()
        self._c = dict(records_sent=0, records_acked=0, records_dropped=0,
                       records_rejected=0, batches_failed=0, batches_acked=0,
                       requests=0, retries=0, duplicates=0, bytes_sent=0,
                       splits=0, uploads_ok=0, uploads_failed=0,
                       captures_started=0, captures_missed=0,
                       captures_failed=0)
        self._totals = {"steps": 0, "step_ns": 0, "data_ns": 0, "fwd_ns": 0,
                        "bwd_ns": 0, "opt_ns": 0, "gc_ns": 0, "gc_n": 0,
                        "coll": {}}
        self.state = "running"

    # ------------------------------------------------------------------
    # control, from other threads

    def start(self):
        self._thread.start()

    def stats(self):
        with self._lock:
            s = dict(self._c)
            t = dict(self._totals)
            t["coll"] = {k: list(v) for k, v in self._totals["coll"].items()}
        s["records_waiting"] = len(self._agent._q) + sum(
            len(b.lines) for b in list(self._batches))
        s["uploads_pending"] = len(self._uploads)
        s["state"] = self.state
        s["totals"] = t
        return s

    def count(self, key, n=1):
        with self._lock:
            self._c[key] = self._c.get(key, 0) + n

    def flush(self, timeout):
        end = time.monotonic() + max(0.0, timeout)
        self._flush_req = True
        while True:
            if self._stopped or self._forked or not self._thread.is_alive():
                return not self._agent._q and not self._batches
            if not self._agent._q and not self._batches and self._idle:
                return True
            self._wake.set()
            if time.monotonic() >= end:
                return False
            time.sleep(0.005)

    def close(self, timeout):
        self._deadline = time.monotonic() + max(0.0, timeout)
        self._closing = True
        self._wake.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(max(0.0, timeout) + 0.2)
        if self.state == "running":
            self.state = "closed"
        self._close_conn()

    def forked(self):
        self._forked = True
        # the parent's socket: never touch it here (keep the object, so that
        # it is not closed, nor warned about, in the child)
        self._orphan, self._conn = self._conn, None
        self._batches = []
        self._uploads = []
        self.state = "disabled (forked child)"

    def add_upload(self, path, upload_path, rank):
        sep = "&" if "?" in upload_path else "?"
        target = "%s%srank=%d" % (upload_path, sep, rank)
        if not target.startswith("/"):
            target = "/" + target
        self._uploads.append([path, target, 0, 0.0])
        self._wake.set()

    # ------------------------------------------------------------------
    # the thread

    def _main(self):
        try:
            self._loop()
        except BaseException as e:  # never let the thread die silently
            _warn("sender stopped: %r" % (e,))
            self.state = "failed"
        finally:
            self._close_conn()

    def _past_deadline(self):
        return self._closing and time.monotonic() >= self._deadline

    def _sleep(self, s):
        """Wait s seconds (a backoff), cut short only by the exit deadline."""
        end = time.monotonic() + s
        while not self._forked:
            now = time.monotonic()
            stop = min(end, self._deadline) if self._closing else end
            if now >= stop:
                return
            self._wake.wait(stop - now)
            self._wake.clear()

    def _loop(self):
        next_flush = time.monotonic() + self.interval
        agent = self._agent
        while not self._forked:
            if self._stopped or self._past_deadline():
                return
            now = time.monotonic()
            if not self._batches:
                q = agent._q
                due = (now >= next_flush or self._closing or self._flush_req
                       or len(q) >= self._max_batch)
                if due and (q or not self._rank_sent):
                    self._idle = False
                    self._take()
                    next_flush = now + self.interval
                elif due:
                    next_flush = now + self.interval
                    self._flush_req = False
            if self._batches:
                self._idle = False
                delay = self._send_front()
                if delay:
                    self._sleep(delay)
                continue
            if self._uploads and not self._stopped:
                up = self._uploads[0]
                if up[3] <= now:
                    self._idle = False
                    self._upload(up)
                    continue
            if self._closing:
                if not agent._q and not self._uploads:
                    return
                if not agent._q and self._uploads:
                    # uploads get what is left of the exit deadline
                    left = self._deadline - time.monotonic()
                    wait = self._uploads[0][3] - time.monotonic()
                    if wait > left:
                        return
                    self._sleep(max(0.0, wait))
                continue
            self._idle = True
            self._flush_req = False
            wait = next_flush - time.monotonic()
            if self._uploads:
                wait = min(wait, self._uploads[0][3] - time.monotonic())
            if wait > 0:
                self._wake.wait(wait)
                self._wake.clear()

    # ------------------------------------------------------------------
    # batching and encoding

    def _take(self):
        agent = self._agent
        q = agent._q
        job, rank, epoch = agent.job, agent.rank, agent.epoch
        lines, ranges = [], []
        if not self._rank_sent:
            self._rank_sent = True
            try:
                rr = agent._rank_record()
            except Exception as e:
                _warn("rank record: %r" % (e,))
                rr = {"kind": "rank", "job": job, "rank": rank,
                      "epoch": epoch, "seq": 1,
                      "world_size": agent.world_size}
            lines.append(_dumps(rr))
            ranges.append((1, 1))
        exp = self._next_seq
        popleft = q.popleft
        limit = self._max_batch
        dropped = 0
        while len(lines) < limit and q:
            try:
                r = popleft()
            except IndexError:
                break
            seq = r[7]
            if seq != exp or self._drop_first is not None:
                first = exp if self._drop_first is None else min(self._drop_first, exp)
                if seq > exp:
                    dropped += seq - exp
                self._drop_first = None
                if seq - 1 >= first:
                    lines.append(_dumps({"kind": "drop", "job": job, "rank": rank,
                                         "epoch": epoch, "seq": seq - 1,
                                         "first_seq": first,
                                         "last_seq": seq - 1}))
                    ranges.append((first, seq - 1))
            try:
                lines.append(self._encode_step(r, job, rank, epoch))
            except Exception as e:
                if "encode" not in self._warned:
                    self._warned.add("encode")
                    _warn("cannot encode a step record: %r" % (e,))
                lines.append(self._encode_step(r, job, rank, epoch, safe=True))
            ranges.append((seq, seq))
            exp = seq + 1
        self._next_seq = exp
        if dropped:
            self.count("records_dropped", dropped)
        if lines:
            self._batches.append(_Batch(lines, ranges))

    def _encode_step(self, r, job, rank, epoch, safe=False):
        acc = r
        seq, n, t_end, step_ns, coll, tokens, seqs, s2, flags = r[7:16]
        coll_out = {}
        if coll:
            for k, v in list(coll.items()):
                coll_out[k] = [int(v[0]), int(v[1])]
        d = {"kind": "step", "job": job, "rank": rank, "epoch": epoch,
             "seq": seq, "step": int(n), "t_end_ns": t_end, "step_ns": step_ns,
             "data_ns": acc[0], "fwd_ns": acc[1], "bwd_ns": acc[2],
             "opt_ns": acc[3], "gc_ns": acc[4], "gc_n": acc[5],
             "gc_gen": acc[6], "coll": coll_out,
             "flags": sorted(set(str(f) for f in flags)) if flags else [],
             "clock": "host"}
        if not safe:
            if tokens is not None:
                d["tokens"] = _num(tokens)
            if seqs is not None:
                d["seqs"] = _num(seqs)
            if s2 is not None:
                d["sum_s2"] = _num(s2)
        with self._lock:
            t = self._totals
            t["steps"] += 1
            for k in ("step_ns", "data_ns", "fwd_ns", "bwd_ns", "opt_ns",
                      "gc_ns", "gc_n"):
                t[k] += d[k]
            for k, v in coll_out.items():
                c = t["coll"].setdefault(k, [0, 0])
                c[0] += v[0]
                c[1] += v[1]
        return _dumps(d)

    # ------------------------------------------------------------------
    # HTTP

    def _headers(self, gz, ctype):
        h = {"Content-Type": ctype, "Connection": "keep-alive",
             "User-Agent": "strag_agent"}
        if self._token:
            h["Authorization"] = "Bearer " + self._token
        if gz:
            h["X-Strag-Encoding"] = "gzip"
        return h

    def _close_conn(self):
        c = self._conn
        self._conn = None
        if c is not None:
            try:
                c.close()
            except Exception:
                pass

    def _request(self, path, body, headers):
        """(status, headers dict, body bytes); raises on network errors.
        body: bytes, or a function returning a fresh file object. A kept-alive
        connection the server closed meanwhile is retried once at once (the
        collector drops resent records by seq, so a resend is harmless)."""
        for attempt in (0, 1):
            reused = self._conn is not None
            if self._conn is None:
                cls = (http.client.HTTPSConnection if self._https
                       else http.client.HTTPConnection)
                self._conn = cls(self._host, self._port, timeout=self._timeout)
            conn = self._conn
            f = body() if callable(body) else None
            try:
                conn.request("POST", path, body=f if f is not None else body,
                             headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                hdrs = {k.lower(): v for k, v in resp.getheaders()}
                if resp.will_close:
                    self._close_conn()
                return resp.status, hdrs, data
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError, ConnectionAbortedError):
                self._close_conn()
                if not reused or attempt:
                    raise
            except BaseException:
                self._close_conn()
                raise
            finally:
                if f is not None:
                    f.close()

    def _retry_delay(self, hdrs=None):
        ra = None
        if hdrs:
            v = hdrs.get("retry-after")
            if v is not None:
                try:
                    ra = min(MAX_RETRY_AFTER_S, max(0.0, float(v)))
                except ValueError:
                    ra = None
        d = backoff_s(self._fails) if ra is None else ra
        self._fails += 1
        self.count("retries")
        return max(d, 0.001)

    def _send_front(self):
        """Send the front batch once. Returns seconds to wait before the
        next try (0: go on)."""
        b = self._batches[0]
        if b.body is None:
            raw = ("\n".join(b.lines) + "\n").encode("utf-8")
            if len(raw) >= self._gzip_min:
                b.body = gzip.compress(raw, compresslevel=1)
                b.gz = True
            else:
                b.body = raw
        n = len(b.lines)
        self.count("requests")
        self.count("records_sent", n)
        self.count("bytes_sent", len(b.body))
        try:
            status, hdrs, data = self._request(
                self._prefix + "/v1/ingest", b.body,
                self._headers(b.gz, "application/x-ndjson"))
        except Exception as e:
            if "net" not in self._warned and self._fails >= 3:
                self._warned.add("net")
                _warn("cannot reach the collector at %s:%d (%s); retrying"
                      % (self._host, self._port, e.__class__.__name__))
            return self._retry_delay()
        if status == 200:
            self._batches.pop(0)
            self._fails = 0
            with self._lock:
                self._c["records_acked"] += n
                self._c["batches_acked"] += 1
            self._on_ack(data)
            return 0
        if status == 400:
            self._batches.pop(0)
            self._fails = 0
            keep_rank = b.ranges[0] == (1, 1) and n > 1
            with self._lock:
                self._c["batches_failed"] += 1
                self._c["records_rejected"] += n - 1 if keep_rank else n
            if keep_rank:
                # keep the rank record (who we are): alone, once more
                self._lost(b.ranges[1][0])
                self._batches.insert(0, _Batch(b.lines[:1], b.ranges[:1]))
            else:
                self._lost(b.first())
            if "400" not in self._warned:
                self._warned.add("400")
                _warn("the collector rejected a batch of %d records (400): %s"
                      % (n, data[:300].decode("utf-8", "replace")))
            return 0
        if status in (401, 403):
            self._stopped = True
            self.state = "unauthorized"
            _warn("the collector refused our token (%d): live monitoring "
                  "stops for this process; training goes on" % status)
            self._agent._on = False
            return 0
        if status == 413:
            if n <= 1:
                self._batches.pop(0)
                with self._lock:
                    self._c["batches_failed"] += 1
                    self._c["records_rejected"] += n
                self._lost(b.first())
                return 0
            self._batches[0:1] = list(b.split())
            self.count("splits")
            return 0
        if status in (429, 503):
            return self._retry_delay(hdrs)
        if status < 500 and ("st%d" % status) not in self._warned:
            self._warned.add("st%d" % status)
            _warn("unexpected answer %d from the collector; retrying" % status)
        return self._retry_delay(hdrs)

    def _lost(self, first):
        """Records from seq `first` on, up to the next one still to be sent,
        were refused: a drop record will stand for them."""
        if self._batches:  # the other half of a 413 split: report in front
            nb = self._batches[0]
            last = nb.first() - 1
            if last >= first:
                a = self._agent
                nb.lines.insert(0, _dumps({
                    "kind": "drop", "job": a.job, "rank": a.rank,
                    "epoch": a.epoch, "seq": last, "first_seq": first,
                    "last_seq": last}))
                nb.ranges.insert(0, (first, last))
                nb.body = None
            return
        self._drop_first = (first if self._drop_first is None
                            else min(first, self._drop_first))

    def _on_ack(self, data):
        try:
            ack = json.loads(data.decode("utf-8")) if data else {}
        except Exception:
            return
        if not isinstance(ack, dict):
            return
        try:
            dup = int(ack.get("duplicates", 0) or 0)
            if dup:
                self.count("duplicates", dup)
            fi = ack.get("flush_interval_s")
            if fi is not None and float(fi) > 0:
                self.interval = min(60.0, max(0.01, float(fi)))
        except Exception:
            pass
        cmds = ack.get("commands") or []
        if not isinstance(cmds, list):
            return
        agent = self._agent
        for c in cmds:
            try:
                if not isinstance(c, dict) or c.get("type") != "capture":
                    continue
                if c.get("job") not in (None, agent.job):
                    continue
                ranks = c.get("ranks")
                if ranks is not None and agent.rank not in [int(r) for r in ranks]:
                    continue
                cid = str(c.get("id", ""))
                if cid in self._seen_orders:
                    continue
                self._seen_orders.add(cid)
                if getattr(agent, "_torch_glue", None) is None:
                    self.count("captures_failed")
                    _warn("capture %s: torch is not available here" % cid)
                    continue
                start = int(c["start_step"])
                steps = max(1, int(c.get("steps", 1)))
                upload = str(c.get("upload") or
                             "/v1/traces?job=%s&capture=%s" % (
                                 urllib.parse.quote(agent.job),
                                 urllib.parse.quote(cid)))
                agent._orders.append((cid, start, steps, upload))
            except Exception as e:
                _warn("ignoring a malformed command %r: %r" % (c, e))

    # ------------------------------------------------------------------
    # trace uploads

    def _upload(self, up):
        path, target, attempts, _ = up
        gz_path = None
        try:
            gz_path = self._gzip_trace(path)
            size = os.path.getsize(gz_path)
            status, hdrs, data = self._request(
                self._prefix + target, lambda: open(gz_path, "rb"),
                dict(self._headers(True, "application/json"),
                     **{"Content-Length": str(size)}))
        except Exception as e:
            status, hdrs, data = None, None, repr(e).encode()
        finally:
            if gz_path and gz_path != path:
                try:
                    os.unlink(gz_path)
                except OSError:
                    pass
        if status in (200, 201):
            self._uploads.pop(0)
            self.count("uploads_ok")
            self._fails = 0
            try:
                os.unlink(path)
            except OSError:
                pass
            return
        if status in (401, 403):
            self._stopped = True
            self.state = "unauthorized"
            self._agent._on = False
            _warn("the collector refused our token (%d) for a trace upload" % status)
            return
        up[2] = attempts + 1
        retry = status is None or status >= 500 or status == 429
        if not retry or up[2] >= UPLOAD_ATTEMPTS:
            self._uploads.pop(0)
            self.count("uploads_failed")
            _warn("trace upload to %s failed (%s): %s; the trace stays in %s"
                  % (target, status, (data or b"")[:200].decode("utf-8", "replace"), path))
            return
        self.count("retries")
        delay = None
        if hdrs and hdrs.get("retry-after"):
            try:
                delay = min(MAX_RETRY_AFTER_S, float(hdrs["retry-after"]))
            except ValueError:
                pass
        up[3] = time.monotonic() + (delay if delay is not None
                                    else backoff_s(up[2]))

    def _gzip_trace(self, path):
        """The trace gzipped to a temporary file (streamed: traces can be
        large), with a distributedInfo (rank, world size) when torch wrote
        none: torch without Kineto (Debian's 1.13) writes a bare list of
        events, which becomes {"distributedInfo": ..., "traceEvents": [...]}
        (the Chrome trace object form)."""
        with open(path, "rb") as f:
            head = f.read(1 << 16)
        add = b'"distributedInfo"' not in head
        if add:
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    if b'"distributedInfo"' in chunk:
                        add = False
                        break
        fd, gz_path = tempfile.mkstemp(prefix="strag-trace-", suffix=".json.gz")
        os.close(fd)
        stripped = head.lstrip()
        top = stripped[:1]
        with open(path, "rb") as src, gzip.open(gz_path, "wb", compresslevel=1) as dst:
            copy_from = 0
            if add and top in (b"[", b"{"):
                info = json.dumps(self._dist_info()).encode()
                if top == b"[":
                    dst.write(b'{"distributedInfo": ' + info + b',\n"traceEvents": ')
                else:
                    i = head.index(b"{")
                    empty = head[i + 1:].lstrip()[:1] == b"}"
                    dst.write(head[:i + 1])
                    dst.write(b'\n  "distributedInfo": ' + info +
                              (b"" if empty else b","))
                    copy_from = i + 1
            src.seek(copy_from)
            for chunk in iter(lambda: src.read(1 << 20), b""):
                dst.write(chunk)
            if add and top == b"[":
                dst.write(b"}\n")
        return gz_path

    def _dist_info(self):
        a = self._agent
        info = {}
        try:
            if a._dist_ready():
                info["backend"] = str(a._dist.get_backend())
        except Exception:
            pass
        info["rank"] = a.rank
        info["world_size"] = a.world_size
        return info
