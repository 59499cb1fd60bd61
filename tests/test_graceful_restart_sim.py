"""Graceful restarts (apachectl graceful) in the simulation, and on real httpd.

Measured on httpd 2.4.71, event, 2 processes x 25 threads (MaxRequestWorkers 50), 40 keep-alive
clients on a 1 s request, SIGUSR1 at 3.1 s: with ServerLimit 2 the old processes hold both
slots until their requests end (4.1 s), the parent's loop finds no free slot at its first pass
(4.1), reaps them after it, and its maintenance forks one process a second (5.4 and 6.5 s: the
rate held at 1 after a restart); no request completed in seconds 4 and 5, the slowest took
3.0-4.0 s. With ServerLimit 4 the new processes start in the spare slots at the first pass: no
gap, the slowest 1.09-2.0 s (a request sent just after the signal waits for the first pass). Simulated: processes 2, 0 (4.1), 1 (5.1), 2 (6.1), p99 3.1 s; with
ServerLimit 4, 2 throughout and p99 1.1 s (docs/simulate.md).

worker (2 x 25, the same clients) uses no slot beyond MaxRequestWorkers / ThreadsPerChild: with
1 s requests ServerLimit 2 and 4 alike had no process from 4.3 to 5.3 s and 265 done, the slowest
3.1 s. With 3 s requests its maintenance forked into a stopping child's slot at 5.3 s (3
processes) and nothing waited beyond its own 3 s; event with ServerLimit 2: the slowest 5.1 s.
With 4 s requests and the restart after the first round, a third process at the second pass
and a fourth at the next (the third starts only the stopping child's dead threads), on httpd,
mpmd and in the model alike."""

from __future__ import annotations

import http.client
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from apachetune.simulate import simulate
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.validate.section import load_directives
from httpd_oracle import needs_httpd

SECTION = {"StartServers": 2, "MinSpareThreads": 25, "MaxSpareThreads": 75, "ThreadsPerChild": 25,
           "ThreadLimit": 25, "MaxRequestWorkers": 50, "KeepAlive": "On", "KeepAliveTimeout": 5}
LOAD = Workload(ServiceTime.parse("1000ms"), clients=40)


def _run(server_limit: int, graceful_at: tuple[float, ...] = (3.1,), mpm: str = "event", load: Workload = LOAD,
         seconds: float = 9):
    section = {**load_directives(None, mpm, keep_server_limit=True), **SECTION, "ServerLimit": server_limit}
    return simulate(mpm, section, load, seconds, graceful_at=graceful_at)


def test_without_spare_slots_the_new_generation_waits_for_the_old_and_grows_one_a_second():
    r = _run(2)
    assert [t["processes"] for t in r.timeline] == [2, 2, 2, 2, 0, 1, 2, 2, 2]
    assert r.events["graceful restarts"] == 1
    assert r.latency_ms["max"] > 3000  # clients that reconnected at 4.0 s waited for 5.1 s and 6.1 s


def test_spare_slots_let_the_new_generation_start_at_the_first_pass():
    r = _run(4)
    assert {t["processes"] for t in r.timeline} == {2}
    assert r.latency_ms["max"] < 1200
    assert r.completed > _run(2).completed


def test_worker_uses_no_spare_slot_but_forks_beside_a_stopping_child():
    """worker's new children go below MaxRequestWorkers / ThreadsPerChild only, whatever
    ServerLimit says: the gap event avoids with ServerLimit 4 is there. But its maintenance forks
    into a stopping child's slot once its idle threads have exited: with 3 s requests, a third
    process at the pass after the restart, and none of the gap event has."""
    for server_limit in (2, 4):
        r = _run(server_limit, mpm="worker")
        assert [t["processes"] for t in r.timeline] == [2, 2, 2, 2, 0, 1, 2, 2, 2]
    slow = Workload(ServiceTime.parse("3000ms"), clients=40)
    r = _run(2, mpm="worker", load=slow, seconds=12)
    assert [t["processes"] for t in r.timeline][:9] == [2, 2, 2, 2, 2, 3, 2, 2, 2]
    assert r.events["children forked"] == 4  # 2 at start, 2 beside the stopping ones
    assert r.latency_ms["max"] < 3200  # as httpd: 3.1 s
    event = _run(2, load=slow, seconds=12)
    assert [t["processes"] for t in event.timeline][:9] == [2, 2, 2, 2, 2, 2, 0, 1, 2]
    assert event.latency_ms["max"] > 5000  # as httpd: 5.1 s


