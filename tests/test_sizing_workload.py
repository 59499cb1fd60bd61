"""The load read from an access log or from mod_status."""

import json
import threading
import time

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.errors import UsageError
from apachetune.sizing.workload import from_access_log, from_status
from httpd_oracle import RunningHttpd, needs_httpd


def write_log(path, per_minute, with_duration=True):
    lines = []
    for minute, count in enumerate(per_minute):
        for i in range(count):
            stamp = f"22/Nov/2026:10:{minute:02d}:{i % 60:02d} +0000"
            d = f" {20000 + 1000 * (i % 3)}" if with_duration else ""
            lines.append(f'127.0.0.1 - - [{stamp}] "GET /x HTTP/1.1" 200 512 "-" "curl/8"{d}\n')
    path.write_text("".join(lines))


def test_access_log_peak_minute_and_response_time(tmp_path):
    log = tmp_path / "access.log"
    write_log(log, [60, 600, 120])
    sample = from_access_log(str(log), '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D')
    assert sample.requests == 780
    assert sample.peak_rate == pytest.approx(10.0)  # 600 in the busiest minute
    assert sample.service_time == pytest.approx(0.021, rel=0.01)  # mean of 20, 21, 22 ms
    plain = from_access_log(str(log), "combined")
    assert plain.service_time is None and plain.peak_rate == pytest.approx(10.0)


def test_access_log_errors(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("not a log line\n")
    with pytest.raises(UsageError, match="no line with a"):
        from_access_log(str(empty))


def test_size_uses_the_log(tmp_path):
    log = tmp_path / "access.log"
    write_log(log, [600, 1200])
    result = CliRunner().invoke(cli, ["size", "--no-measure", "--memory", "4096", "--access-log", str(log),
                                      "--log-format", '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D',
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["inputs"]["rate"]["value"] == pytest.approx(20.0)
    assert data["inputs"]["rate"]["source"].startswith("measured (access log")
    assert data["inputs"]["service_time"]["value"] == pytest.approx(0.021, rel=0.01)
    assert data["recommendation"]["load_workers"] >= 1


@needs_httpd
@pytest.mark.httpd
def test_mod_status_sample(tmp_path):
    from httpd_oracle import MODULES_DIR

    section = (f"LoadModule status_module {MODULES_DIR}/mod_status.so\nExtendedStatus On\n"
               "<Location /server-status>\n  SetHandler server-status\n</Location>\n")
    with RunningHttpd(tmp_path, "event", section) as httpd:
        stop = time.monotonic() + 4
        sent = [0]

        def load():
            while time.monotonic() < stop:
                httpd.get("/index.html")
                sent[0] += 1
                time.sleep(0.01)

        t = threading.Thread(target=load)
        t.start()
        sample = from_status(f"http://127.0.0.1:{httpd.port}/server-status", seconds=3, interval=0.5)
        t.join()
    assert sample.requests > 10
    assert 5 < sample.peak_rate < 500  # the client sends at most ~100 requests a second
    assert sample.service_time is None or sample.service_time < 1.0
