"""Unified diffs of configuration files (generate --diff, lint --fix --diff).

Writes themselves go through generate/transaction.py."""

from __future__ import annotations

import difflib


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
