"""Paths as people (and CI annotations) want them: relative to the current directory when inside it."""

from __future__ import annotations

import os
from functools import lru_cache


@lru_cache(maxsize=4096)
def _relative(path: str, cwd: str) -> str:
    if path.startswith("/") and "/." not in path and "//" not in path and not path.endswith("/"):
        # an absolute, normal path (the resolver's): a prefix test, not relpath's 20 us a file
        inside = cwd.rstrip("/") + "/"
        return path[len(inside):] if path.startswith(inside) else path
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def display_path(path: str) -> str:
    """`path` relative to the current directory when inside it (cached: reports ask per finding)."""
    try:
        cwd = os.getcwd()
    except OSError:
        return path
    return _relative(path, cwd)

