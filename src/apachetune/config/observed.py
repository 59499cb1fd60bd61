"""What reading a configuration learned from outside it: files, directory listings, paths probed,
environment variables, each recorded as it is read.

A cached lint result (lint/result_cache.py) is replayed only when every observation still holds,
which costs a stat or a listdir each instead of a parse. So everything the resolver (and the
settings lookup) asks of the file system or the environment goes through these functions; when no
recording is active they only do the work.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# A file modified this recently may change again within its timestamp's granularity without its
# stat changing (git's "racy" case): a recording that read one is never replayed.
RACY_NS = 2_000_000_000

Observation = tuple[str, str]  # (kind, key): kind is "path", "list", "file" or "env"


class Observations:
    def __init__(self) -> None:
        self.seen: dict[Observation, object] = {}
        self.started_ns = time.time_ns()

    def note(self, kind: str, key: str, value: object) -> None:
        self.seen.setdefault((kind, key), value)

    def replayable(self) -> bool:
        """False when a file read was modified too recently for its stat to be trusted."""
        limit = self.started_ns - RACY_NS
        return all(kind != "file" or value is None or value[3] < limit  # type: ignore[index]
                   for (kind, _key), value in self.seen.items())

    def still_hold(self) -> bool:
        return all(_observe(kind, key) == value for (kind, key), value in self.seen.items())

    def to_json(self) -> list[list[object]]:
        return [[kind, key, value] for (kind, key), value in self.seen.items()]

    @classmethod
    def from_json(cls, rows: list[list[object]]) -> Observations:
        obs = cls()
        for kind, key, value in rows:
            if not isinstance(kind, str) or kind not in _OBSERVERS or not isinstance(key, str):
                raise ValueError(f"unknown observation {kind!r}")
            obs.seen[(kind, key)] = tuple(value) if isinstance(value, list) else value
        return obs


_recording: list[Observations] = []


@contextmanager
def recording() -> Iterator[Observations]:
    obs = Observations()
    _recording.append(obs)
    try:
        yield obs
    finally:
        _recording.remove(obs)


def _note(kind: str, key: str, value: object) -> None:
    for obs in _recording:
        obs.note(kind, key, value)


# -- what is observed, and how it is observed again --------------------------------------------

def _path_kind(path: str) -> str:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "dangling" if os.path.islink(path) else "missing"
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _listing(path: str) -> tuple[object, ...]:
    try:
        return tuple(sorted(os.listdir(path)))
    except OSError as e:
        return _unlistable(e)


def _unlistable(e: OSError) -> tuple[object, ...]:
    return ("\0error", e.errno)  # "\0" is in no file name


def _file_signature(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


_OBSERVERS: dict[str, Callable[[str], object]] = {
    "path": _path_kind, "list": _listing, "file": _file_signature, "env": os.environ.get}


def _observe(kind: str, key: str) -> object:
    return _OBSERVERS[kind](key)


# -- the functions readers call -----------------------------------------------------------------

def path_kind(path: str) -> str:
    """"dir", "file", "other", "dangling" (a broken symlink) or "missing"; recorded."""
    kind = _path_kind(path)
    _note("path", path, kind)
    return kind


def isdir(path: str) -> bool:
    return path_kind(path) == "dir"


def isfile(path: str) -> bool:
    return path_kind(path) == "file"


def exists(path: str) -> bool:
    return path_kind(path) not in ("missing", "dangling")


def lexists(path: str) -> bool:
    return path_kind(path) != "missing"


def listdir(path: str) -> list[str]:
    """os.listdir(path) (raising as it does); the names are recorded."""
    try:
        names = os.listdir(path)
    except OSError as e:
        _note("list", path, _unlistable(e))
        raise
    _note("list", path, tuple(sorted(names)))
    return names


def file_read(path: str) -> None:
    """Record that `path`'s content was read (call after reading it)."""
    if _recording:
        _note("file", path, _file_signature(path))


def environ(name: str) -> str | None:
    """os.environ.get(name); recorded."""
    value = os.environ.get(name)
    _note("env", name, value)
    return value


def nonempty_file(path: str) -> bool:
    """A regular file with at least one byte (mod_ssl's check on a certificate path); recorded."""
    if not isfile(path):
        return False
    signature = _file_signature(path)
    _note("file", path, signature)
    return signature is not None and signature[2] > 0
