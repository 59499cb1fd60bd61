"""Where APR-util's DSO drivers are looked for (config/apr.dbd_driver_dirs), on a made-up root:
the apr-util-1/ directory beside a libaprutil-1 (Debian's multi-arch directory, RHEL's lib64),
nothing when no APR-util with drivers is there (DBDriver is then not judged), and lint's
DBDriver reader on such a tree."""

from __future__ import annotations

import os
from collections.abc import Callable

from apachetune.config.apr import dbd_driver_dirs


def _root(tmp_path, lib: str, drivers: bool) -> Callable[[str], str]:
    d = tmp_path / lib.lstrip("/")
    d.mkdir(parents=True)
    (d / "libaprutil-1.so.0").write_text("")
    if drivers:
        (d / "apr-util-1").mkdir()
        (d / "apr-util-1" / "apr_dbd_pgsql-1.so").write_text("")
    return lambda p: os.path.join(str(tmp_path), p.lstrip("/"))


def test_the_drivers_are_beside_the_library(tmp_path, monkeypatch):
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    local = _root(tmp_path, "/usr/lib64", drivers=True)
    assert dbd_driver_dirs(local) == [local("/usr/lib64/apr-util-1")]
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/x:")
    assert dbd_driver_dirs(local)[1:] == ["/opt/x", "/opt/x/apr-util-1"]  # apu_dso_load looks there first


def test_no_driver_directory_says_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/x")
    assert dbd_driver_dirs(_root(tmp_path, "/usr/lib/x86_64-linux-gnu", drivers=False)) == []
    assert dbd_driver_dirs(lambda p: str(tmp_path / "nothing" / p.lstrip("/"))) == []
