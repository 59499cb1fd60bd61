"""The package's own YAML data (rule metadata, the directive registry), read as JSON when it can be.

The YAML files under rules/ are the source. Reading them costs a lint ~50 ms before its first check
(importing PyYAML and its big regex, then parsing 300 KiB); the same data as JSON loads in 3 ms. So the
first run writes one JSON copy of a set of files into the per-user cache, keyed by every file's path,
size and modification time, and later runs read that copy and never import PyYAML. This is a build
product of the package, like compiled bytecode or the fastlex extension, not a cache of the user's
configuration: APACHETUNE_NO_CACHE (which bypasses the parse and result caches) does not turn it off.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from apachetune.paths import private_cache_dir, read_private, write_private

_DIR = "data"
_MAX_BYTES = 64 * 1024 * 1024


def load_yaml(paths: Sequence[Path], tag: str) -> list[Any]:
    """The YAML document of each path, in order (from the JSON copy when it matches the files)."""
    stamp = []  # which files, which version of them: kept in the copy and compared, so a match is exact
    for path in paths:
        st = path.stat()
        stamp.append(f"{path}\0{st.st_size}\0{st.st_mtime_ns}")
    # One entry a set of files (two installs keep two); a checksum names it, the stamp decides.
    where = zlib.crc32("\n".join(str(p) for p in paths).encode("utf-8", "surrogateescape"))
    name = f"{tag}-{where:08x}.json"
    directory = private_cache_dir(_DIR)
    if directory is not None:
        raw = read_private(directory, name, _MAX_BYTES)
        if raw is not None:
            try:
                copy = json.loads(raw)
            except ValueError:  # a torn or foreign entry: read the YAML again
                copy = None
            if isinstance(copy, dict) and copy.get("stamp") == stamp:
                documents: list[Any] = copy["documents"]
                return documents
    documents = [_read(path) for path in paths]
    if directory is not None:
        write_private(directory, name, json.dumps({"stamp": stamp, "documents": documents}).encode(
            "utf-8", "surrogateescape"))
    return documents


def _read(path: Path) -> Any:
    import yaml  # only when the JSON copy is missing or stale

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, 4x faster, when built with it
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=loader)
