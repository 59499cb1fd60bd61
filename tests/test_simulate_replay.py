"""`simulate --access-log`: an access log replayed (arrivals from %t, service from %D or %T), or
its response times drawn from under a synthetic load."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.errors import UsageError
from apachetune.simulate import simulate
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.sizing import workload as logs
from apachetune.validate.section import load_directives

FORMAT_D = '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D'
START = datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC).timestamp()


def line(offset: float, micros: int | None = None) -> str:
    stamp = datetime.fromtimestamp(START + offset, UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")
    tail = f" {micros}" if micros is not None else ""
    return f'10.0.0.1 - - [{stamp}] "GET /x HTTP/1.1" 200 512 "-" "ua"{tail}\n'


def write_log(tmp_path, lines, name="access.log"):
    path = tmp_path / name
    path.write_text("".join(lines))
    return str(path)


def test_the_log_is_read_in_the_order_requests_were_received(tmp_path):
    # lines are written when a request ends: a long one started earlier comes later
    path = write_log(tmp_path, [line(0, 1000), line(2, 3000), line(1, 2_500_000), "not a log line\n",
                                line(3, None)])
    got = logs.logged_requests(path, FORMAT_D)
    assert got.arrivals == (0.0, 1.0, 2.0, 3.0)
    assert got.durations == (0.001, 2.5, 0.003, None)  # the last line has no %D field
    assert got.span == 3.0 and got.timed == [0.001, 2.5, 0.003]
    assert logs.logged_requests(path, FORMAT_D, seconds=2).arrivals == (0.0, 1.0)
    assert logs.logged_requests(path, "combined").durations == (None, None, None, None)
    seconds_format = FORMAT_D.replace("%D", "%T")
    assert logs.logged_requests(write_log(tmp_path, [line(0, 2)], "t.log"), seconds_format).durations == (2.0,)


def test_a_log_without_requests_or_too_long_is_refused_naming_it(tmp_path, monkeypatch):
    empty = write_log(tmp_path, ["nothing here\n"], "empty.log")
    with pytest.raises(UsageError, match="empty.log: no line with a"):
        logs.logged_requests(empty)
    monkeypatch.setattr(logs, "MAX_REPLAYED", 3)
    many = write_log(tmp_path, [line(i, 10) for i in range(5)], "many.log")
    with pytest.raises(UsageError, match="more than 3 requests; replay a part of it with --seconds"):
        logs.logged_requests(many, FORMAT_D)


def replay_of(log: logs.LoggedRequests, speed: float = 1.0) -> Workload:
    return Workload(ServiceTime.parse("50ms"),
                    replay=tuple((t / speed, d) for t, d in zip(log.arrivals, log.durations, strict=True)),
                    replay_source="test")


def test_unqueued_requests_take_exactly_the_time_logged(tmp_path):
    rng = random.Random(5)
    durations = [rng.randint(1000, 400_000) for _ in range(200)]
    path = write_log(tmp_path, [line(i // 4, d) for i, d in enumerate(durations)])
    log = logs.logged_requests(path, FORMAT_D)
    section = load_directives(None, "event", 400, 25, None)
    result = simulate("event", section, replay_of(log), seconds=200)
    assert result.completed == 200 and not result.errors
    assert sorted(round(x, 9) for x in result.latencies) == sorted(round(d / 1e6, 9) for d in durations)
    # it ends once the last request is answered, not at the horizon given
    assert 49 < result.seconds < 51.5


def test_a_faster_replay_queues_where_the_logged_pace_did_not(tmp_path):
    path = write_log(tmp_path, [line(i / 20, 100_000) for i in range(400)])  # 20 a second, 100 ms each
    log = logs.logged_requests(path, FORMAT_D)
    section = load_directives(None, "prefork", 4, None, None)  # 4 workers: 40 a second at most
    calm = simulate("prefork", section, replay_of(log), seconds=200)
    rushed = simulate("prefork", section, replay_of(log, speed=4), seconds=200)  # 80 a second
    assert calm.completed == rushed.completed == 400
    assert calm.latency_ms["p50"] < 150  # a request of one second waits for the others of it at worst
    assert rushed.latency_ms["p50"] > 1000  # twice the capacity for five seconds: a queue of seconds
    assert calm.seconds == pytest.approx(20, abs=0.5)  # the log's pace: 400 requests at 20 a second
    assert rushed.seconds == pytest.approx(10, rel=0.05)  # the pool's: 400 x 100 ms over 4 workers


def test_cli_replay_and_drawn_service_times(tmp_path):
    rng = random.Random(9)
    lines, t = [], 0.0
    while t < 30:
        t += rng.expovariate(40)
        lines.append(line(t, int(rng.lognormvariate(-3.2, 0.8) * 1e6)))
    path = write_log(tmp_path, lines)
    res = CliRunner().invoke(cli, ["simulate", "--mpm", "worker", "--access-log", path, "--log-format", FORMAT_D,
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["completed"] == len(lines) and "replay of" in doc["workload"] and "service as logged" in doc["workload"]
    logged = logs.logged_requests(path, FORMAT_D)
    mean_logged = sum(logged.timed) / len(logged.timed) * 1000
    assert doc["latency_ms"]["mean"] == pytest.approx(mean_logged, rel=0.02)  # worker's 400 threads: no wait

    res = CliRunner().invoke(cli, ["simulate", "--mpm", "worker", "--rate", "40", "--no-keepalive", "--seconds", "20",
                                   "--access-log", path, "--log-format", FORMAT_D, "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert "as logged (" in doc["workload"] and "Poisson" in doc["workload"]
    assert doc["latency_ms"]["mean"] == pytest.approx(mean_logged, rel=0.15)


@pytest.mark.parametrize("argv, message", [
    (["--speed", "2", "--clients", "5"], "--speed replays an --access-log faster; there is none"),
    (["--access-log", "{log}", "--rate", "5", "--speed", "2"], "there is none to replay"),  # drawn from, not replayed
    (["--access-log", "{log}", "--curve"], "--curve and --plot vary --clients or --rate"),
    (["--access-log", "{log}", "--rate", "5"], "no response times in it (the LogFormat needs %D or %T"),
    (["--access-log", "{empty}"], "no line with a [dd/Mon/yyyy:hh:mm:ss zone] timestamp"),
    (["--access-log", "{missing}"], "No such file or directory"),
])
def test_cli_refuses_a_replay_it_cannot_do_in_one_line(tmp_path, argv, message):
    paths = {"log": write_log(tmp_path, [line(0), line(1)]), "empty": write_log(tmp_path, ["x\n"], "e.log"),
             "missing": str(tmp_path / "nope.log")}
    res = CliRunner().invoke(cli, ["simulate", *[a.format(**paths) for a in argv]])
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output


def test_cli_syn_schedule_moves_the_steps_of_an_overflowing_queue(tmp_path):
    """--syn-schedule on the command line: RFC 1122's 3 s retries put an overflowing queue's
    slow requests past 3 s, where Linux 6.5's 1 s retries bring most of them in before."""
    conf = tmp_path / "q.conf"
    conf.write_text("StartServers 2\nMinSpareServers 2\nMaxSpareServers 2\nServerLimit 2\nMaxRequestWorkers 2\n"
                    "KeepAlive Off\nListenBacklog 1\n")

    def p99(schedule: str) -> float:
        res = CliRunner().invoke(cli, ["simulate", str(conf), "--mpm", "prefork", "--clients", "10",
                                       "--service", "lognormal:371ms:0.05", "--seconds", "120",
                                       "--syn-schedule", schedule, "--format", "json"])
        assert res.exit_code == 0, res.output
        return json.loads(res.output)["latency_ms"]["p99"]

    assert p99("rfc1122") > 1.5 * p99("linux-6.5")
    res = CliRunner().invoke(cli, ["simulate", "--clients", "5", "--syn-schedule", "fast"])
    assert res.exit_code == 2 and "--syn-schedule 'fast': expected machine, linux" in res.output


