"""Host facts for lint (--measure, --facts): read from a proc tree, never from the real machine
in unit tests; the rules stay silent without them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.lint.host import read_host

ROOT = Path(__file__).resolve().parents[1]


def proc_tree(tmp_path: Path) -> Path:
    proc = tmp_path / "proc"
    (proc / "sys" / "net" / "core").mkdir(parents=True)
    (proc / "sys" / "net" / "core" / "somaxconn").write_text("128\n")
    (proc / "self").mkdir()
    (proc / "self" / "mounts").write_text("/dev/vda / ext4 rw 0 0\nsrv:/export /srv/nfs nfs4 rw 0 0\n"
                                          "srv:/x /srv/with\\040space cifs rw 0 0\n")
    (proc / "4242").mkdir()
    (proc / "4242" / "limits").write_text(
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max open files            1024                 1048576              files     \n")
    (proc / "meminfo").write_text("MemTotal:  2048000 kB\nMemAvailable:  1048576 kB\n")
    return proc


def test_read_host_from_a_proc_tree(tmp_path):
    host = read_host(proc_tree(tmp_path), httpd_pid=4242)
    assert host.somaxconn == 128 and host.nofile == 1024 and host.available_mib == 1024
    assert host.fstype("/srv/nfs/www/index.html") == "nfs4" and host.fstype("/var/www") == "ext4"
    assert host.fstype("/srv/with space/a") == "cifs"


def test_rules_need_host_facts():
    conf = ROOT / "fixtures" / "rules" / "AT609" / "bad.conf"
    plain = CliRunner().invoke(cli, ["lint", str(conf), "--format", "json"])
    with_facts = CliRunner().invoke(cli, ["lint", str(conf), "--format", "json", "--facts",
                                          str(ROOT / "fixtures" / "rules" / "AT609" / "host.json")])
    rules = lambda r: {f["rule"] for f in json.loads(r.output)["findings"]}  # noqa: E731
    assert not rules(plain) & {"AT609", "AT610", "AT611", "AT612"}
    assert {"AT609", "AT610"} <= rules(with_facts)


def test_bad_facts_files_are_usage_errors(tmp_path):
    for text in ("not json", "[1, 2]", '{"limits": {"mounts": 5}}'):
        path = tmp_path / "facts.json"
        path.write_text(text)
        r = CliRunner().invoke(cli, ["lint", str(ROOT / "fixtures" / "sample" / "apache2.conf"), "--facts", str(path)])
        assert r.exit_code == 2 and "facts" in r.output and "Traceback" not in r.output, r.output
    r = CliRunner().invoke(cli, ["lint", str(ROOT / "fixtures" / "sample" / "apache2.conf"), "--facts", "/dev/zero"])
    assert r.exit_code == 2 and "not a regular file" in r.output


def test_measure_on_this_host_runs():
    r = CliRunner().invoke(cli, ["lint", str(ROOT / "fixtures" / "sample" / "apache2.conf"), "--measure",
                                 "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    assert "findings" in json.loads(r.stdout)


def test_measure_beside_several_httpd_servers_measures_the_host_and_says_why_not_the_server(monkeypatch):
    """Other servers running (another test's, another instance) are not a reason to refuse a lint:
    the host's limits are still measured, no server is picked by name, and a note says so."""
    from apachetune.sizing import facts

    def several(*_a, **_k):
        raise facts.SeveralHttpd("2 httpd servers run on this machine (...)", "pid 1: apache2 -f a; pid 2: apache2 -f b")

    monkeypatch.setattr(facts, "find_httpd", several)
    r = CliRunner().invoke(cli, ["lint", str(ROOT / "fixtures" / "sample" / "apache2.conf"), "--measure",
                                 "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    assert "findings" in json.loads(r.stdout)
    assert "note: several httpd servers run (pid 1: apache2 -f a; pid 2: apache2 -f b)" in r.stderr
    assert "memory per worker not measured" in r.stderr
