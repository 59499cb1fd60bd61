"""generate --switch-mpm: every pair of MPMs, on Debian's mods-enabled links and on a LoadModule
line; apache2 -t passes on the result, real httpd starts with the new MPM, and `restore` puts the
links back."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune import httpd
from apachetune.cli import cli
from apachetune.validate.processes import stop_group

ROOT = Path(__file__).resolve().parents[1]
MPMS = ("event", "worker", "prefork")
HTTPD = httpd.binary() is not None and all(httpd.module_path(f"mpm_{m}").exists() for m in MPMS)
CHECK = [] if HTTPD else ["--no-httpd-check"]


def run(*args):
    return CliRunner().invoke(cli, [*args])


def switch(main: Path, root: Path, mpm: str):
    return run("generate", str(main), "-d", str(root), "--no-measure", "--rate", "20", "--in-place",
               "--target-mpm", mpm, "--switch-mpm", "--allow-short", *CHECK)


def loaded_mpm(main: Path, root: Path) -> str:
    return json.loads(run("parse", str(main), "-d", str(root), "--json").output)["mpm"]


def debian(tmp_path: Path) -> Path:
    root = tmp_path / "debian"
    shutil.copytree(ROOT / "fixtures" / "trees" / "debian", root, symlinks=True)
    return root


def line_tree(tmp_path: Path, port: int = 8080) -> Path:
    """An upstream-style tree: the MPM loaded by one LoadModule line of the main file."""
    root = tmp_path / "httpd"
    for d in ("conf", "logs", "htdocs"):
        (root / d).mkdir(parents=True)
    (root / "htdocs").chmod(0o755)
    (root / "modules").symlink_to(httpd.modules_dir())
    (root / "conf" / "httpd.conf").write_text(
        f"ServerRoot {root}\nServerName localhost\nListen 127.0.0.1:{port}\n"
        "LoadModule mpm_event_module modules/mod_mpm_event.so\n"
        "LoadModule authz_core_module modules/mod_authz_core.so\n"
        "User nobody\nGroup nogroup\nPidFile logs/httpd.pid\nErrorLog logs/error_log\n"
        f"DocumentRoot {root}/htdocs\n")
    return root


def mpm_links(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "mods-enabled").iterdir() if p.name.startswith("mpm_"))


@pytest.mark.parametrize("first, second", [p for p in itertools.permutations(MPMS, 2) if p[0] == "event"]
                         + [p for p in itertools.permutations(MPMS, 2) if p[0] != "event"])
def test_every_pair_on_debian_links(tmp_path, first, second):
    root = debian(tmp_path)
    main = root / "apache2.conf"
    for mpm in dict.fromkeys((first, second)):  # the fixture runs event: reach `first`, then `second`
        if mpm == loaded_mpm(main, root):
            continue
        r = switch(main, root, mpm)
        assert r.exit_code == 0, r.output + r.stderr
        assert loaded_mpm(main, root) == mpm
        assert mpm_links(root) == [f"mpm_{mpm}.conf", f"mpm_{mpm}.load"]
        assert os.readlink(root / "mods-enabled" / f"mpm_{mpm}.load") == f"../mods-available/mpm_{mpm}.load"
        if HTTPD:
            assert "apache2 -t: passed" in r.output
    # The settings written are the new MPM's, in the file httpd now reads for it.
    values = json.loads(run("lint", str(main), "-d", str(root), "--format", "json").output)
    assert not [f for f in values["findings"] if f["rule"].startswith("AT1") or f["rule"] in ("AT401", "AT402")]


def test_switch_is_refused_without_in_place_or_to_the_same_mpm(tmp_path):
    root = debian(tmp_path)
    main = root / "apache2.conf"
    same = run("generate", str(main), "-d", str(root), "--no-measure", "--rate", "20", "--in-place",
               "--target-mpm", "event", "--switch-mpm")
    assert same.exit_code == 2 and "other than the running one (event)" in same.stderr
    unread = run("generate", str(main), "-d", str(root), "--no-measure", "--rate", "20", "--in-place",
                 "--target-mpm", "prefork", "--allow-short", *CHECK)
    assert unread.exit_code == 2 and "--switch-mpm" in unread.stderr


def test_diff_shows_the_links_and_writes_nothing(tmp_path):
    root = debian(tmp_path)
    before = mpm_links(root)
    r = run("generate", str(root / "apache2.conf"), "-d", str(root), "--no-measure", "--rate", "20",
            "--in-place", "--target-mpm", "worker", "--switch-mpm", "--diff")
    assert r.exit_code == 0
    assert "mpm_event.load: link removed" in r.output and "mpm_worker.load -> ../mods-available" in r.output
    assert "+MaxRequestWorkers" in r.output and mpm_links(root) == before


def test_restore_puts_the_links_back(tmp_path):
    root = debian(tmp_path)
    before = {p.name: os.readlink(p) for p in (root / "mods-enabled").iterdir() if p.is_symlink()}
    r = switch(root / "apache2.conf", root, "prefork")
    assert r.exit_code == 0, r.output + r.stderr
    run_dir = next(line.split("undo: apachetune restore ")[1].rstrip(")") for line in r.output.splitlines()
                   if "undo: apachetune restore" in line)
    restored = run("restore", run_dir)
    assert restored.exit_code == 0, restored.output + restored.stderr
    after = {p.name: os.readlink(p) for p in (root / "mods-enabled").iterdir() if p.is_symlink()}
    assert after == before and loaded_mpm(root / "apache2.conf", root) == "event"


@pytest.mark.skipif(not HTTPD, reason="needs httpd with its three MPM modules")
@pytest.mark.parametrize("first, second", list(itertools.permutations(MPMS, 2)))
def test_every_pair_on_a_loadmodule_line_and_httpd_starts_with_it(tmp_path, first, second):
    from apachetune.validate.mpmd_server import free_port

    root = line_tree(tmp_path, free_port())
    main = root / "conf" / "httpd.conf"
    for mpm in dict.fromkeys((first, second)):
        if mpm == loaded_mpm(main, root):
            continue
        r = switch(main, root, mpm)
        assert r.exit_code == 0, r.output + r.stderr
        assert f"LoadModule mpm_{mpm}_module modules/mod_mpm_{mpm}.so" in main.read_text()
        assert "apache2 -t: passed" in r.output
    proc = httpd.start_foreground(main)
    try:
        log = root / "logs" / "error_log"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "resuming normal operations" not in (
                log.read_text() if log.exists() else ""):
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.05)
        assert f"[mpm_{second}:notice]" in log.read_text()
    finally:
        stop_group(proc)
