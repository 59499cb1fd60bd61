"""Lint results replayed when nothing they depend on has changed (pre-commit hooks and CI re-runs).

An entry is keyed by what the command was asked (its options, the working directory, the httpd
version modelled, the CPU count) and apachetune's own code; it holds the report, the exit code and
the observations the run made (config/observed.py: every file read, directory listed, path probed
and environment variable looked up). A later run with the same key replays the report only when
every observation still holds: a stat or a listdir each, no parse. Entries live in a private cache
directory, as the parse cache's; APACHETUNE_NO_CACHE=1 bypasses both. This module imports nothing
heavy: on a hit, lark, rich and yaml are never loaded.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from apachetune import __version__
from apachetune.config.observed import Observations
from apachetune.paths import (
    caches_enabled,
    grammars_dir,
    private_cache_dir,
    read_private,
    rules_dir,
    write_private,
)

FORMAT = 1
MAX_ENTRY_BYTES = 256 << 20
_PACKAGE = Path(__file__).resolve().parents[1]



@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """apachetune's version and the newest change to its code, grammar and rule data: an edited
    check or rule (a source checkout) must not replay results made by the old one."""
    newest, count = 0, 0
    for top in (_PACKAGE, grammars_dir(), rules_dir()):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for name in filenames:
                try:
                    newest = max(newest, os.stat(os.path.join(dirpath, name)).st_mtime_ns)
                except OSError:
                    continue
                count += 1
    return f"{__version__}:{newest}:{count}"


def key(command: str, params: dict[str, Any], httpd_version: str) -> str:
    what = {"command": command, "params": params, "cwd": os.getcwd(), "httpd": httpd_version,
            "cpus": os.cpu_count(), "code": _code_fingerprint(), "format": FORMAT}
    text = json.dumps(what, sort_keys=True, default=repr)
    import hashlib  # here: a lint with the caches off never keys (OpenSSL's import is 3 ms)

    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class Entry:
    report: str
    output: str | None  # -o FILE, else standard output
    exit_code: int


def replay(entry_key: str) -> Entry | None:
    """The entry saved under `entry_key` if every observation it made still holds."""
    d = private_cache_dir(f"lint-results-v{FORMAT}") if caches_enabled() else None
    raw = read_private(d, f"{entry_key}.json", MAX_ENTRY_BYTES) if d is not None else None
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
        if doc.get("format") != FORMAT or doc.get("key") != entry_key:
            return None
        if not Observations.from_json(doc["observations"]).still_hold():
            return None
        entry = Entry(doc["report"], doc["output"], doc["exit"])
        if not isinstance(entry.report, str) or not isinstance(entry.exit_code, int):
            return None
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return entry


def store(entry_key: str, observations: Observations, entry: Entry) -> None:
    """Save the run's result, unless a file it read was modified too recently to trust its stat."""
    d = private_cache_dir(f"lint-results-v{FORMAT}") if caches_enabled() else None
    if d is None or not observations.replayable():
        return
    doc = {"format": FORMAT, "key": entry_key, "observations": observations.to_json(),
           "report": entry.report, "output": entry.output, "exit": entry.exit_code}
    write_private(d, f"{entry_key}.json", json.dumps(doc, separators=(",", ":")).encode())
