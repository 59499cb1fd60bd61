"""Measuring a real httpd: plausible per-worker memory for prefork and event (PSS/USS, not RSS)."""

import json
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.sizing.facts import HostFacts, find_httpd, gather, measure_httpd
from httpd_oracle import RunningHttpd, needs_httpd


@needs_httpd
@pytest.mark.httpd
@pytest.mark.parametrize("mpm, section", [
    ("prefork", "StartServers 3\nMinSpareServers 2\nMaxSpareServers 4\nMaxRequestWorkers 8\n"),
    ("event", "StartServers 2\nThreadsPerChild 8\nThreadLimit 8\nServerLimit 4\nMaxRequestWorkers 32\n"
              "MinSpareThreads 8\nMaxSpareThreads 24\n"),
])
def test_measure_running_httpd(tmp_path, mpm, section):
    with RunningHttpd(tmp_path, mpm, section) as httpd:
        for _ in range(20):
            assert httpd.get("/index.html").startswith(b"hello")
        parent = find_httpd(pid=httpd.proc.pid)
        facts = measure_httpd(parent, samples=2, interval=0.2)
        assert facts.mpm == mpm and facts.children
        for child in facts.children:
            assert 0 < child.uss_mib <= child.pss_mib <= child.rss_mib
        if mpm == "prefork":
            assert facts.threads_per_child == 1
            assert 0.1 < facts.per_worker_mib < 50  # a child's PSS
        else:
            assert facts.threads_per_child == 8
            child = facts.children[0]
            assert facts.per_worker_mib < child.pss_mib  # a thread costs less than its process
            assert 0 < facts.per_worker_mib < 5
        # The same measurement through `apachetune size`, replayed from a facts file.
        host = gather(pid=httpd.proc.pid)
        path = tmp_path / "host.json"
        host.save(path)
    again = HostFacts.load(path)
    assert again.httpd.per_worker_mib == host.httpd.per_worker_mib
    result = CliRunner().invoke(cli, ["size", "--facts", str(path), "--format", "json", "--target-mpm", mpm])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    # Just started (and 20 requests): its workers are fresh forks, and the figure is refused.
    assert again.httpd.idle and "started" in again.httpd.idle
    source = data["inputs"]["per_worker_mib"]["source"]
    assert source.startswith("profile ") and "was idle" in source and "--per-worker-mb" in source
    assert data["recommendation"]["mpm"] == mpm
    # The same sample taken from a server that had been serving is used as measured.
    loaded = json.loads(path.read_text())
    loaded["httpd"]["idle"] = None
    path.write_text(json.dumps(loaded))
    result = CliRunner().invoke(cli, ["size", "--facts", str(path), "--format", "json", "--target-mpm", mpm])
    data = json.loads(result.output)
    assert data["inputs"]["per_worker_mib"] == {"value": again.httpd.per_worker_mib, "source": "measured"}


def test_facts_of_this_machine_are_sane():
    # Not looking for httpd: other tests may be starting and stopping theirs right now.
    host = gather(include_httpd=False)
    assert 0 < host.available_mib <= host.total_mib
    assert host.cpus >= 1 and host.httpd is None
    assert psutil.virtual_memory().total // (1024 * 1024) == pytest.approx(host.total_mib, abs=1)


@needs_httpd
def test_two_servers_by_name_are_refused_and_the_configs_pidfile_chooses(tmp_path):
    from apachetune.errors import UsageError
    from apachetune.sizing.session import SizingRequest, run_sizing

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with RunningHttpd(tmp_path / "a", "prefork") as one, RunningHttpd(tmp_path / "b", "prefork") as two:
        with pytest.raises(UsageError, match=r"httpd servers run on this machine .*--pid or --pidfile"):
            find_httpd()
        for server in (one, two):  # the configuration's PidFile names its own server
            session = run_sizing(SizingRequest.from_cli(str(server.conf), None))
            assert session.host.httpd.parent_pid == server.proc.pid


def test_a_server_of_another_configuration_is_not_measured_by_name(tmp_path):
    """Sizing a configuration whose PidFile names no running server must not measure whatever
    httpd runs (a test's, another instance): a server found by name that runs another
    configuration (its -f) is passed over, and the report says which and why."""
    from apachetune.sizing.facts import configuration_of

    assert configuration_of(["apache2", "-f", "/tmp/x/httpd.conf", "-D", "FOREGROUND"], None) == "/tmp/x/httpd.conf"
    assert configuration_of(["httpd", "-d", "/srv/h", "-f", "conf/httpd.conf"], None) == "/srv/h/conf/httpd.conf"
    assert configuration_of(["httpd", "-f/etc/h.conf"], None) == "/etc/h.conf"
    assert configuration_of(["/usr/sbin/apache2", "-k", "start"], "/etc/apache2/apache2.conf") == \
        "/etc/apache2/apache2.conf"


@needs_httpd
def test_sizing_another_configuration_beside_a_running_server_measures_nothing(tmp_path):
    from apachetune.sizing.session import SizingRequest, run_sizing

    (tmp_path / "a").mkdir()
    with RunningHttpd(tmp_path / "a", "prefork") as server:
        sample = Path(__file__).resolve().parents[1] / "fixtures" / "sample" / "apache2.conf"
        other = run_sizing(SizingRequest.from_cli(str(sample), None))
        assert other.host.httpd is None
        assert any(n.startswith("no httpd of this configuration was measured") and f"pid {server.proc.pid} runs "
                   f"{server.conf}" in n for n in other.recommendation.notes), other.recommendation.notes
        own = run_sizing(SizingRequest.from_cli(str(server.conf), None))
        assert own.host.httpd.parent_pid == server.proc.pid
