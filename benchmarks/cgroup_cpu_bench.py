"""A CPU quota on real httpd: what `size` reads, and what the quota really allows.

    sudo python benchmarks/cgroup_cpu_bench.py

httpd 2.4.71 (event, validate's httpd and its mod_lua page /app/sleep?ms=0: CPU-bound) is started
inside a cgroup of its own, pinned to CPU 0 by the cgroup's cpuset, with a CFS quota of 0.5 CPU,
then without a quota; wrk runs pinned to CPU 1 (16 connections, 3 rounds of 3 s, median). For
each: the CPUs `size`'s facts report for that httpd (facts.gather with its parent's pid: its own
cgroup, as a systemd unit's CPUQuota= or a container's limit is), and the throughput.
Needs root, two CPUs and a writable cgroup v1 (cpu and cpuset controllers) or v2 (cpu, cpuset)
hierarchy; elsewhere it says why and leaves the recorded section as it is.

Writes the `## A CPU quota on real httpd` section of docs/benchmarks.md.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))  # cgroup_sandbox: the tests' cgroup of its own

from parse_bench import write_section  # noqa: E402

from apachetune import httpd  # noqa: E402
from apachetune.sizing.facts import gather  # noqa: E402
from apachetune.validate.load import wrk_available, wrk_closed_loop  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402
from cgroup_sandbox import Sandbox  # noqa: E402

ROUNDS, DURATION = 3, 3
SECTION = {"StartServers": 1, "ServerLimit": 1, "ThreadsPerChild": 25, "MinSpareThreads": 1,
           "MaxSpareThreads": 25, "MaxRequestWorkers": 25}
def measure(cpus: float | None) -> tuple[int, float, str, float]:
    section = {**load_directives(None, "event", keep_server_limit=True), **SECTION}
    with Sandbox(cpus=cpus) as box, make_target("httpd", "event", section, wrapper=box.wrapper()) as target:
        pid = int((target.tmp / "httpd.pid").read_text())
        facts = gather(pid=pid)
        rates = [wrk_closed_loop("127.0.0.1", target.port, "/app/sleep?ms=0", 16, DURATION,
                                 wrapper=["taskset", "-c", "1"])["requests_ok"] / DURATION for _ in range(ROUNDS)]
    return facts.cpus, facts.cpu_time, facts.cpu_source, statistics.median(rates)


def main() -> int:
    if os.geteuid() != 0 or (os.cpu_count() or 1) < 2 or httpd.binary() is None or not wrk_available() \
            or shutil.which("taskset") is None:
        print("skipped: needs root, two CPUs, httpd, wrk and taskset", file=sys.stderr)
        return 0  # (make bench runs it wherever it can; elsewhere the recorded section stays)
    if (why := Sandbox.why_not()) is not None:
        print(f"skipped: {why}", file=sys.stderr)
        return 0
    rows = [(label, *measure(cpus)) for label, cpus in (("CFS quota 0.5 CPU", 0.5), ("no quota", None),
                                                        ("CFS quota 0.25 CPU", 0.25))]
    whole = next(r for r in rows if r[0] == "no quota")
    cpu_s = 1 / whole[4]  # the CPU a request: one core, saturated, serves 1 / that a second
    lines = ["| httpd's cgroup (cpuset: CPU 0) | cores | CPU time `size` counts | from | req/s (wrk on CPU 1) "
             "| `size`'s CPU bound (CPU time / CPU a request) |", "|---|---:|---:|---|---:|---:|"]
    lines += [f"| {label} | {cores} | {cpu_time:g} | {source} | {rate:,.0f} | {cpu_time / cpu_s:,.0f} |"
              for label, cores, cpu_time, source, rate in rows]
    ratio = rows[0][4] / whole[4]
    body = (
        "## A CPU quota on real httpd\n\n"
        "`python benchmarks/cgroup_cpu_bench.py` (root): httpd 2.4.71, event, one process of 25 threads, "
        "mod_lua's `/app/sleep?ms=0` (CPU-bound), started inside a cgroup of its own pinned to CPU 0; "
        f"wrk pinned to CPU 1, 16 connections, median of {ROUNDS} rounds of {DURATION} s. `size` reads the "
        "httpd parent's own cgroup (a systemd unit's CPUQuota=, a container's limit), not the shell's. "
        f"The CPU a request is the whole core's: {cpu_s * 1000:.3f} ms.\n\n"
        + "\n".join(lines) + "\n\n"
        f"The quota is real (half a CPU serves {ratio:.2f} of what the whole core does), and `size` counts it: "
        "the threads run on whole cores (`cores`: ListenCoresBucketsRatio and the simulation count those), "
        "but the requests a second the CPUs allow come from the quota's CPU time.\n")
    print(body)
    write_section(ROOT / "docs" / "benchmarks.md", "## A CPU quota on real httpd", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
