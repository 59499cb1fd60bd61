"""generate's workflow: --diff/--check on FILE alone, --check says what it would change, and a
section memory cannot carry is refused unless --allow-short."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return CliRunner().invoke(cli, [*args])


def debian(tmp_path: Path) -> Path:
    root = tmp_path / "debian"
    shutil.copytree(ROOT / "fixtures" / "trees" / "debian", root, symlinks=True)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_diff_and_check_on_file_alone_show_the_in_place_edit_and_write_nothing(tmp_path):
    root = debian(tmp_path)
    before = snapshot(root)
    common = [str(root / "apache2.conf"), "--server-root", str(root), "--no-measure", "--rate", "100"]
    diff = run("generate", *common, "--diff")
    assert diff.exit_code == 0, diff.output + diff.stderr
    assert "+MaxRequestWorkers" in diff.output and "mpm_event.conf" in diff.output
    check = run("generate", *common, "--check")
    assert check.exit_code == 1
    assert "change(s) needed" in check.stderr and "MaxRequestWorkers 150 ->" in check.stderr
    assert snapshot(root) == before


def test_neither_output_nor_in_place_nor_diff_is_a_usage_error(tmp_path):
    root = debian(tmp_path)
    r = run("generate", str(root / "apache2.conf"), "--server-root", str(root), "--no-measure")
    assert r.exit_code == 2 and "-o FILE" in r.stderr


def test_memory_short_is_refused_unless_allow_short(tmp_path):
    out = tmp_path / "mpm.conf"
    args = ["generate", "-o", str(out), "--no-measure", "--rate", "3000", "--service-time-ms", "100",
            "--memory", "600", "--per-worker-mb", "40", "--target-mpm", "prefork", "--no-httpd-check"]
    r = run(*args)
    assert r.exit_code == 1 and "refused: memory cannot carry the load" in r.stderr
    assert not out.exists()
    r = run(*args, "--allow-short")
    assert r.exit_code == 0, r.stderr
    assert "warning: memory cannot carry the load" in r.stderr and out.exists()


@pytest.mark.parametrize("command", ["size", "generate"])
@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_mpm_names_the_servers_mpm_without_a_file_too(command, mpm, tmp_path):
    """--mpm means the server's MPM in every command: with no configuration to read it from,
    the section is for that MPM (it was an event section whatever --mpm said)."""
    out = tmp_path / "mpm.conf"
    args = [command, "--mpm", mpm, "--no-measure", "--memory", "4096", "--rate", "50", "--per-worker-mb", "8"]
    args += ["-o", str(out), "--no-httpd-check"] if command == "generate" else ["--format", "json"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    if command == "generate":
        assert f"<IfModule mpm_{mpm}_module>" in out.read_text()
        assert out.read_text().count("<IfModule mpm_") == 1
    else:
        rec = json.loads(r.output)["recommendation"]
        assert rec["mpm"] == mpm and f"given with --mpm ({mpm})" in rec["mpm_reasons"][0]
        assert (len(rec["mpm_reasons"]) > 1) == (mpm != "event")  # the alternative is named
