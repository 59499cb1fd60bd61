"""httpd's own CPU in the simulation: a fast page on real httpd against `apachetune simulate`.

    python benchmarks/httpd_cpu_bench.py

A small static file (validate's httpd: its modules, `/index.html`) served by httpd 2.4.71 with
each MPM's full pool (the calibration's sections: nothing forked while measured), wrk on the
same machine at 10 and 100 clients, with keep-alive and with a connection per request, unpinned
(as an operator runs it), 3 rounds of 3 s, medians. Beside each, the simulation of the same
workload with `--httpd-cpu machine` (this machine's calibration, measured first when missing:
about a minute an MPM; its httpd figures measured unpinned at 10 and 300 connections, the
simulation following the connections open between them) and `--client-cpu wrk` (a local client's CPU shares the cores), and the
same simulation without httpd's CPU (what `simulate` predicted before it modelled it).

Writes the `## httpd's own CPU: a fast page, simulated` section of docs/benchmarks.md.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from parse_bench import write_section  # noqa: E402

from apachetune import httpd  # noqa: E402
from apachetune.simulate import simulate  # noqa: E402
from apachetune.simulate.cpu import CLIENT_CPU, CpuCosts  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload  # noqa: E402
from apachetune.validate import calibration  # noqa: E402
from apachetune.validate.load import wrk_available, wrk_closed_loop  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "3"))
DURATION = int(os.environ.get("DURATION", "3"))
LOADS = [(10, True), (100, True), (10, False), (100, False)]
HEADING = "## httpd's own CPU: a fast page, simulated"


def measured(mpm: str) -> dict[tuple[int, bool], float]:
    """Median req/s of each load on real httpd."""
    runs: dict[tuple[int, bool], list[float]] = {}
    with make_target("httpd", mpm, {**calibration.SECTIONS[mpm], **calibration.COMMON}) as t:
        for _ in range(ROUNDS):
            for clients, keepalive in LOADS:
                wrk_closed_loop(t.host, t.port, "/index.html", clients, 1, keepalive)  # connections, caches
                r = wrk_closed_loop(t.host, t.port, "/index.html", clients, DURATION, keepalive)
                runs.setdefault((clients, keepalive), []).append(r["requests_ok"] / DURATION)
    return {load: statistics.median(v) for load, v in runs.items()}


def simulated(mpm: str, clients: int, keepalive: bool, costs: CpuCosts | None, seconds: float = 3) -> float:
    section = {**load_directives(None, mpm, keep_server_limit=True), **calibration.SECTIONS[mpm],
               **calibration.COMMON}
    # the file's own time off CPU is nothing; 1 µs stands for it (a service time must be above 0)
    w = Workload(ServiceTime.parse("1us"), clients=clients, keepalive=keepalive)
    return simulate(mpm, section, w, seconds, warmup=seconds / 6, cores=os.cpu_count() or 1, costs=costs,
                    max_events=3_000_000).throughput


def main() -> int:
    if httpd.binary() is None or not wrk_available():
        print("needs httpd and wrk", file=sys.stderr)
        return 1
    rows = []
    ratios: list[float] = []
    flat_ratios: list[float] = []
    for mpm in ("prefork", "worker", "event"):
        known = calibration.stored().get(mpm)
        if known is None or known.unpinned_by_clients is None or (  # measured when missing (or from before)
                mpm in calibration.SMALL_POOLS and known.unpinned_small_pool is None):
            calibration.store(calibration.measure(mpm, progress=lambda s: print(s, flush=True)))
        wrk = [x / 1e6 for x in CLIENT_CPU["wrk"]]
        costs = calibration.machine_costs(mpm, *wrk)
        mean = CpuCosts(costs.request, costs.connection, *wrk, costs.source)  # one figure at any load, as before
        real = measured(mpm)
        for clients, keepalive in LOADS:
            sim = simulated(mpm, clients, keepalive, costs)
            flat = simulated(mpm, clients, keepalive, mean)
            free = simulated(mpm, clients, keepalive, None, 0.03)  # millions a second: a glimpse is enough
            ratio = sim / real[clients, keepalive]
            ratios.append(ratio)
            flat_ratios.append(flat / real[clients, keepalive])
            rows.append(f"| {mpm} | {'keep-alive' if keepalive else 'close'} c={clients} | "
                        f"{real[clients, keepalive]:,.0f} | {sim:,.0f} | **{ratio:.2f}** | "
                        f"{flat / real[clients, keepalive]:.2f} | {free:,.0f} | "
                        + " / ".join(f"{r * 1e6:.0f} + {c * 1e6:.0f}" for _, r, c in costs.span or ()) + " |")
            print(rows[-1], flush=True)
    body = "\n".join([
        HEADING, "",
        f"`python benchmarks/httpd_cpu_bench.py`: httpd {httpd.version() or '?'} serving validate's small "
        f"file with each MPM's full pool, wrk on the same {os.cpu_count()}-CPU machine (unpinned), "
        f"median of {ROUNDS} runs of {DURATION} s; simulated with `--httpd-cpu machine` (this machine's "
        "calibration: µs a keep-alive request + what a new connection adds, at 10 and 300 connections, "
        "followed between them by the connections open) and `--client-cpu wrk`, with one figure at any "
        "load (the ends' mean), and without httpd's CPU (as before it was modelled).", "",
        "| MPM | load | httpd req/s | simulated req/s | sim / real | sim / real, one figure at any load | "
        "simulated without httpd's CPU | httpd µs at 10 / 300 connections (calibrated) |",
        "|---|---|---|---|---|---|---|---|", *rows, "",
        f"sim / real from {min(ratios):.2f} to {max(ratios):.2f} over the {len(ratios)} cells; with one figure "
        f"at any load (the two ends' mean, as before httpd's CPU followed its connections), "
        f"{min(flat_ratios):.2f} to {max(flat_ratios):.2f}.",
    ])
    write_section(ROOT / "docs" / "benchmarks.md", HEADING, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
