"""A CPU quota's tail on real httpd against the simulation (simulate.cpu.Processors).

    sudo python benchmarks/cgroup_quota_tail_bench.py

httpd 2.4.71 prefork (4 children), one keep-alive client (this process, pinned off CPU 0) asking
validate's mod_lua page `/app/sleep?ms=0&kb=K` (CPU-bound: it builds K KiB), httpd in a cgroup of
its own on CPU 0. First without a quota: the CPU time a request costs the cgroup (what a quota
meters, the kernel's work for httpd included), the simulation's service time. Then under each
quota for 6 s: requests a second, median, p95 and p99, beside `apachetune simulate`'s figures
for the same quota, one client and that service time, all CPU. Then a quota of whole CPUs
(and 1.5) whose threads may run on every CPU: mpmd prefork, 10 ms of CPU a request, 2-8
keep-alive clients, against the simulation on the CPUs and quota read from its cgroup. Needs
root, two CPUs and a writable cgroup hierarchy; elsewhere it says why and leaves the recorded section as it is.

Writes the `## A CPU quota's tail on real httpd` section of docs/benchmarks.md.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))  # cgroup_sandbox: the tests' cgroup of its own

from parse_bench import write_section  # noqa: E402

from apachetune import httpd  # noqa: E402
from apachetune.simulate import SimResult, simulate  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload  # noqa: E402
from apachetune.sizing.machine import cpu_allowance  # noqa: E402
from apachetune.validate.load import closed_loop  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402
from cgroup_sandbox import Sandbox  # noqa: E402

SECONDS = 6.0
CASES = [(512, 0.25), (512, 0.5), (2048, 0.25)]  # (KiB the page builds, the quota in CPUs)
SECTION = {"StartServers": 4, "MinSpareServers": 4, "MaxSpareServers": 4}


def _shape(latencies: list[float], elapsed: float) -> tuple[float, float, float, float]:
    lat = sorted(latencies)
    at = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000  # noqa: E731
    return len(lat) / elapsed, at(0.5), at(0.95), at(0.99)


def measure(kb: int, quota: float) -> tuple[float, tuple[float, ...], tuple[float, ...]]:
    section = {**load_directives(None, "prefork", 4, 1), **SECTION}
    path = f"/app/sleep?ms=0&kb={kb}"
    with Sandbox() as box, make_target("httpd", "prefork", section, box.wrapper()) as target:
        closed_loop(target.host, target.port, path, 1, 0.5, keepalive=True)
        before = box.cpu_seconds()
        served = closed_loop(target.host, target.port, path, 1, 2.0, keepalive=True).ok
        cpu = (box.cpu_seconds() - before) / max(1, served)
    with Sandbox(cpus=quota) as box, make_target("httpd", "prefork", section, box.wrapper()) as target:
        closed_loop(target.host, target.port, path, 1, 0.5, keepalive=True)
        real = closed_loop(target.host, target.port, path, 1, SECONDS, keepalive=True)
    sim = simulate("prefork", section, Workload(ServiceTime("fixed", cpu), clients=1, keepalive=True,
                                                cpu_fraction=1.0), 30, warmup=1, cores=1, cpu_quota=quota)
    return cpu, _shape(real.latencies, real.elapsed), _simulated(sim)


def _simulated(sim: SimResult) -> tuple[float, float, float, float]:
    """A simulation's requests a second, p50, p95 and p99 (ms), as _shape gives the measured."""
    ms = sim.latency_ms
    return sim.throughput, ms["p50"], ms["p95"], ms["p99"]


# A quota of whole CPUs on every CPU (docker --cpus 1 on a 2-CPU machine): (clients, quota)
WHOLE_CASES = [(2, 1.0), (4, 1.0), (8, 1.0), (4, 1.5)]
WHOLE_CPU_MS = 10  # mpmd's RequestCPU: each request spins this long on a CPU


