"""`simulate FILE` and `size --curve` read a tree the way lint does: -d for a ServerRoot that is
not on this machine (a RHEL tree copied elsewhere), -D for <IfDefine>, --root for a copy of
another machine's /. Without them a RHEL tree stopped at "ServerRoot must be a valid directory"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from apachetune.cli import cli

ROOT = Path(__file__).resolve().parents[1]
RHEL = ROOT / "fixtures" / "trees" / "rhel"


def _simulate(*args: str) -> tuple[int, str, dict | None]:
    result = CliRunner().invoke(cli, ["simulate", *args, "--clients", "20", "--seconds", "1", "--format", "json"])
    doc = json.loads(result.stdout) if result.exit_code == 0 else None
    return result.exit_code, result.output, doc


def test_a_rhel_tree_whose_server_root_is_elsewhere_is_read_with_d():
    main = str(RHEL / "conf" / "httpd.conf")
    code, output, _ = _simulate(main)
    assert code == 2 and "ServerRoot must be a valid directory" in output
    # httpd's words, then the path and how to read a tree copied from another machine
    assert "(/etc/httpd is not one on this machine; for a tree from another, -d DIR" in output
    code, output, doc = _simulate("-d", str(RHEL), main)
    assert code == 0, output
    # conf.d/zz-mpm-tuning.conf's event block, through conf.modules.d's LoadModule
    assert doc["mpm"] == "event"
    assert doc["section"]["MaxRequestWorkers"] == 400 and doc["section"]["MaxConnectionsPerChild"] == 10000


def test_define_picks_the_ifdefine_block(tmp_path):
    conf = tmp_path / "httpd.conf"
    conf.write_text("LoadModule mpm_worker_module modules/mod_mpm_worker.so\nThreadsPerChild 10\n"
                    "<IfDefine BIG>\n  MaxRequestWorkers 300\n  ServerLimit 30\n</IfDefine>\n"
                    "<IfDefine !BIG>\n  MaxRequestWorkers 40\n</IfDefine>\n")
    _, _, small = _simulate(str(conf))
    code, output, big = _simulate("-D", "BIG", str(conf))
    assert code == 0, output
    assert small["section"]["MaxRequestWorkers"] == 40 and big["section"]["MaxRequestWorkers"] == 300


def test_root_reads_a_copy_of_another_machines_tree(tmp_path):
    # the copy keeps its absolute ServerRoot, /etc/httpd, under the snapshot's directory
    snapshot = tmp_path / "snapshot"
    shutil.copytree(RHEL, snapshot / "etc" / "httpd", symlinks=True)
    code, output, doc = _simulate("--root", str(snapshot), str(snapshot / "etc" / "httpd" / "conf" / "httpd.conf"))
    assert code == 0, output
    assert doc["section"]["MaxRequestWorkers"] == 400


def test_size_curve_reads_the_tree_with_the_same_options():
    result = CliRunner().invoke(cli, ["size", "-d", str(RHEL), str(RHEL / "conf" / "httpd.conf"), "--rate", "50",
                                      "--curve"])
    assert result.exit_code == 0, result.output
    assert "before (current, event)" in result.output


DEBIAN = ROOT / "fixtures" / "trees" / "debian"


def _sections(*args: str) -> dict[str, dict]:
    result = CliRunner().invoke(cli, ["simulate", *args, "--compare", "--clients", "20", "--seconds", "1",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    return {r["mpm"]: r["section"] for r in json.loads(result.stdout)}


def test_another_mpm_reads_the_tree_as_switched_to_it_not_with_the_loaded_mpms_blocks():
    # Debian's tree loads event: prefork is what `a2dismod mpm_event; a2enmod mpm_prefork` gives,
    # mods-available/mpm_prefork.conf (StartServers 5), not event's block (StartServers 2)
    sections = _sections(str(DEBIAN / "apache2.conf"))
    assert sections["prefork"]["StartServers"] == 5 and sections["prefork"]["MaxSpareServers"] == 10
    assert sections["event"]["StartServers"] == 2 and sections["event"]["MaxRequestWorkers"] == 150
    # RHEL's LoadModule line: event's block (MaxConnectionsPerChild 10000) is not worker's or prefork's
    sections = _sections("-d", str(RHEL), str(RHEL / "conf" / "httpd.conf"))
    assert sections["event"]["MaxConnectionsPerChild"] == 10000
    assert sections["worker"]["MaxConnectionsPerChild"] == 0 and sections["worker"]["MaxRequestWorkers"] == 400
    assert sections["prefork"]["MaxRequestWorkers"] == 150 and sections["prefork"]["MaxConnectionsPerChild"] == 0
