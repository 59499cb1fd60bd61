"""event with a deep accept queue: many more wrk keep-alive clients than workers, on real httpd
and in the simulation with and without the listener as a thread (docs/simulate.md, "event's
listener").

    python benchmarks/event_listener_fit.py [--processes P --threads T --clients C] [--seconds S]
        [--turnaround DIST] [--listener-wake US --accept-spacing US] [--runs N] [--mpm worker|prefork]

httpd (the installed apache2) runs event with P processes x T threads (default 3 x 25), C
keep-alive wrk clients (default 400) asking validate's application for fixed 50 ms requests for
S seconds (default 5), N times (default 2). Its access log gives, for each worker thread, how
long after its last request ended its next new connection's request began (the listener's
wake-up, accept and hand-off) and its next keep-alive request's. Printed: httpd's req/s, p50 /
p95 / p99 and wrk's read errors (the connections event closed); then the simulation of the same
load (DIST: wrk's turnaround here, timed by benchmarks/event_parked_race.py; default
lognormal:72us:0.52, a 2-core Intel VM) with an instant listener, with --listener-wake and
--accept-spacing (default 150 and 100 us), and with both and --client-first 0.13. Simulated
without the CPU model, as validate's simulate plan does; each line gives the latencies as the
simulation's requests took them and as wrk would print them (its coordinated-omission correction,
stats.as_wrk_reports). `--mpm worker` or `prefork` runs the same clients on that MPM (prefork:
P x T children), where no listener races: there wrk's printed tail is its correction of the few
clients that waited for MaxKeepAliveRequests to free a worker. Needs wrk and apache2.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from apachetune.simulate import simulate  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload  # noqa: E402
from apachetune.validate.load import wrk_load  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

PATH = "/app/sleep?ms=50&kb=0"
LOG_FORMAT = '"%P %{tid}P %{begin:usec}t %{end:usec}t %k %U"'


def section(mpm: str, processes: int, threads: int) -> dict[str, object]:
    if mpm == "prefork":
        d = load_directives(None, "prefork", processes * threads, 1)
        d.update(StartServers=processes * threads, ServerLimit=processes * threads,
                 MinSpareServers=processes * threads, MaxSpareServers=processes * threads)
        return d
    d = load_directives(None, mpm, processes * threads, threads)
    d.update(StartServers=processes, ServerLimit=processes, MinSpareThreads=threads,
             MaxSpareThreads=processes * threads)
    return d


def quantiles(values: list[int]) -> str:
    values = sorted(values)
    return " / ".join(str(values[int(q * len(values))]) for q in (0.1, 0.25, 0.5)) if values else "-"


def worker_gaps(log: Path) -> tuple[list[int], list[int]]:
    """Microseconds from a worker thread's request ending to its next one beginning, for a new
    connection's first request and for a keep-alive one."""
    by_thread: dict[tuple[str, str], list[tuple[int, int, int]]] = collections.defaultdict(list)
    for line in log.read_text().splitlines():
        pid, tid, begin, end, keepalives, url = line.split()
        if url.startswith("/app/sleep"):
            by_thread[(pid, tid)].append((int(begin), int(end), int(keepalives)))
    new, kept = [], []
    for requests in by_thread.values():
        requests.sort()
        for before, after in itertools.pairwise(requests):
            (new if after[2] == 0 else kept).append(after[0] - before[1])
    return new, kept


def measure(args: argparse.Namespace) -> None:
    log = Path(tempfile.mkdtemp(prefix="apachetune-listener-")) / "access.log"
    directives = {**section(args.mpm, args.processes, args.threads), "CustomLog": f"{log} {LOG_FORMAT}"}
    with make_target("httpd", args.mpm, directives) as target:
        time.sleep(1.0)
        for _ in range(args.runs):
            log.write_text("")
            r = wrk_load(target.host, target.port, PATH, args.clients, args.seconds)
            time.sleep(0.5)  # the last entries written
            new, kept = worker_gaps(log)
            print(f"httpd: {r.throughput:,.0f} req/s, p50 / p95 / p99 {r.percentile(50) * 1000:,.0f} / "
                  f"{r.percentile(95) * 1000:,.0f} / {r.percentile(99) * 1000:,.0f} ms, errors {dict(r.errors)}; "
                  f"a worker's next new connection after {quantiles(new)} us (p10 / p25 / p50), "
                  f"next keep-alive request after {quantiles(kept)}")
            time.sleep(6)  # KeepAliveTimeout: the last run's connections gone


def simulated(args: argparse.Namespace) -> None:
    draw = ServiceTime.parse(args.turnaround)
    w = Workload(ServiceTime.parse("51.1ms"), clients=args.clients, timed_from_handshake=True, turnaround_draw=draw)
    lag = {"listener_wake": args.listener_wake / 1e6, "accept_spacing": args.accept_spacing / 1e6}
    ways = [("instant listener", {"listener_wake": 0.0, "accept_spacing": 0.0}), (f"listener {args.listener_wake:g} / {args.accept_spacing:g} us", lag),
            ("that and --client-first 0.13", {**lag, "client_first": 0.13})] if args.mpm == "event" else [(args.mpm, {})]
    for label, kw in ways:
        for seed in (1, 2):
            r = simulate(args.mpm, section(args.mpm, args.processes, args.threads), w, args.seconds + 1, warmup=1,
                         seed=seed, **kw)
            ms, wrk = r.latency_ms, r.latency_as_wrk_ms()
            print(f"simulated, {label}, seed {seed}: {r.throughput:,.0f} req/s, p50 / p95 / p99 {ms['p50']:,.0f} / "
                  f"{ms['p95']:,.0f} / {ms['p99']:,.0f} ms (as wrk prints them {wrk['p50']:,.0f} / "
                  f"{wrk['p95']:,.0f} / {wrk['p99']:,.0f}), errors {r.errors}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--threads", type=int, default=25)
    ap.add_argument("--clients", type=int, default=400)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--turnaround", default="lognormal:72us:0.52")
    ap.add_argument("--listener-wake", type=float, default=150.0, help="microseconds")
    ap.add_argument("--accept-spacing", type=float, default=100.0, help="microseconds")
    ap.add_argument("--mpm", choices=("event", "worker", "prefork"), default="event")
    args = ap.parse_args()
    print(f"{args.mpm} {args.processes} x {args.threads} threads, {args.clients} wrk keep-alive clients, fixed 50 ms")
    measure(args)
    simulated(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
