"""Safe writes of a user's configuration files.

The rules the generator lives by: never overwrite without an explicit flag,
keep a backup of what is replaced, and replace atomically (a temp file beside
the target, fsync, rename), so that a crash leaves either the old or the new
file, never half of one. The file's mode is kept.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from apachetune.errors import ApachetuneError


class WriteRefused(ApachetuneError):
    """The target exists and the caller did not allow replacing it."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    path: Path
    backup: Path | None
    created: bool


def unified_diff(old: bytes, new: bytes, path: str) -> str:
    """A unified diff of two versions of a file (undecodable bytes shown escaped)."""
    a = old.decode("utf-8", "backslashreplace").splitlines(keepends=True)
    b = new.decode("utf-8", "backslashreplace").splitlines(keepends=True)
    shown = path.lstrip("/")
    lines = difflib.unified_diff(a, b, fromfile=f"a/{shown}", tofile=f"b/{shown}")
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def backup_path(path: Path) -> Path:
    """`file.bak`, or `file.bak.1`, `.bak.2` ... so an older backup is never clobbered."""
    candidate = path.with_name(path.name + ".bak")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.bak.{n}")
        n += 1
    return candidate


def atomic_write(path: str | os.PathLike[str], data: bytes, *, replace: bool = False,
                 backup: bool = True) -> WriteResult:
    """Write `data` to `path` atomically.

    An existing file is replaced only with `replace=True`, and then (with `backup`)
    copied to a `.bak` first. The temp file lives in the target's directory so the
    final rename never crosses a file system.
    """
    target = Path(path)
    # Follow a symlink (Debian's mods-enabled/*.conf -> ../mods-available/...) so the
    # link itself survives and the real file is what changes.
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    exists = target.exists()
    if exists and not replace:
        raise WriteRefused(f"{target} exists; pass --force (or --in-place) to replace it")
    if exists and not target.is_file():
        raise WriteRefused(f"{target} is not a regular file")
    parent = target.parent
    if not parent.is_dir():
        raise WriteRefused(f"directory {parent} does not exist")

    saved = None
    if exists and backup:
        saved = backup_path(target)
        shutil.copy2(target, saved)

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if exists:
            shutil.copymode(target, tmp)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    # Make the rename durable too.
    dir_fd = os.open(parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return WriteResult(path=target, backup=saved, created=not exists)
