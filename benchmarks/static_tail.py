"""What makes httpd's tail under a static keep-alive benchmark on loopback: `ab -k` on a 17-byte
file against worker or event, as typed, then with ab at real-time priority, on a pool full from
the start without MaxKeepAliveRequests, pinned apart (httpd on one core, ab on the other),
with 20 connections (docs/benchmarks.md, "More held-out cells, and where the static tail comes
from"), and with the kernel's autogroup off (kernel.sched_autogroup_enabled=0, restored after:
ab's session and httpd's, started in a session of its own as systemd starts it, then share the
CPUs thread by thread instead of group by group; docs/benchmarks.md, "The static tail is the
kernel's autogroup"). `--perf` also reads with `perf sched` how long httpd's threads waited for a core.
`--stamps` runs only the full pool, autogroup on then off, under benchmarks/stamp_client.c (every
request's send and answer stamped): whether the slow requests stall together or trail on a few
connections. `--cpu-split` runs the full pool under ab with autogroup on, off, on, off and reads
where the CPU went: ab's own, httpd's (all its processes) and each core's busy share.
`--by-core` traces 1 s of the kernel's scheduling in the middle of each of those runs: which core
httpd's threads wait on, and how they are spread over the cores. `--mmap` runs the full pool (prefork
too) under stamp_client.c with autogroup on and off, each with EnableMMAP On (httpd's default) and
Off, and counts (perf, 1 s in the middle) how often httpd's threads block on their process's memory
map lock: each static response maps and unmaps its file (docs/benchmarks.md, "The static tail is
mostly EnableMMAP").

    python benchmarks/static_tail.py worker|event|prefork [--perf | --stamps | --cpu-split | --by-core | --mmap]

A fresh httpd a case (1.5 s before the load), `ab -r -k -c C -n 50000` on loopback; prints ab's
req/s, failures and p50 / p90 / p95 / p99 / max (ms) a line. Needs apache2 and ab; chrt, taskset,
the autogroup sysctl and perf (with --perf) as root.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from apachetune.validate.targets import make_target  # noqa: E402

STOCK = {"StartServers": 2, "MinSpareThreads": 25, "MaxSpareThreads": 75, "ThreadsPerChild": 25,
         "MaxRequestWorkers": 150}
FULL = {**STOCK, "StartServers": 6, "MaxSpareThreads": 150, "MaxKeepAliveRequests": 0}
# prefork's full pool: a child a connection from the start
FULL_PREFORK = {"StartServers": 100, "MinSpareServers": 5, "MaxSpareServers": 150, "MaxRequestWorkers": 150,
                "MaxKeepAliveRequests": 0}
# name: (section, httpd's wrapper, ab's wrapper, connections)
CASES = {
    "stock": (STOCK, [], [], 100),
    "stock, ab real-time": (STOCK, [], ["chrt", "-f", "10"], 100),
    "full pool": (FULL, [], [], 100),
    "full pool, ab real-time": (FULL, [], ["chrt", "-f", "10"], 100),
    "full pool, pinned apart": (FULL, ["taskset", "-c", "1"], ["taskset", "-c", "0"], 100),
    "full pool, 20 connections": (FULL, [], [], 20),
    "stock, autogroup off": (STOCK, [], [], 100),
    "full pool, autogroup off": (FULL, [], [], 100),
}
AUTOGROUP = Path("/proc/sys/kernel/sched_autogroup_enabled")
SCHED = re.compile(r"\s*[\d.]+\s+\[\d+\]\s+(\S+?)\[[\d/]+\]\s+[\d.]+\s+([\d.]+)\s+[\d.]+")


def sched_delays(data: str) -> str:
    """httpd's threads' waits for a core (perf sched timehist's "sch delay"), ms."""
    out = subprocess.run(["perf", "sched", "timehist", "-i", data], capture_output=True, text=True).stdout
    waits = sorted(float(m.group(2)) for m in map(SCHED.match, out.splitlines())
                   if m and m.group(1).startswith(("apache2", "httpd")))
    if not waits:
        return "no httpd wake-ups recorded"
    pick = [waits[min(len(waits) - 1, int(q * len(waits)))] for q in (0.5, 0.9, 0.99, 0.999)]
    return f"httpd waits for a core p50/p90/p99/p99.9/max {' / '.join(f'{x:.2f}' for x in pick)} / {waits[-1]:.2f} ms"


@contextlib.contextmanager
def autogroup(enabled: bool):
    """The kernel's autogroup as asked for the case's length, then as it was."""
    before = AUTOGROUP.read_text().strip()
    AUTOGROUP.write_text(str(int(enabled)))
    try:
        yield
    finally:
        AUTOGROUP.write_text(before)


def cannot_turn_off(off: bool, label: str) -> bool:
    """A case that turns autogroup off, on a machine where the sysctl is not writable: said, skipped."""
    if off and not os.access(AUTOGROUP, os.W_OK):
        print(f"{label}: skipped (no writable {AUTOGROUP})", flush=True)
        return True
    return False


def run(mpm: str, name: str, perf: bool) -> None:
    section, server_wrap, client_wrap, clients = CASES[name]
    off = name.endswith("autogroup off")
    if cannot_turn_off(off, f"{mpm}, {name}"):
        return
    with autogroup(False) if off else contextlib.nullcontext(), \
            make_target("httpd", mpm, dict(section), server_wrap) as t:
        time.sleep(1.5)
        url = f"http://{t.host}:{t.port}/index.html"
        data = str(Path(t.tmp) / "sched.data")
        rec = (subprocess.Popen(["perf", "sched", "record", "-o", data, "--", "sleep", "1.2"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if perf else None)
        time.sleep(0.1 if perf else 0)
        out = subprocess.run([*client_wrap, "ab", "-r", "-k", "-c", str(clients), "-n", "50000", url],
                             capture_output=True, text=True, timeout=300).stdout
        if rec:
            rec.wait()
        delays = f"; {sched_delays(data)}" if rec else ""

    def q(p: int) -> str:
        m = re.search(rf"(?m)^\s*{p}%\s+(\d+)", out)
        return m.group(1) if m else "?"

    rps = re.search(r"Requests per second:\s*([0-9.]+)", out)
    failed = re.search(r"Failed requests:\s*(\d+)", out)
    print(f"{mpm}, {name}: {rps.group(1) if rps else '?'} req/s, {failed.group(1) if failed else '?'} failed, "
          f"p50/p90/p95/p99/max {' / '.join(q(p) for p in (50, 90, 95, 99, 100))} ms{delays}", flush=True)


def stamped(mpm: str, off: bool, client: str) -> None:
    """The full pool under stamp_client.c (every request's send and answer): where the slow
    requests are. A stall of everything shows as a long gap between two answers; requests left
    behind while the rest flow, as slow ones sent all through the run, on every connection."""
    if cannot_turn_off(off, f"{mpm}, stamped, autogroup off"):
        return
    with autogroup(False) if off else contextlib.nullcontext(), make_target("httpd", mpm, dict(FULL), []) as t:
        time.sleep(1.5)
        proc = subprocess.run([client, str(t.port), "/index.html", "100", "50000"], capture_output=True, text=True,
                              timeout=300)
    if proc.returncode != 0:
        print(f"{mpm}, stamped: the client failed: {proc.stderr.strip()}", flush=True)
        return
    out = proc.stdout
    rows = [tuple(int(x) for x in line.split("\t")) for line in out.splitlines()]
    lat = sorted(b - a for _, a, b in rows)
    median = lat[len(lat) // 2]
    slow = [(a, b, c) for c, a, b in rows if b - a > max(5 * median, 20_000)]
    answers = sorted(b for _, _, b in rows)
    gap = max(answers[i + 1] - answers[i] for i in range(len(answers) - 1))  # a stall of everything shows here
    t0 = min(a for _, a, _ in rows)
    buckets = {(a - t0) // 10_000 for a, _, _ in slow}  # 10 ms buckets of send time holding a slow request
    worst: dict[int, int] = {}
    for c, a, b in rows:
        worst[c] = max(worst.get(c, 0), b - a)
    by_conn = sorted(worst.values())
    span = (answers[-1] - t0) / 1e6
    print(f"{mpm}, stamped, autogroup {'off' if off else 'on'}: {len(rows) / span:,.0f} req/s, p50 / p99 / max "
          f"{median / 1000:.1f} / {lat[int(len(lat) * 0.99)] / 1000:.1f} / {lat[-1] / 1000:.1f} ms; longest gap "
          f"between two answers {gap / 1000:.1f} ms; {len(slow)} slow (> 5x the median, 20 ms at least), sent in "
          f"{len(buckets)} of {int(span * 100) + 1} 10-ms intervals; each connection's slowest: min / median / max "
          f"{by_conn[0] / 1000:.1f} / {by_conn[len(by_conn) // 2] / 1000:.1f} / {by_conn[-1] / 1000:.1f} ms; "
          f"{proc.stderr.strip()}", flush=True)


def cpu_split(mpm: str, off: bool) -> None:
    """The full pool under `ab -k -c 100 -n 50000`: ab's CPU and httpd's a request, each core's busy share."""
    import psutil

    if cannot_turn_off(off, f"{mpm}, cpu split, autogroup off"):
        return

    def cpu(pids: list[int]) -> float:
        total = 0.0
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                t = psutil.Process(pid).cpu_times()
                total += t.user + t.system
        return total

    with autogroup(False) if off else contextlib.nullcontext(), make_target("httpd", mpm, dict(FULL), []) as t:
        time.sleep(1.5)
        httpd = [p.pid for p in psutil.process_iter(["name"]) if p.info["name"] in ("apache2", "httpd")]
        h0, c0, w0 = cpu(httpd), psutil.cpu_times(percpu=True), time.monotonic()
        ab = subprocess.Popen(["ab", "-r", "-k", "-c", "100", "-n", "50000", f"http://{t.host}:{t.port}/index.html"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        ab_cpu = 0.0
        while ab.poll() is None:  # ab's clock, read until it exits
            ab_cpu = cpu([ab.pid]) or ab_cpu
            time.sleep(0.02)
        out = ab.stdout.read() if ab.stdout else ""
        wall, h1, c1 = time.monotonic() - w0, cpu(httpd), psutil.cpu_times(percpu=True)
    busy = [1 - (b.idle - a.idle) / max(1e-9, sum(b) - sum(a)) for a, b in zip(c0, c1, strict=True)]
    rps = re.search(r"Requests per second:\s*([0-9.]+)", out)
    p99 = re.search(r"(?m)^\s*99%\s+(\d+)", out)
    print(f"{mpm}, autogroup {'off' if off else 'on'}: {rps.group(1) if rps else '?'} req/s, p99 "
          f"{p99.group(1) if p99 else '?'} ms; ab {ab_cpu / wall:.0%} of a core, {ab_cpu / 50000 * 1e6:.1f} us a "
          f"request; httpd {(h1 - h0) / wall:.0%}, {(h1 - h0) / 50000 * 1e6:.1f} us a request; cores busy "
          f"{' / '.join(f'{b:.0%}' for b in busy)}", flush=True)


def by_core(mpm: str, off: bool) -> None:
    """The full pool under `ab -k -c 100 -n 60000`, 1 s of the kernel's scheduling events traced
    in the middle (perf record of sched_switch, sched_wakeup, sched_migrate_task): each core's
    share by program, httpd's threads' waits for a core by the core they ran on, how each thread's
    run time splits between the cores, and the migrations."""
    if cannot_turn_off(off, f"{mpm}, by core, autogroup off"):
        return
    with tempfile.TemporaryDirectory() as tmp, autogroup(False) if off else contextlib.nullcontext(), \
            make_target("httpd", mpm, dict(FULL), []) as t:
        time.sleep(1.5)
        data = str(Path(tmp) / "sched.data")
        ab = subprocess.Popen(["ab", "-r", "-k", "-c", "100", "-n", "60000", f"http://{t.host}:{t.port}/index.html"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        time.sleep(0.8)
        subprocess.run(["perf", "record", "-a", "-o", data, "-e", "sched:sched_switch", "-e", "sched:sched_wakeup",
                        "-e", "sched:sched_migrate_task", "--", "sleep", "1"], capture_output=True, check=True)
        out = ab.communicate(timeout=300)[0]
        trace = subprocess.run(["perf", "script", "-i", data, "-F", "cpu,time,event,trace"], capture_output=True,
                               text=True, check=True).stdout
    p99 = re.search(r"(?m)^\s*99%\s+(\d+)", out)
    print(f"{mpm}, by core, autogroup {'off' if off else 'on'}: ab's p99 {p99.group(1) if p99 else '?'} ms; "
          f"{read_by_core(trace)}", flush=True)


def read_by_core(trace: str) -> str:
    """What `by_core` prints, from perf script's lines ([cpu] time: event: fields)."""
    line_re = re.compile(r"\s*\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)")
    comm: dict[int, str] = {}
    waiting: dict[int, float] = {}  # thread -> runnable since
    running: dict[int, tuple[int, float]] = {}  # core -> (thread, since)
    share: dict[int, dict[str, float]] = {}  # core -> program -> seconds
    runs: dict[int, dict[int, float]] = {}  # httpd thread -> core -> seconds
    waits: dict[int, list[float]] = {}  # core -> httpd threads' waits there
    moves = 0
    for line in trace.splitlines():
        m = line_re.match(line)
        if not m:
            continue
        core, now, event, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        if event == "sched_switch":
            f = re.search(r"prev_comm=(.*) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+)", rest)
            if not f:
                continue
            prev, nxt = int(f.group(2)), int(f.group(5))
            comm[prev], comm[nxt] = f.group(1), f.group(4)
            if core in running:
                tid, since = running[core]
                name = comm.get(tid, "?")
                share.setdefault(core, {})[name] = share.get(core, {}).get(name, 0.0) + now - since
                if name in ("apache2", "httpd"):
                    runs.setdefault(tid, {})[core] = runs.get(tid, {}).get(core, 0.0) + now - since
            running[core] = (nxt, now)
            if f.group(3).startswith("R"):  # preempted: it waits again
                waiting[prev] = now
            if nxt in waiting:
                since = waiting.pop(nxt)
                if comm[nxt] in ("apache2", "httpd"):
                    waits.setdefault(core, []).append(now - since)
        elif event == "sched_wakeup":
            f = re.search(r"comm=(.*) pid=(\d+)", rest)
            if f:
                comm[int(f.group(2))] = f.group(1)
                waiting.setdefault(int(f.group(2)), now)
        elif event == "sched_migrate_task" and re.search(r"comm=(apache2|httpd) ", rest):
            moves += 1
    parts = []
    for core in sorted(share):
        total = sum(share[core].values()) or 1.0
        top = sorted(share[core].items(), key=lambda kv: -kv[1])[:2]
        w = sorted(waits.get(core, [0.0]))
        parts.append(f"core {core}: {', '.join(f'{n} {v / total:.0%}' for n, v in top)}, httpd's waits there "
                     f"p50 / p99 / max {w[len(w) // 2] * 1e3:.2f} / {w[int(len(w) * 0.99)] * 1e3:.2f} / "
                     f"{w[-1] * 1e3:.2f} ms ({len(w):,})")
    busy = [r for r in runs.values() if sum(r.values()) > 0.001]
    mostly = sum(1 for r in busy if max(r.values()) > 0.8 * sum(r.values()))
    per = sorted(sum(r.values()) for r in busy)
    return (f"{'; '.join(parts)}; {mostly} of {len(busy)} busy threads ran 80% or more on one core, run time "
            f"a thread min / median / max {per[0] * 1e3:.1f} / {per[len(per) // 2] * 1e3:.1f} / {per[-1] * 1e3:.1f} "
            f"ms; {moves} migrations of httpd's threads") if busy else "no httpd thread ran"


def simulated(mpm: str, section: dict[str, object], off: bool) -> str:
    """`apachetune simulate` of the same section and load (100 keep-alive clients, 80,000
    requests of a file, the lab's CPU figures), with the case's autogroup: p50 / p99 / max."""
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "mpm.conf"
        conf.write_text(f"LoadModule mpm_{mpm}_module /usr/lib/apache2/modules/mod_mpm_{mpm}.so\n"
                        + "".join(f"{k} {v}\n" for k, v in section.items()))
        out = subprocess.run([sys.executable, "-m", "apachetune", "simulate", str(conf), "--clients", "100",
                              "--requests", "80000", "--service", "1us", "--format", "json",
                              "--no-autogroup" if off else "--autogroup"], capture_output=True, text=True)
    if out.returncode != 0:
        return f"simulate failed: {out.stderr.strip()[-200:]}"
    doc = json.loads(out.stdout)
    lat = doc["latency_ms"]
    return (f"simulated ({doc['cpu_scheduler']}) {doc['throughput_rps']:,.0f} req/s, p50 / p99 / max "
            f"{lat['p50']:.1f} / {lat['p99']:.1f} / {lat['max']:.1f} ms")


def mmap_lock(mpm: str, off: bool, mmap: bool, client: str, simulate: bool = False) -> None:
    """The full pool under stamp_client.c (100 keep-alive connections, 80,000 requests of the 17-byte
    file), EnableMMAP On or Off, autogroup on or off: req/s, p50 / p99 / max, and, traced 1 s in the
    middle with perf's call chains, httpd's switches off a core blocked on the mm's lock (mmap_lock,
    an rwsem: the mmap and munmap of each response's file take it to write, a page fault to read)."""
    if cannot_turn_off(off, f"{mpm}, mmap, autogroup off"):
        return
    section = dict(FULL_PREFORK if mpm == "prefork" else FULL, EnableMMAP="On" if mmap else "Off")
    with tempfile.TemporaryDirectory() as tmp, autogroup(False) if off else contextlib.nullcontext(), \
            make_target("httpd", mpm, section, []) as t:
        time.sleep(1.5)
        proc = subprocess.Popen([client, str(t.port), "/index.html", "100", "80000"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        data = str(Path(tmp) / "sched.data")
        time.sleep(0.8)
        traced = subprocess.run(["perf", "record", "-g", "-a", "-o", data, "-e", "sched:sched_switch", "-e",
                                 "sched:sched_wakeup", "--", "sleep", "1"], capture_output=True).returncode == 0
        out, err = proc.communicate(timeout=300)
        script = (subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True).stdout
                  if traced else "")
    if proc.returncode != 0:
        print(f"{mpm}, mmap: the client failed: {err.strip()}", flush=True)
        return
    rows = [tuple(int(x) for x in line.split("\t")) for line in out.splitlines()]
    lat = sorted(b - a for _, a, b in rows)
    span = (max(b for *_, b in rows) - min(a for _, a, _ in rows)) / 1e6
    print(f"{mpm}, autogroup {'off' if off else 'on'}, EnableMMAP {'On' if mmap else 'Off'}: "
          f"{len(rows) / span:,.0f} req/s, p50 / p99 / max {lat[len(lat) // 2] / 1e3:.1f} / "
          f"{lat[int(len(lat) * 0.99)] / 1e3:.1f} / {lat[-1] / 1e3:.1f} ms; {read_lock_waits(script)}"
          + (f"; {simulated(mpm, section, off)}" if simulate else ""), flush=True)


def read_lock_waits(script: str) -> str:
    """httpd's switches off a core in 1 s of perf script's output (sched_switch with call chains,
    sched_wakeup): how many, how many blocked on the mm's lock (by what took it), and how long a
    blocked thread slept there until woken, then waited for a core."""
    if not script:
        return "not traced (perf)"
    switches = blocked = 0
    by: dict[str, int] = {}
    asleep: dict[int, float] = {}  # thread blocked on the lock -> since
    woken: dict[int, float] = {}  # thread woken from it -> since
    slept: list[float] = []
    waited: list[float] = []
    for block in script.split("\n\n"):
        lines = block.strip().splitlines()
        head = re.search(r"\s([\d.]+):\s+sched:(\w+):\s+(.*)", lines[0]) if lines else None
        if not head:
            continue
        now, event, rest = float(head.group(1)), head.group(2), head.group(3)
        if event == "sched_wakeup":
            f = re.search(r"comm=(?:apache2|httpd) pid=(\d+)", rest)
            if f and int(f.group(1)) in asleep:
                tid = int(f.group(1))
                slept.append(now - asleep.pop(tid))
                woken[tid] = now
            continue
        f = re.search(r"prev_comm=(\S+) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=\S+ next_pid=(\d+)", rest)
        if not f:
            continue
        if int(f.group(4)) in woken:
            waited.append(now - woken.pop(int(f.group(4))))
        if f.group(1) not in ("apache2", "httpd"):
            continue
        switches += 1
        frames = " ".join(lines[1:])
        if "rwsem_down_" not in frames:
            continue
        blocked += 1
        asleep[int(f.group(2))] = now
        what = ("munmap" if "munmap" in frames else "mmap" if "mmap_pgoff" in frames else
                "page fault" if "exc_page_fault" in frames else "other")
        by[what] = by.get(what, 0) + 1
    detail = ", ".join(f"{k} {v:,}" for k, v in sorted(by.items(), key=lambda kv: -kv[1]))
    out = f"{switches:,} switches of httpd's off a core, {blocked:,} blocked on the mm lock" + (
        f" ({detail})" if detail else "")
    if slept and waited:
        s, w = sorted(slept), sorted(waited)
        out += (f"; asleep there p50 / p90 / max {s[len(s) // 2] * 1e3:.1f} / {s[int(len(s) * 0.9)] * 1e3:.1f} / "
                f"{s[-1] * 1e3:.1f} ms, then waiting for a core p50 / max {w[len(w) // 2] * 1e3:.1f} / "
                f"{w[-1] * 1e3:.1f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mpm", choices=("worker", "event", "prefork"))
    parser.add_argument("--perf", action="store_true", help="also read httpd's waits for a core (perf sched)")
    parser.add_argument("--stamps", action="store_true",
                        help="only the full pool with autogroup on and off, under stamp_client.c: where the slow "
                             "requests are")
    parser.add_argument("--cpu-split", action="store_true",
                        help="the full pool with autogroup on, off, on, off: where the CPU goes")
    parser.add_argument("--by-core", action="store_true",
                        help="the full pool with autogroup on, off, on, off, 1 s of scheduling traced in each: "
                             "which core httpd's threads wait on")
    parser.add_argument("--mmap", action="store_true",
                        help="the full pool under stamp_client.c, autogroup on and off, EnableMMAP On and Off: what "
                             "the mapping of each response's file costs")
    parser.add_argument("--rounds", type=int, default=1, help="with --mmap: rounds of the four cases")
    parser.add_argument("--simulated", action="store_true",
                        help="with --mmap: also `apachetune simulate` each case (--autogroup as the case)")
    args = parser.parse_args()
    if args.mpm == "prefork" and not args.mmap:
        parser.error("prefork only with --mmap")
    if args.mmap:
        with tempfile.TemporaryDirectory() as tmp:
            client = str(Path(tmp) / "stamp_client")
            subprocess.run(["cc", "-std=c11", "-O2", "-o", client, str(ROOT / "benchmarks" / "stamp_client.c")],
                           check=True)
            for _ in range(args.rounds):
                for off in (False, True):
                    for mmap in (True, False):
                        mmap_lock(args.mpm, off, mmap, client, args.simulated)
        return
    if args.by_core:
        for off in (False, True, False, True):
            by_core(args.mpm, off)
        return
    if args.cpu_split:
        for off in (False, True, False, True):
            cpu_split(args.mpm, off)
        return
    if args.stamps:
        with tempfile.TemporaryDirectory() as tmp:
            client = str(Path(tmp) / "stamp_client")
            subprocess.run(["cc", "-std=c11", "-O2", "-o", client, str(ROOT / "benchmarks" / "stamp_client.c")],
                           check=True)
            for off in (False, True):
                stamped(args.mpm, off, client)
        return
    for name in CASES:
        run(args.mpm, name, args.perf)


if __name__ == "__main__":
    main()
