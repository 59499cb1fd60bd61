"""Sizing formulas and the recommended section (pure: no machine is read)."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apachetune.mpm import is_fixed_point, simulate_startup
from apachetune.sizing import model
from apachetune.sizing.recommend import Figure, SizingInputs, choose_mpm, recommend


def test_erlang_textbook_values():
    # Erlang B(2, 1) = 0.2; Erlang C(2, 1) = 1/3 (classic M/M/2 example).
    assert model.erlang_b(2, 1.0) == pytest.approx(0.2)
    assert model.erlang_c(2, 1.0) == pytest.approx(1 / 3)
    # M/M/1: P(wait) = rho, Wq = rho S / (1 - rho).
    assert model.erlang_c(1, 0.5) == pytest.approx(0.5)
    assert model.mean_queue_wait(1, 0.5, 0.1) == pytest.approx(0.1)
    assert model.mean_queue_wait(10, 10, 0.1) == math.inf
    # Stable for thousands of servers.
    assert 0 <= model.erlang_c(5000, 4800) <= 1


def test_littles_law_and_workers_for():
    assert model.littles_law_busy(400, 0.05) == pytest.approx(20)
    assert model.workers_for(20, 0.05, 0.8) == 25
    c = model.workers_for(20, 0.05, 0.99, max_mean_wait=0.001)
    assert model.mean_queue_wait(c, 20, 0.05) <= 0.001 < model.mean_queue_wait(c - 1, 20, 0.05)


def test_memory_bound_threaded_amortises_process_base():
    assert model.memory_bound_workers(1000, 10) == 100
    assert model.memory_bound_workers(1000, 0.5, 12.5, 25) == 1000
    assert model.usable_memory(4000, 1000, 0.1) == pytest.approx(2600)


def test_keepalive_occupancy_pins_prefork_not_event():
    pre = model.connection_occupancy("prefork", 5, 0.01, 0.5, 5)
    ev = model.connection_occupancy("event", 5, 0.01, 0.5, 5)
    assert ev == pytest.approx(0.05) and pre == pytest.approx(0.05 + 4 * 0.5 + 5)
    assert model.offered_load("worker", 100, 0.01, 5, 0.5, 5) > 10 * model.offered_load("event", 100, 0.01, 5, 0.5, 5)


def inputs(**kw):
    base = dict(mpm=Figure("event", "default"), available_mib=Figure(4096, "given"),
                reserved_mib=Figure(512, "given"), headroom=Figure(0.1, "default"),
                per_worker_mib=Figure(0.5, "given"), per_process_mib=Figure(6.0, "given"),
                rate=Figure(None, "default"), service_time=Figure(0.05, "given"),
                requests_per_connection=Figure(6, "default"), gap=Figure(0.5, "default"),
                keepalive_timeout=Figure(5, "default"), threads_per_child=Figure(25, "default"),
                reqtimeout_loaded=Figure(True, "config"))
    base.update({k: Figure(v, "given") for k, v in kw.items()})
    return SizingInputs(**base)


def test_choose_mpm():
    assert choose_mpm({"php7_module", "mpm_prefork_module"}, "prefork")[0] == "prefork"
    assert choose_mpm({"mpm_worker_module"}, "worker")[0] == "event"


def test_memory_short_verdict():
    rec = recommend(inputs(mpm="prefork", per_worker_mib=40.0, available_mib=2048, rate=300,
                           service_time=0.2), "prefork")
    assert rec.load_workers > rec.memory_bound
    assert rec.max_request_workers == rec.memory_bound
    assert "cannot carry" in rec.verdict and rec.memory_short_mib > 0


def lint_clean(mpm, values, tmp_path):
    from apachetune.config.resolver import ResolveOptions
    from apachetune.lint.engine import LintOptions, lint
    from apachetune.lint.settings import Settings

    conf = tmp_path / "mpm.conf"
    conf.write_text("".join(f"{k} {v}\n" for k, v in values.items()))
    result = lint(str(conf), LintOptions(ResolveOptions(env={}, mpm=mpm, modules=[f"mpm_{mpm}_module",
                                                                                  "reqtimeout_module"]),
                                         Settings(), snippet=True))
    return [f for f in result.findings]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mpm=st.sampled_from(["prefork", "worker", "event"]),
       available=st.floats(512, 262144), per_worker=st.floats(0.05, 200),
       per_process=st.floats(0, 64), rate=st.one_of(st.none(), st.floats(0.1, 50000)),
       service=st.floats(0.001, 2.0), tpc=st.integers(1, 100))
def test_recommendation_is_fixed_point_consistent_and_lint_clean(tmp_path, mpm, available, per_worker,
                                                                 per_process, rate, service, tpc):
    rec = recommend(inputs(mpm=mpm, available_mib=available, reserved_mib=min(256, available / 4),
                           per_worker_mib=per_worker, per_process_mib=per_process, rate=rate,
                           service_time=service, threads_per_child=tpc), mpm)
    values = rec.values()
    mpm_values = {k: v for k, v in values.items() if k in simulate_startup(mpm, {}).effective}
    assert is_fixed_point(mpm, mpm_values)
    eff = simulate_startup(mpm, {k: str(v) for k, v in mpm_values.items()}).effective
    if mpm != "prefork":
        assert eff["ServerLimit"] * eff["ThreadsPerChild"] >= eff["MaxRequestWorkers"]
        assert eff["ThreadLimit"] >= eff["ThreadsPerChild"]
        assert eff["MinSpareThreads"] < eff["MaxSpareThreads"]
    else:
        assert eff["MinSpareServers"] < eff["MaxSpareServers"]
    assert 1 <= eff["StartServers"]
    # Within the memory bound (at least one worker is always recommended).
    assert rec.max_request_workers <= max(rec.memory_bound, 1 if mpm == "prefork" else eff["ThreadsPerChild"])
    assert lint_clean(mpm, values, tmp_path) == []


def test_event_is_never_sized_in_processes_of_one_or_two_threads(tmp_path):
    """A ThreadsPerChild of 1 or 2 asked for on event, more than one process needed: raised to 3,
    and said (lint's AT206: such processes lose workers to accept races); one process keeps it."""
    for tpc in (1, 2):
        rec = recommend(inputs(mpm="event", available_mib=4096, reserved_mib=256, per_worker_mib=8,
                               threads_per_child=tpc), "event")
        values = rec.values()
        assert values["ThreadsPerChild"] == 3 and values["MaxRequestWorkers"] > 3, values
        assert any("raised to 3" in n and "AT206" in n for n in rec.notes), rec.notes
        assert lint_clean("event", values, tmp_path) == []
    small = recommend(inputs(mpm="event", available_mib=600, reserved_mib=256, per_worker_mib=150,
                             threads_per_child=2), "event")
    v = small.values()
    assert v["MaxRequestWorkers"] <= v["ThreadsPerChild"] <= 2, v  # one process: nothing to race
    assert not any("AT206" in n for n in small.notes)


def test_peak_memory_at_full_concurrency():
    # prefork: one process a worker, the per-process figure is part of the child's PSS (0 here).
    assert model.peak_memory(8, 2.0, parent_mib=5.0, app_mib=4.0) == pytest.approx(5 + 8 * 6)
    # worker/event: ceil(10 / 4) = 3 processes, each with its fixed base.
    assert model.peak_memory(10, 0.5, parent_mib=5.0, per_process_mib=3.0, threads_per_child=4,
                             app_mib=1.0) == pytest.approx(5 + 3 * 3 + 10 * 1.5)
    # Consistent with memory_bound_workers: n workers' cost fits the memory that bounds n.
    n = model.memory_bound_workers(1000, 2.0, 8.0, 8)
    assert model.peak_memory(n, 2.0, per_process_mib=8.0, threads_per_child=8) <= 1000 + 8


def test_sample_path_waits_replays_an_fcfs_queue():
    from apachetune.sizing.model import sample_path_waits

    # One worker: the second request arrives at 0.5 while the first runs until 1.0.
    assert sample_path_waits([(0.0, 1.0), (0.5, 1.0), (3.0, 1.0)], 1) == [0.0, 0.5, 0.0]
    # Two workers: the third waits for the earlier of the two to finish.
    assert sample_path_waits([(0.0, 1.0), (0.0, 2.0), (0.1, 1.0)], 2) == [0.0, 0.0, 0.9]
    assert sample_path_waits([(t / 10, 1.0) for t in range(10)], 10) == [0.0] * 10


def test_sample_path_mean_converges_to_erlang_c():
    import random

    from apachetune.sizing.model import mean_queue_wait, sample_path_waits

    rng = random.Random(1)
    rate, s, c, t, jobs = 56.0, 0.05, 4, 0.0, []
    while t < 2000:  # a long run: ~112,000 requests at 70% of 4 workers x 50 ms
        t += rng.expovariate(rate)
        jobs.append((t, rng.expovariate(1 / s)))
    waits = sample_path_waits(jobs, c)
    assert abs(sum(waits) / len(waits) - mean_queue_wait(c, rate * s, s)) < 0.1 * mean_queue_wait(c, rate * s, s)


def test_event_connections_held_beyond_the_workers_add_their_memory():
    from apachetune.sizing import model

    base = model.peak_memory(400, 0.15, 0.8, 0.33, 25)
    assert model.peak_memory(400, 0.15, 0.8, 0.33, 25, held_connections=400, per_connection_mib=0.032) == \
        pytest.approx(base + 400 * 0.032)


def test_event_keeps_three_quarters_of_its_threads_in_pools_of_closed_connections():
    """event.c: max_recycled_pools = ThreadsPerChild * 3 / 4 a process while MaxMemFree is set
    (it is by default); with MaxMemFree 0 the list is not bounded."""
    from apachetune.sizing import model

    assert model.recycled_pools(16, 25) == 16 * 18
    assert model.recycled_pools(4, 64, 2048) == 4 * 48
    assert model.recycled_pools(3, 1) == 0
    assert model.recycled_pools(16, 25, 0) is None


def test_a_kept_pool_costs_a_connection_at_most_max_mem_free():
    assert model.kept_pool_mib(32.8 / 1024) == pytest.approx(32.8 / 1024)
    assert model.kept_pool_mib(32.8 / 1024, 2048) == pytest.approx(32.8 / 1024)
    assert model.kept_pool_mib(32.8 / 1024, 16) == pytest.approx(16 / 1024)
    assert model.kept_pool_mib(32.8 / 1024, 0) == pytest.approx(32.8 / 1024)  # no limit
    base = model.peak_memory(400, 0.15, 0.8, 0.33, 25)
    assert model.peak_memory(400, 0.15, 0.8, 0.33, 25, held_connections=10, per_connection_mib=0.02,
                             recycled=288) == pytest.approx(base + 298 * 0.02)


def test_event_counts_each_process_with_the_pools_it_keeps():
    """event's memory bound counts 3/4 of ThreadsPerChild kept connection pools a process; worker's
    does not (it closes no connection under load, and its pools are in its measured figure)."""
    ins = inputs(available_mib=4096, per_worker_mib=0.2, per_process_mib=1.0)
    usable = model.usable_memory(4096, 512, 0.1)
    event, worker = recommend(ins, "event"), recommend(ins, "worker")
    assert worker.memory_bound == model.memory_bound_workers(usable, 0.2, 1.0, 25)
    assert event.memory_bound == model.memory_bound_workers(usable, 0.2, 1.0 + 18 * model.EVENT_CONNECTION_MIB, 25)
    assert event.memory_bound < 0.92 * worker.memory_bound  # 0.58 MiB a process is 10% of a 0.24 MiB worker


def test_event_sets_memory_aside_for_the_idle_crowd_it_holds():
    crowd = 5000
    event = recommend(inputs(mpm="event", available_mib=1024, keepalive_clients=crowd), "event")
    alone = recommend(inputs(mpm="event", available_mib=1024), "event")
    assert event.connections_mib == pytest.approx(crowd * model.EVENT_CONNECTION_MIB)
    assert event.memory_bound < alone.memory_bound
    worker = recommend(inputs(mpm="worker", available_mib=1024, keepalive_clients=crowd), "worker")
    assert worker.connections_mib == 0  # its idle clients hold workers (counted as workers), not connections
