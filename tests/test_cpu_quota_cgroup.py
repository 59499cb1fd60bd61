"""A CPU quota as the kernel enforces it, against the simulation: mpmd in a cgroup of its own
(CPU 0, CFS quota 0.25 CPU) serving one keep-alive client requests of 10 ms of CPU each
(RequestCPU). CFS bandwidth control runs the cgroup at full speed for 25 ms of each 100 ms
period, then not at all: most requests take their 10 ms, the one the budget runs out on waits
out the period (measured: 24.6-24.9 req/s, median 15-18 ms, p99 88-90 ms); the simulation's
Processors do the same (25 req/s, 10 ms, 85 ms), where spreading the quota evenly made every
request 40 ms and put the tail at less than half of the kernel's. The same on real httpd 2.4.71
(prefork, its mod_lua page building 512 KiB; the simulation's service time is the CPU a request
costs httpd's cgroup under the quota, 4.6 ms): under 0.25 CPU 53.6 req/s, median 5.0 ms, p95 79.4, p99 81.0;
simulated 53.8, 4.65, 79.65, 79.65 (more in docs/simulate.md)."""

import math
import os

import pytest

from apachetune.simulate import simulate
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.validate.cpu_share import OthersCpu
from apachetune.validate.load import closed_loop
from apachetune.validate.plans import OTHERS_CPU_LIMIT
from apachetune.validate.section import load_directives
from apachetune.validate.targets import make_target
from httpd_oracle import needs_httpd

QUOTA, CPU_MS, SECONDS = 0.25, 10, 6.0


