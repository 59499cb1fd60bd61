"""The files one Include / IncludeOptional reads, in httpd's order (server/config.c:
ap_dir_fnmatch and ap_dir_nofnmatch): wildcards in any path segment, matches sorted by strcmp,
directories read recursively in byte order, a leading dot matched only explicitly."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator

from apachetune.config import observed
from apachetune.errors import ResolveError

# httpd stops at this include depth (AP_MAX_INCLUDE_DEPTH) and directory depth.
MAX_INCLUDE_DEPTH = 128
MAX_WALK_ENTRIES = 100_000  # files and directories one Include may visit (httpd has no limit; we must not hang)

_WILDCARD = re.compile(r"[*?\[]")


def expand_include(pattern: str, optional: bool, planned: frozenset[str] = frozenset(),
                   hidden: frozenset[str] = frozenset()) -> Iterator[str]:
    """Files an Include of `pattern` reads. `planned` are files a generate run is about to
    write (read as if present), `hidden` files it is about to remove.

    A generator, as httpd reads each file as the walk reaches it: the first unreadable file ends
    the walk (`IncludeOptional /proc/self/*` stops at /proc/self/attr/current, as httpd does,
    instead of walking the whole file system through /proc/self/root). At most MAX_WALK_ENTRIES
    directory entries are visited for one Include."""
    walk = _Walk(pattern, optional, planned, hidden)
    if not _WILDCARD.search(pattern):
        return walk.nofnmatch(pattern, 0)
    return walk.fnmatch("/", pattern.strip("/").split("/"))


class _Walk:
    def __init__(self, pattern: str, optional: bool, planned: frozenset[str], hidden: frozenset[str]):
        self.pattern, self.optional, self.planned, self.hidden = pattern, optional, planned, hidden
        self.visited = 0

    def nofnmatch(self, path: str, depth: int) -> Iterator[str]:
        """A path with no wildcard left: a file, or a directory read whole (ap_dir_nofnmatch)."""
        self._count(path)
        if observed.isdir(path):
            if depth > MAX_INCLUDE_DEPTH:
                raise ResolveError(
                    f"Include/IncludeOptional: Directory '{path}' exceeds the maximum include "
                    f"directory nesting level of {MAX_INCLUDE_DEPTH}. You have probably a "
                    "recursion somewhere.")
            for name in sorted(self._names(path, missing_ok=False), key=os.fsencode):
                yield from self.nofnmatch(os.path.join(path, name), depth + 1)
            return
        if (path in self.hidden or not observed.lexists(path)) and path not in self.planned:
            if self.optional:
                return
            raise ResolveError(f"Could not open configuration file {path}: No such file or directory")
        yield path

    def fnmatch(self, base: str, segments: list[str]) -> Iterator[str]:
        """The segments under `base`, the first of which may hold a wildcard (ap_dir_fnmatch)."""
        seg, rest = segments[0], segments[1:]
        if not _WILDCARD.search(seg):
            matches = [os.path.join(base, seg)]
        else:
            matches = self._matches(base, seg, dirs_only=bool(rest))
        for m in matches:
            yield from (self.fnmatch(m, rest) if rest else self.nofnmatch(m, 0))

    def _matches(self, base: str, seg: str, dirs_only: bool) -> list[str]:
        names = self._names(base, missing_ok=self.optional)
        matches = sorted((os.path.join(base, n) for n in names if _match_segment(seg, n)), key=os.fsencode)
        if dirs_only:
            matches = [m for m in matches if observed.isdir(m)]
        if not matches and not self.optional:
            raise ResolveError(f"Include/IncludeOptional: No matches for the wildcard '{seg}' in '{base}', failing")
        return matches

    def _names(self, directory: str, missing_ok: bool) -> list[str]:
        """The directory's entries as the walk sees them: minus hidden files, plus planned ones."""
        try:
            names = [n for n in observed.listdir(directory) if os.path.join(directory, n) not in self.hidden]
        except OSError as e:
            if missing_ok and isinstance(e, FileNotFoundError):
                return []
            raise ResolveError(f"Include/IncludeOptional: Could not open directory {directory}: "
                               f"{e.strerror}") from None
        return names + _planned_in(directory, self.planned)

    def _count(self, path: str) -> None:
        self.visited += 1
        if self.visited > MAX_WALK_ENTRIES:
            raise ResolveError(f"Include/IncludeOptional: more than {MAX_WALK_ENTRIES} files and "
                               f"directories under {self.pattern!r} (at {path}); refusing to walk further")


def _match_segment(pattern: str, name: str) -> bool:
    # apr_fnmatch with APR_FNM_PERIOD: a leading dot must be matched explicitly.
    if name.startswith(".") and not pattern.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, pattern)


def _planned_in(directory: str, planned: frozenset[str]) -> list[str]:
    """Names of planned new files (overlay paths not on disk) directly in `directory`."""
    return [os.path.basename(p) for p in planned
            if os.path.dirname(p) == os.path.normpath(directory) and not os.path.lexists(p)]
