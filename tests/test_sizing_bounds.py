"""Recommendations bounded by the machine: memory (the cgroup's limit in a container), the
kernel's task limits, httpd's compile-time limits, and what the CPUs can keep busy. Without a
load the tool says so and sizes to the CPUs, never to all of memory."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apachetune.sizing.facts import HostFacts
from apachetune.sizing.machine import (
    cgroup_cpus,
    cgroup_memory,
    cpu_allowance,
    cpu_list_size,
    task_limits,
    usable_cpus,
)
from apachetune.sizing.plan import Given, build_inputs
from apachetune.sizing.recommend import cpu_demand, recommend
from httpd_oracle import needs_httpd
from test_sizing_model import inputs


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_task_limits_from_a_proc_tree(tmp_path):
    write(tmp_path / "proc/sys/kernel/pid_max", "32768\n")
    write(tmp_path / "proc/sys/kernel/threads-max", "20000\n")
    write(tmp_path / "proc/loadavg", "0.10 0.20 0.30 2/1000 12345\n")
    limits = task_limits(tmp_path)
    assert (limits.pid_max, limits.threads_max, limits.tasks_now) == (32768, 20000, 1000)
    assert limits.workers_allowed == (20000 - 1000) // 2
    assert task_limits(tmp_path / "nothing").workers_allowed is None


def test_cgroup_v2_memory_max_is_the_budget(tmp_path):
    write(tmp_path / "proc/self/cgroup", "0::/system.slice/apache2.service\n")
    svc = tmp_path / "sys/fs/cgroup/system.slice/apache2.service"
    write(svc / "memory.max", f"{512 << 20}\n")
    write(svc / "memory.current", f"{100 << 20}\n")
    write(svc.parent / "memory.max", "max\n")
    cg = cgroup_memory(tmp_path)
    assert cg is not None and cg.limit_mib == 512 and cg.available_mib == 412
    assert cg.where.endswith("apache2.service/memory.max")


def test_cgroup_v2_lowest_limit_up_the_hierarchy_wins(tmp_path):
    write(tmp_path / "proc/self/cgroup", "0::/machine.slice/box/app\n")
    top = tmp_path / "sys/fs/cgroup/machine.slice"
    write(top / "box/app/memory.max", "max\n")
    write(top / "box/memory.max", f"{256 << 20}\n")
    write(top / "box/memory.current", f"{56 << 20}\n")
    write(top / "memory.max", f"{4096 << 20}\n")
    cg = cgroup_memory(tmp_path)
    assert cg is not None and cg.limit_mib == 256 and cg.available_mib == 200


def test_cgroup_v1_and_unlimited(tmp_path):
    write(tmp_path / "proc/self/cgroup", "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n")
    mem = tmp_path / "sys/fs/cgroup/memory/docker/abc"
    write(mem / "memory.limit_in_bytes", f"{1 << 30}\n")
    write(mem / "memory.usage_in_bytes", "0\n")
    assert cgroup_memory(tmp_path).limit_mib == 1024
    write(mem / "memory.limit_in_bytes", "9223372036854771712\n")  # v1's "unlimited"
    assert cgroup_memory(tmp_path) is None
    assert cgroup_memory(tmp_path / "nothing") is None


def test_cgroup_v2_cpu_quota_is_the_cpu_count(tmp_path):
    """`docker --cpus 1.5` on a 64-core host: cpu.max "150000 100000" in the container's cgroup."""
    write(tmp_path / "proc/self/cgroup", "0::/system.slice/docker-abc.scope\n")
    box = tmp_path / "sys/fs/cgroup/system.slice/docker-abc.scope"
    write(box / "cpu.max", "150000 100000\n")
    write(box.parent / "cpu.max", "max 100000\n")
    write(tmp_path / "sys/fs/cgroup/cpuset.cpus.effective", "0-63\n")
    limit = cgroup_cpus(tmp_path)
    assert limit is not None and limit.cpus == 1.5 and limit.where.endswith("docker-abc.scope/cpu.max")
    cpus, source = usable_cpus(tmp_path, online=64)
    assert cpus == 2 and "cpu.max" in source and "1.5 CPUs" in source
    write(box / "cpu.max", "50000 100000\n")  # half a CPU: still one worker's core
    assert usable_cpus(tmp_path, online=64)[0] == 1
    # the quota's period, for the simulation's throttling (Kubernetes' --cpu-cfs-quota-period 10ms)
    write(box / "cpu.max", "5000 10000\n")
    allowance = cpu_allowance(tmp_path, online=64)
    assert (allowance.cores, allowance.quota, allowance.period) == (1, 0.5, 0.01)
    # a whole CPU's time on 64: still a quota, its threads on every CPU until the period's 100 ms
    # are spent (measured on 2 CPUs under 1.0: two clients of 10 ms requests, p50 10.9 ms and p95
    # 58.1, where one core unthrottled would make every request 20 ms)
    write(box / "cpu.max", "100000 100000\n")
    allowance = cpu_allowance(tmp_path, online=64)
    assert (allowance.cores, allowance.quota, allowance.period, allowance.runs_on) == (1, 1.0, 0.1, 64)
    assert usable_cpus(tmp_path, online=64)[0] == 1
    write(box / "cpu.max", "max 100000\n")  # no quota: the cores, no period
    allowance = cpu_allowance(tmp_path, online=64)
    assert (allowance.cores, allowance.quota, allowance.period, allowance.runs_on) == (64, None, None, 64)


