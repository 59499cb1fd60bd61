"""event's parked requests under keep-alive overload, on real httpd and in the simulation.

    python benchmarks/event_parked_race.py [CLIENT ...] [--seconds S] [--worker-return US]
        [--processes P --threads T --clients C] [--split]

CLIENT: wrk, python (validate's client) [default: both]. httpd (the installed apache2) runs
event with P processes x T threads (default 2 x 5); C keep-alive clients (default 20) ask validate's application for
requests of exponential times (mean 50 ms) for S seconds (default 6): more clients than
workers, so every worker is busy nearly all the time and event closes a parked connection whose
next request finds none idle. tcpdump on the loopback times each client's turnaround on the
wire (from a response's last segment to the next request on that connection), and a lognormal
is fitted to it (median and 90th percentile). Printed: the closes a second and p99 httpd gave,
the turnarounds, and the simulation of the same load with that lognormal as `--turnaround`, at
`--worker-return` 0 and at US (default 45). `--split` pins httpd to CPU 1 and the client to CPU
0: the client then never preempts a worker on its core, and 0 fits (event_race_trace.py shows
why). Needs root (tcpdump), wrk and apache2.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from apachetune.simulate import simulate  # noqa: E402
from apachetune.simulate.stats import percentile  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload  # noqa: E402
from apachetune.validate.load import closed_loop, wrk_closed_loop  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

MEAN_MS = 50
SHAPE = {"processes": 2, "threads": 5, "clients": 20}


def section() -> dict[str, object]:
    return event_section(SHAPE["processes"], SHAPE["threads"])


def event_section(processes: int, threads: int) -> dict[str, object]:
    d = load_directives(None, "event", max_request_workers=processes * threads, threads_per_child=threads)
    d["StartServers"] = processes
    return d


def exponential_paths() -> list[str]:
    """validate's application asked for exponential requests of mean MEAN_MS (fixed ones finish
    in lock-step); a request takes its sleep plus the application's own time: 51.2 ms for a mean
    of 50 (10 workers served 195-199 a second)."""
    rng = random.Random(3)
    return [f"/app/sleep?ms={max(1, round(rng.expovariate(1 / MEAN_MS)))}" for _ in range(5000)]


def pin_apart(target) -> list[str]:
    """httpd's processes (and the children they fork) on CPU 1; the wrapper that runs a client on
    CPU 0, where it never preempts a worker on its core."""
    for pid in subprocess.run(["pgrep", "-f", str(target.tmp)], capture_output=True, text=True).stdout.split():
        subprocess.run(["taskset", "-a", "-cp", "1", pid], capture_output=True, check=True)
    return ["taskset", "-c", "0"]


def turnarounds(pcap: Path, port: int) -> list[float]:
    """Seconds from the server's last data segment on a connection to the client's next one."""
    text = subprocess.run(["tcpdump", "-r", str(pcap), "-nn", "-tt"], capture_output=True, text=True).stdout
    last: dict[str, float] = {}
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 5 or parts[1] != "IP" or " length " not in line:
            continue
        try:
            length = int(line.rsplit(" length ", 1)[1].split()[0])
        except ValueError:
            continue
        if not length:
            continue
        ts, src, dst = float(parts[0]), parts[2], parts[4].rstrip(":")
        if src.endswith(f".{port}"):
            last[dst] = ts
        elif dst.endswith(f".{port}") and src in last:
            out.append(ts - last.pop(src))
    return sorted(out)


def fit_lognormal(xs: list[float]) -> ServiceTime:
    """The lognormal with the sample's median and 90th percentile."""
    median, p90 = percentile(xs, 0.5), percentile(xs, 0.9)
    sigma = max(0.05, math.log(p90 / median) / 1.2816)
    return ServiceTime("lognormal", median * math.exp(sigma ** 2 / 2), sigma)


