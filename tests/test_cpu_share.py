"""The others' share of the CPUs during a load step, and the saturation verdict it qualifies."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections import namedtuple
from types import SimpleNamespace

import psutil
import pytest

from apachetune.sizing.machine import CpuAllowance, cpu_allowance
from apachetune.validate import cpu_share
from apachetune.validate.cpu_share import OthersCpu, busy_seconds, cpu_capacity, cpus
from apachetune.validate.plans import OTHERS_CPU_LIMIT, _cpus_bound_at_top, saturation_verdict

BUSY = "import time\nend = time.process_time() + 0.8\nwhile time.process_time() < end: pass\n"


def test_a_busy_process_counts_as_ours_or_as_another_s():
    """Two meters over the same window, one counting the busy process as the server's: they
    differ by that process's CPU, whatever else the machine did meanwhile."""
    hog = subprocess.Popen([sys.executable, "-c", BUSY])
    proc = psutil.Process(hog.pid)
    start = time.monotonic()
    try:
        with OthersCpu(lambda: []) as as_other, OthersCpu(lambda: [hog.pid]) as as_ours:
            # wait for it to finish without reaping it: a reaped child's CPU would join this
            # process's own (children_user), which both meters count as the server's
            while proc.status() != psutil.STATUS_ZOMBIE and time.monotonic() - start < 60:
                time.sleep(0.02)
        wall = time.monotonic() - start
        times = proc.cpu_times()  # the zombie's own, before it is reaped
        hog.wait(timeout=60)
    finally:
        hog.kill()
    hog_cpu = times.user + times.system
    cpus = psutil.cpu_count() or 1
    # the hog's CPU (0.8 s and its start-up), as a share of the window's CPUs; the meter that
    # counts it as the server's last saw it up to a quarter second before it ended
    assert as_other.share - as_ours.share >= 0.5 * hog_cpu / (wall * cpus)
    assert as_ours.share >= 0.0
    # the window's totals: the server's CPU is the hog's (as last seen), none for the other meter
    assert as_ours.server >= 0.5 * hog_cpu and as_other.server == 0.0
    assert as_ours.wall > 0 and as_ours.busy >= 0.5 * hog_cpu


def test_a_window_never_started_reads_nothing():
    meter = OthersCpu(lambda: [])
    meter.stop()
    assert meter.share == 0.0


def test_the_saturation_verdict_is_not_judged_only_when_short_and_the_cpus_went_elsewhere():
    ok, note = saturation_verdict(1000, 950, "why", 0.6)
    assert ok.passed is True and note is None  # a pass is a pass, whatever else ran
    short, note = saturation_verdict(1000, 700, "why", OTHERS_CPU_LIMIT / 2)
    assert short.passed is False and note is None  # the machine was ours: the pool fell short
    busy, note = saturation_verdict(1000, 700, "why", 0.4)
    assert busy.passed is None and "other processes took 40% of the CPUs" in note
    assert "off by 30%" in busy.detail


def test_a_cpu_bound_measured_beside_others_is_not_judged_when_it_misses():
    # the CPU time a request takes, measured at half load while others took 40% of the CPUs
    over, note = saturation_verdict(5279, 6133, "the CPUs: ...", 0.05, estimate_others=0.4)
    assert over.passed is None and "took 40% of the CPUs while the CPU time a request takes" in note
    hit, note = saturation_verdict(5279, 5500, "the CPUs: ...", 0.05, estimate_others=0.4)
    assert hit.passed is True and note is None  # a pass is a pass
    alone, note = saturation_verdict(5279, 6133, "the CPUs: ...", 0.05, estimate_others=OTHERS_CPU_LIMIT / 2)
    assert alone.passed is False and note is None  # measured alone: the estimate was wrong


def test_a_cpu_bound_passes_up_to_the_pools_bound_not_beyond():
    # the CPU time a request takes falls as the load rises: above the CPUs' figure, up to the pool's
    above, _ = saturation_verdict(5411, 6239, "the CPUs: ...", 0.0, 0.0, pool=7870)
    assert above.passed is True and "passes from 15% below 5411 to 15% above the pool's 7870" in above.detail
    assert saturation_verdict(5411, 9100, "the CPUs: ...", 0.0, 0.0, pool=7870)[0].passed is False
    assert saturation_verdict(5411, 4500, "the CPUs: ...", 0.0, 0.0, pool=7870)[0].passed is False
    # the pool's own bound keeps its 15% either side
    assert saturation_verdict(7870, 6239, "MaxRequestWorkers ...", 0.0)[0].passed is False