def test_cgroup_cpuset_and_v1_quota(tmp_path):
    """cgroup v1: the cpu controller's CFS quota and the cpuset controller's CPUs, the lower wins;
    "-1" is no quota."""
    write(tmp_path / "proc/self/cgroup", "5:cpuset:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n")
    cpu = tmp_path / "sys/fs/cgroup/cpu/docker/abc"
    write(cpu / "cpu.cfs_quota_us", "-1\n")
    write(cpu / "cpu.cfs_period_us", "100000\n")
    write(tmp_path / "sys/fs/cgroup/cpuset/docker/abc/cpuset.effective_cpus", "0-2,8\n")
    write(tmp_path / "sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-31\n")
    assert usable_cpus(tmp_path, online=32) == (4, f"cgroup limit {tmp_path}/sys/fs/cgroup/cpuset/docker/abc/"
                                                "cpuset.effective_cpus: 4 CPUs")
    write(cpu / "cpu.cfs_quota_us", "300000\n")  # 3 CPUs' time, on 4 CPUs
    assert usable_cpus(tmp_path, online=32)[0] == 3
    allowance = cpu_allowance(tmp_path, online=32)  # its threads run on the cpuset's 4
    assert (allowance.cores, allowance.quota, allowance.period, allowance.runs_on) == (3, 3.0, 0.1, 4)
    write(cpu / "cpu.cfs_period_us", "50000\n")
    write(cpu / "cpu.cfs_quota_us", "125000\n")  # 2.5 CPUs' time, a 50 ms period
    allowance = cpu_allowance(tmp_path, online=32)
    assert (allowance.cores, allowance.quota, allowance.period, allowance.runs_on) == (3, 2.5, 0.05, 4)
    write(cpu / "cpu.cfs_quota_us", "500000\n")  # 5 CPUs' time on 4: the cpuset binds, no quota
    allowance = cpu_allowance(tmp_path, online=32)
    assert (allowance.cores, allowance.quota, allowance.period, allowance.runs_on) == (4, None, None, 4)
    assert cgroup_cpus(tmp_path).where.endswith("cpuset.effective_cpus")
    assert usable_cpus(tmp_path / "nothing", online=32) == (32, "CPUs online")


