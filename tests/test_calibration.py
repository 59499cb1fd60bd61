"""mpmd's calibration where it runs: ConnectionCPU in the server, the kept calibration and its
identity, what validate runs mpmd with (calibrated, measured on first use, or the defaults with a
warning), and `apachetune mpmd calibrate / show`."""

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys

import psutil
import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.validate import calibration, generator_cpu
from apachetune.validate.calibration import Calibration, server_cpu_seconds
from apachetune.validate.generator_cpu import GeneratorCpu
from apachetune.validate.mpmd_server import MpmdServer
from httpd_oracle import needs_httpd


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A private cache for the calibration, and validate's automatic one not turned off."""
    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("APACHETUNE_CALIBRATION", raising=False)
    return tmp_path / "cache"


def _sample(mpm="worker", request=7, connection=11):
    return Calibration(mpm, request, connection, 30.0, 23.0, 52.0, 34.0, 32.0, 54.0, 3, 2.0, "2026-11-23")


def _get(port: int, keepalive: bool, n: int) -> None:
    """n requests: on one connection (keep-alive) or a connection each."""
    conn = "keep-alive" if keepalive else "close"
    req = f"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: {conn}\r\n\r\n".encode()
    sock = None
    for _ in range(n):
        if sock is None:
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(req)
        data = b""
        while b"hello from mpmd" not in data:
            chunk = sock.recv(4096)
            assert chunk, "connection closed before the response"
            data += chunk
        if not keepalive:
            sock.close()
            sock = None
    if sock is not None:
        sock.close()


def test_connection_cpu_is_spent_once_per_connection():
    """ConnectionCPU stands for httpd's per-connection work: 8 requests on 8 connections spend
    it 8 times, 8 keep-alive requests on one connection once. CPU time, not wall time: the
    server spends it on its own thread clock, so a busy machine does not change the count."""
    spent = {}
    for keepalive in (False, True):
        with MpmdServer("prefork", {"StartServers": 1, "MinSpareServers": 1, "MaxSpareServers": 2,
                                    "RequestCPU": 0, "ConnectionCPU": 50000}) as server:
            before = server_cpu_seconds(server.proc.pid)
            _get(server.port, keepalive, 8)
            spent[keepalive] = server_cpu_seconds(server.proc.pid) - before
    tick = 0.02  # CPU times are counted in clock ticks (10 ms), once in the child, once reaped
    assert spent[False] >= 8 * 0.050 - tick, spent
    assert 0.050 - tick <= spent[True] < 3 * 0.050, spent


def test_kept_calibration_holds_only_for_the_machine_it_was_measured_on(own_cache, monkeypatch):
    assert calibration.stored() == {}
    calibration.store(_sample("worker"))
    calibration.store(_sample("event", 9, 13))
    kept = calibration.stored()
    assert kept["worker"].directives() == {"RequestCPU": 7, "ConnectionCPU": 11}
    assert kept["event"].directives() == {"RequestCPU": 9, "ConnectionCPU": 13}
    entry = own_cache / "calibration" / calibration.CACHE_NAME
    assert entry.stat().st_mode & 0o077 == 0
    # Another CPU, kernel, httpd or mpmd build: nothing carries over.
    for key, value in (("cpu", "another CPU"), ("kernel", "0.0"), ("httpd", "2.4.29"), ("mpmd", "0" * 12),
                       ("allowed", "1 under a quota of 0.5")):
        changed = {**calibration.machine(), key: value}
        monkeypatch.setattr(calibration, "machine", lambda changed=changed: changed)
        assert calibration.stored() == {}, key
    monkeypatch.undo()
    monkeypatch.setenv("APACHETUNE_CACHE", str(own_cache))
    assert set(calibration.stored()) == {"worker", "event"}
    entry.write_text("{not json")
    assert calibration.stored() == {}  # damaged: measured again, never trusted
    entry.write_text(json.dumps({"machine": calibration.machine(), "mpms": {"worker": {"mpm": "worker"}}}))
    assert calibration.stored() == {}