def test_a_request_that_costs_more_at_saturation_lowers_the_cpus_bound_only_when_they_were_busy():
    # a clean CI run: 6,131 req/s predicted from half load, 5,144 measured alone
    short = saturation_verdict(6131, 5144, "the CPUs: ...", 0.0, 0.0, pool=7800)[0]
    assert short.passed is False
    costly = saturation_verdict(6131, 5144, "the CPUs: ...", 0.0, 0.0, pool=7800, at_top=(5300, 340e-6))[0]
    assert costly.passed is True
    assert "a request took 340 us of CPU: the CPUs carry 5300 there" in costly.detail
    assert "passes from 15% below 5300" in costly.detail
    # still fails well below what the CPUs carried at the top
    assert saturation_verdict(6131, 4000, "", 0.0, 0.0, pool=7800, at_top=(5300, 340e-6))[0].passed is False
    # a request that costs less at the top does not raise the band's bottom
    assert saturation_verdict(6131, 5300, "", 0.0, 0.0, pool=7800, at_top=(7000, 250e-6))[0].passed is True
    # the pool's own bound (not CPU-bound) ignores it
    assert saturation_verdict(7870, 6239, "", 0.0, at_top=(6300, 300e-6))[0].passed is False


def test_the_cpus_bound_at_the_top_needs_the_cpus_busy():
    n = cpus()
    # 2 s, the machine 95% busy, 1 s of server CPU a CPU, wrk's 0.2, the watcher 0.1: 5000 req/s
    meter = SimpleNamespace(wall=2.0, busy=0.95 * 2.0 * n, server=n * 1.0, children=0.2 * n, own=0.1 * 2)
    bound, per_request = _cpus_bound_at_top(meter, 5000, False)  # type: ignore[arg-type,misc]
    assert per_request == pytest.approx(1.2 * n / 2.0 / 5000)
    assert bound == pytest.approx((cpu_capacity()[0] - 0.1) / per_request)
    # a pool too small leaves the CPUs idle: nothing to lower the band with
    idle = SimpleNamespace(wall=2.0, busy=0.5 * 2.0 * n, server=n * 0.4, children=0.1 * n, own=0.2)
    assert _cpus_bound_at_top(idle, 2000, False) is None  # type: ignore[arg-type]
    assert _cpus_bound_at_top(None, 2000, False) is None


def test_under_a_cgroup_quota_the_cpus_bound_at_the_top_needs_the_quota_spent(monkeypatch):
    """A quota of 1 CPU on a machine of 8: the machine stays mostly idle while the server's
    share is spent, so saturation is the server's and client's CPU reaching the quota."""
    monkeypatch.setattr(cpu_share, "cpus", lambda: 8)
    monkeypatch.setattr("apachetune.validate.plans.cpus", lambda: 8)
    monkeypatch.setattr("apachetune.validate.plans.cpu_capacity", lambda: (1.0, "a cgroup quota of 1 CPUs"))
    # 2 s: server 1.7 s, wrk 0.2 s, the watcher 0.05 s; the machine 2.1 of its 16 CPU seconds busy
    meter = SimpleNamespace(wall=2.0, busy=2.1, server=1.7, children=0.2, own=0.05)
    bound, per_request = _cpus_bound_at_top(meter, 5000, False)  # type: ignore[arg-type,misc]
    assert per_request == pytest.approx(1.9 / 2.0 / 5000)
    assert bound == pytest.approx((1.0 - 0.025) / per_request)
    # half the quota spent: not saturated
    half = SimpleNamespace(wall=2.0, busy=1.2, server=0.8, children=0.1, own=0.05)
    assert _cpus_bound_at_top(half, 2500, False) is None  # type: ignore[arg-type]


