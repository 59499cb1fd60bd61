"""The seed's "failed requests (Length)" on event, on real httpd with ab, against the simulation.

`ab -k` against event with StartServers 2, MaxRequestWorkers 6, ThreadsPerChild 3 and
AsyncRequestWorkerFactor 50 counted 17% of its requests as failed (Length). The cause is in
event.c's listener: a keep-alive connection that becomes readable when no worker of its process
is idle is closed unread ("the client can re-connect to a different process"); ab, which resets
a connection's keep-alive flag after each response, takes the empty read for a short response.
Measured on 2.4.71 (-c 200 -n 5000): 15-29% Length on a quiet machine, 4-14% beside two CPU
hogs; a worker pool with a thread for each client: none. The simulation, with ab's turnaround
on loopback (30 us), must show the same: failures on the tiny event pool, none on worker."""

from __future__ import annotations

import re
import shutil
import subprocess
import time

import pytest

from apachetune.simulate import simulate
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.validate.cpu_share import OthersCpu
from apachetune.validate.section import load_directives
from apachetune.validate.targets import make_target
from httpd_oracle import needs_httpd

CLIENTS, REQUESTS = 200, 5000


def tiny_event() -> dict[str, object]:
    section = load_directives(None, "event", max_request_workers=6, threads_per_child=3)
    section.update(StartServers=2, AsyncRequestWorkerFactor=50)
    return section


def roomy_worker() -> dict[str, object]:
    section = load_directives(None, "worker", max_request_workers=200, threads_per_child=25)
    section.update(StartServers=8, MinSpareThreads=200, MaxSpareThreads=200)
    return section


def ab_failures(mpm: str, section: dict[str, object], clients: int = CLIENTS,
                requests: int = REQUESTS, others: list[float] | None = None) -> tuple[int, int, int, float]:
    """(complete, failed, Length, time taken) from ab -r -k on `section` serving a static file;
    `others`, when given, gets the share of the CPUs other processes took meanwhile."""
    with make_target("httpd", mpm, section) as t:
        time.sleep(1.0)
        with OthersCpu(t.pids) as meter:
            run = subprocess.run(["ab", "-r", "-k", "-s", "60", "-c", str(clients), "-n", str(requests),
                                  f"http://{t.host}:{t.port}/index.html"], capture_output=True, text=True,
                                 timeout=300)
    if others is not None:
        others.append(meter.share)
    assert run.returncode == 0, run.stderr

    def number(label: str) -> int:
        m = re.search(label + r"\s*(\d+)", run.stdout)
        assert m, run.stdout
        return int(m.group(1))

    # ab prints the breakdown only when some failed; "Document Length:" is the page's size
    kinds = re.search(r"\(Connect: \d+, Receive: \d+, Length: (\d+), Exceptions: \d+\)", run.stdout)
    taken = re.search(r"Time taken for tests:\s*([0-9.]+)", run.stdout)
    assert taken, run.stdout
    return (number("Complete requests:"), number("Failed requests:"), int(kinds.group(1)) if kinds else 0,
            float(taken.group(1)))


@needs_httpd
@pytest.mark.httpd
@pytest.mark.slow
def test_event_closes_keepalive_requests_when_its_workers_are_busy_as_simulated():
    if shutil.which("ab") is None:
        pytest.skip("needs ab (apache2-utils)")
    complete, failed, length, _ = ab_failures("event", tiny_event())
    assert complete == REQUESTS
    assert length >= 0.01 * REQUESTS, (complete, failed, length)
    complete, failed, length, _ = ab_failures("worker", roomy_worker())
    assert complete == REQUESTS and failed == 0

    workload = Workload(ServiceTime.parse("exp:400us"), clients=CLIENTS, requests=REQUESTS, turnaround=30e-6)
    event = simulate("event", tiny_event(), workload, 600).ab
    worker = simulate("worker", roomy_worker(), workload, 600).ab
    assert event is not None and worker is not None
    assert event["complete"] == REQUESTS and event["failed_length"] >= 0.01 * REQUESTS
    assert worker["complete"] == REQUESTS and worker["failed_length"] == 0


