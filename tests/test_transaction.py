"""The transactional writer: every way issue 11 saw a write go wrong, each kept fixed.

Disk full, kill -9 at every step, an edit made meanwhile, owner/group/xattrs/hard links, read-only
files, symlinks, backups httpd would read, files outside ServerRoot, restore."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune import httpd
from apachetune.cli import cli
from apachetune.generate.diff import unified_diff
from apachetune.generate.transaction import (
    FileChange,
    Transaction,
    TransactionError,
    recover_pending,
    restore_run,
)
from httpd_oracle import APACHE2, dump_config

ROOT = Path(__file__).resolve().parents[1]


def tree(tmp_path: Path, n: int = 2, size: int = 100) -> list[Path]:
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    paths = []
    for i in range(n):
        p = conf / f"f{i}.conf"
        p.write_bytes(f"# file {i}\n".encode() + b"#" * size + b"\n")
        paths.append(p)
    return paths


def snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_commit_writes_all_and_keeps_backups_outside(tmp_path):
    a, b = tree(tmp_path)
    olds = [a.read_bytes(), b.read_bytes()]
    result = Transaction([FileChange(a, b"new a\n", olds[0]), FileChange(b, b"new b\n", olds[1])],
                         backup_root=tmp_path / "backups").commit()
    assert a.read_bytes() == b"new a\n" and b.read_bytes() == b"new b\n"
    assert sorted(p.name for p in a.parent.iterdir()) == ["f0.conf", "f1.conf"]  # nothing httpd would load
    assert result.backups[a].read_bytes() == olds[0] and result.run_dir.parent == tmp_path / "backups"
    restore_run(result.run_dir, backup_root=tmp_path / "backups")
    assert [a.read_bytes(), b.read_bytes()] == olds


def test_disk_full_leaves_the_tree_as_it_was(tmp_path):
    """A 64 KiB tmpfs: the second staged file does not fit; nothing changes, no leftovers."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        a, b = tree(mnt, size=20_000)
        before = snapshot(mnt / "conf")
        changes = [FileChange(a, b"x" * 10_000, a.read_bytes()), FileChange(b, b"y" * 40_000, b.read_bytes())]
        with pytest.raises(TransactionError, match="nothing was written"):
            Transaction(changes, backup_root=mnt / "backups").commit()
        assert snapshot(mnt / "conf") == before
        assert not list((mnt / "backups").glob("*/staging/*"))
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


CRASH_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from apachetune.generate.transaction import FileChange, Transaction
    paths = [Path(p) for p in sys.argv[2:]]
    Transaction([FileChange(p, b"NEW " + p.name.encode() + b"\\n", p.read_bytes()) for p in paths],
                backup_root=Path(sys.argv[1])).commit()