def test_a_drained_run_counts_the_requests_sent_into_the_gap():
    """validate's client waits for the requests it sent before its deadline; a drained run does
    too (the clients send nothing more and close their connections), so a request sent into a
    restart's gap near the end is counted, not cut off. 2 x 10 workers, ServerLimit 2, 20
    keep-alive clients on 250 ms, restart half-way through a request at 1.13 s: measured on
    httpd and mpmd, 120 requests in 3.64 s, p99 2.38 s."""
    section = {**load_directives(None, "worker", keep_server_limit=True), "StartServers": 2, "ServerLimit": 2,
               "ThreadsPerChild": 10, "ThreadLimit": 10, "MaxRequestWorkers": 20, "MinSpareThreads": 75,
               "MaxSpareThreads": 250}
    load = Workload(ServiceTime.parse("251.5ms"), clients=20)
    cut = simulate("worker", section, load, 3.0, graceful_at=(1.131,))
    drained = simulate("worker", section, load, 3.0, graceful_at=(1.131,), drain=True)
    assert cut.latency_ms["p99"] < 300 and cut.completed == 100
    assert drained.completed == 120 and drained.latency_ms["p99"] > 2300
    assert 3.6 < drained.seconds < 3.7 and drained.throughput == pytest.approx(32.9, abs=0.2)


def test_an_idle_server_is_replaced_at_once_and_without_a_restart_nothing_changes():
    idle = Workload(ServiceTime.parse("5ms"), clients=1, think=10.0, keepalive=False)
    section = {**load_directives(None, "event", keep_server_limit=True), **SECTION, "ServerLimit": 2}
    r = simulate("event", section, idle, 4, graceful_at=(1.5,))
    # the old children exit at once and are replaced as they are reaped: 2 forked at start, 2 then
    assert r.events["children forked"] == 4 and [t["processes"] for t in r.timeline][-1] == 2
    plain = simulate("event", section, LOAD, 9)
    assert {t["processes"] for t in plain.timeline} == {2} and "graceful restarts" not in plain.events


def _completions_by_second(server_limit: int, mpm: str = "event", ms: int = 1000, target: str = "httpd",
                           after_first_round: bool = False) -> tuple[dict[int, int], float, list[int]]:
    """Completions by second of 40 keep-alive clients on httpd (or mpmd), SIGUSR1 at 3.1 s (or
    0.1 s after every client's first request is done, so that the restart finds the second
    round just begun whatever a busy machine did to the first); the slowest request; the
    children counted every tenth of a second."""
    import psutil

    from apachetune.validate.targets import make_target

    done: list[tuple[float, float]] = []
    children: list[int] = []
    with make_target(target, mpm, {**SECTION, "ServerLimit": server_limit}) as t:
        pid = int((t.tmp / "httpd.pid").read_text()) if target == "httpd" else t.proc.pid
        time.sleep(1.5)
        start = time.monotonic()
        # (a restart after the first round watches until the second has ended)
        stop = start + (max(8.0, 2 * ms / 1000 + 1.5) if after_first_round else 8)

        def client():
            conn = None
            while time.monotonic() < stop:
                t0 = time.monotonic()
                try:
                    conn = conn or http.client.HTTPConnection(t.host, t.port, timeout=30)
                    conn.request("GET", f"/app/sleep?ms={ms}")
                    response = conn.getresponse()
                    response.read()
                    if (response.getheader("Connection") or "").lower() == "close":
                        conn.close()
                        conn = None
                    done.append((t0, time.monotonic()))
                except (OSError, http.client.HTTPException):
                    conn = None  # closed by event while its process was busy: as a browser, again

        def watch():
            while time.monotonic() < stop:
                try:
                    children.append(len(psutil.Process(pid).children()))
                except psutil.Error:
                    pass
                time.sleep(0.1)

        threads = [threading.Thread(target=client) for _ in range(40)] + [threading.Thread(target=watch)]
        for th in threads:
            th.start()
        time.sleep(max(0.0, start + 3.1 - time.monotonic()))
        while after_first_round and len(done) < 40 and time.monotonic() < stop:
            time.sleep(0.01)
        time.sleep(0.1 if after_first_round else 0)
        os.kill(pid, signal.SIGUSR1)  # AP_SIG_GRACEFUL
        for th in threads:
            th.join()
    by: dict[int, int] = {}
    for _, end in done:
        by[int(end - start)] = by.get(int(end - start), 0) + 1
    return by, max(end - begin for begin, end in done), children


