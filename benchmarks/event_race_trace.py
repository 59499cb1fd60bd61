"""Why event closes parked keep-alive requests: each response traced with perf, on real httpd.

    python benchmarks/event_race_trace.py [wrk | ab] [--processes P --threads T --clients C]
        [--split] [--hogs N] [--keep FILE]

event.c's listener closes a parked connection whose next request finds no worker of its process
idle. The worker that wrote the response is not idle yet for a while: after the write it still
finishes the request (the EOR bucket, the request pool, the access log), puts the connection back
in the listener's pollset (epoll_ctl ADD) and only then counts itself idle
(`ap_queue_info_set_idle`). A request that is back before that ADD wakes the listener inside the
worker's epoll_ctl; the listener runs first and, if the other workers are busy, closes it.

This traces every response of 1 s of load with `perf record` (tracepoints: writev, epoll_ctl,
shutdown, read, futex, sched_switch) and prints, for the responses traced:
- the worker's CPU time from its response's writev to its epoll_ctl ADD (time off CPU excluded);
- how often the worker was preempted in between, and by whom: the client, woken by the response
  on the worker's own core, runs first and its next request is back before the ADD;
- the connections closed unread (event's short lingering close, `shutdown(fd, SHUT_WR)`), split
  by whether their worker had been preempted so.

wrk (the default): validate's application (mod_lua, exponential 50 ms requests), event P x T
threads (default 2 x 5) and C keep-alive clients (default 20). ab: case study 4's section (2 x 3
threads, AsyncRequestWorkerFactor 50), a 17-byte file, `ab -r -k -c 200`. `--split` pins httpd to
CPU 1 and the client to CPU 0; `--hogs N` runs N busy loops beside. Needs root, perf, apache2 and
the client. perf's own writing takes CPU, so the closes counted here run a little above an
untraced run's.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from event_parked_race import event_section, exponential_paths, pin_apart  # noqa: E402

from apachetune.simulate.stats import percentile  # noqa: E402
from apachetune.validate.load import wrk_closed_loop  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

EVENTS = ("syscalls:sys_exit_writev", "syscalls:sys_enter_epoll_ctl", "syscalls:sys_enter_shutdown",
          "syscalls:sys_enter_read", "syscalls:sys_enter_futex", "sched:sched_switch")
LINE = re.compile(r"^\s*(\S+)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$")
EPOLL_CTL_ADD = 1


@dataclass
class Response:
    """One response written by a worker, up to its connection's return to the pollset."""
    pid: int
    fd: int | None
    written: float
    off_cpu: float = 0.0
    left_cpu_at: float | None = None
    preempted_by: str = ""
    added: float | None = None
    closed: bool = False


@dataclass
class Trace:
    responses: list[Response] = field(default_factory=list)

    def post_write_cpu_us(self) -> list[float]:
        return sorted((r.added - r.written - r.off_cpu) * 1e6 for r in self.responses if r.added is not None)


def _arg(rest: str, name: str) -> int | None:
    m = re.search(rf"\b{name}: 0x([0-9a-f]+)", rest)
    return int(m.group(1), 16) if m else None


def parse(lines, server: str = "apache2") -> Trace:
    """Responses from `perf script -F comm,pid,tid,cpu,time,event,trace` lines."""
    last_read: dict[int, int | None] = {}  # worker thread -> the fd it last read (its connection)
    open_: dict[int, Response] = {}  # worker thread -> its response not yet back in the pollset
    by_fd: dict[tuple[int, int | None], Response] = {}  # the last response of each connection
    trace = Trace()
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        comm, pid_s, tid_s, _cpu, t_s, name, rest = m.groups()
        pid, tid, t = int(pid_s), int(tid_s), float(t_s)
        if name == "sched:sched_switch":
            sw = re.search(r"prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(\S+) next_pid=(\d+)", rest)
            if not sw:
                continue
            prev, state, next_comm, nxt = int(sw.group(1)), sw.group(2), sw.group(3), int(sw.group(4))
            r = open_.get(prev)
            if r is not None:
                r.left_cpu_at = t
                if state.startswith("R") and not r.preempted_by:  # runnable: preempted, not asleep
                    r.preempted_by = next_comm
            r = open_.get(nxt)
            if r is not None and r.left_cpu_at is not None:
                r.off_cpu += t - r.left_cpu_at
                r.left_cpu_at = None
            continue
        if comm != server:
            continue
        if name == "syscalls:sys_enter_read":
            last_read[tid] = _arg(rest, "fd")
        elif name == "syscalls:sys_exit_writev":
            open_[tid] = Response(pid, last_read.get(tid), t)
        elif name == "syscalls:sys_enter_epoll_ctl" and _arg(rest, "op") == EPOLL_CTL_ADD:
            r = open_.get(tid)
            if r is not None and r.fd == _arg(rest, "fd"):
                del open_[tid]
                r.added = t
                trace.responses.append(r)
                by_fd[(pid, r.fd)] = r
        elif name == "syscalls:sys_enter_shutdown":
            r = by_fd.pop((pid, _arg(rest, "fd")), None)
            if r is not None:
                r.closed = True
    return trace