def measure(client: str, seconds: float, paths: list[str], split: bool = False) -> tuple[float, float, list[float]]:
    """(closes a second, p99 ms, turnarounds) of `client` against httpd; `split`: httpd on CPU 1,
    the client on CPU 0 (so the client never preempts a worker on its core)."""
    with make_target("httpd", "event", section()) as t, tempfile.TemporaryDirectory() as tmp:
        time.sleep(1.5)
        wrapper = pin_apart(t) if split else []
        pcap = Path(tmp) / "lo.pcap"
        cap = subprocess.Popen(["tcpdump", "-i", "lo", "-nn", "-s", "96", "-B", "65536", "-w", str(pcap),
                                f"tcp port {t.port}"], stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        if client == "wrk":
            r = wrk_closed_loop("127.0.0.1", t.port, "/app/sleep?ms=50", SHAPE["clients"], seconds, paths=paths,
                                wrapper=wrapper)
            closes, p99 = sum(r["errors"].values()) / seconds, r["latency_ms"]["p99"]
        else:
            if split:
                os.sched_setaffinity(0, {0})  # the Python client runs in this process
            try:
                res = closed_loop("127.0.0.1", t.port, "/app/sleep?ms=50", SHAPE["clients"], seconds, paths=paths)
            finally:
                os.sched_setaffinity(0, range(os.cpu_count() or 1))
            lat = sorted(res.latencies)
            closes, p99 = sum(res.errors.values()) / seconds, percentile(lat, 0.99) * 1000
        time.sleep(0.3)
        cap.send_signal(signal.SIGINT)
        cap.wait(timeout=10)
        return closes, p99, turnarounds(pcap, t.port)


def simulated(draw: ServiceTime, worker_return: float) -> tuple[float, float]:
    w = Workload(ServiceTime("exp", MEAN_MS / 1000 * 1.024), clients=SHAPE["clients"], turnaround_draw=draw)
    r = simulate("event", section(), w, 32, warmup=2, worker_return=worker_return)
    closes = sum(v for k, v in r.events.items() if "closed, workers busy" in k)
    return closes / 30, r.latency_ms["p99"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kinds", nargs="*", metavar="CLIENT", help="wrk, python")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--worker-return", type=float, default=45.0, help="microseconds")
    ap.add_argument("--split", action="store_true", help="httpd on CPU 1, the client on CPU 0")
    for name, default in SHAPE.items():
        ap.add_argument(f"--{name}", type=int, default=default)
    args = ap.parse_args()
    SHAPE.update(processes=args.processes, threads=args.threads, clients=args.clients)
    args.kinds = args.kinds or ["wrk", "python"]
    if set(args.kinds) - {"wrk", "python"}:
        ap.error("CLIENT: wrk or python")
    missing = [tool for tool in ("apache2", "tcpdump", "wrk") if not shutil.which(tool)
               and not Path("/usr/sbin", tool).exists()]
    if missing:
        print(f"needs {', '.join(missing)}", file=sys.stderr)
        return 2
    paths = exponential_paths()
    print(f"event {args.processes} x {args.threads} threads, {args.clients} keep-alive clients, "
          f"exponential {MEAN_MS} ms requests{'; httpd on CPU 1, the client on CPU 0' if args.split else ''}")
    for client in args.kinds:
        closes, p99, ts = measure(client, args.seconds, paths, args.split)
        draw = fit_lognormal(ts)
        us = [percentile(ts, q) * 1e6 for q in (0.1, 0.5, 0.9, 0.99)]
        print(f"\n{client}: httpd closed {closes:.1f} a second, p99 {p99:.0f} ms")
        print(f"  turnarounds on the wire: {len(ts)}, p10 {us[0]:.0f} us, p50 {us[1]:.0f}, p90 {us[2]:.0f}, "
              f"p99 {us[3]:.0f}; as --turnaround lognormal:{draw.mean * 1e6:.0f}us:{draw.sigma:.2f}")
        for wr in (0.0, args.worker_return * 1e-6):
            c, p = simulated(draw, wr)
            print(f"  simulated, --worker-return {wr * 1e6:g}us: closed {c:.1f} a second, p99 {p:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