def _at_once(*runs: dict) -> list[tuple[dict[int, int], float, list[int]]]:
    """_completions_by_second for each set of arguments, all at once (each run waits on its
    own server for 8 s or more: side by side, not one after the other)."""
    with ThreadPoolExecutor(len(runs)) as pool:
        return list(pool.map(lambda kw: _completions_by_second(**kw), runs))


def _longest_run_without_children(children: list[int]) -> int:
    """The most consecutive tenth-of-a-second samples that found no child."""
    longest = run = 0
    for count in children:
        run = run + 1 if count == 0 else 0
        longest = max(longest, run)
    return longest


@needs_httpd
@pytest.mark.httpd
@pytest.mark.slow
def test_httpd_restarts_gracefully_as_simulated():
    """Without spare slots a second passes with nothing done and a request waits 3-4 s; with
    them every second has completions, and no request waits more than the pass a restart
    takes (a request sent just after the signal waits for the first pass, 1 s, then is served)."""
    (gap, slowest_gap, _), (smooth, slowest, _) = _at_once({"server_limit": 2}, {"server_limit": 4})
    assert [s for s in (4, 5) if gap.get(s, 0) == 0], gap
    assert slowest_gap > 2.8
    assert all(smooth.get(s, 0) > 0 for s in range(1, 8)), smooth
    assert slowest < 2.5


@pytest.mark.slow
def test_mpmd_restarts_gracefully_as_httpd_does():
    """mpmd (SIGUSR1, as httpd): event without spare slots has the gap, with them none; worker
    has it whatever ServerLimit says, but forks beside a stopping child once its idle threads
    are gone. Measured beside httpd: the same completions by second (265, 320 and 265 requests)
    and the same process counts."""
    # One after the other: the gap is counted in tenth-of-a-second looks at the children, and
    # with four runs' 160 client threads in this process the watcher missed them (a clean CI run
    # saw one look without a child where a second passes without one)
    gap, slowest_gap, children = _completions_by_second(2, target="mpmd")
    assert [s for s in (4, 5) if gap.get(s, 0) == 0], gap
    assert slowest_gap > 2.8
    assert _longest_run_without_children(children) >= 5, children  # about a second (9 samples)
    smooth, slowest, children = _completions_by_second(4, target="mpmd")
    assert all(smooth.get(s, 0) > 0 for s in range(1, 8)), smooth
    # each stopping child is replaced as it is reaped: a sample may fall between a reap and
    # its fork on a busy machine (CI saw one), never the second-long gap above
    assert slowest < 2.5 and _longest_run_without_children(children) <= 2, children
    gap, slowest_gap, _ = _completions_by_second(4, "worker", target="mpmd")
    assert [s for s in (4, 5) if gap.get(s, 0) == 0], gap
    assert slowest_gap > 2.8
    # long requests: a new worker child forks beside a stopping one, nothing waits beyond its own
    # length (not the slowest request: 3.2 s for 3 s requests on a quiet machine, 5.0 on httpd
    # and mpmd alike beside two CPU hogs); 4 s requests leave the third process two seconds
    _, _, children = _completions_by_second(2, "worker", 4000, target="mpmd", after_first_round=True)
    assert max(children) >= 3, children


