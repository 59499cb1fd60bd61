"""An idle keep-alive crowd over event's connection limit, on real builds of several httpd
versions and in the simulation (`simulate --httpd-version A --versus B`), side by side.

    python benchmarks/crowd_versions.py [VERSION ...] [--keepalive-timeout S] [--crowd N] [--fin-after S]

VERSION: 2.4.71 (the installed apache2) or a build from tools/build_httpd.sh in /tmp/httpd-VERSION
(default: 2.4.37 2.4.62 2.4.71, RHEL 8's, RHEL 9's and Debian's). 2 processes x 25 threads,
AsyncRequestWorkerFactor 1 (a limit of 50 connections a process), on 127.0.0.1. N clients
arrive one at a time, each once the one before is answered (or after 1 s without an answer:
the rest then connect at once and wait); each sends one request and keeps its connection open,
and keeps its side open when the server closes it (validate's idle clients; --fin-after S:
closes S seconds after the server's FIN). Printed for each version, measured and simulated:
how many were answered within the run and how many at once (within 1 s: the crowd the limit
held), how many connections the server closed before their keep-alive timeout, and how long a
client waited for its answer (nearest-rank p50, p95, max; p50 flips between 0 and a whole
KeepAliveTimeout when the limit holds 99 rather than 100).
"""

from __future__ import annotations

import argparse
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import event_build  # noqa: E402

from apachetune.simulate import simulate  # noqa: E402
from apachetune.simulate.stats import percentile  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload  # noqa: E402
from apachetune.validate.processes import stop_group  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402

SECTION = {"StartServers": 2, "ServerLimit": 2, "ThreadsPerChild": 25, "ThreadLimit": 25, "MaxRequestWorkers": 50,
           "MinSpareThreads": 1, "MaxSpareThreads": 50, "AsyncRequestWorkerFactor": 1, "MaxKeepAliveRequests": 0}
REQUEST = b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n"


def start(version: str, kat: float) -> tuple[subprocess.Popen, int]:
    return event_build.start(version, {**SECTION, "KeepAlive": "On", "KeepAliveTimeout": f"{kat:g}"})


def crowd_on(port: int, n: int, seconds: float, fin_after: float | None, kat: float) -> dict:
    """The crowd, formed as validate's IdleClients forms it; every socket watched until `seconds`."""
    sel = selectors.DefaultSelector()
    sent, answered = {}, {}
    start = time.monotonic()
    socks = []
    stalled = False
    fins: dict[int, float] = {}  # (closes seen while the crowd forms count too: a FIN read then was lost)
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.setblocking(False)
        sent[i] = time.monotonic()
        s.sendall(REQUEST)
        socks.append(s)
        sel.register(s, selectors.EVENT_READ, i)
        if not stalled:
            stalled = not _wait_for(sel, i, answered, 1.0, fins)
        _close_after(socks, fins, fin_after)
    while time.monotonic() - start < seconds:
        _wait_for(sel, None, answered, 0.2, fins)
        _close_after(socks, fins, fin_after)
    # closed by the server before its keep-alive timeout ran out (not by the timeout)
    closed_early = sum(1 for at, end in answered.values() if end is not None and end - at < kat - 0.5)
    for s in socks:
        s.close()
    waits = sorted((answered[i][0] - sent[i]) * 1000 for i in answered)
    return {"answered": len(waits), "closed": closed_early, "at_once": sum(w < 1000 for w in waits), **_spread(waits)}


def _close_after(socks, fins: dict[int, float], fin_after: float | None) -> None:
    """Close the client's side of the connections the server closed `fin_after` s ago."""
    if fin_after is None:
        return
    for i, at in list(fins.items()):
        if time.monotonic() >= at + fin_after:
            socks[i].close()
            del fins[i]


def _wait_for(sel, want, answered, timeout, fins=None) -> bool:
    """Read what arrived for `timeout` s: answers (time of the first bytes) and closes (FIN)."""
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return want is None or want in answered
        for key, _ in sel.select(left):
            i, s = key.data, key.fileobj
            try:
                data = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            now = time.monotonic()
            if data:
                if i not in answered:
                    answered[i] = [now, None]
            else:
                sel.unregister(s)
                if i in answered and answered[i][1] is None:
                    answered[i][1] = now
                if fins is not None:
                    fins[i] = now
            if i == want and want in answered:
                return True


def _spread(waits: list[float]) -> dict:
    """Nearest-rank quantiles, as the simulation's (simulate/stats.py)."""
    if not waits:
        return {"p50": None, "p95": None, "max": None}
    return {"p50": round(percentile(waits, 0.5)), "p95": round(percentile(waits, 0.95)), "max": round(waits[-1])}


def simulated(version: str, kat: float, n: int, seconds: float, fin_after: float | None) -> dict:
    section = load_directives(None, "event", 50, 25, keepalive_timeout=kat, version=version)
    section.update(SECTION)
    workload = Workload(ServiceTime.parse("1ms"), crowd=n, crowd_returns=False,
                        fin_after=120.0 if fin_after is None else fin_after)
    r = simulate("event", section, workload, seconds, version=version)
    lat = r.crowd_latency_ms
    closed = sum(v for k, v in r.events.items() if k.startswith("keep-alive closed"))
    return {"answered": lat.get("count"), "closed": closed, "at_once": "-", "p50": round(lat["p50"]),
            "p95": round(lat["p95"]), "max": round(lat["max"])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("versions", nargs="*", default=["2.4.37", "2.4.62", "2.4.71"])
    ap.add_argument("--keepalive-timeout", type=float, default=10)
    ap.add_argument("--crowd", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=45)
    ap.add_argument("--fin-after", type=float, default=None)
    a = ap.parse_args()
    print(f"crowd {a.crowd}, KeepAliveTimeout {a.keepalive_timeout:g}, "
          f"{'clients keep their side open' if a.fin_after is None else f'FIN {a.fin_after:g} s after the server'}")
    print(f"{'version':8} {'':9} {'answered':>8} {'at once':>7} {'closed':>6} {'p50 ms':>7} {'p95 ms':>7} "
          f"{'max ms':>7}")
    for v in a.versions:
        p, port = start(v, a.keepalive_timeout)
        try:
            m = crowd_on(port, a.crowd, a.seconds, a.fin_after, a.keepalive_timeout)
        finally:
            stop_group(p)
        s = simulated(v, a.keepalive_timeout, a.crowd, a.seconds, a.fin_after)
        for label, r in (("measured", m), ("simulated", s)):
            print(f"{v:8} {label:9} {r['answered']!s:>8} {r['at_once']!s:>7} {r['closed']!s:>6} {r['p50']!s:>7} "
                  f"{r['p95']!s:>7} {r['max']!s:>7}")


if __name__ == "__main__":
    main()
