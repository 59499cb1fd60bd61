"""How fast `apachetune simulate` is (issue 17: minutes of simulated time at thousands of requests
a second, in seconds): simulated requests per second of wall time for each MPM, closed and open
loop. Writes the `## Simulate speed` section of docs/benchmarks.md."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from parse_bench import write_section  # noqa: E402

from apachetune.simulate import simulate  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload  # noqa: E402
from apachetune.validate import calibration  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402

CASES = [
    ("closed loop, 300 clients, keep-alive, 50 ms", Workload(ServiceTime.parse("exp:50ms"), clients=300)),
    ("closed loop, 300 clients, no keep-alive, 50 ms",
     Workload(ServiceTime.parse("exp:50ms"), clients=300, keepalive=False)),
    ("open loop, 2,000/s, 3 requests a visit, 20 ms",
     Workload(ServiceTime.parse("lognormal:20ms"), rate=2000, requests_per_connection=3, gap=0.1)),
]
SECONDS = 120


def main() -> int:
    rows = ["| workload | MPM | simulated req/s | requests | wall s | simulated s per wall s | "
            "wall s with httpd's CPU | simulated s per wall s |", "|---|---|---|---|---|---|---|---|"]
    for name, w in CASES:
        for mpm in ("prefork", "worker", "event"):
            r = simulate(mpm, load_directives(None, mpm), w, SECONDS)
            # as the CLI runs by default (--httpd-cpu machine): httpd's CPU shared over the cores
            c = simulate(mpm, load_directives(None, mpm), w, SECONDS, cores=2, costs=calibration.machine_costs(mpm))
            rows.append(f"| {name} | {mpm} | {r.throughput:,.0f} | {r.completed:,} | {r.wall_seconds:.1f} | "
                        f"{SECONDS / r.wall_seconds:.0f} | {c.wall_seconds:.1f} | {SECONDS / c.wall_seconds:.0f} |")
            print(rows[-1], flush=True)
    section = f"""## Simulate speed

`make bench` → `benchmarks/simulate_bench.py`: {SECONDS} s of simulated time per run with httpd's
default section for each MPM, on one core of this machine (pure Python: a heap of events); then
the same with httpd's own CPU shared over 2 cores, as `apachetune simulate` runs by default
(`--httpd-cpu machine`: processor sharing adds events).

""" + "\n".join(rows) + """

event with a connection a request is the slowest: each newcomer wakes every listener still
listening, and the model looks at each process (2026-11-27: 27.3 s before that look was made
once a newcomer rather than twice or more, 21.3 after, the same results; computing the idle
workers in one place again since costs about 8% of that, measured side by side; 2026-11-28:
the racing listeners found with a set rather than a list, and the clock's `after` pushing its
event itself, 1.17x faster on that case and 1.06x on keep-alive with httpd's CPU, 20 s simulated,
3 rounds alternating, results identical). 2026-11-29: one give-up check a client and one
keep-alive check a connection on the clock instead of one a request, each moved on to the latest
deadline (half the events, and a heap of some 200k entries that nearly all went stale): medians
of 3 rounds alternating, 20 s simulated, on a day the host ran slow: prefork keep-alive 1.8x,
worker 2.9x, event with httpd's CPU 1.7x, event without keep-alive 1.1x, open loop 1.0x (the
listeners' look at each process remains); results identical in 11 cases. 2026-11-29, later: that look
(each process's idle workers and whether its listener polls, at each newcomer) with its small
methods inlined: event without keep-alive 2.43 -> 2.06 s (1.18x), the open loop 1.93 -> 1.83
(1.05x), keep-alive unchanged (0.44-0.45 s), medians of 3 rounds alternating, 20 s simulated;
results identical (a hash of latencies, errors and events over 12 cases: the three MPMs, closed
and open loops, buckets, 2.4.37, ab's books, client-first and a restart).
"""
    write_section(ROOT / "docs" / "benchmarks.md", "## Simulate speed", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
