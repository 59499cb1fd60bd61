"""`validate --plan simulate`: apachetune simulate judged against the server itself. The same
closed loop (1.5x MaxRequestWorkers clients, a connection per request; alone and beside idle
keep-alive clients holding half the workers) and open loop (Poisson
at 70% of capacity, exponential service) run for real and in the simulator; throughput must
agree within 10%, and p99 must fall within the spread of p99s that 20 simulated runs as long as
the measured one give, widened by 25% + 5 ms (at least one service time when it is fixed:
latencies then come in rounds). A small section (10 workers, 50 ms) puts both
loads at the knee, where the MPM and the queue decide the latency."""

import json
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from httpd_oracle import needs_httpd

SECTION = ["--max-request-workers", "10", "--threads-per-child", "5", "--service-time-ms", "50"]


def run_plan(target: str, mpm: str, extra: tuple[str, ...] = ()) -> dict:
    result = CliRunner().invoke(cli, ["validate", "--plan", "simulate", "--target", target, "--mpm", mpm,
                                      *SECTION, *extra, "--format", "json"])
    data = json.loads(result.output)
    verdicts = [v for v in data["verdicts"] if v["name"].startswith("simulated ")]
    # the spawn ramp, then throughput, p99 and errors of each case; the last case of every MPM
    # restarts gracefully under load
    assert len(verdicts) == 13 + 3 * bool(extra), data["verdicts"]
    assert sum(v["name"].startswith("simulated errors: ") for v in verdicts) == 4 + bool(extra)
    failed = [v for v in verdicts if v["passed"] is False]
    assert not failed and result.exit_code == 0, (failed, data["notes"])
    # a case missed twice beside a busy neighbour, slower than simulated, is not judged, and says so
    for v in verdicts:
        if v["passed"] is None:
            assert any(n.startswith(f"{v['name']} not judged: other processes took") for n in data["notes"]), v
    return data


@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_simulation_matches_mpmd(mpm, tmp_path):
    extra, check_replay = replayed_on_event(mpm, tmp_path)
    data = run_plan("mpmd", mpm, extra)
    check_replay(data)
    closed = next(v for v in data["verdicts"] if v["name"].startswith("simulated throughput: closed"))
    # The simulation's service time is what a lone request took here: 50 ms slept, plus a little
    # more on a busy machine (54.7 ms beside two CPU hogs); the pool's bound follows it.
    lone_ms = float(re.search(r"with service ([0-9.]+) ms \(a lone request here\)", closed["detail"]).group(1))
    assert 50 <= lone_ms < 75, closed["detail"]
    capacity = 10_000 / lone_ms  # 10 workers
    assert closed["predicted"] == pytest.approx(capacity, rel=0.05)
    crowded = [v for v in data["verdicts"] if v["name"].startswith("simulated throughput: closed loop")
               and "idle keep-alive" in v["name"]]
    ramp = next(v for v in data["verdicts"] if v["name"] == "simulated spawn ramp: processes")
    # prefork's 5 children grow by 1, 2, then to MaxRequestWorkers 10; worker and event start full
    assert ramp["measured"] == ramp["predicted"] == ("5 -> 6 -> 8 -> 10" if mpm == "prefork" else "2")
    # (a case measured twice simulates its second attempt with the lone request measured again:
    # its own figure, in its detail: 51.7 ms there where the first case had 55.4 under load)
    crowded_capacity = 10_000 / float(re.search(r"with service ([0-9.]+) ms", crowded[0]["detail"]).group(1))
    if mpm == "event":  # the load's first burst busies every worker: the parked crowd is closed
        assert crowded[0]["predicted"] == pytest.approx(crowded_capacity, rel=0.05)
    else:  # 5 idle keep-alive clients hold 5 of prefork's and worker's 10 workers
        assert crowded[0]["predicted"] == pytest.approx(crowded_capacity / 2, rel=0.05)
    # The restart meets the pool grown full (ServerLimit = MaxRequestWorkers / ThreadsPerChild):
    # the stopping processes hold every slot, the new ones start at the pass after they are
    # reaped, two seconds on. (Read as it was, one process of two was once seen in CI: its free
    # slot took the new generation at once, no gap; and a prefork pool read at 9 of 10 met the
    # signal at 10.)
    p99 = next(v for v in data["verdicts"] if v["name"].startswith("simulated p99: closed loop")
               and "graceful restart" in v["name"])
    pool = int(re.search(r"the pool of (\d+) processes", p99["detail"]).group(1))
    assert pool == (10 if mpm == "prefork" else 2), p99
    assert p99["predicted"] > 1800, p99
    assert p99["measured"] > 1800 or p99["passed"] is None, p99
    assert re.search(r"signalled at [0-9.]+ s", p99["detail"]), p99


