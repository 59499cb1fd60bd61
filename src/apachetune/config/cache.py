"""A cache of parsed files, keyed by (path, content hash, apachetune version, grammar).

Linting the same tree again (pre-commit, CI re-runs, an editor) then skips parsing of every
unchanged file. A cache entry that cannot be read is ignored and rewritten; set
APACHETUNE_NO_CACHE=1 to bypass it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from functools import lru_cache

from apachetune import __version__
from apachetune.config.tree import ConfigFile
from apachetune.paths import cache_dir, grammars_dir


@lru_cache(maxsize=1)
def _salt() -> str:
    grammar = (grammars_dir() / "httpd.lark").read_bytes()
    parser_src = open(__file__.replace("cache.py", "parser.py"), "rb").read()
    return hashlib.sha1(__version__.encode() + grammar + parser_src).hexdigest()[:12]


def _key(path: str, data: bytes) -> str:
    digest = hashlib.sha1(data).hexdigest()
    return hashlib.sha1(f"{_salt()}\0{path}\0{digest}".encode("utf-8", "surrogateescape")).hexdigest()


def enabled() -> bool:
    return os.environ.get("APACHETUNE_NO_CACHE", "") in ("", "0")


def _dir():
    d = cache_dir() / "parsed"
    d.mkdir(parents=True, exist_ok=True)
    return d


def load(path: str, data: bytes) -> ConfigFile | None:
    """The parse of `data` (the bytes of `path`) saved earlier, if any."""
    if not enabled():
        return None
    try:
        with open(_dir() / f"{_key(path, data)}.pickle", "rb") as fh:
            cf = pickle.load(fh)
    except (OSError, EOFError, pickle.PickleError, AttributeError, ValueError, TypeError, ImportError):
        return None
    return cf if isinstance(cf, ConfigFile) and cf.path == path else None


def store(path: str, data: bytes, cf: ConfigFile) -> None:
    if not enabled():
        return
    try:
        target = _dir() / f"{_key(path, data)}.pickle"
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(cf, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, target)
    except (OSError, pickle.PicklingError, RecursionError):
        pass