def test_simulate_charges_the_load_generators_measured_here_else_the_lab_s(own_cache, monkeypatch):
    """ab's and wrk's CPU a request: this machine's when calibrate measured them here (for a
    client named or assumed), else the lab machine's, saying which; another machine's or a
    damaged entry is never used, nor any with the calibration turned off."""
    def client():
        r = CliRunner().invoke(cli, ["simulate", "--mpm", "event", "--clients", "5", "--service", "1ms",
                                     "--seconds", "1", "--format", "json"])
        assert r.exit_code == 0, r.output
        costs = json.loads(r.stdout)["cpu_costs"]
        return costs["client_request_us"], costs["client_connection_us"], costs["client_source"]

    assert client() == (22, 45, f"assumed: wrk on loopback; {generator_cpu.LAB_SOURCE}")
    generator_cpu.store(GeneratorCpu("wrk", 13.2, 69.0, {"10": [14.4, 80.6], "100": [12.1, 83.9]}, 3, 1.0,
                                     "2026-12-06", 0.0))
    assert client() == (13.2, 69.0, "assumed: wrk on loopback; measured on this machine, 2026-12-06")
    assert generator_cpu.figures()["ab"] == (21.0, 43.0, generator_cpu.LAB_SOURCE)  # not measured: the lab's
    text = " ".join(CliRunner().invoke(cli, ["mpmd", "show"]).output.split())
    assert "wrk: 13.2 µs (+69.0)" in text, text
    monkeypatch.setenv("APACHETUNE_CALIBRATION", "off")
    assert client()[:2] == (22, 45)
    monkeypatch.delenv("APACHETUNE_CALIBRATION")
    entry = own_cache / "calibration" / generator_cpu.CACHE_NAME
    assert entry.stat().st_mode & 0o077 == 0
    kept = json.loads(entry.read_text())
    entry.write_text(json.dumps({**kept, "machine": {**kept["machine"], "cpu": "another CPU"}}))
    assert client()[:2] == (22, 45)
    entry.write_text("{not json")
    assert client()[:2] == (22, 45)


def test_a_load_generator_that_fails_or_prints_no_count_is_a_clear_error(monkeypatch):
    """What ab or wrk say when they fail reaches the operator; a run with no request count is
    never read as free CPU."""
    from apachetune.errors import UsageError

    for argv, said in (([sys.executable, "-c", "import sys; sys.exit('apr_socket_connect(): refused')"], "refused"),
                       ([sys.executable, "-c", "print('Complete requests: 0')"], "failed")):
        monkeypatch.setattr(generator_cpu, "_command", lambda *a, argv=argv: argv)
        with pytest.raises(UsageError, match=said):
            generator_cpu.run_once("ab", "http://127.0.0.1:9/", 10, True, 1)
    assert generator_cpu.requests_completed("wrk", "Running 1s test\n  12345 requests in 1.00s, 3.1MB read\n") == 12345
    assert generator_cpu.requests_completed("ab", "Complete requests:      30000\n") == 30000


@pytest.mark.skipif(not shutil.which("taskset") or len(os.sched_getaffinity(0)) < 2, reason="needs taskset and 2 CPUs")
def test_a_process_on_fewer_cpus_is_another_machine_to_the_calibration():
    """Under `taskset -c N` (or a container's cpuset or quota) the kept calibration is not
    used: it is measured again there."""
    code = "import json; from apachetune.validate.calibration import machine; print(json.dumps(machine()))"
    first = str(min(os.sched_getaffinity(0)))
    narrowed = json.loads(subprocess.run(["taskset", "-c", first, sys.executable, "-c", code], capture_output=True,
                                         text=True, timeout=60, check=True).stdout)
    here = calibration.machine()
    assert narrowed["allowed"].startswith("1") and narrowed != here
    assert {k: v for k, v in narrowed.items() if k != "allowed"} == {k: v for k, v in here.items() if k != "allowed"}


