"""Finding the main configuration file when FILE is omitted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from apachetune import httpd
from apachetune.config.locate import KNOWN_MAIN_FILES, find_main_file, from_httpd_v

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path, layout", KNOWN_MAIN_FILES)
def test_each_layouts_usual_place(tmp_path, path, layout):
    f = tmp_path / path.lstrip("/")
    f.parent.mkdir(parents=True)
    f.write_text("ServerName x\n")
    assert find_main_file(str(tmp_path)) == (str(f), f"the usual place on {layout}")


def test_the_first_layout_wins_and_nothing_is_none(tmp_path):
    assert find_main_file(str(tmp_path)) is None
    for path, _ in KNOWN_MAIN_FILES[:2]:
        f = tmp_path / path.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("")
    assert find_main_file(str(tmp_path))[0].endswith("etc/apache2/apache2.conf")


@pytest.mark.skipif(httpd.binary() is None or not Path("/etc/apache2/apache2.conf").exists(),
                    reason="needs Debian's apache2 and its tree")
def test_httpd_v_names_the_main_file_and_lint_uses_it(tmp_path):
    assert from_httpd_v() == "/etc/apache2/apache2.conf"
    r = subprocess.run([sys.executable, "-m", "apachetune", "lint", "--format", "json"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=120)
    assert "apachetune: using /etc/apache2/apache2.conf (from `apache2 -V`)" in r.stderr
    assert r.returncode in (0, 1) and r.stdout.lstrip().startswith("{")


def test_no_file_anywhere_is_a_usage_error(monkeypatch):
    from click.testing import CliRunner

    from apachetune.cli import cli
    from apachetune.config import locate

    monkeypatch.setattr(locate, "find_main_file", lambda root="/": None)
    r = CliRunner().invoke(cli, ["lint"])
    assert r.exit_code == 2 and "no FILE given and no main configuration found" in r.output