def test_cpu_lists_are_counted_as_the_kernel_writes_them():
    assert [cpu_list_size(t) for t in ("0", "0-3", "0-3,8,10-11\n", "", "x")] == [1, 4, 7, None, None]


def test_a_cgroup_cpu_quota_bounds_the_recommendation_buckets_stay_httpds(tmp_path):
    """On a 64-core host, a container with 2 CPUs: the CPU bound counts 2, but
    ListenCoresBucketsRatio counts the CPUs online, as httpd does (sysconf)."""
    from apachetune import httpd
    from apachetune.config.resolver import ResolveOptions, resolve

    small = HostFacts(8000, 7000, 2, task_limit=16000, cpu_source="cgroup limit x/cpu.max: 2 CPUs", cpus_online=64)
    big = HostFacts(8000, 7000, 64, task_limit=16000)
    conf = tmp_path / "httpd.conf"
    conf.write_text(f"{httpd.load_module_line('mpm_event')}\nListenCoresBucketsRatio 8\n")
    eff = resolve(conf, ResolveOptions(env={}))
    ins_small, _ = build_inputs(Given(rate=5000, service_time_ms=20), small, eff)
    ins_big, _ = build_inputs(Given(rate=5000, service_time_ms=20), big, eff)
    assert ins_small.cpus.value == 2 and "cpu.max" in ins_small.cpus.source
    assert ins_small.listen_buckets.value == ins_big.listen_buckets.value == 8
    assert recommend(ins_small, "event").cpu_bound < recommend(ins_big, "event").cpu_bound


def test_a_fractional_cpu_quota_bounds_the_rate_by_the_cpu_time_not_the_cores():
    """A quota of a quarter CPU (measured on real httpd: 739 req/s against 3,178 on the whole
    core, benchmarks/cgroup_cpu_bench.py) runs on one core but has a quarter of its time: the
    CPU bound and the requests a second it allows are a quarter of the whole core's; the facts
    file keeps the quota."""
    quarter = HostFacts(8000, 7000, 1, task_limit=16000, cpu_source="cgroup limit x/cpu.cfs_quota_us: 0.25 CPUs",
                        cpu_quota=0.25)
    whole = HostFacts(8000, 7000, 1, task_limit=16000)
    given = Given(rate=2000, service_time_ms=2, cpu_ms=0.3)
    ins_quarter, _ = build_inputs(given, quarter, None)
    ins_whole, _ = build_inputs(given, whole, None)
    assert ins_quarter.cpus.value == 0.25 and "0.25 CPUs" in ins_quarter.cpus.source
    assert cpu_demand(ins_quarter) == pytest.approx(4 * cpu_demand(ins_whole))
    rec_quarter, rec_whole = recommend(ins_quarter, "event"), recommend(ins_whole, "event")
    assert rec_quarter.cpu_bound < rec_whole.cpu_bound
    said = " ".join(rec_quarter.notes) + rec_quarter.verdict
    assert "at most 833 req/s" in said, said  # 0.25 CPU / 0.3 ms
    assert quarter.cpu_time == 0.25 and whole.cpu_time == 1.0


def test_the_memory_httpd_holds_when_measured_is_part_of_its_budget():
    """The pool being sized replaces the one measured: what httpd holds now is its own, not
    taken. A server measured under load (as it should be) holds more and leaves less free, so
    without it the budget shrank by exactly what the load made httpd hold: measured in a
    400 MiB cgroup, 197 MiB free under 12 clients (benchmarks/cgroup_memory_bench.py)."""
    from apachetune.sizing.facts import HttpdFacts, WorkerSample

    def measured(free: float, children: int, pss: float) -> HostFacts:
        kids = tuple(WorkerSample(100 + i, 1, pss + 5, pss, pss - 2) for i in range(children))
        return HostFacts(8000, free, 2, httpd=HttpdFacts(1, "prefork", kids, 10.0, 40.0, 0.0, 1))

    loaded, idle = measured(800.0, 10, 40.0), measured(1180.0, 10, 2.0)
    given = Given(per_worker_mib=40, rate=500, service_time_ms=300, cpu_ms=1)
    ins_loaded, _ = build_inputs(given, loaded, None)
    ins_idle, _ = build_inputs(given, idle, None)
    assert ins_loaded.available_mib.value == ins_idle.available_mib.value == 1210.0
    assert "800 free plus the 410.0 MiB httpd holds now" in ins_loaded.available_mib.source
    assert recommend(ins_loaded, "prefork").memory_bound == recommend(ins_idle, "prefork").memory_bound == 27
    bare, _ = build_inputs(given, HostFacts(8000, 800.0, 2), None)
    assert bare.available_mib.value == 800.0 and bare.available_mib.source == "measured"


