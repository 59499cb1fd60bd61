"""Clients that do not close: after a response that ends its connection (Connection: close)
httpd shuts its side and reads until the client's FIN, for at most 2 s of silence
(ap_lingering_close, SECONDS_TO_LINGER). On prefork and worker the worker waits that long before
it serves anyone else; event's listener lingers for its workers. `simulate --fin-after` models
it, mpmd does it, and real httpd is the oracle.

8 clients, a connection a request, 50 ms requests, each client keeping its side of an ended
connection open 5 s (so httpd gives up at 2 s): 4 workers serve a round every 2.05 s on prefork
and worker (about 2 req/s instead of 80), and 80 req/s on event."""

from __future__ import annotations

import pytest

from apachetune.simulate import simulate
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.validate.load import closed_loop
from apachetune.validate.targets import make_target
from httpd_oracle import APACHE2

SECONDS, CLIENTS, FIN_AFTER = 6.0, 8, 5.0
SECTIONS = {
    "prefork": {"StartServers": 4, "MinSpareServers": 4, "MaxSpareServers": 4, "ServerLimit": 4,
                "MaxRequestWorkers": 4},
    "worker": {"StartServers": 2, "ServerLimit": 2, "ThreadsPerChild": 2, "ThreadLimit": 2, "MaxRequestWorkers": 4,
               "MinSpareThreads": 4, "MaxSpareThreads": 4},
}
SECTIONS["event"] = SECTIONS["worker"]
TARGETS = ["mpmd"] + ([pytest.param("httpd", marks=pytest.mark.httpd)] if APACHE2 else [])


def _simulated(mpm: str, fin_after: float):
    from apachetune.validate.section import load_directives

    section = {**load_directives(None, mpm, 4, 2 if mpm != "prefork" else None, listen_backlog=True),
               **SECTIONS[mpm], "KeepAlive": "Off"}
    workload = Workload(ServiceTime("fixed", 0.05), clients=CLIENTS, keepalive=False, fin_after=fin_after)
    return simulate(mpm, section, workload, SECONDS, seed=1, drain=True)


def test_the_simulation_holds_a_worker_for_the_lingering_close_on_prefork_and_worker():
    for mpm in ("prefork", "worker"):
        held, prompt = _simulated(mpm, FIN_AFTER), _simulated(mpm, 0.0)
        # rounds of 4 every 2.05 s: 0.05, 2.1, 4.15, 6.2 and the one sent before the end, 8.25
        assert held.completed == 20, (mpm, held.completed)
        assert held.latency_ms["p99"] == pytest.approx(4100, rel=0.02)
        assert prompt.throughput > 30 * held.throughput
    event = _simulated("event", FIN_AFTER)
    assert event.throughput == pytest.approx(80, rel=0.05)  # the listener lingers, not the workers
    # httpd gives up at 2 s: a client keeping its side open 5 s or 50 costs the same
    assert _simulated("prefork", 50.0).completed == 20


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_a_client_that_does_not_close_holds_what_the_simulation_says(target, mpm):
    with make_target(target, mpm, {**SECTIONS[mpm], "KeepAlive": "Off"}) as t:
        real = closed_loop(t.host, t.port, "/app/sleep?ms=50", CLIENTS, SECONDS, keepalive=False,
                           fin_after=FIN_AFTER)
    sim = _simulated(mpm, FIN_AFTER)
    assert not real.errors, real.errors
    if mpm == "event":
        # a lone request here takes a little over its 50 ms: within 15% of the simulated 80 req/s
        assert real.throughput == pytest.approx(sim.throughput, rel=0.15), (real.throughput, sim.throughput)
    else:
        # whole rounds of 2.05 s: the count is exact and the slowest waited two lingering closes
        assert len(real.latencies) == sim.completed, (len(real.latencies), sim.completed)
        assert real.percentile(99) * 1000 == pytest.approx(sim.latency_ms["p99"], rel=0.1)


def test_httpd_gives_up_on_a_busy_local_client_s_fin_after_2_s():
    """A client on the server's machine sends its FIN when its thread has read the response that
    ended the connection; a thread 3 s behind leaves prefork's one child lingering, and httpd
    gives up at 2 s: the second client's request is served then (read 3 s later by the other
    thread: 5 s), not when the first thread reads (6 s)."""
    from apachetune.simulate.cpu import CpuCosts
    from apachetune.validate.section import load_directives

    section = load_directives(None, "prefork")
    section.update(StartServers=1, MinSpareServers=1, MaxSpareServers=1, ServerLimit=1, MaxRequestWorkers=1)
    costs = CpuCosts(0.0, 0.0, 3.0, 0.0, "given", client_threads=2)  # 3 s of the client's CPU a response
    w = Workload(ServiceTime.parse("1ms"), clients=2, keepalive=False)
    r = simulate("prefork", section, w, 5.5, cores=2, costs=costs)
    assert r.completed == 2
    assert r.latency_ms["p50"] == pytest.approx(3000, abs=20) and r.latency_ms["max"] == pytest.approx(5000, abs=20)