@needs_httpd
@pytest.mark.httpd
@pytest.mark.slow
def test_abs_end_game_on_worker_waits_out_keepalive_as_simulated():
    """Once ab has started its N requests it writes no more but keeps its connections open;
    worker's threads then wait out KeepAliveTimeout on them while connections with a request
    queue behind, and each close of an idle one is a Length failure for ab. Worker 2 x 3
    threads, KeepAliveTimeout 2, ab -k -c 60 -n 3000: httpd 2.4.71 took 10.1-10.2 s with 29-30
    Length failures; simulated 10.2 s and 28 (it is the keep-alive timer, not the CPU, that
    sets the time, so a busy machine adds only the first second's work)."""
    if shutil.which("ab") is None:
        pytest.skip("needs ab (apache2-utils)")
    section = load_directives(None, "worker", max_request_workers=6, threads_per_child=3, keepalive_timeout=2)
    section.update(StartServers=2)
    complete, failed, length, taken = ab_failures("worker", section, clients=60, requests=3000)
    workload = Workload(ServiceTime.parse("exp:400us"), clients=60, requests=3000, turnaround=30e-6)
    sim = simulate("worker", section, workload, 600).ab
    assert sim is not None and complete == sim["complete"] == 3000
    assert abs(taken - sim["time_taken_s"]) <= 0.2 * sim["time_taken_s"] + 1, (taken, sim)
    assert abs(length - sim["failed_length"]) <= 12 and failed == length, (length, sim)


def debian_event() -> dict[str, object]:
    """Debian's stock mpm_event.conf."""
    section = load_directives(None, "event", max_request_workers=150, threads_per_child=25)
    section.update(StartServers=2, MinSpareThreads=25, MaxSpareThreads=75)
    return section


@needs_httpd
@pytest.mark.httpd
@pytest.mark.slow
def test_ab_on_loopback_loses_few_keepalive_requests_on_a_stock_event_pool_as_simulated():
    """ab -k -c 100 against Debian's event section (2 x 25 threads to start, 150 at most) on
    a small file: httpd 2.4.71 lost 0.05-2% of the requests (Length) at 14-16k req/s, the CPUs
    full (5.3% once beside two CPU hogs and the rest of the suite; 7.4-9.1% on 2026-11-29, quiet,
    0.7-9.3% beside two CPU hogs, which took 34-36% of the CPUs). The simulation with ab's CPU
    in its one thread (ClientThread) loses as few; with the same CPU spent in the workers and an
    instant listener, the requests wait in the server and 47% are lost (the listener's own
    latencies, simulate's default, keep even that to 0.2%). (Neither keeps as many requests in
    httpd's workers as httpd does, about half: docs/simulate.md, "The client's threads".)"""
    if shutil.which("ab") is None:
        pytest.skip("needs ab (apache2-utils)")
    others: list[float] = []
    complete, failed, length, _ = ab_failures("event", debian_event(), clients=100, requests=20000, others=others)
    assert complete == 20000, (complete, failed, length)

    from apachetune.simulate.cpu import CpuCosts

    workload = Workload(ServiceTime.parse("1us"), clients=100, requests=20000, turnaround=30e-6)
    threaded = simulate("event", debian_event(), workload, 600, cores=2,
                        costs=CpuCosts(86e-6, 100e-6, 21e-6, 43e-6, "given")).ab
    in_workers = simulate("event", debian_event(), workload, 600, cores=2,
                          costs=CpuCosts(107e-6, 143e-6, 0.0, 0.0, "given"), listener_wake=0,
                          accept_spacing=0).ab
    assert threaded is not None and in_workers is not None
    assert threaded["failed_length"] <= 0.02 * 20000, threaded
    assert in_workers["failed_length"] >= 0.2 * 20000, in_workers
    # httpd loses a few (quiet: 0.05-2%; beside two CPU hogs and the suite: 5.3%), far from the
    # requests-in-workers model's 47%; a run whose CPUs others took (30% lost once beside two CPU
    # hogs and the suite's heaviest tests) measured the machine, not the pool: not judged, as
    # validate judges no saturation then (validate/cpu_share.py)
    if length >= in_workers["failed_length"] / 2 and others[0] > 0.25:
        pytest.skip(f"not judged: other processes took {others[0]:.0%} of the CPUs while ab ran (lost {length})")
    assert length < in_workers["failed_length"] / 2, (length, in_workers, others)