""")


@pytest.mark.parametrize("step", ["prepared", "staged", "installed-1", "installed-2"])
def test_kill_9_at_every_step_is_undone(tmp_path, step):
    paths = tree(tmp_path)
    before = snapshot(tmp_path / "conf")
    env = {**os.environ, "APACHETUNE_CRASH_AT": step}
    proc = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(tmp_path / "backups"), *map(str, paths)],
                          env=env, capture_output=True)
    assert proc.returncode == -9, proc.stderr
    # Whatever the crash left, no file httpd would read was added to the configuration directory.
    assert sorted(snapshot(tmp_path / "conf")) == sorted(before)
    crashed = snapshot(tmp_path / "conf")
    renamed = [name for name in before if crashed[name] != before[name]]
    assert len(renamed) == {"prepared": 0, "staged": 0, "installed-1": 1, "installed-2": 2}[step]
    recover_pending(tmp_path / "backups")  # what the next write (or `apachetune restore`) runs first
    assert snapshot(tmp_path / "conf") == before
    assert not list((tmp_path / "backups").glob("*/staging/*"))


def test_an_edit_made_meanwhile_is_never_lost(tmp_path, monkeypatch):
    a, b = tree(tmp_path)
    old_a = a.read_bytes()
    a.write_bytes(b"edited by the admin\n")  # after the plan was made from old_a
    with pytest.raises(TransactionError, match="changed by someone else"):
        Transaction([FileChange(a, b"ours\n", old_a)], backup_root=tmp_path / "bk").commit()
    assert a.read_bytes() == b"edited by the admin\n"
    # ... and between staging and the renames:
    import apachetune.generate.transaction as tx

    real_stage = tx.Transaction._stage

    def stage_then_edit(self, ch, run_dir):
        staged = real_stage(self, ch, run_dir)
        b.write_bytes(b"edited while staging\n")
        return staged

    monkeypatch.setattr(tx.Transaction, "_stage", stage_then_edit)
    with pytest.raises(TransactionError, match="changed by someone else"):
        Transaction([FileChange(b, b"ours\n", b.read_bytes())], backup_root=tmp_path / "bk").commit()
    assert b.read_bytes() == b"edited while staging\n"


def test_owner_group_mode_xattrs_and_hard_links_are_kept(tmp_path):
    a, b = tree(tmp_path)
    os.chown(a, 1234, 2345)
    os.chmod(a, 0o640)
    try:
        os.setxattr(a, "user.origin", b"kept")
        xattrs = True
    except OSError:
        xattrs = False
    link = tmp_path / "conf" / "hardlink.conf"
    os.link(b, link)
    inode = b.stat().st_ino
    Transaction([FileChange(a, b"new a\n", a.read_bytes()), FileChange(b, b"new b\n", b.read_bytes())],
                backup_root=tmp_path / "bk").commit()
    st = a.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (1234, 2345, 0o640)
    if xattrs:
        assert os.getxattr(a, "user.origin") == b"kept"
    assert b.stat().st_ino == inode and link.read_bytes() == b"new b\n" == b.read_bytes()


def test_read_only_and_symlinked_targets_need_force(tmp_path):
    (a,) = tree(tmp_path, n=1)
    os.chmod(a, 0o444)
    with pytest.raises(TransactionError, match="read-only"):
        Transaction([FileChange(a, b"x\n", a.read_bytes())], backup_root=tmp_path / "bk").commit()
    link = tmp_path / "conf" / "dangling.conf"
    link.symlink_to(tmp_path / "nowhere.conf")
    with pytest.raises(TransactionError, match="symbolic link"):
        Transaction([FileChange(link, b"x\n", None)], backup_root=tmp_path / "bk").commit()
    assert not (tmp_path / "nowhere.conf").exists()
    r = CliRunner().invoke(cli, ["generate", "-o", str(link), "--no-measure", "--memory", "2048",
                                 "--rate", "100", "--service-time-ms", "50"])
    assert r.exit_code == 2 and "symbolic link" in r.output and not (tmp_path / "nowhere.conf").exists()


def write_tree_with_conf_d(root: Path) -> Path:
    (root / "conf.d").mkdir(parents=True)
    (root / "logs").mkdir()
    main = root / "httpd.conf"
    main.write_text(f'ServerRoot "{root}"\nServerName localhost\nUser nobody\nGroup nogroup\n'
                    "Listen 127.0.0.1:8080\n"
                    f"{httpd.load_module_line('mpm_event')}\n"
                    f"{httpd.load_module_line('reqtimeout')}\n"
                    "Include conf.d\n")
    (root / "conf.d" / "mpm.conf").write_text(
        "<IfModule mpm_event_module>\n    StartServers 2\n    ThreadsPerChild 25\n"
        "    MaxRequestWorkers 400\n</IfModule>\n")
    return main


@pytest.mark.skipif(APACHE2 is None, reason="needs apache2")
def test_backups_are_never_read_by_httpd_from_an_included_directory(tmp_path):
    root = tmp_path / "site"
    main = write_tree_with_conf_d(root)
    sizing = ["--no-measure", "--memory", "512", "--rate", "100", "--service-time-ms", "50"]
    for _ in range(2):  # a second run must not edit a backup either
        r = CliRunner().invoke(cli, ["generate", str(main), "--in-place", *sizing,
                                     "--backup-dir", str(tmp_path / "bk")])
        assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (root / "conf.d").iterdir()) == ["mpm.conf"]
    dumped = dump_config(main, root)
    (mrw,) = [ln.strip() for ln in dumped.splitlines() if ln.strip().startswith("MaxRequestWorkers")]
    assert mrw != "MaxRequestWorkers 400" and mrw.split()[1] in (root / "conf.d" / "mpm.conf").read_text()
    runs = sorted((tmp_path / "bk").iterdir())
    r = CliRunner().invoke(cli, ["restore", str(runs[0]), "--backup-dir", str(tmp_path / "bk")])
    assert r.exit_code == 0 and "MaxRequestWorkers 400" in (root / "conf.d" / "mpm.conf").read_text()


@pytest.mark.skipif(APACHE2 is None, reason="needs apache2")
def test_a_changed_file_outside_serverroot_is_not_written_unchecked(tmp_path):
    """A file outside ServerRoot is checked on a copy of the directory it shares with the main
    file (the main file's absolute paths pointing into the copy); one that shares none but / with
    it cannot be copied so, and is written only with --no-httpd-check."""
    import tempfile

    args = ["--in-place", "--no-measure", "--memory", "512", "--rate", "100", "--service-time-ms", "50"]
    root = tmp_path / "site"
    main = write_tree_with_conf_d(root)
    outside = tmp_path / "elsewhere" / "mpm.conf"
    outside.parent.mkdir()
    shutil.move(root / "conf.d" / "mpm.conf", outside)
    main.write_text(main.read_text().replace("Include conf.d\n", f"Include {outside}\n"))
    before = outside.read_bytes()
    r = CliRunner().invoke(cli, ["generate", str(main), *args])
    assert r.exit_code == 0 and "apache2 -t: passed" in r.output and outside.read_bytes() != before, r.output
    far = next((d for d in ("/var/tmp", "/dev/shm", "/run") if os.path.isdir(d) and os.access(d, os.W_OK)
                and os.path.commonpath([d, str(tmp_path)]) == "/"), None)
    if far is None:
        pytest.skip("no writable directory sharing only / with the test's")
    with tempfile.TemporaryDirectory(dir=far) as elsewhere:
        outside = Path(elsewhere) / "mpm.conf"
        shutil.copy(tmp_path / "elsewhere" / "mpm.conf", outside)
        main.write_text(f'{main.read_text().split("Include ")[0]}Include {outside}\n')
        before = outside.read_bytes()
        r = CliRunner().invoke(cli, ["generate", str(main), *args, "--rate", "120"])
        assert r.exit_code == 1 and "outside ServerRoot" in r.output and outside.read_bytes() == before, r.output
        r = CliRunner().invoke(cli, ["generate", str(main), *args, "--rate", "120", "--no-httpd-check"])
        assert r.exit_code == 0 and outside.read_bytes() != before, r.output


def test_unified_diff_shows_only_changed_line():
    old = b"# keep\nServerLimit 16\nThreadsPerChild 25\n"
    new = b"# keep\nServerLimit 8\nThreadsPerChild 25\n"
    diff = unified_diff(old, new, "mpm.conf")
    assert "-ServerLimit 16\n" in diff and "+ServerLimit 8\n" in diff
    assert "-# keep" not in diff and "+# keep" not in diff
    assert unified_diff(old, old, "mpm.conf") == ""


LINK_CRASH_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from apachetune.generate.transaction import FileChange, LinkChange, Transaction
    enabled = Path(sys.argv[2])
    conf = enabled / "mpm.conf"
    Transaction([LinkChange(enabled / "mpm_event.load", None, "../available/mpm_event.load"),
                 LinkChange(enabled / "mpm_prefork.load", "../available/mpm_prefork.load", None),
                 FileChange(conf, b"MaxRequestWorkers 10\\n", conf.read_bytes())],
                backup_root=Path(sys.argv[1])).commit()
""")


