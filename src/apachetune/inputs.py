"""Reading the small files users point options at (--pidfile, --access-log, --facts), safely.

Only regular files are read (a FIFO, /dev/zero or /dev/stdin would block or never end), they are
opened without blocking, and reads are bounded: a whole file up to a limit, or a log line by line
with every line cut at MAX_LINE bytes. A problem is a UsageError naming the option and the file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from apachetune.errors import UsageError

MAX_LINE = 1 << 20  # an access-log line longer than this is cut: no log line is that long


def _open_regular(path: str, what: str) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise UsageError(f"{what} {path}: {e.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"{what} {path}: not a regular file")
    return fd


def read_small(path: str, what: str, limit: int = 1 << 20) -> str:
    """The whole file as text, refused beyond `limit` bytes."""
    fd = _open_regular(path, what)
    with os.fdopen(fd, "rb") as fh:
        # read(n) allocates n bytes at once: ask for what the file holds first, plus one byte
        # to see whether it grew meanwhile (then the rest, up to the limit)
        first = min(limit, os.fstat(fh.fileno()).st_size) + 1
        data = fh.read(first)
        if len(data) == first:
            data += fh.read(limit + 1 - len(data))
    if len(data) > limit:
        raise UsageError(f"{what} {path}: larger than {limit} bytes; not the file expected here")
    return data.decode("utf-8", "replace")


def iter_lines(path: str, what: str) -> Iterator[str]:
    """The file's lines (decoded leniently), each cut at MAX_LINE bytes."""
    fd = _open_regular(path, what)
    with os.fdopen(fd, "rb") as fh:
        while True:
            line = fh.readline(MAX_LINE)
            if not line:
                return
            if len(line) == MAX_LINE and not line.endswith(b"\n"):
                while True:  # skip the rest of an over-long line
                    more = fh.readline(MAX_LINE)
                    if not more or more.endswith(b"\n"):
                        break
            yield line.decode("utf-8", "replace")
