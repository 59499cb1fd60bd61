"""Where the package's data (grammars, rule metadata, mpmd sources) lives.

In a source checkout or editable install the data sits at the repository root
(grammars/, rules/, src/mpmd/); in a wheel it is copied under apachetune/_data.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_PKG = Path(__file__).resolve().parent
_REPO = _PKG.parent.parent  # src/apachetune -> repo root


def _data_dir(name: str, repo_rel: str) -> Path:
    wheel = _PKG / "_data" / name
    if wheel.is_dir():
        return wheel
    return _REPO / repo_rel


def grammars_dir() -> Path:
    return _data_dir("grammars", "grammars")


def rules_dir() -> Path:
    return _data_dir("rules", "rules")


def mpmd_src_dir() -> Path:
    return _data_dir("mpmd", "src/mpmd")


def repo_fixtures_dir() -> Path | None:
    """fixtures/ of a source checkout (rule fixtures shown on rule pages); None in a wheel."""
    path = _REPO / "fixtures"
    return path if path.is_dir() else None


def cache_dir() -> Path:
    """Per-user cache (built mpmd binary, parse cache)."""
    base = os.environ.get("APACHETUNE_CACHE") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    if not os.environ.get("APACHETUNE_CACHE"):
        root = root / "apachetune"
    root.mkdir(parents=True, exist_ok=True)
    return root


def is_private(st: os.stat_result, kind: int) -> bool:
    """`st` is of `kind` (stat.S_IFDIR, S_IFREG), owned by this user and writable by no one else."""
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def caches_enabled() -> bool:
    """The parse cache and the lint result cache are used unless APACHETUNE_NO_CACHE is set."""
    return os.environ.get("APACHETUNE_NO_CACHE", "") in ("", "0")


def private_cache_dir(name: str) -> Path | None:
    """cache_dir()/name, created 0700; None when it is not private to this user (a planted
    entry must never be read)."""
    try:
        d = cache_dir() / name
        d.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(d)
    except OSError:
        return None
    return d if is_private(st, stat.S_IFDIR) else None


def read_private(directory: Path, name: str, max_bytes: int) -> bytes | None:
    """The bytes of cache entry `name`, if it is a regular file private to this user (never
    through a symlink) and not larger than `max_bytes`; else None."""
    try:
        fd = os.open(directory / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not is_private(st, stat.S_IFREG) or st.st_size > max_bytes:
                return None
            # read(n) allocates n bytes up front: ask for what the file holds, plus one byte to
            # see whether it grew meanwhile (then the rest, up to the limit)
            raw = fh.read(st.st_size + 1)
            if len(raw) == st.st_size + 1:
                raw += fh.read(max_bytes + 1 - len(raw))
    except OSError:
        return None
    return raw if len(raw) <= max_bytes else None


def write_private(directory: Path, name: str, raw: bytes) -> None:
    """Write cache entry `name` (mode 0600) atomically: a temporary file renamed over it. A cache
    that cannot be written is no error."""
    target = directory / name
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.replace(tmp, target)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