def report(trace: Trace, client: str) -> None:
    rs = trace.responses
    if not rs:
        print("no responses traced")
        return
    cpu = trace.post_write_cpu_us()
    by = Counter(r.preempted_by or "-" for r in rs)
    by_client = sum(1 for r in rs if r.preempted_by == client)
    closed = [r for r in rs if r.closed]
    closed_client = sum(1 for r in closed if r.preempted_by == client)
    print(f"responses traced: {len(rs)}")
    print(f"  worker's CPU from its writev to the connection's epoll_ctl ADD: p10 {percentile(cpu, 0.1):.0f} us, "
          f"p50 {percentile(cpu, 0.5):.0f}, p90 {percentile(cpu, 0.9):.0f}, p99 {percentile(cpu, 0.99):.0f}")
    print(f"  preempted in between by {client}: {by_client} ({by_client / len(rs):.0%}); by anything: "
          f"{len(rs) - by['-']}")
    print(f"  closed unread: {len(closed)} ({len(closed) / len(rs):.1%}); of them with the worker preempted "
          f"by {client}: {closed_client}; of those preempted by {client}, closed: "
          f"{closed_client / by_client if by_client else 0:.0%}; of the others: "
          f"{(len(closed) - closed_client) / max(1, len(rs) - by_client):.1%}")


def tiny_event() -> dict[str, object]:
    d = load_directives(None, "event", max_request_workers=6, threads_per_child=3)
    d.update(StartServers=2, AsyncRequestWorkerFactor=50)
    return d


def traced_run(args) -> tuple[list[str], str]:
    """Run the load on httpd with perf recording 1 s of it; (perf script lines, client's summary)."""
    section = tiny_event() if args.client == "ab" else event_section(args.processes, args.threads)
    hogs = [subprocess.Popen([sys.executable, "-c", "import time\nt = time.time() + 30\nwhile time.time() < t: pass"])
            for _ in range(args.hogs)]
    try:
        with make_target("httpd", "event", section) as t, tempfile.TemporaryDirectory() as tmp:
            time.sleep(1.0)
            wrapper = pin_apart(t) if args.split else []
            data = Path(tmp) / "perf.data"
            cmd = ["perf", "record", "-q", "-a", "-o", str(data)]
            for e in EVENTS:
                cmd += ["-e", e]
            recorder = threading.Thread(target=lambda: (time.sleep(1.5), subprocess.run(
                [*cmd, "--", "sleep", "1"], stderr=subprocess.DEVNULL)))
            recorder.start()
            if args.client == "ab":
                run = subprocess.run([*wrapper, "ab", "-r", "-k", "-s", "60", "-c", "200", "-n", "60000",
                                      f"http://{t.host}:{t.port}/index.html"], capture_output=True, text=True,
                                     timeout=120)
                kinds = re.search(r"Failed requests:\s*(\d+)(?:\s*\(Connect: \d+, Receive: \d+, Length: (\d+))?",
                                  run.stdout)
                rps = re.search(r"Requests per second:\s*([0-9.]+)", run.stdout)
                summary = (f"ab: {rps.group(1) if rps else '?'} req/s, failed {kinds.group(1) if kinds else '?'}, "
                           f"Length {kinds.group(2) or 0 if kinds else '?'} of 60000")
            else:
                paths = exponential_paths()
                r = wrk_closed_loop("127.0.0.1", t.port, paths[0], args.clients, 4, wrapper=wrapper, paths=paths)
                summary = (f"wrk: {r['throughput_rps']:.0f} req/s, closed {sum(r['errors'].values()) / 4:.1f} a second, "
                           f"p99 {r['latency_ms']['p99']:.0f} ms")
            recorder.join()
            text = subprocess.run(["perf", "script", "-i", str(data), "--comms", f"apache2,{args.client}",
                                   "-F", "comm,pid,tid,cpu,time,event,trace"],
                                  capture_output=True, text=True).stdout
            return text.splitlines(), summary
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("client", nargs="?", default="wrk", choices=("wrk", "ab"))
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=5)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--split", action="store_true", help="httpd on CPU 1, the client on CPU 0")
    ap.add_argument("--hogs", type=int, default=0, help="busy loops beside (30 s at most)")
    ap.add_argument("--keep", type=Path, help="also write perf script's lines here")
    ap.add_argument("--from", dest="source", type=Path, help="analyse a kept trace instead of running")
    args = ap.parse_args()
    if args.source:
        report(parse(args.source.read_text().splitlines()), args.client)
        return 0
    missing = [tool for tool in ("perf", args.client, "taskset") if not shutil.which(tool)]
    if missing or os.geteuid() != 0:
        print(f"needs root and {', '.join(missing) or 'perf'}", file=sys.stderr)
        return 2
    lines, summary = traced_run(args)
    if args.keep:
        args.keep.write_text("\n".join(lines) + "\n")
    shape = "2 x 3 threads, a static file" if args.client == "ab" else f"{args.processes} x {args.threads} threads"
    print(f"event {shape}{', httpd on CPU 1 and the client on CPU 0' if args.split else ''}"
          f"{f', {args.hogs} busy loops beside' if args.hogs else ''}")
    print(summary)
    report(parse(lines), args.client)
    return 0


if __name__ == "__main__":
    sys.exit(main())