@needs_httpd
@pytest.mark.httpd
@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_simulation_matches_httpd(mpm, tmp_path):
    extra, check_replay = replayed_on_event(mpm, tmp_path)
    check_replay(run_plan("httpd", mpm, extra))


LOG_FORMAT = '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D'


def burst_log(path) -> list[float]:
    """15 s of an application's log: 40 requests a second, 250 for two seconds (10 workers of
    about 64 ms serve 156: a queue of seconds), lognormal response times. Their times, seconds."""
    rng = random.Random(12)
    start = datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC).timestamp()
    lines, times, now = [], [], 0.0
    while now < 15:
        now += rng.expovariate(250 if 6 <= now < 8 else 40)
        took = rng.lognormvariate(-3.0, 0.7)
        stamp = datetime.fromtimestamp(start + now, UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")
        lines.append(f'10.0.0.1 - - [{stamp}] "GET /x HTTP/1.1" 200 512 "-" "ua" {int(took * 1e6)}\n')
        times.append(took)
    path.write_text("".join(lines))
    return times


def replayed_on_event(mpm: str, tmp_path) -> tuple[tuple[str, ...], Callable[[dict], None]]:
    """On event, the plan also replays an access log (burst_log), and the check of its verdict:
    the log's requests at their logged seconds for their logged times, on the server and in the
    simulation (same sample path), agree in throughput and p99, and the p99 is the queue the
    burst builds, not the log's own tail. Measured on httpd 2.4.71 event: 1,286 ms simulated,
    1,251 measured; the logged p99 is 270 ms. (Its own run of the plan cost 46-60 s a target.)"""
    if mpm != "event":
        return (), lambda data: None
    log = tmp_path / "access.log"
    times = sorted(burst_log(log))

    def check(data: dict) -> None:
        p99 = next(v for v in data["verdicts"] if v["name"].startswith("simulated p99: replay of"))
        assert p99["passed"] and p99["predicted"] > 3 * times[int(0.99 * len(times))] * 1000

    return ("--access-log", str(log), "--log-format", LOG_FORMAT), check


def test_validate_refuses_an_access_log_without_the_simulate_plan(tmp_path):
    log = tmp_path / "access.log"
    burst_log(log)
    result = CliRunner().invoke(cli, ["validate", "--mpm", "event", "--plan", "sweep", "--access-log", str(log)])
    assert result.exit_code == 2 and "--access-log is replayed by the simulate plan" in result.output


def test_p99_is_judged_against_the_spread_of_runs_as_long_as_the_measured_one():
    from apachetune.simulate.workload import ServiceTime, Workload
    from apachetune.validate.plans import p99_band, p99_within

    section = {"ServerLimit": 2, "ThreadsPerChild": 5, "ThreadLimit": 5, "MaxRequestWorkers": 10,
               "StartServers": 2, "MinSpareThreads": 10, "MaxSpareThreads": 20}
    low, high = p99_band("worker", section, Workload(ServiceTime("exp", 0.05), rate=140, keepalive=False), 10, 2)
    assert 150 < low < high < 400  # a 10 s run's p99 is a sample: the runs differ
    assert p99_within(high * 1.2, (low, high), 0.0) and not p99_within(high * 1.3 + 6, (low, high), 0.0)
    assert not p99_within(low * 0.7 - 6, (low, high), 0.0)
    # Fixed service: every run gives the same rounds (each length within 0.1%); one round more is
    # within, two are not.
    fixed = p99_band("worker", section, Workload(ServiceTime("fixed", 0.05), clients=15, keepalive=False), 3, 0)
    assert fixed[1] - fixed[0] < 1
    assert p99_within(fixed[1] + 50, fixed, 50.0) and not p99_within(fixed[1] + 100, fixed, 50.0)


class _Others:
    """OthersCpu with a share the test chooses: the real one reads the machine, which another
    test's load makes busy."""

    share = 0.0
    wall = busy = server = own = children = 0.0  # the window's CPU seconds (own: this process's)

    def __init__(self, *_a):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _judged(results, others_share=0.0, lone=None, own=0.0, errors=None):
    """The simulate plan's judgement of one closed-loop case whose real runs give `results` in
    turn, while other processes take `others_share` of the CPUs."""
    from types import SimpleNamespace
    from unittest import mock

    from apachetune.simulate.workload import ServiceTime, Workload
    from apachetune.validate.load import LoadResult
    from apachetune.validate.plans import _judge_simulated
    from apachetune.validate.results import ValidationReport

    runs = iter(results)
    report = ValidationReport(setup=None)
    status = {"BusyWorkers": "0", "IdleWorkers": "10"}  # the pool read before each run: 2 processes of 5
    run = SimpleNamespace(setup=SimpleNamespace(mpm="worker", threads_per_child=5), report=report,
                          target=SimpleNamespace(status=lambda: status, pids=lambda: []), model_version=None)
    section = {"ServerLimit": 2, "ThreadsPerChild": 5, "ThreadLimit": 5, "MaxRequestWorkers": 10,
               "StartServers": 2, "MinSpareThreads": 10, "MaxSpareThreads": 20}

    def measure():
        latency = next(runs)
        return LoadResult(latencies=[0.05] * 300 + [latency] * 300, elapsed=3.0, errors=dict(errors or {}))

    others = type("Others", (_Others,), {"share": others_share, "wall": 3.0, "own": own})
    with mock.patch("apachetune.validate.plans.OthersCpu", others):
        _judge_simulated(run, "closed", measure, Workload(ServiceTime("fixed", 0.05), clients=15, keepalive=False),
                         3.0, section, 0.05, lone=lone)
    return report


def test_a_failed_case_is_measured_once_more_and_the_first_run_told():
    report = _judged([0.4, 0.1])  # a stalled first run (p99 400 ms against 100), then a clean one
    assert all(v.passed for v in report.verdicts) and len(report.verdicts) == 3
    assert any("measured again" in n and "p99 400.0 against" in n for n in report.notes), report.notes
    # A server that disagrees every time fails: measuring again does not hide it.
    report = _judged([0.4, 0.4])
    assert [v.passed for v in report.verdicts] == [True, False, True]
    # ... unless others took the CPUs meanwhile: a longer tail than simulated is then not judged
    report = _judged([0.4, 0.4], others_share=0.5)
    assert [v.passed for v in report.verdicts] == [True, None, True]
    assert any(n.startswith("simulated p99: closed not judged: other processes took 50%") for n in report.notes)
    # ... or this process (the Python load client) kept a CPU busy: it set the pace, at once
    report = _judged([0.4, 0.4], own=2.9)
    assert [v.passed for v in report.verdicts] == [True, None, True]
    assert any("the load client (this process, one thread) used 0.97 CPUs" in n for n in report.notes), report.notes
    assert not any("measured again" in n for n in report.notes)
    # The lone request (the simulation's service time) is measured again for the second attempt:
    # one measured while another process had the CPUs made every case look too slow
    again = []
    report = _judged([0.4, 0.1], lone=lambda: again.append(1) or 0.04)
    assert again == [1] and "service 40.0 ms" in report.verdicts[0].detail, report.verdicts[0].detail


def test_spawn_ramp_steps_ignore_a_round_of_forks_read_half_done():
    from apachetune.validate.plans import _steps

    assert _steps([5, 6, 6, 6, 6, 7, 8, 8, 8, 8, 10, 10], min_run=2) == [5, 6, 8, 10]
    assert _steps([5, 6, 7, 8, 10], min_run=1) == [5, 6, 7, 8, 10]  # the simulation: one sample a second
    assert _steps([5, 6, 6, 6, 7, 7, 7, 10, 10], min_run=2) == [5, 6, 7, 10]  # a real step of 1 is a step


def test_a_pool_beyond_the_asyncio_client_is_driven_by_wrk():
    """The plan's closed loops go to wrk when the pool would answer more than the asyncio client
    drives (mpmd's default worker section, 400 workers of 50 ms, asks 8,000 a second: the client
    drove 1,466 and the case was not judged), and stay with the client below (the grid's 10
    workers of 50 ms ask 200), or when told --no-wrk."""
    from types import SimpleNamespace

    from apachetune.validate import plans
    from apachetune.validate.results import ValidationReport, ValidationSetup

    def run(mrw: int, use_wrk: bool | None = None) -> plans.PlanRun:
        setup = ValidationSetup("mpmd", "worker", {"ThreadsPerChild": 25}, mrw, 50, 1, use_wrk=use_wrk)
        return plans.PlanRun(setup, SimpleNamespace(), ValidationReport(setup), lambda _m: None)

    wrk = plans.wrk_available()
    assert plans._wrk_drives(run(400), 600, 0.050) is wrk
    assert not plans._wrk_drives(run(400, use_wrk=False), 600, 0.050)
    assert not plans._wrk_drives(run(10), 15, 0.050)
    # what the pool answers, not the clients asking: 2,000 clients on 10 workers ask 200 a second
    assert not plans._wrk_drives(run(10), 2000, 0.050)
    assert plans._wrk_drives(run(10), 15, 0.005) is wrk  # 10 workers of 5 ms: 2,000 a second


@pytest.mark.skipif(__import__("shutil").which("wrk") is None, reason="wrk not installed")
def test_a_graceful_restart_under_wrk_signals_on_time_and_counts_what_wrk_counts():
    """wrk's clients on mpmd worker, the server signalled (SIGUSR1) half a second in: a new
    generation of processes serves after it, the signal's moment is told, and the run reads as
    a LoadResult (wrk's requests, its percentiles, its errors under this client's names)."""
    from apachetune.validate import plans
    from apachetune.validate.load import SummaryResult
    from apachetune.validate.results import ValidationReport, ValidationSetup
    from apachetune.validate.targets import MpmdTarget

    directives = {"StartServers": 2, "ServerLimit": 2, "ThreadsPerChild": 5, "MaxRequestWorkers": 10,
                  "MinSpareThreads": 5, "MaxSpareThreads": 10, "KeepAliveTimeout": 5}
    setup = ValidationSetup("mpmd", "worker", directives, 10, 20, 1)
    with MpmdTarget("worker", directives) as target:
        run = plans.PlanRun(setup, target, ValidationReport(setup), lambda _m: None)
        before = set(target.pids()[1:])
        restart = plans.GracefulRestart(run, 0.5, 10, setup.app_path, 2.0, by_wrk=True)
        result = restart.measure()
        # the old generation's slots take the new one at the parent's pass after they are reaped
        for _ in range(100):
            after = set(target.pids()[1:])
            if after - before:
                break
            __import__("time").sleep(0.1)
    assert isinstance(result, SummaryResult)
    assert restart.fired_at is not None and 0.5 <= restart.fired_at < 1.0, restart.fired_at
    assert "wrk's clients, not seen" in restart.told()
    assert after and not after & before, (before, after)  # every child of the old generation gone
    # 10 clients on 10 workers of 20 ms: about 500 a second, less the restart's gap
    assert 50 < result.ok < 1000 and result.throughput == pytest.approx(result.ok / result.elapsed)
    p50, p99 = result.percentile(50), result.percentile(99)
    assert p50 is not None and p99 is not None and 0.019 <= p50 <= p99, (p50, p99)
    assert set(result.errors) <= {"refused", "reset", "timeout", "5xx"}, result.errors
    assert result.to_json()["latency_ms"]["p99"] == pytest.approx(p99 * 1000, abs=0.01)


def test_a_restart_waits_for_requests_due_after_the_parent_s_re_read_and_says_whether_children_held():
    """A child that ends its request while the parent reads its configuration again is replaced
    at once: mpmd's re-read takes 10 ms, so the signal waits until every request is due more
    than that (and a margin) from now; a margin of 5 ms alone once let mpmd prefork's children
    replace themselves (116.2 req/s measured where 59.1 was simulated held). Only then, and only
    on a server whose re-read is known, is the held outcome the one judged."""
    import threading
    import time
    from types import SimpleNamespace

    from apachetune.validate import plans

    def restart(reread_s, by_wrk=False):
        run = SimpleNamespace(service_s=1.0, target=SimpleNamespace(reread_s=reread_s))  # (1 s: no race here)
        return plans.GracefulRestart(run, -plans.MID_REQUEST_WAIT_S + 0.05, 2, "/", 1.0, by_wrk=by_wrk)

    mpmd, httpd = restart(0.010), restart(None)
    now = time.monotonic()
    # sent 988 ms ago: due in 12 ms, within mpmd's re-read and its margin; it gives up (at 50 ms)
    assert mpmd._wait_mid_request([now - 0.988, now - 0.5], now, threading.Event())
    assert not mpmd.mid_request and not mpmd.held
    assert "no moment with every request half-way" in (setattr(mpmd, "fired_at", 1.0) or mpmd.told())
    now = time.monotonic()
    assert mpmd._wait_mid_request([now - 0.5, now - 0.2], now, threading.Event())  # due in 500 ms and more
    assert mpmd.mid_request and mpmd.held
    now = time.monotonic()
    assert httpd._wait_mid_request([now - 0.5, now - 0.2], now, threading.Event())
    assert httpd.mid_request and not httpd.held  # how long httpd re-reads is not known
    stopped = threading.Event()
    stopped.set()
    assert not restart(0.010)._wait_mid_request([None, None], time.monotonic(), stopped)  # the run ended


def test_a_pool_that_grows_during_a_short_case_is_judged_over_the_phase_of_the_parent_s_passes():
    """1 process of 4 running, 30 clients beside 5 idle keep-alive ones for 3 s on worker: the
    pool grows at the parent's passes, a second apart, whose phase against the run is chance.
    With the first pass a second in the simulation serves 139 req/s, at once 229 (each drained as
    the Python client drains its requests in flight: 133 and 227 cut at 3 s): a run at 227 passes
    (it failed against the one phase), one at 400 does not, and the detail gives the range."""
    from types import SimpleNamespace
    from unittest import mock

    from apachetune.simulate.workload import ServiceTime, Workload
    from apachetune.validate.load import LoadResult
    from apachetune.validate.plans import _judge_simulated
    from apachetune.validate.results import ValidationReport

    section = {"ServerLimit": 4, "ThreadsPerChild": 5, "ThreadLimit": 5, "MaxRequestWorkers": 20,
               "StartServers": 1, "MinSpareThreads": 5, "MaxSpareThreads": 20, "KeepAliveTimeout": 5}
    workload = Workload(ServiceTime("fixed", 0.05), clients=30, keepalive=False, crowd=5, crowd_returns=False,
                        crowd_service=0.001)

    def judged(served: int) -> list:
        report = ValidationReport(setup=None)
        run = SimpleNamespace(setup=SimpleNamespace(mpm="worker", threads_per_child=5, directives=section), mrw=20,
                              model_version=None,
                              report=report, target=SimpleNamespace(status=lambda: {"IdleWorkers": "5"},
                                                                    pids=lambda: []))
        with mock.patch("apachetune.validate.plans.OthersCpu", _Others):
            _judge_simulated(run, "crowd", lambda: LoadResult(latencies=[0.1] * (served - 8) + [0.3] * 8,
                                                              elapsed=3.0),
                             workload, 3.0, section, 0.05)
        return report.verdicts

    throughput, p99, errors = judged(680)
    assert throughput.predicted == pytest.approx(138.7, abs=1) and throughput.passed, throughput
    assert "first pass 0.05 s to 1 s in, 138.7-229.1 req/s" in throughput.detail, throughput.detail
    assert p99.passed, p99  # 300 ms: the early phase's tail, outside the late one's (1,295 ms)
    assert errors.passed and errors.measured == 0, errors  # a crowd that does not come back: no error
    assert judged(1200)[0].passed is False


def test_event_restarted_at_once_under_wrk_is_also_simulated_with_wrk_s_turnaround():
    """httpd event's default section (16 x 25), 400 wrk keep-alive clients, restarted 1 s in:
    when the old children are replaced at once, three new processes meet 400 clients, and the
    ones waiting in the accept queue get in only as event closes keep-alive connections for want
    of an idle worker: httpd 2.4.71 measured p99 941-1,455 ms (three runs), where clients that
    ask again at once give 56. The judgement also takes that outcome with wrk's turnaround and
    the listener's latencies; worker, which closes nothing, does not need it."""
    from types import SimpleNamespace

    from apachetune.simulate import simulate
    from apachetune.simulate.workload import ServiceTime, Workload
    from apachetune.validate.plans import _left_to_chance, p99_band
    from apachetune.validate.section import load_directives

    restarting = {"graceful_at": (1.0,), "restart_start_servers": 3, "drain": False}
    workload = Workload(ServiceTime("fixed", 0.0515), clients=400, timed_from_handshake=True)
    bands = {}
    for mpm in ("event", "worker"):
        section = {**load_directives(None, mpm, 400, 25), "StartServers": 16}
        run = SimpleNamespace(setup=SimpleNamespace(mpm=mpm), model_version=None)
        held = simulate(mpm, section, workload, 3.0, seed=7, **restarting)
        band = p99_band(mpm, section, workload, 3.0, 0.0, True, **restarting)  # as wrk prints them
        low, high, bands[mpm], said, errors = _left_to_chance(run, section, workload, held, band, 3.0, 3.0, 0.0,
                                                              restarting, SimpleNamespace(by_wrk=True, held=False), 0.0515,
                                                              True)
        assert low == pytest.approx(2667, rel=0.02) and high == pytest.approx(3742, rel=0.02), (mpm, low, high)
        assert ("wrk's turnaround" in said) == (mpm == "event"), said
        # wrk on this machine preempts event's workers (client_first): httpd's defaults measured
        # 786-1,002 read errors in 3 s held (9.8-12.5%); worker closes nothing
        resets = [e.get("reset", 0.0) for e in errors]
        assert (min(resets), max(resets) > 8 and max(resets) < 15) == (0.0, True) if mpm == "event" else \
            max(resets) == 0, (mpm, errors)
    assert bands["worker"][0] < 100 and bands["event"][0] < 100
    assert 900 < bands["event"][1] < 1600 and bands["event"][1] > bands["worker"][1] + 300, bands


def test_errors_are_judged_by_kind_within_two_points_of_what_the_simulation_gives():
    """The issue's "errors of the right kind within 2 points": each kind as a share of the
    requests, against the range of the outcomes the simulation leaves to chance."""
    from apachetune.validate.plans import error_shares, error_slack, errors_within

    assert error_shares({"reset": 903, "timeout": 0}, 7859) == pytest.approx({"reset": 10.306}, abs=0.001)
    assert error_shares({}, 0) == {}
    # httpd event's defaults under wrk, a graceful restart: 10.3% reset, the outcomes 0-11.3%
    assert errors_within({"reset": 10.3}, [{}, {"reset": 9.5}, {"reset": 11.27}])
    assert errors_within({"reset": 1.5}, [{}])  # within 2 points of none
    assert not errors_within({"timeout": 3.0}, [{}, {"reset": 9.5}])  # a kind the simulation never gives
    assert not errors_within({}, [{"reset": 5.0}, {"reset": 6.0}])  # errors the server did not give
    # a short run cannot tell 2 points: 5 requests of its own are allowed instead
    assert error_slack(1000) == 2.0 and error_slack(125) == 4.0 and error_slack(0) == 2.0
    assert errors_within({"reset": 4.0}, [{}], error_slack(125)) and not errors_within({"reset": 4.0}, [{}])
    # in a case: 60 timeouts in 660 requests fail it (measured again, the same), 6 do not
    failing = _judged([0.1, 0.1], errors={"timeout": 60})
    assert [v.passed for v in failing.verdicts] == [True, True, False]
    errors = failing.verdicts[2]
    assert errors.name == "simulated errors: closed" and errors.measured == pytest.approx(9.09, abs=0.01)
    assert "measured timeout 9.09%" in errors.detail and errors.unit == "% of requests"
    assert [v.passed for v in _judged([0.1, 0.1], errors={"reset": 6}).verdicts] == [True, True, True]


def test_the_plan_simulates_the_release_it_runs_against(monkeypatch):
    """Against httpd the simulation follows the installed release's rules (an RHEL 8 2.4.37's
    event closes parked connections over its limit where 2.4.71 makes newcomers wait); against
    mpmd, 2.4.71's. The plan simulated 2.4.71 whatever httpd it measured."""
    from types import SimpleNamespace

    from apachetune import httpd
    from apachetune.simulate.workload import ServiceTime, Workload
    from apachetune.validate.plans import PlanRun, p99_band
    from apachetune.validate.section import load_directives

    monkeypatch.setattr(httpd, "version", lambda: "2.4.37")
    assert PlanRun(SimpleNamespace(target="httpd"), None, None, None).model_version == "2.4.37"
    assert PlanRun(SimpleNamespace(target="mpmd"), None, None, None).model_version is None
    # and the band's runs take it: event's keep-alive clients pausing past its limit differ
    section = load_directives(None, "event", 20, 5)
    work = Workload(ServiceTime("fixed", 0.05), clients=75, think=0.2)
    assert p99_band("event", section, work, 3.0, 0.0, version="2.4.37") != p99_band("event", section, work, 3.0, 0.0)