def test_no_load_on_a_big_idle_machine_is_not_all_of_memory():
    """The reported case: 2 cores, 24 GB, nothing measured: it recommended 226175 workers."""
    host = HostFacts(24000, 23400, 2, task_limit=16000)
    ins, _ = build_inputs(Given(), host, None)
    rec = recommend(ins, "event")
    assert rec.memory_bound > 40000  # memory alone would allow tens of thousands
    assert rec.max_request_workers <= 100 and rec.bound_by == "CPU"
    assert rec.verdict.startswith("no peak load given") and "not to all of memory" in rec.verdict
    assert ins.cpus.source == "measured" and "assumed" in ins.cpu_seconds.source


def test_the_kernel_task_limit_caps_even_a_cpu_rich_machine():
    host = HostFacts(1_000_000, 900_000, 4096, task_limit=3000)
    ins, _ = build_inputs(Given(rate=1e6), host, None)
    rec = recommend(ins, "event")
    assert rec.max_request_workers <= 3000 and "task limits" in rec.bound_by


def test_bounds_on_this_machine_with_and_without_a_load():
    from apachetune.sizing.facts import gather

    host = gather(include_httpd=False)
    for asked in (Given(), Given(rate=50_000, service_time_ms=200)):
        ins, _ = build_inputs(asked, host, None)
        for mpm in ("prefork", "worker", "event"):
            rec = recommend(ins, mpm)
            tpc = rec.values().get("ThreadsPerChild", 1)
            floor = 2 if mpm == "prefork" else 2 * int(tpc)
            assert rec.max_request_workers <= max(math.ceil(rec.cpu_bound / int(tpc)) * int(tpc), floor)
            if host.task_limit:
                assert rec.max_request_workers <= host.task_limit


@settings(max_examples=200, deadline=None)
@given(mpm=st.sampled_from(["prefork", "worker", "event"]), cpus=st.integers(1, 256),
       cpu=st.floats(0.0001, 2.0), tasks=st.one_of(st.none(), st.integers(50, 200_000)),
       rate=st.one_of(st.none(), st.floats(0.1, 100_000)), available=st.floats(256, 1_000_000),
       tpc=st.integers(1, 100))
def test_no_recommendation_exceeds_a_hard_bound(mpm, cpus, cpu, tasks, rate, available, tpc):
    rec = recommend(inputs(mpm=mpm, cpus=cpus, cpu_seconds=cpu, task_limit=tasks, rate=rate,
                           available_mib=available, threads_per_child=tpc), mpm)
    t = int(rec.values().get("ThreadsPerChild", 1))
    one = 1 if mpm == "prefork" else t  # at least one process is always recommended
    assert rec.max_request_workers <= max(rec.memory_bound, one)
    if tasks is not None:
        assert rec.max_request_workers <= max(tasks, one)
    floor = 2 if mpm == "prefork" else 2 * t
    assert rec.max_request_workers <= max(math.ceil(rec.cpu_bound / t) * t, floor)


