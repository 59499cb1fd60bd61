"""Connections that never send a request, on real httpd and in the simulation (`simulate --silent`).

A silent connection (a browser's unused preconnection, a slowloris client) holds a worker on every
MPM once httpd has accepted it: the worker reads the request line, until mod_reqtimeout's header
timeout or Timeout, then closes it without a response (event's worker reads a new connection's
first request itself). On Linux httpd's default AcceptFilter (http: data) sets TCP_DEFER_ACCEPT
30, so the kernel keeps such a connection from accept() for 31 s (SYN-ACK retransmissions at 1,
2, 4, 8 and 16 s); with `AcceptFilter http none` it is accepted at once. Measured on httpd 2.4.71,
prefork with 2 children, 2 silent connections: AcceptFilter none and Timeout 3, a request waited
2.7 s; the default filter, served at once, the silent ones closed at 34.56 s (accepted at 31.56);
with mod_reqtimeout loaded and Timeout 60, closed at 20.0 s (its header timeout)."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from apachetune import httpd
from apachetune.simulate import simulate
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.validate.section import load_directives
from apachetune.validate.targets import make_target
from httpd_oracle import APACHE2, needs_httpd

PREFORK = {"StartServers": 2, "MinSpareServers": 2, "MaxSpareServers": 2, "MaxRequestWorkers": 2, "ServerLimit": 2,
           "KeepAlive": "Off"}
EVENT = {"StartServers": 1, "ServerLimit": 1, "ThreadsPerChild": 2, "ThreadLimit": 2, "MaxRequestWorkers": 2,
         "MinSpareThreads": 1, "MaxSpareThreads": 2, "KeepAlive": "Off"}
SECTIONS = {"prefork": PREFORK, "event": EVENT}
THINK = 1.0  # the requesting client's pause after each answer


def silent_client(port: int, until: float, closes: list[float], t0: float) -> None:
    """Open a connection, send nothing, note when the server closes it, open another."""
    while time.monotonic() < until:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.settimeout(0.2)
            while time.monotonic() < until:
                try:
                    if not s.recv(4096):
                        closes.append(time.monotonic() - t0)
                        break
                except TimeoutError:
                    continue
                except OSError:
                    closes.append(time.monotonic() - t0)
                    break


def run_server(target_kind: str, mpm: str, section: dict, seconds: float) -> tuple[list[tuple[float, float]], list[float]]:
    """2 silent clients and one that asks /index.html, THINK s after each answer: (sent at, waited)
    for each request, and when the server closed a silent connection (seconds from the start)."""
    with make_target(target_kind, mpm, section) as target:
        time.sleep(0.5)
        t0 = time.monotonic()
        until = t0 + seconds
        closes: list[float] = []
        threads = [threading.Thread(target=silent_client, args=(target.port, until, closes, t0)) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.2)  # the silent ones first
        waits = []
        while time.monotonic() < until - 0.5:
            sent = time.monotonic()
            with socket.create_connection(("127.0.0.1", target.port), timeout=60) as s:
                s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                assert s.recv(12) == b"HTTP/1.1 200"
            waits.append((sent - t0, time.monotonic() - sent))
            time.sleep(THINK)
        for t in threads:
            t.join()
    return waits, closes


def simulated(mpm: str, section: dict, seconds: float, accept_defer: float, read_timeout: float | None):
    full = load_directives(None, mpm, 2, 1 if mpm == "prefork" else 2, keepalive_timeout=5)
    full.update(section)
    workload = Workload(ServiceTime.parse("1ms"), clients=1, keepalive=False, think=THINK, silent=2)
    return simulate(mpm, full, workload, seconds, accept_defer=accept_defer, read_timeout=read_timeout)


TARGETS = [pytest.param("httpd", marks=needs_httpd), "mpmd"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_silent_connections_hold_workers_until_timeout_without_the_accept_filter(target, mpm):
    section = {**SECTIONS[mpm], "Timeout": 3, "AcceptFilter": "http none"}
    waits, closes = run_server(target, mpm, section, 10.0)
    # each silent connection is closed Timeout after it was accepted, then comes straight back
    assert closes and min(closes) == pytest.approx(3.0, abs=0.5), closes
    mean_wait = sum(w for _, w in waits) / len(waits)
    sim = simulated(mpm, {**SECTIONS[mpm], "Timeout": 3}, 10.0, accept_defer=0.0, read_timeout=None)
    assert mean_wait > 1.0, waits  # every request waits for a worker a silent connection held
    assert sim.events["silent connections closed at the read timeout"] >= 4
    assert sim.latency_ms["mean"] / 1000 == pytest.approx(mean_wait, rel=0.3), (sim.latency_ms, waits)


def test_the_default_accept_filter_keeps_silent_connections_away_for_31_s_then_reqtimeout_closes_them():
    """mpmd and httpd side by side (36 s each, mostly waiting: run at once, not one after the
    other), then the simulation."""
    targets = ["mpmd"] + (["httpd"] if APACHE2 is not None else [])
    with ThreadPoolExecutor(len(targets)) as pool:
        runs = dict(zip(targets, pool.map(_deferred_run, targets), strict=True))
    for target, (waits, closes) in runs.items():
        before = [w for at, w in waits if at < 30]
        assert before and max(before) < 0.5, (target, waits)  # not accepted yet: the workers are free
        accepted = min(closes) - 3.0  # closed by mod_reqtimeout's header timeout, 3 s after accept
        assert 30.5 <= accepted <= 33.0, (target, closes)
        assert any(w > 0.5 for at, w in waits if at > 31), (target, waits)  # then they hold both workers
    sim = simulated("prefork", PREFORK, 36.0, accept_defer=31.0, read_timeout=3.0)
    slow = [at for at, w in zip(sim_sent_times(sim), sim.latencies, strict=True) if w > 0.5]
    assert sim.events["silent connections accepted"] == 2 and slow and min(slow) > 30, sim.events


def _deferred_run(target: str) -> tuple[list[tuple[float, float]], list[float]]:
    section = {**PREFORK, "Timeout": 60, "RequestReadTimeout": "header=3"}
    if target == "httpd":  # (mpmd has mod_reqtimeout's behaviour built in)
        section["LoadModule"] = f"reqtimeout_module {httpd.module_path('reqtimeout')}"
    return run_server(target, "prefork", section, 36.0)


def sim_sent_times(sim) -> list[float]:
    """When each request of the simulation's one client was sent: it sends the next THINK s after
    each answer, from the start."""
    at, out = 0.0, []
    for latency in sim.latencies:
        out.append(at)
        at += latency + THINK
    return out