@needs_httpd
@pytest.mark.httpd
@pytest.mark.slow
def test_httpd_worker_restarts_gracefully_as_simulated():
    """worker with ServerLimit 4 still has event's gap at ServerLimit 2 (no process for a while,
    requests waiting 3 s); with 3 s requests a new child forks beside a stopping one (a third
    process; on a quiet machine no request then waits beyond its own 3 s)."""
    long_requests = {"server_limit": 2, "mpm": "worker", "ms": 4000, "after_first_round": True}
    (gap, slowest_gap, _), (_, _, children) = _at_once({"server_limit": 4, "mpm": "worker"}, long_requests)
    assert [s for s in (4, 5) if gap.get(s, 0) == 0], gap
    assert slowest_gap > 2.8
    # (the third process lives from the maintenance pass two seconds after the signal until the
    # stopping child's requests end: with 3 s requests under a second, and a suite beside two CPU
    # hogs once saw none of it (the parent re-reads its configuration first, and its passes come
    # late); 4 s requests leave it two seconds, and a fourth process forks at the next pass (the
    # third can start only the stopping child's dead threads, 5 of 25: still too few idle), as
    # the model has it. A suite beside two CPU hogs also once began the first round so late that
    # a signal at 3.1 s found it ending: the signal waits for that round). A clean CI run once saw
    # no third process with the two runs side by side (80 client threads beside the watcher): a
    # run that misses it is measured once more, alone
    if max(children) < 3:
        _, _, children = _completions_by_second(**long_requests)
    assert max(children) >= 3, children


def test_the_cli_restarts_with_the_configuration_s_server_limit(tmp_path):
    """`simulate FILE --graceful-at S`: the file's ServerLimit is kept (spare slots: no gap) and
    shown on the section line; without spare slots the new processes start one a second."""
    import json

    from click.testing import CliRunner

    from apachetune.cli import cli

    conf = tmp_path / "mpm.conf"
    args = ["--mpm", "event", "--clients", "40", "--service", "1000ms", "--seconds", "9", "--graceful-at", "3.1"]
    seen = {}
    for server_limit in (2, 4):
        conf.write_text("".join(f"{k} {v}\n" for k, v in {**SECTION, "ServerLimit": server_limit}.items()))
        r = CliRunner().invoke(cli, ["simulate", str(conf), *args, "--format", "json"])
        assert r.exit_code == 0, r.output
        out = json.loads(r.output)
        assert out["section"]["ServerLimit"] == server_limit and out["events"]["graceful restarts"] == 1
        seen[server_limit] = [t["processes"] for t in out["timeline"]]
    assert seen[2] == [2, 2, 2, 2, 0, 1, 2, 2, 2] and set(seen[4]) == {2}
    text = CliRunner().invoke(cli, ["simulate", str(conf), *args])
    assert "ServerLimit 4" in text.output and "graceful restarts 1" in text.output
    bad = CliRunner().invoke(cli, ["simulate", str(conf), *args[:-1], "-1"])
    assert bad.exit_code == 2 and "--graceful-at" in bad.output


def test_children_that_exit_while_the_parent_reads_its_configuration_are_replaced_at_once():
    """The parent's loop restarts after it reads its configuration again: a child whose last
    request ended meanwhile is reaped at the loop's first look and replaced one for one (httpd
    event under wrk's 400 keep-alive clients: a new generation 70 ms after the signal in two runs
    of three). A re-read shorter than the requests (the default) leaves every slot held to the
    next pass: no process from 4.1 s, then one a second, as above."""
    section = {**load_directives(None, "event", keep_server_limit=True), **SECTION, "ServerLimit": 2}
    held = simulate("event", section, LOAD, 9, graceful_at=(3.1,))
    at_once = simulate("event", section, LOAD, 9, graceful_at=(3.1,), restart_seconds=1.0)
    assert [t["processes"] for t in held.timeline] == [2, 2, 2, 2, 0, 1, 2, 2, 2]
    assert {t["processes"] for t in at_once.timeline} == {2}  # no pass without its processes
    assert at_once.completed > held.completed and at_once.latency_ms["max"] < held.latency_ms["max"]
