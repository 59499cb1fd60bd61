"""Open loops on real httpd beside the simulation: an overload (the accept queue full, SYNs
retransmitted) and browser-like keep-alive visitors (docs/simulate.md, `--drain` and the note on
event's visitors).

    python benchmarks/open_loop_httpd.py overload [--rate 260] [--seconds 20]
    python benchmarks/open_loop_httpd.py visitors --mpm event [--rate 40] [--seconds 60] [--runs 2] [--trace]
                                                  [--hold-open]

Poisson arrivals from one asyncio client, each visitor on its own connection making
--requests-per-connection requests --gap apart (a browser: a connection the server closed in a
gap is opened again for the next request), /app/sleep?ms=50 on validate's httpd application, a
section of 10 workers (prefork 10 children; worker and event 2 x 5). Every visitor is waited for
(30 s a request), so the run is compared with the simulation drained (`--drain`). Printed: the
measured throughput a 10 s window, latencies (p50, p99, and a histogram in whole seconds), the
seconds after its first SYN each connection was made (the kernel's retransmission steps), errors,
reconnections; then the simulated runs (seeds 1-10 for the visitors, with this machine's httpd
CPU as the CLI's default). With --hold-open each visitor, as a browser, leaves its connection
open after its last answer until httpd closes it at KeepAliveTimeout (`simulate --hold-open`). With --trace (event), httpd logs its listener's decisions
(LogLevel mpm_event:trace1) and each run prints how often a process closed its parked
connections ("kill'em all") and the longest stretches without one, beside the simulation's.
Needs apache2. Loopback only, bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from apachetune.simulate import simulate  # noqa: E402
from apachetune.simulate.server import Server  # noqa: E402
from apachetune.simulate.stats import percentile  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload  # noqa: E402
from apachetune.validate.calibration import machine_costs  # noqa: E402
from apachetune.validate.load import _classify, _read_response, _request  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

SERVICE_MS, TIMEOUT = 50, 30.0


async def visitors(port: int, rate: float, seconds: float, k: int, gap: float, seed: int,
                   hold_open: bool = False) -> dict:
    rng = random.Random(seed)
    out: dict = {"latencies": [], "done_at": [], "connected_after": [], "errors": [], "reconnects": 0}
    t0 = time.monotonic()

    async def connect():
        return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), TIMEOUT)

    async def one(arrived: float) -> None:
        writer = None
        try:
            reader, writer = await connect()
            out["connected_after"].append(time.monotonic() - arrived)
            for i in range(k):
                sent = arrived if i == 0 else time.monotonic()
                for attempt in range(2):  # a browser sends it again once on a connection closed meanwhile
                    if i > 0 and (reader.at_eof() or attempt):
                        writer.close()
                        out["reconnects"] += 1
                        reader, writer = await connect()
                    writer.write(_request(f"/app/sleep?ms={SERVICE_MS}", True))
                    try:
                        await asyncio.wait_for(_read_response(reader), TIMEOUT)
                        break
                    except asyncio.IncompleteReadError:
                        if attempt or i == 0:
                            raise
                out["latencies"].append(time.monotonic() - sent)
                out["done_at"].append(time.monotonic() - t0)
                if i < k - 1:
                    await asyncio.sleep(gap)
            if hold_open:  # a browser leaves it open: the server closes it at its KeepAliveTimeout
                await asyncio.wait_for(reader.read(), TIMEOUT)
        except Exception as e:  # noqa: BLE001 - counted by kind
            out["errors"].append(_classify(e))
        finally:
            if writer is not None:
                writer.close()

    tasks, t = [], 0.0
    while True:
        t += rng.expovariate(rate)
        if t >= seconds:
            break
        delay = t0 + t - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(t0 + t)))
    await asyncio.gather(*tasks)
    out["elapsed"] = time.monotonic() - t0
    return out


def summary(latencies: list[float]) -> str:
    xs = sorted(latencies)
    return f"p50 {percentile(xs, 0.5) * 1000:,.0f} ms, p99 {percentile(xs, 0.99) * 1000:,.0f} ms" if xs else "none"


KILL = re.compile(r"^\[\w+ \w+ \d+ (\d+):(\d+):([\d.]+) \d+\].*will shutdown (\d+) keep-alive")


def closes_told(times: list[float], closed: int) -> str:
    """How often parked connections were closed, and the longest stretches without a close."""
    times = sorted(times)
    gaps = sorted((b - a for a, b in zip(times, times[1:], strict=False)), reverse=True)
    return (f"{len(times):,} passes closed {closed:,} parked connections; longest stretches without one "
            f"{', '.join(f'{g:.2f}' for g in gaps[:3])} s")


def measure(mpm: str, section: dict, rate: float, seconds: float, k: int, gap: float, seed: int,
            trace: bool = False, hold_open: bool = False) -> None:
    if trace:
        section = {**section, "LogLevel": "mpm_event:trace1"}
    log = Path(tempfile.mkdtemp(prefix="apachetune-trace-")) / "error.log"
    with make_target("httpd", mpm, dict(section)) as target:
        time.sleep(2.0)
        r = asyncio.run(visitors(target.port, rate, seconds, k, gap, seed, hold_open))
        if trace:
            shutil.copy(target.tmp / "error.log", log)
    windows = [sum(1 for d in r["done_at"] if w * 10 <= d < w * 10 + 10) / 10 for w in range(int(seconds // 10))]
    print(f"httpd {mpm}, seed {seed}: {len(r['latencies']):,} requests, {summary(r['latencies'])}; "
          f"req/s a 10 s window {[round(x) for x in windows]}; errors {dict(collections.Counter(r['errors']))}; "
          f"reconnections {r['reconnects']:,}")
    print(f"  latencies by whole second {sorted(collections.Counter(int(x) for x in r['latencies']).items())}")
    print(f"  connections made, seconds after the first SYN "
          f"{sorted(collections.Counter(int(x) for x in r['connected_after']).items())}")
    if trace:  # the listener's "will shutdown N keep-alive connections" (event.c, kill'em all)
        kills = [m for line in log.read_text().splitlines() if (m := KILL.match(line))]
        print("  httpd's listeners: " + closes_told(
            [int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3]) for m in kills], sum(int(m[4]) for m in kills)))
        shutil.rmtree(log.parent)


BUSY_CLOSES = "keep-alive closed, workers busy"


def simulated(mpm: str, section: dict, rate: float, seconds: float, k: int, gap: float, seeds: range,
              drain: bool, trace: bool = False, hold_open: bool = False) -> None:
    workload = Workload(ServiceTime.parse(f"{SERVICE_MS}ms"), rate=rate, requests_per_connection=k, gap=gap,
                        keepalive=k > 1, timeout=TIMEOUT, holds_open=hold_open)
    costs = machine_costs(mpm, 0.0, 0.0, 1)
    passes: list[float] = []
    if trace:  # the passes that closed parked connections, timed (the simulation counts only the connections)
        close_parked = Server._close_parked

        def timed(self: Server, p, woken: bool = False) -> None:
            before = self.stats.events.get(BUSY_CLOSES, 0)
            close_parked(self, p, woken)
            if self.stats.events.get(BUSY_CLOSES, 0) > before:
                passes.append(self.clock.now)
        Server._close_parked = timed  # type: ignore[method-assign]
    for seed in seeds:
        passes.clear()
        s = simulate(mpm, section, workload, seconds, seed=seed, drain=drain, costs=costs)
        print(f"simulated, seed {seed}{', drained' if drain else ''}: {s.completed:,} requests, "
              f"{s.throughput:,.1f} req/s, {summary(s.latencies)}, errors {s.errors or 0}, "
              f"closed in a gap {s.events.get(BUSY_CLOSES, 0):,}")
        if trace:
            print("  " + closes_told([0.0, *passes], s.events.get(BUSY_CLOSES, 0)).replace(
                f"{len(passes) + 1:,} passes", f"{len(passes):,} passes", 1) + " (counted from the start)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", choices=["overload", "visitors"])
    parser.add_argument("--mpm", choices=["prefork", "worker", "event"])
    parser.add_argument("--rate", type=float)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--trace", action="store_true", help="event: time the listeners' closes of parked connections")
    parser.add_argument("--hold-open", action="store_true",
                        help="visitors leave their connection open after the last answer until httpd closes it")
    args = parser.parse_args()
    overload = args.case == "overload"
    mpm = args.mpm or ("prefork" if overload else "event")
    if args.trace and mpm != "event":
        parser.error("--trace is for event's listeners")
    rate = args.rate or (260.0 if overload else 40.0)
    seconds = args.seconds or (20.0 if overload else 60.0)
    k, gap = (1, 0.0) if overload else (3, 0.5)
    section = load_directives(None, mpm, 10, 1 if mpm == "prefork" else 5, keepalive_timeout=5)
    print(f"{mpm}, 10 workers, {SERVICE_MS} ms; {rate:g} visitors a second for {seconds:g} s, "
          f"{k} request(s) each{f', {gap:g} s apart' if k > 1 else ''}")
    for run in range(args.runs):
        measure(mpm, section, rate, seconds, k, gap, seed=run + 1, trace=args.trace, hold_open=args.hold_open)
    simulated(mpm, section, rate, seconds, k, gap, range(1, 4 if overload else 11), drain=True, trace=args.trace,
              hold_open=args.hold_open)
    if overload:
        simulated(mpm, section, rate, seconds, k, gap, range(1, 2), drain=False)


if __name__ == "__main__":
    main()