def links_tree(tmp_path: Path) -> Path:
    available, enabled = tmp_path / "available", tmp_path / "enabled"
    available.mkdir()
    enabled.mkdir()
    for mpm in ("event", "prefork"):
        (available / f"mpm_{mpm}.load").write_text(f"LoadModule mpm_{mpm}_module x.so\n")
    (enabled / "mpm_event.load").symlink_to("../available/mpm_event.load")
    (enabled / "mpm.conf").write_text("MaxRequestWorkers 150\n")
    return enabled


def links(d: Path) -> dict[str, str | None]:
    return {p.name: (os.readlink(p) if p.is_symlink() else p.read_text()) for p in sorted(d.iterdir())}


def test_links_are_switched_with_the_files_and_restored_by_restore(tmp_path):
    enabled = links_tree(tmp_path)
    before = links(enabled)
    result = subprocess.run([sys.executable, "-c", LINK_CRASH_SCRIPT, str(tmp_path / "backups"), str(enabled)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert links(enabled) == {"mpm.conf": "MaxRequestWorkers 10\n",
                              "mpm_prefork.load": "../available/mpm_prefork.load"}
    run_dir = next((tmp_path / "backups").iterdir())
    restore_run(run_dir, backup_root=tmp_path / "backups")
    assert links(enabled) == before


@pytest.mark.parametrize("step", ["prepared", "staged", "installed-1", "installed-2", "installed-3"])
def test_kill_9_while_switching_links_is_undone(tmp_path, step):
    enabled = links_tree(tmp_path)
    before = links(enabled)
    env = {**os.environ, "APACHETUNE_CRASH_AT": step}
    proc = subprocess.run([sys.executable, "-c", LINK_CRASH_SCRIPT, str(tmp_path / "backups"), str(enabled)],
                          env=env, capture_output=True)
    assert proc.returncode == -9, proc.stderr
    assert not [p for p in enabled.iterdir() if p.name.startswith(".~apachetune")] or step.startswith("installed")
    recover_pending(tmp_path / "backups")
    assert links(enabled) == before


def test_a_link_changed_meanwhile_is_refused(tmp_path):
    enabled = links_tree(tmp_path)
    (enabled / "mpm_event.load").unlink()
    (enabled / "mpm_event.load").symlink_to("../available/mpm_prefork.load")
    before = links(enabled)
    from apachetune.generate.transaction import LinkChange

    with pytest.raises(TransactionError, match="changed by someone else"):
        Transaction([LinkChange(enabled / "mpm_event.load", None, "../available/mpm_event.load")],
                    backup_root=tmp_path / "backups").commit()
    assert links(enabled) == before