def test_capacity_is_the_cpus_when_they_run_out_before_the_workers():
    """2 cores at 25 ms of CPU a request serve 80 req/s, whatever MaxRequestWorkers says (the
    knee simulate finds); with 0.1 ms of CPU the workers set it."""
    import json

    from click.testing import CliRunner

    from apachetune.cli import cli

    def capacity(cpu_ms):
        res = CliRunner().invoke(cli, ["size", "--no-measure", "--memory", "2048", "--per-worker-mb", "20",
                                       "--rate", "300", "--service-time-ms", "50", "--cpus", "2", "--cpu-ms",
                                       cpu_ms, "--target-mpm", "prefork", "--format", "json"])
        assert res.exit_code == 0, res.output
        rec = json.loads(res.stdout)["recommendation"]
        return rec["predicted_capacity_rps"], rec["capacity_set_by"], rec["max_request_workers"]

    rps, by, mrw = capacity("25")
    assert (rps, by) == (80.0, "CPUs") and mrw / 0.05 > 80
    rps, by, mrw = capacity("0.1")
    assert by == "workers" and rps == mrw / 0.05


def test_a_bound_lifted_to_whole_processes_says_so():
    """Without a load the CPUs bound MaxRequestWorkers; on event that bound (11 workers for 2
    CPUs at 2.5 ms of 5 ms) is lifted to two processes of 25 threads, and the reason says both."""
    from apachetune.sizing.plan import Given, build_inputs
    from apachetune.sizing.recommend import recommend

    inputs, _ = build_inputs(Given(mpm="event", cpus=2, memory_mib=4096, profile="static"), None, None)
    rec = recommend(inputs)
    assert rec.bound_by == "CPU" and rec.cpu_bound is not None and rec.cpu_bound < rec.max_request_workers == 50
    why = next(s.reason for s in rec.settings if s.directive == "MaxRequestWorkers")
    assert why.startswith(f"set by the CPU bound ({rec.cpu_bound} workers, raised to whole processes, at least two)")
    # with ThreadsPerChild 5 given, the 11 become three whole processes: 15
    inputs, _ = build_inputs(Given(mpm="event", cpus=2, memory_mib=4096, profile="static", threads_per_child=5),
                             None, None)
    whole = recommend(inputs)
    why = next(s.reason for s in whole.settings if s.directive == "MaxRequestWorkers")
    assert whole.max_request_workers == 15 and "raised to whole processes" in why, why


@needs_httpd
def test_a_real_httpd_in_a_cgroup_of_its_own_is_sized_by_that_cgroup():
    """httpd started inside a cgroup (CPU 0, a 0.5 CPU quota, 300 MiB), as a systemd unit's
    CPUQuota=/MemoryMax= or a container puts it: size's facts for that httpd read its cgroup's
    limits, and the facts of this process (another cgroup) do not."""
    from apachetune.sizing.facts import gather
    from apachetune.validate.section import load_directives
    from apachetune.validate.targets import make_target
    from cgroup_sandbox import Sandbox

    if (why := Sandbox.why_not()) is not None:
        pytest.skip(why)
    section = {**load_directives(None, "event", keep_server_limit=True), "StartServers": 1, "ServerLimit": 1,
               "MaxRequestWorkers": 25}
    with Sandbox(cpus=0.5, memory_mib=300) as box, make_target("httpd", "event", section,
                                                                wrapper=box.wrapper()) as target:
        facts = gather(pid=int((target.tmp / "httpd.pid").read_text()))
        ours = gather(include_httpd=False)
    assert facts.cpu_quota == 0.5 and facts.cpus == 1, facts
    assert ("cfs_quota_us" in facts.cpu_source or "cpu.max" in facts.cpu_source) and "0.5 CPUs" in facts.cpu_source
    assert facts.memory_source.endswith(("memory.limit_in_bytes", "memory.max")), facts.memory_source
    assert 200 < facts.available_mib <= 300, facts.available_mib  # the limit less what httpd holds
    assert ours.cpu_quota is None and ours.memory_source != facts.memory_source