def measure_whole(clients: int, quota: float) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """mpmd prefork (8 children, 10 ms of CPU a request) in a cgroup whose quota its threads may
    spend on every CPU: measured, simulated on those CPUs under the quota, and simulated as the
    quota was read before 2026-11-28 (a whole quota as that many cores unthrottled, 1.5 as 2)."""
    section = {**load_directives(None, "prefork", 8, 1), "StartServers": 8, "MinSpareServers": 8,
               "MaxSpareServers": 8, "RequestCPU": WHOLE_CPU_MS * 1000, "ConnectionCPU": 0}
    path = "/app/sleep?ms=0"
    with Sandbox(cpus=quota, every_cpu=True) as box, make_target("mpmd", "prefork", section, box.wrapper()) as target:
        allowance = cpu_allowance(pid=str(target.proc.pid))
        closed_loop(target.host, target.port, path, clients, 0.5, keepalive=True)
        real = closed_loop(target.host, target.port, path, clients, SECONDS, keepalive=True)
    workload = Workload(ServiceTime("fixed", WHOLE_CPU_MS / 1000), clients=clients, keepalive=True, cpu_fraction=1.0)
    sim, before = (_simulated(simulate("prefork", section, workload, 30, warmup=1, cores=cores, cpu_quota=q,
                                       cpu_period=allowance.period if q else None))
                   for cores, q in ((allowance.runs_on, allowance.quota), (math.ceil(quota), None)))
    return _shape(real.latencies, real.elapsed), sim, before


def main() -> int:
    cpus = os.sched_getaffinity(0)
    if os.geteuid() != 0 or len(cpus) < 2 or httpd.binary() is None:
        print("skipped: needs root, two CPUs and httpd", file=sys.stderr)
        return 0  # (make bench runs it wherever it can; elsewhere the recorded section stays)
    if (why := Sandbox.why_not()) is not None:
        print(f"skipped: {why}", file=sys.stderr)
        return 0
    os.sched_setaffinity(0, cpus - {0})  # the client off httpd's CPU: the loopback's work stays httpd's
    rows = []
    for kb, quota in CASES:
        cpu, real, sim = measure(kb, quota)
        rows.append(f"| {quota:g} | {kb} KiB | {cpu * 1000:.2f} | " + ", ".join(f"{x:.1f}" for x in real)
                    + " | " + ", ".join(f"{x:.1f}" for x in sim) + f" | {sim[0] / real[0]:.2f}, {sim[2] / real[2]:.2f} |")
    os.sched_setaffinity(0, cpus)  # the whole quota's threads run on every CPU, the client beside them (as the test)
    whole = []
    for clients, quota in WHOLE_CASES:
        real, sim, before = measure_whole(clients, quota)
        whole.append(f"| {quota:g} | {clients} | " + " | ".join(", ".join(f"{x:.1f}" for x in shape)
                                                        for shape in (real, sim, before)) + " |")
    body = (
        "## A CPU quota's tail on real httpd\n\n"
        "`python benchmarks/cgroup_quota_tail_bench.py` (root): httpd 2.4.71 prefork in a cgroup of its own on "
        "CPU 0, one keep-alive client pinned off it, validate's mod_lua page building K KiB; the CPU a request "
        "costs the cgroup without a quota is the simulation's service time, then "
        f"{SECONDS:g} s under each quota. CFS bandwidth control runs the cgroup at full speed until the period's "
        "quota x 100 ms is spent, then not at all: most requests take their CPU time, the one the budget runs "
        "out on waits out the period (docs/simulate.md).\n\n"
        "| quota (CPUs) | page | CPU ms a request | measured req/s, p50, p95, p99 ms | simulated | "
        "simulated / measured: req/s, p95 |\n|---:|---|---:|---|---|---|\n" + "\n".join(rows) + "\n\n"
        f"A quota of whole CPUs on a machine of {len(cpus)}: mpmd prefork (8 children, {WHOLE_CPU_MS} ms of CPU a "
        "request) in a cgroup whose threads may run on every CPU, keep-alive clients, "
        f"{SECONDS:g} s. The threads run side by side at full speed until the period's budget is spent, then "
        "wait out the period; simulated on the CPUs and quota read from the server's cgroup, and as a whole "
        "quota was read before 2026-11-28 (that many cores, unthrottled; 1.5 as 2).\n\n"
        "| quota (CPUs) | clients | measured req/s, p50, p95, p99 ms | simulated | as cores, unthrottled |\n"
        "|---:|---:|---|---|---|\n" + "\n".join(whole) + "\n")
    print(body)
    write_section(ROOT / "docs" / "benchmarks.md", "## A CPU quota's tail on real httpd", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