def _shape(latencies: list[float], elapsed: float) -> tuple[float, float, float]:
    """Requests a second, median and p95 (ms) of a run."""
    lat = sorted(latencies)
    return len(lat) / elapsed, lat[len(lat) // 2] * 1000, lat[int(0.95 * len(lat))] * 1000


@pytest.mark.cpu_heavy  # CPU 0's time decides each request's length: run alone
def test_a_cpu_quota_throttles_a_period_at_a_time_as_simulated():
    from cgroup_sandbox import Sandbox

    if (why := Sandbox.why_not()) is not None:
        pytest.skip(why)
    section = {**load_directives(None, "prefork", 4, 1), "StartServers": 4, "MinSpareServers": 4,
               "MaxSpareServers": 4, "RequestCPU": CPU_MS * 1000, "ConnectionCPU": 0}
    with Sandbox(cpus=QUOTA) as box, make_target("mpmd", "prefork", section, box.wrapper()) as target:
        closed_loop(target.host, target.port, "/app/sleep?ms=0", 1, 0.5, keepalive=True)  # the first period's start
        real = closed_loop(target.host, target.port, "/app/sleep?ms=0", 1, SECONDS, keepalive=True)
    rps, p50, p95 = _shape(real.latencies, real.elapsed)
    sim = simulate("prefork", section, Workload(ServiceTime.parse(f"{CPU_MS}ms"), clients=1, keepalive=True,
                                                cpu_fraction=1.0), 30, warmup=1, cores=1, cpu_quota=QUOTA)
    said = f"real: {rps:.1f} req/s, p50 {p50:.1f} ms, p95 {p95:.1f} ms; simulated: {sim.throughput:.1f}, {sim.latency_ms}"
    assert rps == pytest.approx(QUOTA * 1000 / CPU_MS, rel=0.1), said  # the quota's CPU time, all of it
    assert sim.throughput == pytest.approx(rps, rel=0.1), said
    # the kernel's shape: requests at full speed and some that wait out a period, not all alike
    assert p50 < 0.75 * 1000 / (QUOTA * 1000 / CPU_MS) and p95 > 60, said
    # the issue's band for a tail, on the p95: 150 requests' p99 is their second longest, and a
    # request that a busy CPU 0 stretched across two periods made it 139 ms once (p95 then 88)
    assert sim.latency_ms["p95"] == pytest.approx(p95, rel=0.25), said
    assert sim.latency_ms["p50"] <= p50, said


@needs_httpd
@pytest.mark.httpd
@pytest.mark.cpu_heavy
def test_httpd_under_a_cpu_quota_serves_as_simulated():
    """httpd's own page (mod_lua building 512 KiB, CPU-bound) under 0.25 CPU: given the CPU time
    a request costs its cgroup as the quota meters it (the cgroup's time over the run / the
    requests: the kernel's work for httpd's loopback included, which its processes' own clocks
    miss, 3.75 ms of 4.6), the throughput, median and p95 are the simulation's. The same
    request's cost measured without a quota moves from run to run (3.86-4.66 ms in 10 quiet
    runs: the loopback's kernel work is charged to whoever it interrupts; the simulation from it
    was 13-17% fast with the client on another CPU, docs/benchmarks.md): told, not judged. The
    page is made big enough for QUOTA_REQUEST_MS of CPU (512 KiB took 1.13 ms on a faster
    machine, where the period's wait fell beyond the p95: 1.8 ms measured, 1.16 simulated)."""
    from cgroup_sandbox import Sandbox

    if (why := Sandbox.why_not()) is not None:
        pytest.skip(why)
    section = {**load_directives(None, "prefork", 4, 1), "StartServers": 4, "MinSpareServers": 4,
               "MaxSpareServers": 4}
    # The client on another CPU than httpd's, in both runs: where the loopback's kernel work runs
    # decides whose CPU time it is (the client beside httpd on CPU 0 made a request 3.97 ms of the
    # cgroup's time where the quota then metered 4.67)
    cpus = os.sched_getaffinity(0)
    if len(cpus) > 1:
        os.sched_setaffinity(0, cpus - {0})
    try:
        real, lone, metered, others, kb = _lone_then_quota(Sandbox, section, 512)
    finally:
        os.sched_setaffinity(0, cpus)
    if others.share > OTHERS_CPU_LIMIT:
        # Beside two CPU hogs the loopback's kernel work went to whoever ran when it came: the
        # cgroup was charged 3.05 ms a request, and 4.3 under the quota (58.3 req/s)
        pytest.skip(f"other processes took {others.share:.0%} of the CPUs while the request's CPU was measured")
    rps, p50, p95 = _shape(real.latencies, real.elapsed)
    sim = simulate("prefork", section, Workload(ServiceTime("fixed", metered), clients=1, keepalive=True,
                                                cpu_fraction=1.0), 30, warmup=1, cores=1, cpu_quota=QUOTA)
    said = (f"CPU {metered * 1000:.2f} ms a request of {kb} KiB under the quota ({lone * 1000:.2f} for 512 KiB "
            f"without); real: "
            f"{rps:.1f} req/s, p50 {p50:.1f} ms, p95 {p95:.1f} ms; simulated: {sim.throughput:.1f}, {sim.latency_ms}")
    # the quota's CPU time, nearly all of it (the client's turnaround is the cgroup's idle time)
    assert metered * rps == pytest.approx(QUOTA, rel=0.1), said
    assert sim.throughput == pytest.approx(rps, rel=0.1), said
    # The shape is the point: the period's gap in the p95, most at full speed.
    assert sim.latency_ms["p95"] == pytest.approx(p95, rel=0.25) and p95 > 60, said
    assert p50 < 0.75 * sim.latency_ms["mean"], said


# What a request of httpd's page should cost at least, so that a period's 25 ms of CPU is a few
# requests and the one the budget runs out on (the period's wait) is in the p95: 512 KiB cost 4.6
# ms on one machine and 1.13 on another, where a wait came every 22nd request and the p95 missed it
QUOTA_REQUEST_MS = 4.0


def _lone_then_quota(Sandbox, section: dict, kb: int):
    """The CPU a request of `kb` KiB costs httpd's cgroup without a quota, then a run under QUOTA
    of a page scaled up to QUOTA_REQUEST_MS of CPU, what a request cost the cgroup there, and
    that page's size."""
    path = f"/app/sleep?ms=0&kb={kb}"
    with Sandbox() as box, make_target("httpd", "prefork", section, box.wrapper()) as target:
        closed_loop(target.host, target.port, path, 1, 0.5, keepalive=True)
        # its cgroup's CPU time, not its wall time: a busy CPU 0 stretches the one, not the other
        before = box.cpu_seconds()  # what the quota meters: the kernel's work for httpd included
        with OthersCpu(target.pids) as others:
            served = closed_loop(target.host, target.port, path, 1, 1.5, keepalive=True).ok
        lone = (box.cpu_seconds() - before) / max(1, served)
    kb *= max(1, math.ceil(QUOTA_REQUEST_MS / 1000 / max(lone, 1e-6)))
    path = f"/app/sleep?ms=0&kb={kb}"
    with Sandbox(cpus=QUOTA) as box, make_target("httpd", "prefork", section, box.wrapper()) as target:
        closed_loop(target.host, target.port, path, 1, 0.5, keepalive=True)
        before = box.cpu_seconds()
        real = closed_loop(target.host, target.port, path, 1, SECONDS, keepalive=True)
        metered = (box.cpu_seconds() - before) / max(1, real.ok)
    return real, lone, metered, others, kb


@pytest.mark.cpu_heavy  # CPU 0's time decides each request's length: run alone
def test_a_shorter_cfs_period_shortens_the_throttled_wait_as_simulated():
    """The same 10 ms requests under 0.25 CPU with a 20 ms period (Kubernetes'
    --cpu-cfs-quota-period; cpu.max "5000 20000"): 5 ms of CPU a period, so every request spans
    three periods and none waits out a long one. Measured: 24.6 req/s, median 40.4 ms, p95 46.8
    (with 100 ms: median 23.9, p95 84.5); simulated with the period read from the server's own
    cgroup: 25.0, 40.0, 40.0."""
    from apachetune.sizing.machine import cpu_allowance
    from cgroup_sandbox import Sandbox

    if (why := Sandbox.why_not()) is not None:
        pytest.skip(why)
    section = {**load_directives(None, "prefork", 4, 1), "StartServers": 4, "MinSpareServers": 4,
               "MaxSpareServers": 4, "RequestCPU": CPU_MS * 1000, "ConnectionCPU": 0}
    with Sandbox(cpus=QUOTA, period_us=20_000) as box, \
            make_target("mpmd", "prefork", section, box.wrapper()) as target:
        allowance = cpu_allowance(pid=str(target.proc.pid))
        closed_loop(target.host, target.port, "/app/sleep?ms=0", 1, 0.5, keepalive=True)
        real = closed_loop(target.host, target.port, "/app/sleep?ms=0", 1, SECONDS, keepalive=True)
    assert allowance.quota == QUOTA and allowance.period == pytest.approx(0.02), allowance
    rps, p50, p95 = _shape(real.latencies, real.elapsed)
    sim = simulate("prefork", section, Workload(ServiceTime.parse(f"{CPU_MS}ms"), clients=1, keepalive=True,
                                                cpu_fraction=1.0), 30, warmup=1, cores=allowance.cores,
                   cpu_quota=allowance.quota, cpu_period=allowance.period)
    said = f"real: {rps:.1f} req/s, p50 {p50:.1f} ms, p95 {p95:.1f} ms; simulated: {sim.throughput:.1f}, {sim.latency_ms}"
    assert sim.throughput == pytest.approx(rps, rel=0.1), said
    # no request waits out a long period: the p95 far below the 100 ms period's 85 ms
    assert p95 < 65 and sim.latency_ms["p95"] < 65, said
    assert sim.latency_ms["p50"] == pytest.approx(p50, rel=0.25), said
    # a request its client starts late (an idle CPU's wake-up, 1-5 ms on a quiet VM) can span one
    # period more: within 25%, or within that one period (a clean CI run: 55.0 ms against 40.0)
    assert sim.latency_ms["p95"] == pytest.approx(p95, rel=0.25) or abs(sim.latency_ms["p95"] - p95) <= 20, said


@pytest.mark.cpu_heavy  # both CPUs' time decides each request's length: run alone
def test_a_whole_cpu_quota_runs_on_every_cpu_then_waits_as_simulated():
    """A quota of one CPU on a two-CPU machine (`docker --cpus 1`, cpu.max "100000 100000") is
    not one core: two requests of 10 ms run side by side at full speed until the period's 100 ms
    are spent (50 ms in), then both wait out the rest. Measured (mpmd prefork, two keep-alive
    clients): 98.8 req/s, median 10.9 ms, p95 58.1; simulated on the CPUs read from the server's
    cgroup (2 cores under a quota of 1.0): 100, 10.0, 60.0, where one core unthrottled, as the
    quota was read before, made every request 20 ms."""
    from apachetune.sizing.machine import cpu_allowance
    from cgroup_sandbox import Sandbox

    if (why := Sandbox.why_not()) is not None:
        pytest.skip(why)
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    section = {**load_directives(None, "prefork", 4, 1), "StartServers": 4, "MinSpareServers": 4,
               "MaxSpareServers": 4, "RequestCPU": CPU_MS * 1000, "ConnectionCPU": 0}
    with Sandbox(cpus=1.0, every_cpu=True) as box, \
            make_target("mpmd", "prefork", section, box.wrapper()) as target:
        allowance = cpu_allowance(pid=str(target.proc.pid))
        closed_loop(target.host, target.port, "/app/sleep?ms=0", 2, 0.5, keepalive=True)
        with OthersCpu(target.pids) as others:
            real = closed_loop(target.host, target.port, "/app/sleep?ms=0", 2, 4.0, keepalive=True)
    assert (allowance.cores, allowance.quota, allowance.runs_on) == (1, 1.0, 2), allowance
    if others.share > OTHERS_CPU_LIMIT:
        pytest.skip(f"other processes took {others.share:.0%} of the CPUs the quota runs on")
    rps, p50, p95 = _shape(real.latencies, real.elapsed)
    workload = Workload(ServiceTime.parse(f"{CPU_MS}ms"), clients=2, keepalive=True, cpu_fraction=1.0)
    sim = simulate("prefork", section, workload, 30, warmup=1, cores=allowance.runs_on,
                   cpu_quota=allowance.quota, cpu_period=allowance.period)
    one_core = simulate("prefork", section, workload, 30, warmup=1, cores=1)
    said = (f"real: {rps:.1f} req/s, p50 {p50:.1f} ms, p95 {p95:.1f} ms; simulated: {sim.throughput:.1f}, "
            f"{sim.latency_ms}; one core: {one_core.latency_ms}")
    assert rps == pytest.approx(1000 / CPU_MS, rel=0.1) and sim.throughput == pytest.approx(rps, rel=0.1), said
    # both at full speed, then the period's wait: the shape one core cannot give (20 ms each)
    assert p50 < 0.75 * one_core.latency_ms["p50"] and p95 > 2 * one_core.latency_ms["p95"], said
    assert sim.latency_ms["p50"] == pytest.approx(p50, rel=0.25), said
    assert sim.latency_ms["p95"] == pytest.approx(p95, rel=0.25), said
