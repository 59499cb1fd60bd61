"""httpd's CPU a request on a small pool and on a large one, side by side.

    python benchmarks/pool_cpu_bench.py [ROUNDS]

The calibration (`apachetune mpmd calibrate`) measures httpd's CPU a request on full pools
(prefork 320 children, worker and event 16 x 25 threads), and the simulation charges those
figures whatever pool it models. This measures how much the pool itself moves them: Debian's
stock section (a few processes) against a large pool, `ab -c 100` with a connection a request
and `ab -k -c 5`, httpd's CPU from its processes' CPU clocks (calibration.server_cpu_seconds)
and ab's from its rusage, after a warm-up run.

Writes the `## httpd's CPU and the pool's size` section of docs/benchmarks.md.
"""

from __future__ import annotations

import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from parse_bench import write_section  # noqa: E402
from stock_sections_bench import section  # noqa: E402

from apachetune import httpd  # noqa: E402
from apachetune.validate.calibration import server_cpu_seconds  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

HEADING = "## httpd's CPU and the pool's size"
LARGE = {"prefork": {"StartServers": 150, "MinSpareServers": 150, "MaxSpareServers": 150},
         "worker": {"StartServers": 6, "MinSpareThreads": 150, "MaxSpareThreads": 150},
         "event": {"StartServers": 6, "MinSpareThreads": 150, "MaxSpareThreads": 150}}
LOADS = {False: ["-c", "100", "-n", "30000"], True: ["-k", "-c", "5", "-n", "60000"]}


def cpu_per_request(mpm: str, large: bool, keepalive: bool) -> tuple[float, float]:
    """µs of httpd's CPU and of ab's a request, one run on a fresh server."""
    directives = {**section(mpm), **(LARGE[mpm] if large else {})}
    with make_target("httpd", mpm, directives) as t:
        time.sleep(1.5)
        url = f"http://{t.host}:{t.port}/index.html"
        subprocess.run(["ab", "-q", "-c", "100", "-n", "2000", url], capture_output=True, timeout=120)  # warm-up
        before, client_before = server_cpu_seconds(t.proc.pid), resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(["ab", "-q", *LOADS[keepalive], url], capture_output=True, text=True, timeout=300).stdout
        client_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        server = server_cpu_seconds(t.proc.pid) - before
    m = re.search(r"Complete requests:\s*(\d+)", out)
    n = int(m.group(1)) if m else 0
    client = (client_after.ru_utime + client_after.ru_stime) - (client_before.ru_utime + client_before.ru_stime)
    return (server / n * 1e6, client / n * 1e6) if n else (0.0, 0.0)


def main() -> int:
    if httpd.binary() is None or shutil.which("ab") is None:
        print("needs httpd and ab", file=sys.stderr)
        return 1
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rows = []
    for mpm in ("prefork", "worker", "event"):
        for keepalive in (False, True):
            runs = {large: [cpu_per_request(mpm, large, keepalive) for _ in range(rounds)] for large in (False, True)}
            small_us, large_us = (statistics.median(r[0] for r in runs[k]) for k in (False, True))
            small_ab, large_ab = (statistics.median(r[1] for r in runs[k]) for k in (False, True))
            load = " ".join(LOADS[keepalive][:-2])
            rows.append(f"| {mpm} | {load} | {small_us:.1f} | {large_us:.1f} | **{large_us / small_us:.2f}** | "
                        f"{small_ab:.1f} | {large_ab:.1f} |")
            print(rows[-1], flush=True)
    body = "\n".join([
        HEADING, "",
        f"`python benchmarks/pool_cpu_bench.py`: httpd {httpd.version() or '?'}, validate's small file, ab on the "
        f"same machine, a fresh server each run, medians of {rounds} runs; the stock pool is Debian's "
        "mpm_*.conf (prefork 5 children, worker and event 2 x 25 threads, as they grow under the load), the "
        "large one prefork 150 children or worker and event 6 x 25 threads. µs of CPU a request, httpd's "
        "from its processes' CPU clocks, ab's from its rusage.", "",
        "| MPM | ab | httpd µs, stock pool | httpd µs, large pool | large / stock | ab µs, stock | ab µs, large |",
        "|---|---|---|---|---|---|---|", *rows, "",
        "The calibration measures full pools, so the simulation charges a small pool's requests the large "
        "pool's CPU (docs/simulate.md, \"httpd's own CPU\").",
    ])
    write_section(ROOT / "docs" / "benchmarks.md", HEADING, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