def test_simulate_takes_httpd_s_cpu_from_the_machine_s_calibration_else_the_lab_s(own_cache):
    """httpd's own CPU in a simulation: this machine's calibration (httpd's keep-alive figure, and
    what its close case adds) when one is kept, else the lab machine's, saying which."""
    def costs():
        r = CliRunner().invoke(cli, ["simulate", "--mpm", "worker", "--clients", "5", "--service", "1ms",
                                     "--seconds", "1", "--format", "json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)["cpu_costs"]

    lab = costs()
    (n0, r0, c0), (n1, r1, c1) = calibration.ASSUMED_HTTPD_US["worker"]
    assert (lab["httpd_request_us"], lab["httpd_connection_us"]) == pytest.approx(((r0 + r1) / 2, (c0 + c1) / 2), abs=0.05)
    assert lab["httpd_by_connections"] == [{"connections": n0, "request_us": r0, "connection_us": c0},
                                           {"connections": n1, "request_us": r1, "connection_us": c1}]
    assert lab["source"].startswith("assumed") and lab["client_source"].startswith("assumed: wrk on loopback; ")
    calibration.store(_sample("worker"))  # httpd 30 µs a keep-alive request, 52 with a connection each
    here = costs()
    assert (here["httpd_request_us"], here["httpd_connection_us"]) == (30.0, 22.0)
    assert "measured on this machine (2026-11-23" in here["source"]
    # httpd measured unpinned too (a newer calibration): those are the simulation's figures
    calibration.store(dataclasses.replace(_sample("worker"), unpinned_keepalive_us=41.0, unpinned_close_us=104.0))
    unpinned = costs()
    assert (unpinned["httpd_request_us"], unpinned["httpd_connection_us"]) == (41.0, 63.0)
    # and by clients (newer still): the ends the simulation follows with its open connections
    calibration.store(dataclasses.replace(_sample("worker"), unpinned_keepalive_us=55.0, unpinned_close_us=102.0,
                                          unpinned_by_clients={"300": [61.0, 111.0], "10": [49.0, 93.0]}))
    by_clients = costs()
    assert (by_clients["httpd_request_us"], by_clients["httpd_connection_us"]) == (55.0, 47.0)
    assert by_clients["httpd_by_connections"] == [{"connections": 10, "request_us": 49.0, "connection_us": 44.0},
                                                  {"connections": 300, "request_us": 61.0, "connection_us": 50.0}]
    assert "httpd_connection_by_pool" not in lab and "httpd_connection_by_pool" not in by_clients  # worker: any pool


def test_prefork_s_connection_figure_on_a_small_pool_comes_from_the_calibration_else_the_lab(own_cache):
    """prefork's new connection costs less on a small pool (docs/simulate.md): the simulation
    takes both ends from this machine's calibration when it measured the small pool (what a
    connection adds there, and on the full pool at the same clients), else the lab's."""
    def pool():
        r = CliRunner().invoke(cli, ["simulate", "--mpm", "prefork", "--clients", "5", "--service", "1ms",
                                     "--seconds", "1", "--format", "json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)["cpu_costs"].get("httpd_connection_by_pool")

    (w0, c0), (w1, c1) = calibration.ASSUMED_POOL_US["prefork"]
    assert pool() == [{"workers": w0, "connection_us": c0}, {"workers": w1, "connection_us": c1}]
    older = dataclasses.replace(_sample("prefork"), unpinned_by_clients={"300": [61.0, 111.0], "10": [49.0, 93.0]})
    calibration.store(older)  # measured here before the small pool was: the lab's ratio of the two on its full pool
    assert pool() == [{"workers": w0, "connection_us": round(44.0 * c0 / c1, 1)}, {"workers": w1, "connection_us": 44.0}]
    calibration.store(dataclasses.replace(older, unpinned_small_pool={"workers": 12, "clients": 10,
                                                                      "keepalive_us": 48.0, "close_us": 70.0}))
    assert pool() == [{"workers": 12, "connection_us": 22.0}, {"workers": 320, "connection_us": 44.0}]
    r = CliRunner().invoke(cli, ["mpmd", "show"])
    assert "on a pool of 12 (where a new connection costs less): 48.0 / 70.0 at 10 clients" in " ".join(r.output.split())


def test_worker_s_and_event_s_connection_figure_follows_their_pool_once_measured_on_the_stock_one(own_cache):
    """A connection cost httpd event more on 16 processes than on Debian's stock 2 (2-core
    EPYC): calibrate measures worker and event on 2 x 25 threads too, and the simulation follows
    the workers started between the two; measured before that (or nowhere), any pool's the same."""
    def pool(mpm):
        r = CliRunner().invoke(cli, ["simulate", "--mpm", mpm, "--clients", "5", "--service", "1ms",
                                     "--seconds", "1", "--format", "json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)["cpu_costs"].get("httpd_connection_by_pool")

    assert calibration.pool_workers(calibration.SMALL_POOLS["event"]) == 50
    assert calibration.pool_workers(calibration.SECTIONS["event"]) == 400
    older = dataclasses.replace(_sample("event"), unpinned_by_clients={"300": [46.0, 108.0], "10": [43.0, 115.0]})
    calibration.store(older)
    assert pool("event") is None
    calibration.store(dataclasses.replace(older, unpinned_small_pool={"workers": 50, "clients": 10,
                                                                      "keepalive_us": 44.0, "close_us": 80.0}))
    assert pool("event") == [{"workers": 50, "connection_us": 36.0}, {"workers": 400, "connection_us": 72.0}]
    assert pool("worker") is None  # not measured here


def test_mpmd_show_prints_httpd_s_figures_at_each_end_of_the_clients(own_cache):
    calibration.store(dataclasses.replace(_sample("worker"), unpinned_keepalive_us=55.0, unpinned_close_us=102.0,
                                          unpinned_by_clients={"300": [61.0, 111.0], "10": [49.0, 93.0]}))
    calibration.store(_sample("event"))  # kept by an older version: no such line
    r = CliRunner().invoke(cli, ["mpmd", "show"])
    assert r.exit_code == 0, r.output
    assert "worker: 49.0 / 93.0 at 10 clients, 61.0 / 111.0 at 300 clients" in " ".join(r.output.split())
    assert "event:" not in r.output


def test_without_httpd_validate_runs_the_defaults_and_says_so(own_cache, monkeypatch):
    monkeypatch.setattr(calibration.httpd, "binary", lambda: None)
    directives, note = calibration.for_mpm("prefork")
    assert directives == {"RequestCPU": calibration.DEFAULT_REQUEST_US, "ConnectionCPU": 0}
    assert "not calibrated on this machine" in note and "no httpd" in note


def test_validate_reports_the_calibration_mpmd_ran_with(own_cache):
    calibration.store(_sample("worker", 3, 4))
    result = CliRunner().invoke(cli, ["validate", "--mpm", "worker", "--plan", "static", "--max-request-workers",
                                      "4", "--threads-per-child", "2", "--duration", "1", "--format", "json"])
    data = json.loads(result.output)
    assert any("RequestCPU 3 µs, ConnectionCPU 4 µs" in n for n in data["notes"]), data["notes"]
    assert "RequestCPU" not in data["directives"]  # the section judged is the user's, unchanged


@needs_httpd
@pytest.mark.httpd
def test_calibrate_measures_httpd_against_mpmd_and_keeps_it(own_cache, monkeypatch):
    runner = CliRunner()
    result = runner.invoke(cli, ["mpmd", "calibrate", "--mpm", "prefork", "--rounds", "1", "--format", "json"])
    assert result.exit_code == 0, result.output
    (measured,) = json.loads(result.output)["mpms"]
    # Real measurements: every server spent some CPU per request, and not absurdly much.
    for key in ("httpd_keepalive_us", "httpd_close_us", "mpmd_keepalive_us", "mpmd_close_us", "checked_keepalive_us",
                "unpinned_keepalive_us", "unpinned_close_us"):
        assert 1 < measured[key] < 10_000, (key, measured)
    assert measured["request_us"] >= 0 and measured["connection_us"] >= 0
    assert 0 <= measured["background_busy"] <= 1  # other work beside it, watched before and after
    # httpd unpinned at each end of the clients, for the simulation (keep-alive, close)
    assert sorted(measured["unpinned_by_clients"], key=int) == ["10", "300"], measured
    assert all(1 < us < 10_000 for pair in measured["unpinned_by_clients"].values() for us in pair), measured
    # and prefork on a small pool at the few clients' end (a new connection costs less there)
    small = measured["unpinned_small_pool"]
    assert (small["workers"], small["clients"]) == (12, 10), small
    assert 1 < small["keepalive_us"] < small["close_us"] < 10_000, small
    # RequestCPU: the keep-alive difference, less what spending it overshot in the check.
    first = max(0.0, measured["httpd_keepalive_us"] - measured["mpmd_keepalive_us"])
    over = measured["checked_keepalive_us"] - measured["httpd_keepalive_us"]
    assert abs(measured["request_us"] - max(0, first - over)) <= 1, measured
    shown = json.loads(runner.invoke(cli, ["mpmd", "show", "--format", "json"]).output)
    assert shown["mpms"] == [measured] and shown["machine"] == calibration.machine()
    # and each load generator installed, against httpd event at 10 and 100 clients: a new
    # connection costs the client more than a keep-alive request (the connect and the close)
    generators = {g["name"]: g for g in json.loads(result.output)["generators"]}
    assert set(generators) == set(generator_cpu.installed()), generators
    for g in generators.values():
        assert sorted(g["by_clients"], key=int) == ["10", "100"], g
        assert all(1 < ka < close < 10_000 for ka, close in g["by_clients"].values()), g
        assert 1 < g["request_us"] < 1_000 and g["connection_us"] > 0, g
    assert {g["name"]: g for g in shown["generators"]} == generators
    if "wrk" in generators:  # simulate's assumed client is then this machine's wrk
        r = runner.invoke(cli, ["simulate", "--mpm", "event", "--clients", "5", "--service", "1ms", "--seconds", "1",
                                "--format", "json"])
        costs = json.loads(r.stdout)["cpu_costs"]
        assert (costs["client_request_us"], costs["client_connection_us"]) == (
            generators["wrk"]["request_us"], generators["wrk"]["connection_us"]), costs
    # validate then runs mpmd with it, and leaves no server behind. (Held busy now: a
    # calibration measured beside the suite's other worker is flagged, and a quiet moment here
    # would measure it again, as it should; that path is tested above.)
    monkeypatch.setattr(calibration, "background_busy", lambda seconds=0.5: 1.0)
    directives, note = calibration.for_mpm("prefork")
    assert directives == {"RequestCPU": measured["request_us"], "ConnectionCPU": measured["connection_us"]}
    assert "calibrated on this machine" in note and "measured now" not in note
    assert not [p for p in psutil.Process().children(recursive=True) if p.name() in ("apache2", "httpd", "mpmd")]


@needs_httpd
@pytest.mark.httpd
def test_validate_calibrates_on_first_use_when_httpd_is_there(own_cache, monkeypatch):
    monkeypatch.setattr(calibration, "ROUNDS", 1)  # one round: the test measures the path, not the machine
    # (and not the other work beside it: a suite beside CPU hogs would flag it, and a share that
    # fell below the threshold between the two calls would measure it again)
    monkeypatch.setattr(calibration, "background_busy", lambda seconds=0.5: 0.0)
    directives, note = calibration.for_mpm("event")
    assert "measured now" in note
    assert calibration.stored()["event"].directives() == directives
    small = calibration.stored()["event"].unpinned_small_pool  # and on Debian's stock pool, for simulate
    assert small is not None and (small["workers"], small["clients"]) == (50, 10), small
    assert 1 < small["keepalive_us"] < small["close_us"] < 10_000, small
    assert calibration.for_mpm("event") == (directives, calibration.stored()["event"].describe())


def test_background_busy_counts_other_work_and_steal_once(monkeypatch):
    """The share of the CPUs busy while calibration waits: user, system, interrupts and a host's
    steal are busy, idle and iowait are not, and guest time (already in user) is not counted twice."""
    from collections import namedtuple

    Times = namedtuple("Times", "user nice system idle iowait irq softirq steal guest guest_nice")
    samples = iter([Times(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), Times(30, 0, 10, 45, 5, 0, 0, 10, 20, 0)])
    monkeypatch.setattr(calibration.psutil, "cpu_times", lambda: next(samples))
    monkeypatch.setattr(calibration.time, "sleep", lambda s: None)
    assert calibration.background_busy() == pytest.approx(0.5)  # (30 + 10 + 10) / (50 + 50)


def test_background_busy_sees_processes_spinning_on_every_cpu():
    import os
    import subprocess
    import sys

    cpus = os.cpu_count() or 1
    if cpus > 16:
        pytest.skip("spins a process a CPU")
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cpus)]
    try:
        import time

        time.sleep(0.2)  # (started and spinning)
        assert calibration.background_busy() >= 0.5
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def test_a_calibration_measured_beside_other_work_says_so_and_is_measured_again_when_quiet(own_cache, monkeypatch):
    """Event's keep-alive request read 87 µs measured beside a loaded suite and 63 quiet: such a
    calibration is used (with a caveat in every report) while the machine stays busy, and
    measured again by validate's first run on a quiet machine."""
    busy_one = dataclasses.replace(_sample("worker", 9, 5), background_busy=0.6)
    calibration.store(busy_one)
    monkeypatch.setattr(calibration.httpd, "binary", lambda: "/usr/sbin/apache2")
    monkeypatch.setattr(calibration, "measure", lambda mpm, **kw: dataclasses.replace(
        _sample(mpm, 4, 2), background_busy=0.05))
    # still busy: the kept one, with its caveat
    monkeypatch.setattr(calibration, "background_busy", lambda seconds=0.5: 0.7)
    directives, note = calibration.for_mpm("worker")
    assert directives == {"RequestCPU": 9, "ConnectionCPU": 5}
    assert "60% of the CPUs were busy with other work" in note and "mpmd calibrate" in note
    assert "60% of the CPUs" in calibration.httpd_cpu("worker")[1]  # simulate says it too
    shown = CliRunner().invoke(cli, ["mpmd", "show"])
    assert "warning: worker was measured while 60% of the CPUs were busy" in " ".join(shown.output.split())
    # quiet now: measured again and kept
    monkeypatch.setattr(calibration, "background_busy", lambda seconds=0.5: 0.1)
    directives, note = calibration.for_mpm("worker")
    assert directives == {"RequestCPU": 4, "ConnectionCPU": 2} and "measured again now" in note
    assert calibration.stored()["worker"].background_busy == 0.05 and not calibration.stored()["worker"].busy
    # a quiet calibration is used without looking at the machine
    monkeypatch.setattr(calibration, "background_busy", lambda seconds=0.5: pytest.fail("looked"))
    assert calibration.for_mpm("worker") == ({"RequestCPU": 4, "ConnectionCPU": 2},
                                             calibration.stored()["worker"].describe())
    assert "busy" not in calibration.stored()["worker"].describe()


def test_calibrate_without_httpd_is_a_clear_error(own_cache, monkeypatch):
    from apachetune import httpd

    monkeypatch.setattr(httpd, "binary", lambda: None)
    result = CliRunner().invoke(cli, ["mpmd", "calibrate"])
    assert result.exit_code != 0 and "needs Apache httpd" in result.output


def test_calibrate_measures_the_installed_load_generators_unless_told_not_to(own_cache, monkeypatch):
    """--no-load-generators: httpd's calibration alone, the generators kept as they were."""
    from apachetune import httpd

    measured = GeneratorCpu("wrk", 13.2, 69.0, {"10": [14.4, 80.6], "100": [12.1, 83.9]}, 1, 1.0, "2026-12-06", 0.0)
    asked = []
    monkeypatch.setattr(httpd, "binary", lambda: "/usr/sbin/apache2")
    monkeypatch.setattr(calibration, "measure", lambda mpm, seconds, rounds: _sample(mpm))
    monkeypatch.setattr(generator_cpu, "installed", lambda: ["wrk"])
    monkeypatch.setattr(generator_cpu, "measure", lambda name, seconds, rounds: asked.append(name) or measured)
    args = ["mpmd", "calibrate", "--mpm", "worker", "--rounds", "1", "--format", "json"]
    r = CliRunner().invoke(cli, [*args, "--no-load-generators"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["generators"] == [] and asked == [] and generator_cpu.stored() == {}
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert [g["name"] for g in json.loads(r.output)["generators"]] == ["wrk"] and asked == ["wrk"]
    assert generator_cpu.stored() == {"wrk": measured}


def test_server_cpu_counts_every_threads_time_on_cpu_ended_threads_included():
    """The CPU a server spent, read from its process CPU clock: a thread that burned 0.3 s of
    CPU (its own clock) and has ended is counted, without 10 ms tick rounding."""
    import subprocess
    import sys

    code = ("import threading, time\n"
            "def burn():\n"
            "    while time.thread_time() < 0.3: pass\n"
            "t = threading.Thread(target=burn); t.start(); t.join()\n"
            "print('done', flush=True); time.sleep(30)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "done"
        used = calibration.server_cpu_seconds(child.pid)
        assert calibration.process_cpu_clock(child.pid) is not None
        assert 0.3 <= used < 0.6  # the burner's 0.3 s plus the interpreter's start
    finally:
        child.kill()
        child.wait()
