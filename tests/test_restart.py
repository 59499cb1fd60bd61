"""What a graceful restart keeps: ServerLimit headroom in every recommendation, and a word when
an edit takes a full restart — checked against a real httpd's graceful restart."""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.mpm.restart import needs_full_restart, restart_headroom
from apachetune.sizing.plan import Given, build_inputs
from apachetune.sizing.recommend import recommend
from httpd_oracle import RunningHttpd, needs_httpd

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mpm", ["worker", "event"])
def test_threaded_sections_keep_server_limit_headroom_and_lint_agrees(tmp_path, mpm):
    ins, _ = build_inputs(Given(memory_mib=8192, rate=400, service_time_ms=100, cpus=8), None, None)
    values = recommend(ins, mpm).values()
    processes = values["MaxRequestWorkers"] // values["ThreadsPerChild"]
    if mpm == "event":
        assert values["ServerLimit"] == processes + restart_headroom(mpm, processes) > processes
    else:  # worker uses no slot beyond MaxRequestWorkers / ThreadsPerChild in a restart: none kept
        assert values["ServerLimit"] == processes and restart_headroom(mpm, processes) == 0
    conf = tmp_path / "mpm.conf"
    conf.write_text("".join(f"{k} {v}\n" for k, v in values.items() if k not in
                            ("KeepAlive", "KeepAliveTimeout", "MaxKeepAliveRequests", "Timeout")))
    r = CliRunner().invoke(cli, ["lint", str(conf), "--mpm", mpm, "--module", "reqtimeout", "--rule", "AT201"])
    assert r.exit_code == 0, r.output  # AT201 does not call the headroom waste


def test_notes_name_what_a_graceful_restart_keeps():
    notes = needs_full_restart("event", {"ServerLimit": 16, "ThreadLimit": 64},
                               {"ServerLimit": 10, "ThreadLimit": 64})
    assert len(notes) == 1 and "AH00501" in notes[0] and "ServerLimit 16 -> 10" in notes[0]
    assert needs_full_restart("prefork", {"ServerLimit": 256}, {"ServerLimit": 256}) == []


def test_generate_says_when_a_full_restart_is_needed(tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(ROOT / "fixtures" / "sample", tree)
    r = CliRunner().invoke(cli, ["generate", str(tree / "apache2.conf"), "--in-place", "--diff", "--no-measure",
                                 "--memory", "4G", "--rate", "300", "--service-time-ms", "50"])
    assert "takes a full restart" in r.output and "AH00501" in r.output


@needs_httpd
def test_a_real_graceful_restart_keeps_server_limit_as_the_note_says(tmp_path):
    """httpd itself: ServerLimit changed, graceful restart: AH00501 in the error log."""
    section = "ServerLimit 4\nThreadsPerChild 4\nThreadLimit 4\nMaxRequestWorkers 16\n"
    with RunningHttpd(tmp_path, "event", section) as server:
        server.conf.write_text(server.conf.read_text().replace("ServerLimit 4", "ServerLimit 6"))
        server.proc.send_signal(signal.SIGUSR1)  # apachectl graceful
        log = tmp_path / "error.log"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "AH00501" not in log.read_text():
            time.sleep(0.2)
        text = log.read_text()
    [note] = needs_full_restart("event", {"ServerLimit": 4}, {"ServerLimit": 6})
    assert "AH00501" in text and "changing ServerLimit to 6 from original value of 4" in text
    assert "changing ServerLimit to 6 from original value of 4 not allowed during restart" in note
