"""The package's own YAML data (rule metadata, the directive registry), read as JSON when it can be.

The YAML files under rules/ are the source. Reading them costs a lint ~50 ms before its first check
(importing PyYAML and its big regex, then parsing 300 KiB); the same data as JSON loads in 3 ms. So the
first run writes one JSON copy of a set of files into the per-user cache, keyed by every file's path,
size and modification time, and later runs read that copy and never import PyYAML. This is a build
product of the package, like compiled bytecode or the fastlex extension, not a cache of the user's
configuration: APACHETUNE_NO_CACHE (which bypasses the parse and result caches) does not turn it off.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from apachetune.paths import private_cache_dir, read_private, write_private

_DIR = "data"
_MAX_BYTES = 64 * 1024 * 1024


def load_yaml(paths: Sequence[Path], tag: str) -> list[Any]:
    """The YAML document of each path, in order (from the JSON copy when it matches the files)."""
    where = hashlib.sha1(usedforsecurity=False)  # which files: two installs keep two entries
    stamp = hashlib.sha1(usedforsecurity=False)  # which version of them
    for path in paths:
        st = path.stat()
        where.update(f"{path}\0".encode("utf-8", "surrogateescape"))
        stamp.update(f"{st.st_size}\0{st.st_mtime_ns}\n".encode())
    prefix = f"{tag}-{where.hexdigest()[:16]}-"
    name = f"{prefix}{stamp.hexdigest()[:16]}.json"
    directory = private_cache_dir(_DIR)
    if directory is not None:
        raw = read_private(directory, name, _MAX_BYTES)
        if raw is not None:
            try:
                loaded = json.loads(raw)
            except ValueError:  # a torn or foreign entry: read the YAML again
                loaded = None
            if isinstance(loaded, list) and len(loaded) == len(paths):
                return loaded
    documents = [_read(path) for path in paths]
    if directory is not None:
        _forget_older(directory, prefix)
        write_private(directory, name, json.dumps(documents).encode())
    return documents


def _read(path: Path) -> Any:
    import yaml  # only when the JSON copy is missing or stale

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, 4x faster, when built with it
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=loader)


def _forget_older(directory: Path, prefix: str) -> None:
    """Remove the copies of earlier versions of the same files."""
    try:
        for entry in os.scandir(directory):
            if entry.name.startswith(prefix) and entry.name.endswith(".json"):
                os.unlink(entry.path)
    except OSError:
        pass
