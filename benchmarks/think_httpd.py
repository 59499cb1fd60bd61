"""Keep-alive clients that pause between requests, on real httpd beside the simulation
(docs/simulate.md, "Think time"): each client sends a request, reads the answer, pauses
(--think, fixed or exp:MEAN), and sends the next on the same connection. A client that checks
its connection first opens a new one when the server closed it meanwhile; with --naive it
writes the request into the closed connection and loses it (an error). The clients start at
once, or evenly over --ramp-up seconds.

    python benchmarks/think_httpd.py [--mpm event] [--clients 30] [--think exp:200ms] [--naive] [--ramp-up 0]
                                     [--seconds 30]

/app/sleep?ms=50 on validate's httpd application, 10 workers (prefork 10 children; worker and
event 2 x 5), KeepAliveTimeout 5. Prints httpd's throughput, p50/p99, errors and (event) the
parked connections its listeners closed (LogLevel mpm_event:trace1), then the simulation's
(seeds 1-3). Needs apache2. Loopback only, bounded (--seconds, 30 s a request).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from apachetune.simulate import simulate  # noqa: E402
from apachetune.simulate.stats import percentile  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload, parse_draw  # noqa: E402
from apachetune.validate.load import _classify, _read_response, _request  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

SERVICE_MS, TIMEOUT = 50, 30.0
CLOSES = re.compile(r"will shutdown (\d+) keep-alive")


async def clients(port: int, n: int, think: tuple, naive: bool, seconds: float, ramp_up: float) -> dict:
    rng = random.Random(1)
    out: dict = {"latencies": [], "errors": collections.Counter()}
    t0 = time.monotonic()
    end = t0 + seconds

    async def client(i: int) -> None:
        await asyncio.sleep(i * ramp_up / n)
        reader = writer = None
        while time.monotonic() < end:
            if writer is not None and not naive and reader.at_eof():  # closed while it paused: noticed
                writer.close()
                writer = None
            sent = time.monotonic()
            try:
                if writer is None:
                    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), TIMEOUT)
                writer.write(_request(f"/app/sleep?ms={SERVICE_MS}", True))
                _, keep = await asyncio.wait_for(_read_response(reader), TIMEOUT)
                out["latencies"].append(time.monotonic() - sent)
                if not keep:
                    writer.close()
                    writer = None
            except Exception as e:  # noqa: BLE001 - counted by kind
                out["errors"][_classify(e)] += 1
                if writer is not None:
                    writer.close()
                writer = None
            mean, draw = think
            await asyncio.sleep(rng.expovariate(1 / mean) if draw is not None and mean else mean)
        if writer is not None:
            writer.close()

    await asyncio.gather(*(client(i) for i in range(n)))
    out["elapsed"] = time.monotonic() - t0
    return out


def p(latencies: list[float], q: float) -> float:
    """ms, as the simulation counts its percentiles (one definition for both sides)."""
    return 1000 * percentile(sorted(latencies), q) if latencies else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mpm", choices=["prefork", "worker", "event"], default="event")
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--think", default="exp:200ms", help="a pause: 200ms (fixed) or exp:200ms (drawn)")
    parser.add_argument("--naive", action="store_true", help="write into a connection closed meanwhile (lost)")
    parser.add_argument("--ramp-up", type=float, default=0.0, help="start the clients evenly over this many seconds")
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    think = parse_draw(args.think, "--think")
    if think[1] is not None and think[1].kind != "exp":
        parser.error("--think: a fixed pause or exp:MEAN")
    section = load_directives(None, args.mpm, 10, 1 if args.mpm == "prefork" else 5, keepalive_timeout=5)
    traced = {**section, "LogLevel": "mpm_event:trace1"} if args.mpm == "event" else dict(section)
    print(f"{args.mpm}, 10 workers, {SERVICE_MS} ms; {args.clients} keep-alive clients pausing {args.think}"
          f"{', naive' if args.naive else ', checking their connection'}"
          f"{f', started over {args.ramp_up:g} s' if args.ramp_up else ''}; {args.seconds:g} s")
    with make_target("httpd", args.mpm, traced) as target:
        time.sleep(2.0)
        r = asyncio.run(clients(target.port, args.clients, think, args.naive, args.seconds, args.ramp_up))
        log = (target.tmp / "error.log").read_text()
    closed = sum(int(m) for m in CLOSES.findall(log))
    print(f"httpd: {len(r['latencies']) / r['elapsed']:.1f} req/s, p50 {p(r['latencies'], 0.5):.0f} ms, "
          f"p99 {p(r['latencies'], 0.99):.0f} ms, errors {dict(r['errors']) or 0}"
          + (f", parked connections closed {closed:,}" if args.mpm == "event" else ""))
    workload = Workload(ServiceTime.parse(f"{SERVICE_MS}ms"), clients=args.clients, think=think[0],
                        think_draw=think[1], naive_reuse=args.naive, ramp_up=args.ramp_up,
                        timeout=TIMEOUT)
    for seed in (1, 2, 3):
        s = simulate(args.mpm, section, workload, args.seconds, seed=seed)
        print(f"simulated, seed {seed}: {s.throughput:.1f} req/s, p50 {s.latency_ms.get('p50', 0):.0f} ms, "
              f"p99 {s.latency_ms.get('p99', 0):.0f} ms, errors {s.errors or 0}, parked connections closed "
              f"{s.events.get('keep-alive closed, workers busy', 0):,}")


if __name__ == "__main__":
    main()
