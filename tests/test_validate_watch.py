"""What validate's watcher reads while the server is under load, read cheaply and read right:
the connections the server holds, its processes, their memory, and the CPU bound of the sweep."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

import psutil
import pytest

from apachetune.procmem import process_memory, total_pss_uss
from apachetune.sizing import model
from apachetune.validate import sockdiag
from apachetune.validate.cpu_share import cpu_capacity
from apachetune.validate.plans import _saturation_bound
from apachetune.validate.sampler import _established_inodes, established
from apachetune.validate.targets import Target

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _settled(read, want, seconds: float = 5.0):
    """The value once it equals `want` (the kernel files the accepted sockets as it goes), or
    the last one read."""
    end = time.monotonic() + seconds
    value = read()
    while value != want and time.monotonic() < end:
        time.sleep(0.02)
        value = read()
    return value


def test_established_counts_the_connections_taken_from_the_queue_not_those_waiting_in_it():
    """This process plays the server: what it accepted it holds; the rest wait in its queue."""
    me = [os.getpid()]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    clients, taken = [], []
    try:
        for _ in range(7):
            clients.append(socket.create_connection(("127.0.0.1", port)))
        assert _settled(lambda: established(port, me), 0) == 0  # seven queued, none taken
        for _ in range(3):
            taken.append(listener.accept()[0])
        assert _settled(lambda: established(port, me), 3) == 3
        taken.pop().close()  # the server closes one: no longer held
        assert _settled(lambda: established(port, me), 2) == 2
        assert established(port, []) == 0  # held by no process of the server's
    finally:
        for s in clients + taken:
            s.close()
        listener.close()


@pytest.mark.parametrize("family, host", [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")])
def test_the_kernel_s_socket_table_and_proc_net_tcp_name_the_same_sockets(family, host, monkeypatch):
    """sock_diag (the kernel filters ESTABLISHED) names the inodes /proc/net/tcp{,6} does, the
    closed ones (TIME_WAIT, FIN_WAIT) in neither; where netlink is refused, the table is read."""
    if family == socket.AF_INET6 and not socket.has_ipv6:
        pytest.skip("no IPv6")
    listener = socket.socket(family)
    try:
        listener.bind((host, 0))
    except OSError:
        listener.close()
        pytest.skip(f"{host} cannot be bound here")
    listener.listen(16)
    port = listener.getsockname()[1]
    clients = [socket.create_connection((host, port)) for _ in range(6)]
    taken = [listener.accept()[0] for _ in range(6)]
    try:
        for s in taken[:2]:  # the server closes two first: they leave ESTABLISHED
            s.close()
        want = {str(os.fstat(s.fileno()).st_ino) for s in taken[2:]}
        asked = _settled(lambda: sockdiag.established_inodes(port) - {"0"}, want)
        assert asked == want == _established_inodes(port) - {"0"}
        me = [os.getpid()]
        assert established(port, me) == 4

        def refused(_port):
            raise sockdiag.Unavailable("netlink refused")

        monkeypatch.setattr(sockdiag, "established_inodes", refused)
        assert established(port, me) == 4
    finally:
        for s in clients + taken:
            s.close()
        listener.close()


def test_memory_read_from_the_rollup_is_what_psutil_reads():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _settled(lambda: psutil.Process(sleeper.pid).status(), psutil.STATUS_SLEEPING)
        fast = total_pss_uss([sleeper.pid])
        m = process_memory(psutil.Process(sleeper.pid))
        assert fast == pytest.approx((m.pss_mib, m.uss_mib), abs=0.05)  # asleep: nothing moves
        assert fast[1] > 1.0
    finally:
        sleeper.kill()
        sleeper.wait()
    assert total_pss_uss([sleeper.pid]) == (0.0, 0.0)  # gone: counts nothing


def test_a_target_s_processes_are_its_descendants():
    script = "sleep 60 & sleep 60 & (sleep 60 & wait) & wait"
    parent = subprocess.Popen(["sh", "-c", script])
    target = Target()
    target.proc = parent  # type: ignore[attr-defined]
    try:
        tree = psutil.Process(parent.pid)
        # sh, two sleeps, the subshell and its sleep, once all are forked
        assert _settled(lambda: len(tree.children(recursive=True)), 4) == 4
        want = sorted([parent.pid] + [c.pid for c in tree.children(recursive=True)])
        assert sorted(target.pids()) == want
    finally:
        for p in psutil.Process(parent.pid).children(recursive=True):
            p.kill()
        parent.kill()
        parent.wait()
    assert target.pids() == []


def test_the_sweep_expects_what_the_cpus_can_carry_when_that_is_less_than_the_pool():
    # httpd worker with mod_lua, at half load: 3,900 req/s for 4 s, the server 236 us a request,
    # wrk 30 us, the watcher 0.2 CPUs, and other processes `others` CPUs
    def half(server_us: float, client_us: float, watcher: float, others: float = 0.0,
             asyncio: bool = False) -> SimpleNamespace:
        server, client = 4.0 * 3900 * server_us * 1e-6, 4.0 * 3900 * client_us * 1e-6
        return SimpleNamespace(wall=4.0, busy=server + client + 4.0 * (watcher + others), server=server,
                               own=client if asyncio else 4.0 * watcher, children=0.0 if asyncio else client)

    pool = 400 / 0.0506
    capacity, why, pool_bound = _saturation_bound(400, 0.0506, 50, half(236, 30, 0.2), 3900)  # type: ignore[arg-type]
    # far past the knee (400 workers against ~340 that would keep 1.8 CPUs busy): the CPUs' bound
    assert capacity == pytest.approx(min(pool, (cpu_capacity()[0] - 0.2) / 266e-6), rel=0.01)
    assert capacity == pytest.approx(min(pool, model.closed_loop_throughput(400, 266e-6, cpu_capacity()[0] - 0.2, 0.0506 - 236e-6)))
    assert pool_bound == pytest.approx(pool)
    if capacity < pool:
        assert why.startswith("the CPUs:") and "less 0.20 for the watcher" in why
        assert "266 us of CPU a request at half load (server 236 us, client 30)" in why
    # other processes do not lower the bound: a hog yields as the server asks for more
    assert _saturation_bound(400, 0.0506, 50, half(236, 30, 0.2, others=1.9), 3900)[0] == pytest.approx(capacity)  # type: ignore[arg-type]
    # the asyncio client runs in this process: its CPU is the client's (the watcher's with it)
    assert _saturation_bound(400, 0.0506, 50, half(236, 30, 0.0, asyncio=True), 3900,  # type: ignore[arg-type]
                             client_in_process=True)[0] == pytest.approx(
        min(pool, model.closed_loop_throughput(400, 266e-6, cpu_capacity()[0], 0.0506 - 236e-6)))
    # a CPU-starved half step never predicts nothing
    starved = _saturation_bound(4, 0.05, 50, half(236, 30, 5.0), 3900)[0]  # type: ignore[arg-type]
    assert starved > 0
    # cheap requests: the pool is the bound, and the CPUs' figure is still shown
    capacity, why, pool_bound = _saturation_bound(400, 0.0506, 50, half(20, 10, 0.1), 3900)  # type: ignore[arg-type]
    assert capacity == pytest.approx(pool) and pool_bound == pytest.approx(pool)
    assert why.startswith("MaxRequestWorkers 400 / 50.6 ms") and "the CPUs would carry more" in why
    # no measurement of the half step: the pool alone
    capacity, why, pool_bound = _saturation_bound(400, 0.0506, 50, SimpleNamespace(wall=0.0, busy=0.0, server=0.0, own=0.0,  # type: ignore[arg-type]
                                                                       children=0.0), 0.0)
    assert capacity == pytest.approx(pool) and pool_bound == pytest.approx(pool) and "CPU" not in why


def test_the_sweep_expects_what_the_cpus_it_may_run_on_carry(monkeypatch):
    """validate under `taskset -c 0` on 2 CPUs (mpmd worker, 400 workers of 50.8 ms): the
    pool's 7,872 req/s was predicted where the one CPU served 6,098; the bound is one CPU's."""
    monkeypatch.setattr("apachetune.validate.plans.cpu_capacity", lambda: (1.0, "1 CPU (CPU affinity)"))
    half = SimpleNamespace(wall=4.0, busy=3.9, server=4.0 * 3800 * 130e-6, own=4.0 * 0.1,
                           children=4.0 * 3800 * 25e-6)
    capacity, why, pool = _saturation_bound(400, 0.0508, 50, half, 3800)  # type: ignore[arg-type]
    assert pool == pytest.approx(400 / 0.0508)
    assert capacity == pytest.approx(model.closed_loop_throughput(400, 155e-6, 0.9, 0.0508 - 130e-6))
    assert capacity < 6000 < pool
    assert why.startswith("the CPUs: 1 CPU (CPU affinity) less 0.10 for the watcher")


def test_near_the_knee_the_sweep_expects_less_than_either_bound():
    """php-like prefork on httpd: 27 workers, a lone request 0.52 s of which 36 ms on the CPUs
    (wrk's share negligible), 2 CPUs less the watcher's 0.23. The bounds say 27 / 0.52 = 51.9
    and 1.77 / 36 ms = 49.2 req/s; 27 workers are just under the 29 that would keep the CPUs
    busy, so requests wait for a core while others sleep, and the closed network reaches 44.6
    (httpd served 40.9; the bound's 49 was 17% off)."""
    rps, wall = 26.0, 4.0
    half = SimpleNamespace(wall=wall, busy=0.0, server=wall * rps * 0.036, own=wall * 0.23, children=0.0)
    capacity, why, pool = _saturation_bound(27, 0.52, 500, half, rps)  # type: ignore[arg-type]
    bound = (cpu_capacity()[0] - 0.23) / 0.036
    assert pool == pytest.approx(27 / 0.52)
    assert capacity < 0.95 * min(pool, bound)
    assert capacity == pytest.approx(model.closed_loop_throughput(27, 0.036, cpu_capacity()[0] - 0.23, 0.52 - 0.036))
    assert "mean value analysis" in why and "484.0 ms a request off the CPUs" in why
    if cpu_capacity()[0] == 2:
        assert capacity == pytest.approx(44.6, abs=0.1)


def test_the_closed_network_meets_its_bounds_far_from_the_knee_and_falls_short_near_it():
    # one worker: never waits for a core
    assert model.closed_loop_throughput(1, 0.01, 2, 0.04) == pytest.approx(20.0)
    # light CPU: the workers' bound; heavy: the CPUs'
    assert model.closed_loop_throughput(10, 0.0001, 2, 0.05) == pytest.approx(10 / 0.0501, rel=0.001)
    assert model.closed_loop_throughput(1000, 0.025, 2, 0.025) == pytest.approx(80.0, rel=1e-4)
    # at the knee (N* = (D + Z) c / D = 29.9 workers) short of both by 8%
    at_knee = model.closed_loop_throughput(30, 0.036, 2, 0.5)
    assert at_knee < 0.93 * min(30 / 0.536, 2 / 0.036)
    # more workers never serve less
    xs = [model.closed_loop_throughput(n, 0.036, 2, 0.5) for n in range(1, 80)]
    assert xs == sorted(xs)
    assert model.closed_loop_throughput(0, 0.036, 2, 0.5) == 0.0


def test_the_warm_up_stops_when_the_pool_stops_growing(monkeypatch):
    """A pool the load cannot grow further (CPU-bound event keeps more idle workers than its
    spares) ends the warm-up after WARM_UP_STALL_ROUNDS rounds without a new worker, not at the
    60 s limit; one that grows is loaded until it is full."""
    from apachetune.validate import plans
    from apachetune.validate.results import ValidationReport, ValidationSetup

    def warm(counts: list[int]) -> tuple[str, int]:
        readings = iter(counts)
        rounds = []
        monkeypatch.setattr(plans, "closed_loop", lambda *a, **k: rounds.append(a[3]))
        target = SimpleNamespace(host="127.0.0.1", port=1, status=lambda: {"BusyWorkers": "0",
                                                                           "IdleWorkers": str(next(readings))})
        setup = ValidationSetup("httpd", "event", {"ThreadsPerChild": 25}, 400, 50, 1)
        run = plans.PlanRun(setup, target, ValidationReport(setup), lambda _m: None)
        return plans.warm_up(run), len(rounds)

    note, rounds = warm([75, 100, 150, 250, 350, 350, 325, 350, 350, 350, 350])
    assert rounds == 4 + plans.WARM_UP_STALL_ROUNDS and "stopped growing at 350" in note, note
    note, rounds = warm([75, 150, 300, 300, 400])
    assert rounds == 4 and "(pool grown)" in note and "400 of MaxRequestWorkers 400" in note, note


def test_event_s_busy_figure_counts_its_open_connections():
    """On event a look's serving workers are its open connections (at most MaxRequestWorkers);
    looks without a count are left out, and with no count at all the looks stay as they are
    (the status page's busy workers), as for prefork and worker."""
    from apachetune.validate.plans import busy_worker_mib, connected_workers

    looks = [{"busy": 151, "connections": 400, "pss_mib": 78.0}, {"busy": 121, "connections": 450, "pss_mib": 76.0},
             {"busy": 190, "connections": None, "pss_mib": 90.0}]
    assert [s["serving"] for s in connected_workers(looks, 400)] == [400, 400]
    assert busy_worker_mib(connected_workers(looks, 400), 58.0, 100) == pytest.approx(0.05)  # (78 - 58) / 400
    uncounted = [{**s, "connections": None} for s in looks]
    assert connected_workers(uncounted, 400) == uncounted
