import os
import stat

import pytest

from apachetune.generate.safe_write import WriteRefused, atomic_write, backup_path, unified_diff


def test_new_file_is_created(tmp_path):
    res = atomic_write(tmp_path / "mpm.conf", b"ServerLimit 4\n")
    assert res.created and res.backup is None
    assert (tmp_path / "mpm.conf").read_bytes() == b"ServerLimit 4\n"
    assert [p.name for p in tmp_path.iterdir()] == ["mpm.conf"]  # no temp file left


def test_existing_file_is_refused_without_flag(tmp_path):
    target = tmp_path / "mpm.conf"
    target.write_bytes(b"old\n")
    with pytest.raises(WriteRefused):
        atomic_write(target, b"new\n")
    assert target.read_bytes() == b"old\n"


def test_replace_keeps_backup_and_mode(tmp_path):
    target = tmp_path / "mpm.conf"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o600)
    res = atomic_write(target, b"new\n", replace=True)
    assert target.read_bytes() == b"new\n"
    assert res.backup == tmp_path / "mpm.conf.bak"
    assert res.backup.read_bytes() == b"old\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_second_backup_does_not_clobber_first(tmp_path):
    target = tmp_path / "a.conf"
    target.write_bytes(b"v1\n")
    atomic_write(target, b"v2\n", replace=True)
    res = atomic_write(target, b"v3\n", replace=True)
    assert res.backup == tmp_path / "a.conf.bak.1"
    assert (tmp_path / "a.conf.bak").read_bytes() == b"v1\n"
    assert res.backup.read_bytes() == b"v2\n"
    assert backup_path(target) == tmp_path / "a.conf.bak.2"


def test_symlink_target_is_edited_and_link_kept(tmp_path):
    real = tmp_path / "mods-available" / "mpm_event.conf"
    real.parent.mkdir()
    real.write_bytes(b"old\n")
    link = tmp_path / "mpm_event.conf"
    link.symlink_to(os.path.relpath(real, tmp_path))
    atomic_write(link, b"new\n", replace=True)
    assert link.is_symlink()
    assert real.read_bytes() == b"new\n"


def test_failed_write_leaves_original(tmp_path, monkeypatch):
    target = tmp_path / "a.conf"
    target.write_bytes(b"keep\n")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write(target, b"new\n", replace=True, backup=False)
    assert target.read_bytes() == b"keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.conf"]


def test_unified_diff_shows_only_changed_line():
    old = b"# keep\nServerLimit 16\nThreadsPerChild 25\n"
    new = b"# keep\nServerLimit 8\nThreadsPerChild 25\n"
    diff = unified_diff(old, new, "mpm.conf")
    assert "-ServerLimit 16\n" in diff and "+ServerLimit 8\n" in diff
    assert "-# keep" not in diff and "+# keep" not in diff
    assert unified_diff(old, old, "mpm.conf") == ""
