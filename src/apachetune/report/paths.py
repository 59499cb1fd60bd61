"""Paths as people (and CI annotations) want them: relative to the current directory when inside it."""

from __future__ import annotations

import os


def display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
