"""A CPU quota as the kernel enforces it, against the simulation: mpmd in a cgroup of its own
(CPU 0, CFS quota 0.25 CPU) serving one keep-alive client requests of 10 ms of CPU each
(RequestCPU). CFS bandwidth control runs the cgroup at full speed for 25 ms of each 100 ms
period, then not at all: most requests take their 10 ms, the one the budget runs out on waits
out the period (measured: 24.6-24.9 req/s, median 15-18 ms, p99 88-90 ms); the simulation's
Processors do the same (25 req/s, 10 ms, 85 ms), where spreading the quota evenly made every
request 40 ms and put the tail at less than half of the kernel's."""

import pytest

from apachetune.simulate import simulate
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.validate.load import closed_loop
from apachetune.validate.section import load_directives
from apachetune.validate.targets import make_target

QUOTA, CPU_MS, SECONDS = 0.25, 10, 6.0


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
    lat = sorted(real.latencies)
    rps = len(lat) / real.elapsed
    p50, p95 = lat[len(lat) // 2] * 1000, lat[int(0.95 * len(lat))] * 1000
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