def test_the_cpus_are_those_this_process_may_run_on(monkeypatch):
    """busy_seconds sums /proc/stat's lines of the CPUs in the affinity only, and cpus() counts
    them: the server and its client inherit that affinity."""
    times = namedtuple("times", "user nice system idle iowait irq softirq steal guest guest_nice")
    records = [times(*(float(10 * c + f) for f in range(10))) for c in range(4)]
    monkeypatch.setattr(cpu_share.psutil, "cpu_times", lambda percpu=False: records if percpu else records[0])
    monkeypatch.setattr(cpu_share.psutil, "cpu_count", lambda logical=True: 4)
    monkeypatch.setattr(cpu_share.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(cpu_share.os, "sched_getaffinity", lambda pid: {1, 3})
    assert cpus() == 2
    assert busy_seconds() == pytest.approx(cpu_share._busy(records[1]) + cpu_share._busy(records[3]))
    assert cpu_share._busy(records[1]) != cpu_share._busy(records[0])
    monkeypatch.setattr(cpu_share, "cpu_allowance", lambda: CpuAllowance(2, None, "CPU affinity"))
    assert cpu_capacity() == (2.0, "2 CPUs (CPU affinity)")
    # a quota below them bounds what they carry
    monkeypatch.setattr(cpu_share, "cpu_allowance", lambda: CpuAllowance(1, 0.5, "cgroup limit /x: 0.5 CPUs", 0.1))
    assert cpu_capacity() == (0.5, "a cgroup quota of 0.5 CPUs")
    # every CPU allowed: the machine's total, as before
    monkeypatch.setattr(cpu_share.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert cpus() == 4 and busy_seconds() == pytest.approx(cpu_share._busy(records[0]))


@pytest.mark.skipif(not shutil.which("taskset") or len(os.sched_getaffinity(0)) < 2, reason="needs taskset and 2 CPUs")
def test_a_process_started_under_taskset_counts_one_cpu():
    first = min(os.sched_getaffinity(0))
    code = ("from apachetune.validate.cpu_share import cpus, cpu_capacity\n"
            "print(cpus(), cpu_capacity()[1])")
    out = subprocess.run(["taskset", "-c", str(first), sys.executable, "-c", code], capture_output=True,
                         text=True, timeout=60, check=True).stdout.strip()
    quota = cpu_allowance().quota
    assert out == (f"1 a cgroup quota of {quota:g} CPUs" if quota is not None and quota < 1 else "1 1 CPU (CPU affinity)")


def test_a_simulate_case_slower_beside_a_busy_machine_is_not_judged_but_a_faster_one_fails():
    from apachetune.validate.plans import Verdict, _busy_machine_not_judged

    run = SimpleNamespace(report=SimpleNamespace(notes=[]))
    slow = Verdict("simulated throughput: x", 195.8, 174.3, "req/s", False, "")
    tail = Verdict("simulated p99: x", 102.1, 164.9, "ms", False, "")
    fast = Verdict("simulated throughput: y", 195.8, 240.0, "req/s", False, "")
    ok = Verdict("simulated p99: y", 102.1, 100.0, "ms", True, "")
    out = _busy_machine_not_judged(run, "x", [slow, tail, fast, ok], 0.6)  # type: ignore[arg-type]
    assert [v.passed for v in out] == [None, None, False, True]
    assert run.report.notes[0].startswith("simulated throughput: x not judged: other processes took 60%")
    # a quiet machine: every miss stays a miss
    assert [v.passed for v in _busy_machine_not_judged(run, "x", [slow, tail], 0.05)] == [False, False]  # type: ignore[arg-type]


def _openloop_verdicts(overhead_share: float, run_share: float, scales=()):
    """plans.openloop on worker (4 workers, 50 ms) where the lone requests took 10 ms (a busy
    machine's figure) while others took `overhead_share` of the CPUs, and each run's waits were
    half of M/M/c's on its own arrivals (or, run by run, `scales` of it) while others took
    `run_share`."""
    import random
    from unittest import mock

    from apachetune.sizing import model
    from apachetune.validate import plans
    from apachetune.validate.load import LoadResult

    shares = iter([overhead_share] * plans.LONE_TRIES)
    runs = iter(scales)

    class Others:
        def __init__(self, *_a):
            self.share = next(shares, run_share)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def open_loop(host, port, path, rate, seconds, exp_service_ms=None, **_kw):
        if exp_service_ms is None:  # the lone requests
            return LoadResult(latencies=[0.010] * 20, waits=[0.010] * 20, elapsed=1.0)
        rng = random.Random(3)
        t, jobs = 0.0, []
        while t < seconds:
            t += rng.expovariate(rate)
            jobs.append((t, rng.expovariate(1000 / exp_service_ms)))
        scale = next(runs, 0.5)
        waits = [w * scale for w in model.sample_path_waits([(a, s + 0.010) for a, s in jobs], 4)]
        return LoadResult(latencies=[s + w + 0.010 for (_, s), w in zip(jobs, waits, strict=True)],
                          waits=[w + 0.010 for w in waits], jobs=jobs, elapsed=seconds)

    setup = SimpleNamespace(mpm="worker", max_request_workers=4, service_ms=50.0, duration=3.0, threads_per_child=2,
                            directives={})
    report = SimpleNamespace(notes=[], verdicts=[], points=[])
    run = plans.PlanRun(setup, SimpleNamespace(host="127.0.0.1", port=1, pids=lambda: []), report,  # type: ignore[arg-type]
                        lambda _m: None)
    with mock.patch.object(plans, "OthersCpu", Others), mock.patch.object(plans, "open_loop", open_loop):
        plans.openloop(run)
    return report


def test_an_open_loop_wait_shorter_than_m_m_c_fails_unless_its_overhead_was_timed_beside_others():
    def at_70(report):  # (at 50% M/M/c's wait is within the verdict's 3 ms either way)
        return next(v for v in report.verdicts if v.name == "queueing delay at 70% utilisation")

    # the overhead timed quietly, the runs beside others: a shorter wait than M/M/c is a miss
    v = at_70(_openloop_verdicts(0.05, 0.6))
    assert v.passed is False and v.measured < 0.6 * v.predicted, v
    # every window of the overhead beside others: it rests under every wait, not judged either way
    report = _openloop_verdicts(0.6, 0.6)
    assert at_70(report).passed is None
    assert any(n.startswith("queueing delay at 70% utilisation not judged: other processes took 60%")
               for n in report.notes), report.notes
    # a quiet machine throughout: a miss stays a miss, once measured again
    report = _openloop_verdicts(0.0, 0.0)
    assert at_70(report).passed is False
    assert any(n.startswith("openloop: queueing delay at 70% utilisation measured again") for n in report.notes)


def test_an_open_loop_run_that_met_a_stall_is_measured_again_and_the_second_judged():
    """The 50% run as M/M/c says, the 70% one three times longer (a stall of the shared machine),
    then as M/M/c: the verdict is the second run's, and the first is told in the notes."""
    report = _openloop_verdicts(0.0, 0.0, scales=[1.0, 3.0, 1.0])
    at_70 = next(v for v in report.verdicts if v.name == "queueing delay at 70% utilisation")
    assert at_70.passed is True and len(report.verdicts) == 2, report.verdicts
    assert [n for n in report.notes if "measured again" in n] and len(report.points) == 3


def test_a_run_that_filled_the_cpus_it_may_use_is_told(monkeypatch):
    """The simulate plan does not judge a case whose server and load client filled the CPUs they
    may use, a quota, an affinity or the whole machine (they measured those CPUs, not the pool)."""
    meter = SimpleNamespace(wall=2.0, server=1.2, own=0.7, children=0.0)
    monkeypatch.setattr(cpu_share, "cpu_capacity", lambda: (1.0, "a cgroup quota of 1 CPU"))
    assert cpu_share.cpus_filled(meter) == (pytest.approx(0.95), "a cgroup quota of 1 CPU")  # type: ignore[arg-type]
    # half the quota: the pool, not the CPUs, set what was served
    assert cpu_share.cpus_filled(SimpleNamespace(wall=2.0, server=0.6, own=0.3, children=0.0)) is None  # type: ignore[arg-type]
    # the whole machine, wrk (a child of this process) beside the server
    monkeypatch.setattr(cpu_share, "cpu_capacity", lambda: (2.0, "2 CPUs"))
    full = SimpleNamespace(wall=2.0, server=2.6, own=0.2, children=0.9)
    assert cpu_share.cpus_filled(full) == (pytest.approx(1.85), "2 CPUs")  # type: ignore[arg-type]
    assert cpu_share.cpus_filled(SimpleNamespace(wall=2.0, server=2.0, own=0.2, children=1.0)) is None  # type: ignore[arg-type]


def test_a_simulate_case_whose_python_client_kept_a_cpu_busy_is_not_a_test_of_the_model(monkeypatch):
    from apachetune.validate.plans import _cpus_not_modelled

    monkeypatch.setattr(cpu_share, "cpu_capacity", lambda: (2.0, "2 CPUs"))
    monkeypatch.setattr(cpu_share.psutil, "cpu_count", lambda logical=True: 2)
    # mpmd worker's defaults, 600 clients a connection each request: this process at a CPU
    client_bound = SimpleNamespace(wall=3.0, server=0.96, own=3.0, children=0.0)
    assert "the load client (this process, one thread) used 1.00 CPUs" in _cpus_not_modelled(client_bound)  # type: ignore[arg-type]
    # the client with room to spare on the whole machine: judged
    assert _cpus_not_modelled(SimpleNamespace(wall=3.0, server=1.5, own=1.2, children=0.0)) == ""  # type: ignore[arg-type]
