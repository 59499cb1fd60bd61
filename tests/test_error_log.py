"""Evidence from the error log: each capacity message counted, and a pool that ran out is
sized above where it ran out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.sizing.errorlog import CODES, read_error_log

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "fixtures" / "errorlogs"
SAMPLE = ROOT / "fixtures" / "sample" / "apache2.conf"


@pytest.mark.parametrize("name, counts", [
    ("event-saturated.log", {"AH00484": 2, "AH10159": 1, "AH03490": 1}),
    ("prefork-busy.log", {"AH00162": 1, "AH00161": 1, "AH00159": 1}),
    ("worker-quiet.log", {"AH00287": 1, "AH00286": 1, "AH00288": 1}),
    ("calm.log", {}),
])
def test_each_code_is_counted(name, counts):
    ev = read_error_log(str(LOGS / name))
    assert ev.counts == counts
    assert set(counts) <= CODES


def size(*args):
    r = CliRunner().invoke(cli, ["size", str(SAMPLE), "--no-measure", "--memory", "8G", "--format", "json",
                                 *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_a_pool_that_ran_out_is_sized_above_where_it_ran_out():
    plain = size()
    ran_out = size("--error-log", str(LOGS / "event-saturated.log"))
    current = ran_out["inputs"]["saturated_at"]["value"]
    assert current == 390  # the sample's MaxRequestWorkers 400, as httpd runs it (TPC 30)
    assert ran_out["recommendation"]["max_request_workers"] >= 1.25 * current
    assert ran_out["recommendation"]["max_request_workers"] > plain["recommendation"]["max_request_workers"]
    assert "sized from the error log" in ran_out["recommendation"]["verdict"]
    assert ran_out["error_log"]["counts"]["AH00484"] == 2


def test_a_calm_log_changes_nothing():
    assert size("--error-log", str(LOGS / "calm.log"))["recommendation"] == size()["recommendation"]


def test_the_configurations_error_log_is_read_by_default(tmp_path):
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(SAMPLE.parent, tree)
    main = tree / "apache2.conf"
    shutil.copy(LOGS / "event-saturated.log", tmp_path / "error.log")
    main.write_text(main.read_text() + f"ErrorLog {tmp_path}/error.log\n")
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"total_mib": 8192, "available_mib": 8000, "cpus": 2}))
    r = CliRunner().invoke(cli, ["size", str(main), "--facts", str(facts), "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["error_log"]["path"] == f"{tmp_path}/error.log"
    assert data["inputs"]["saturated_at"]["value"] == 390


def test_a_file_that_is_no_error_log_is_said_to_be_none(tmp_path):
    """An access log given as the error log (an easy slip) finds no capacity message; the report
    says the file does not look like an error log rather than that the pool never ran out."""
    wrong = tmp_path / "access.log"
    wrong.write_text('127.0.0.1 - - [26/Nov/2026:08:00:00 +0000] "GET / HTTP/1.1" 200 12 "-" "curl"\n' * 50)
    out = size("--error-log", str(wrong))
    assert out["error_log"]["is_error_log"] is False and out["error_log"]["lines_read"] == 50
    assert "not an httpd error log" in out["inputs"]["saturated_at"]["source"]
    calm = size("--error-log", str(LOGS / "calm.log"))
    assert calm["error_log"]["is_error_log"] is True
    assert "no capacity message" in calm["inputs"]["saturated_at"]["source"]
    assert size("--error-log", str(wrong))["recommendation"] == calm["recommendation"]
