"""Case studies (docs/case-studies.md): the seed comparisons, reproduced with our tools.

1. prefork's slow ramp-up at `ab -c 300` with default spare settings: the parent forks 1, 2,
   4 ... 32 children a second, so a burst of 300 connections meets 5 children; measured as
   processes and throughput per second over a 6 s closed-loop run (mpmd and httpd).
2. event ahead of worker with keep-alive at high concurrency: 300 clients with think time keep
   idle keep-alive connections; worker's threads are pinned by idle connections, event's are not.
   Measured as the throughput a fresh closed-loop client gets while the idle clients are held.
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from parse_bench import write_section  # noqa: E402

REPEAT = int(os.environ.get("REPEAT", "3"))

from apachetune.validate.load import IdleClients, closed_loop  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

PREFORK_DEFAULTS = {"StartServers": 5, "MinSpareServers": 5, "MaxSpareServers": 10, "ServerLimit": 256,
                    "MaxRequestWorkers": 256, "KeepAlive": "Off"}


def ramp(kind: str) -> list[tuple[int, int, float]]:
    """(second, processes, req/s) while 300 connections hammer a 10 ms endpoint."""
    rows = []
    with make_target(kind, "prefork", PREFORK_DEFAULTS) as t:
        time.sleep(1.2)
        done = threading.Event()
        counts = []

        def load():
            counts.append(closed_loop(t.host, t.port, "/app/sleep?ms=10", 300, 6.0, keepalive=False, timeout=10))
            done.set()

        th = threading.Thread(target=load)
        th.start()
        last = int(t.status().get("Total Accesses", 0) or 0)
        for sec in range(1, 7):
            time.sleep(1.0)
            st = t.status()
            total = int(st.get("Total Accesses", 0) or 0)
            rows.append((sec, len(t.pids()) - 1, float(total - last)))
            last = total
        th.join()
    return rows


def keepalive_case(kind: str, mpm: str) -> tuple[float, float]:
    """req/s for 8 busy clients with and without 300 idle keep-alive clients held open."""
    d = {"StartServers": 6, "ServerLimit": 6, "ThreadLimit": 25, "ThreadsPerChild": 25, "MaxRequestWorkers": 150,
         "MinSpareThreads": 25, "MaxSpareThreads": 150, "KeepAlive": "On", "KeepAliveTimeout": 15}
    with make_target(kind, mpm, d) as t:
        time.sleep(1.5)
        alone = closed_loop(t.host, t.port, "/app/sleep?ms=5", 8, 3.0, keepalive=False, timeout=5).throughput
        with IdleClients(t.host, t.port, 150):
            crowded = closed_loop(t.host, t.port, "/app/sleep?ms=5", 8, 3.0, keepalive=False, timeout=5).throughput
    return alone, crowded


def span(values: list[float]) -> str:
    """The median, with min–max when the runs differ."""
    med = statistics.median(values)
    return f"{med:.0f}" if min(values) == max(values) else f"{med:.0f} ({min(values):.0f}–{max(values):.0f})"


def main() -> int:
    lines = ["## Case studies (validate)", "",
             f"`make bench` → `benchmarks/validate_bench.py`; numbers measured here, median of {REPEAT} runs "
             "(min–max in brackets).", ""]
    for kind in ("mpmd", "httpd"):
        try:
            runs = [ramp(kind) for _ in range(REPEAT)]
        except Exception as e:  # noqa: BLE001 - httpd may be missing
            lines.append(f"prefork ramp on {kind}: not run ({e})")
            continue
        lines += [f"prefork ramp-up on {kind} (defaults: StartServers 5, Min/MaxSpareServers 5/10), "
                  "300 connections on a 10 ms endpoint:", "", "| second | children | requests that second |",
                  "|---|---|---|"]
        for i, (sec, *_rest) in enumerate(runs[0]):
            lines.append(f"| {sec} | {span([r[i][1] for r in runs])} | {span([r[i][2] for r in runs])} |")
        lines.append("")
        print("\n".join(lines[-10:]), flush=True)
    lines += ["Keep-alive at high concurrency (MaxRequestWorkers 150, KeepAliveTimeout 15): req/s of 8 busy "
              "clients alone, then with 150 idle keep-alive clients (= MaxRequestWorkers) held open:", "",
              "| target | MPM | alone | with 150 idle clients |", "|---|---|---|---|"]
    for kind in ("mpmd", "httpd"):
        for mpm in ("worker", "event"):
            try:
                runs = [keepalive_case(kind, mpm) for _ in range(REPEAT)]
            except Exception as e:  # noqa: BLE001
                lines.append(f"| {kind} | {mpm} | not run ({e}) | |")
                continue
            lines.append(f"| {kind} | {mpm} | {span([r[0] for r in runs])} | {span([r[1] for r in runs])} |")
            print(lines[-1], flush=True)
    write_section(ROOT / "docs" / "benchmarks.md", "## Case studies (validate)", "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