def test_lines_without_a_timestamp_are_counted_and_said(tmp_path):
    """A log of another format, or damaged, is not silently short of requests: the replay says
    how many lines it skipped (blank lines are not counted)."""
    path = write_log(tmp_path, [line(0, 1000), "garbage\n", "\n", '1.2.3.4 - - [31/Foo/2026:10:00:00 +0000] "GET /"\n',
                                line(1, 2000)])
    assert logs.logged_requests(path, FORMAT_D).skipped == 2
    res = CliRunner().invoke(cli, ["simulate", "--mpm", "event", "--access-log", path, "--log-format", FORMAT_D,
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["completed"] == 2 and "(2 lines without a timestamp skipped)" in doc["workload"], doc["workload"]
    clean = write_log(tmp_path, [line(0, 1000), line(1, 2000)], "clean.log")
    assert logs.logged_requests(clean, FORMAT_D).skipped == 0
    res = CliRunner().invoke(cli, ["simulate", "--mpm", "event", "--access-log", clean, "--log-format", FORMAT_D,
                                   "--format", "json"])
    assert "skipped" not in json.loads(res.output)["workload"]


def test_a_log_without_response_times_says_the_service_time_is_the_options(tmp_path):
    # combined: when each request came, not how long it took; the replay takes --service for all
    path = write_log(tmp_path, [line(i * 0.1) for i in range(20)])
    res = CliRunner().invoke(cli, ["simulate", "--access-log", path, "--service", "20ms"])
    assert res.exit_code == 0, res.output
    assert "service 20 ms (--service: the log has no %D or %T)" in res.output
    res = CliRunner().invoke(cli, ["simulate", "--access-log", write_log(tmp_path, [line(0, 1000)], "d.log"),
                                   "--log-format", FORMAT_D])
    assert res.exit_code == 0 and "service as logged" in res.output and "has no %D" not in res.output


def test_a_log_spanning_weeks_is_refused_at_once_with_what_to_do(tmp_path):
    # a month of a quiet site: a replay of it ran on past a minute (every simulated second costs)
    path = write_log(tmp_path, [line(i * 13_000.0, 5000) for i in range(200)], "month.log")
    res = CliRunner().invoke(cli, ["simulate", "--access-log", path, "--log-format", FORMAT_D])
    assert res.exit_code == 2, res.output
    assert "span 29.9 days, more than the 7 a replay simulates at once" in res.output and "--speed" in res.output
    res = CliRunner().invoke(cli, ["simulate", "--access-log", path, "--log-format", FORMAT_D, "--speed", "100",
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["completed"] == 200
