"""event's accept race on real httpd, and the simulation and lint beside it.

Every process's listener polls the listen socket, so a new connection wakes all of them. Each
that may accept reserves an idle worker, then accepts; one that finds the connection taken keeps
the reservation (event.c's have_idle_worker), and its connection limit counts only workers not
reserved. With one thread a process, a process that loses once counts none idle, logs "Too many
open connections (0)" and never listens again (measured on httpd 2.4.71, 4 x 1 threads, 40
requests a second: two processes never served a request, a third stopped after 9)."""

from __future__ import annotations

import re
import socket
import time

from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.simulate import simulate
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.validate.section import load_directives
from apachetune.validate.targets import make_target
from httpd_oracle import needs_httpd

SECTION = {"ServerLimit": 4, "StartServers": 4, "ThreadLimit": 1, "ThreadsPerChild": 1, "MaxRequestWorkers": 4,
           "MinSpareThreads": 1, "MaxSpareThreads": 4, "KeepAlive": "Off"}
STUCK = re.compile(r"\[pid (\d+):tid \d+\] event\.c\(\d+\): Too many open connections \(0\)")
AGAIN = re.compile(r"\[pid (\d+):tid \d+\] event\.c\(\d+\): AH00457: Accepting new connections again")


def get(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        while s.recv(65536):
            pass


def stuck_processes(log: str) -> set[str]:
    """Processes that stopped listening with no connection (an idle worker reserved, none counted)
    and never listened again."""
    stuck: dict[str, int] = {}
    for n, line in enumerate(log.splitlines()):
        if m := STUCK.search(line):
            stuck.setdefault(m.group(1), n)
    again = {m.group(1): n for n, line in enumerate(log.splitlines()) if (m := AGAIN.search(line))}
    return {pid for pid, n in stuck.items() if again.get(pid, -1) < n}


@needs_httpd
def test_a_one_thread_event_process_that_loses_an_accept_race_never_accepts_again():
    target = make_target("httpd", "event", {**SECTION, "LogLevel": "warn mpm_event:debug"})
    with target:
        log = target.tmp / "error.log"
        # connections one at a time (each wakes every listener), bounded, until a race is lost:
        # on a quiet machine within 2-10; beside CPU hogs the woken listeners run one after
        # another, and one that polls after the winner's accept finds nothing to report (the
        # listen socket is polled again before the event is returned), so races are rarer there
        # (a suite beside two hogs once lost none in 300)
        for _ in range(3000):
            get(target.port)
            if stuck_processes(log.read_text()):
                break
        time.sleep(0.5)
        for _ in range(20):
            get(target.port)
        text = log.read_text()
    stuck = stuck_processes(text)
    assert stuck, text[-2000:]
    # what lint says of the section, and the simulation: the same processes lost for good
    conf = target.tmp.parent / f"{target.tmp.name}-mpm.conf"
    conf.write_text("".join(f"{k} {v}\n" for k, v in SECTION.items() if k != "KeepAlive"))
    r = CliRunner().invoke(cli, ["lint", str(conf), "--mpm", "event", "--format", "json"])
    conf.unlink()
    assert '"AT206"' in r.stdout and "stops accepting for good" in r.stdout, r.stdout


def test_the_simulation_loses_one_thread_processes_to_accept_races():
    """4 x 1 threads, Poisson 40 a second of 50 ms: the processes that lose a race never accept
    again, so one worker serves what four were meant to (half the load, the rest times out)."""
    section = load_directives(None, "event", 4, 1, version="2.4.71")
    section.update({k: v for k, v in SECTION.items() if k != "KeepAlive"})
    r = simulate("event", section, Workload(ServiceTime.parse("exp:50ms"), rate=40, keepalive=False), 60)
    assert r.throughput < 25, (r.throughput, r.errors)
    late = [t for t in r.timeline if t["t"] >= 10]
    assert late and all(t["busy_workers"] <= 1 for t in late), r.timeline[:15]
    split = dict(section, ThreadsPerChild=4, ThreadLimit=4, ServerLimit=2, StartServers=1, MaxSpareThreads=6)
    fixed = simulate("event", split, Workload(ServiceTime.parse("exp:50ms"), rate=40, keepalive=False), 60)
    assert fixed.throughput > 38 and not fixed.errors, (fixed.throughput, fixed.errors)
