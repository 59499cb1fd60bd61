"""validate / compare: fast versions (seconds each) on mpmd and, when installed, httpd."""

import json

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.errors import UsageError
from apachetune.mpmd import MpmdServer
from apachetune.validate.load import closed_loop, open_loop
from httpd_oracle import needs_httpd

FAST = ["--max-request-workers", "4", "--threads-per-child", "2", "--service-time-ms", "50", "--duration", "1",
        "--format", "json"]


def run(*args):
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, json.loads(result.output)


def verdicts(data):
    return {v["name"]: v for v in data["verdicts"]}


@pytest.mark.parametrize("mpm, pinned", [("worker", True), ("event", False)])
def test_validate_on_mpmd(mpm, pinned):
    code, data = run("validate", "--mpm", mpm, "--plan", "sweep", "--plan", "keepalive", *FAST)
    v = verdicts(data)
    sat = v["saturation throughput"]
    assert sat["predicted"] == 80.0  # 4 workers / 50 ms
    assert sat["passed"], sat
    assert v["idle keep-alive clients pin workers"]["measured"].startswith("pinned" if pinned else "served")
    assert v["idle keep-alive clients pin workers"]["passed"]
    assert code == 0
    sweep = [p for p in data["points"] if p["plan"] == "sweep"]
    assert [p["x"] for p in sweep] == [2, 4, 6, 8]
    assert sweep[0]["throughput_rps"] < sweep[1]["throughput_rps"]  # below the knee it scales
    # The sampler's own status request needs a worker too, so it sees at most MRW - 1 others busy.
    assert data["samples"] and max(s["busy"] for s in data["samples"]) >= 3


@needs_httpd
@pytest.mark.httpd
@pytest.mark.parametrize("mpm, pinned", [("prefork", True), ("event", False)])
def test_validate_on_httpd(mpm, pinned):
    code, data = run("validate", "--mpm", mpm, "--target", "httpd", "--plan", "sweep", "--plan", "keepalive", *FAST)
    v = verdicts(data)
    assert v["saturation throughput"]["passed"], v["saturation throughput"]
    assert v["idle keep-alive clients pin workers"]["passed"], v["idle keep-alive clients pin workers"]


def test_compare_runs_all_three_mpms():
    result = CliRunner().invoke(cli, ["compare", "--plan", "keepalive", "--max-request-workers", "2",
                                      "--threads-per-child", "2", "--duration", "1", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {"prefork", "worker", "event"}
    pins = {m: verdicts(d)["idle keep-alive clients pin workers"]["measured"] for m, d in data.items()}
    assert pins["prefork"] == "pinned" and pins["worker"] == "pinned" and pins["event"].startswith("served")


def test_report_directory(tmp_path):
    result = CliRunner().invoke(cli, ["validate", "--mpm", "event", "--plan", "keepalive", "--max-request-workers",
                                      "2", "--threads-per-child", "2", "--duration", "1", "--report",
                                      str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "report.json").read_text())["mpm"] == "event"
    assert "| idle keep-alive clients pin workers |" in (tmp_path / "r" / "report.md").read_text()


def test_load_generators_are_bounded_and_loopback_only():
    with pytest.raises(UsageError):
        closed_loop("10.0.0.1", 80, "/", 1, 0.1)
    with MpmdServer("event", {"StartServers": 1, "MaxRequestWorkers": 8, "ThreadsPerChild": 4}) as srv:
        r = open_loop("127.0.0.1", srv.port, "/index.html", 100, 1.0, seed=7)
        assert 60 <= r.scheduled <= 140  # Poisson arrivals at 100/s for 1 s
        assert r.ok == r.scheduled and not r.errors
        c = closed_loop("127.0.0.1", srv.port, "/index.html", 4, 0.5)
        assert c.ok > 50 and c.percentile(99) is not None


def test_before_after_judges_the_tuned_config(tmp_path):
    small = tmp_path / "current.conf"
    small.write_text("ThreadsPerChild 2\nMaxRequestWorkers 2\nServerLimit 1\n")
    big = tmp_path / "tuned.conf"
    big.write_text("ThreadsPerChild 4\nMaxRequestWorkers 8\nServerLimit 2\n")
    args = ["--service-time-ms", "50", "--duration", "1", "--format", "json"]
    code, data = run("validate", "--mpm", "event", "--config", str(small), "--after", str(big), *args)
    v = verdicts(data)
    assert code == 0 and v["tuned p99 no worse than current"]["passed"]
    assert v["throughput before/after"]["measured"] > 2 * v["throughput before/after"]["predicted"]
    # The other way round the "tuned" section is worse: the verdict fails and so does the exit code.
    code, data = run("validate", "--mpm", "event", "--config", str(big), "--after", str(small), *args)
    assert code == 1 and verdicts(data)["tuned p99 no worse than current"]["passed"] is False


@pytest.mark.skipif(__import__("shutil").which("wrk") is None, reason="wrk not installed")
def test_sweep_with_wrk():
    code, data = run("validate", "--mpm", "event", "--plan", "sweep", "--wrk", *FAST)
    assert {p.get("driver") for p in data["points"]} == {"wrk"}
    assert verdicts(data)["saturation throughput"]["passed"]
