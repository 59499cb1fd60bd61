"""A cache of parsed files, keyed by (path, content hash, apachetune version, grammar, parser).

Linting the same tree again (pre-commit, CI re-runs, an editor) then skips parsing every unchanged
file. Entries are JSON of plain values (never pickle: a planted pickle runs code when loaded), in a
private directory that must be owned by this user and writable by no one else (checked on every
use; a directory that fails the check is not used). An entry that cannot be read or does not
describe the bytes it is keyed by is ignored. APACHETUNE_NO_CACHE=1 bypasses the cache.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from apachetune import __version__
from apachetune.config import native
from apachetune.config.tree import Blank, Comment, ConfigFile, Directive, Node, Section
from apachetune.paths import (
    caches_enabled,
    grammars_dir,
    private_cache_dir,
    read_private,
    write_private,
)

FORMAT = 4  # bump when the entry layout changes; old entries then never match a key
MAX_ENTRY_BYTES = 64 << 20


@lru_cache(maxsize=1)
def _salt() -> str:
    import hashlib  # only when the cache is used (the pure-Python parser): a cold lint skips it

    grammar = (grammars_dir() / "httpd.lark").read_bytes()
    here = Path(__file__).parent
    parser_src = b"".join((here / name).read_bytes() for name in ("parser.py", "lark_parser.py", "fastlex.c"))
    return hashlib.sha256(f"{FORMAT}\0{__version__}\0".encode() + grammar + parser_src).hexdigest()[:16]


def _key(path: str, data: bytes) -> str:
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    return hashlib.sha256(f"{_salt()}\0{path}\0{digest}".encode("utf-8", "surrogateescape")).hexdigest()


def _dir() -> Path | None:
    # With the C parser (config/fastlex.c) a parse is faster than reading its entry back: on the
    # 52,000-line tree of docs/benchmarks.md, lint took 0.47 s with every file from this cache and
    # 0.34 s with none. The cache then stays out of the way; it serves the pure-Python parser.
    if not caches_enabled() or native.fastlex() is not None:
        return None
    return private_cache_dir(f"parsed-v{FORMAT}")


# -- plain data <-> nodes -------------------------------------------------------------------------

def _encode(node: Node) -> list[Any]:
    base = [node.line, node.column, node.end_line, node.start, node.end]
    if isinstance(node, Directive):
        return ["d", *base, node.name, node.args, node.joined, node.content_end]
    if isinstance(node, Section):
        return ["s", *base, node.name, node.args, node.raw_args, node.tag_args, node.open_end_line,
                node.open_end, node.close_start, node.close_line, node.close_column, node.closed,
                [_encode(c) for c in node.children]]
    if isinstance(node, Comment):
        return ["c", *base, node.text]
    return ["b", *base]


def _decode(path: str, item: list[Any], parent: Section | ConfigFile) -> Node:
    kind, line, column, end_line, start, end, *rest = item
    base = (path, line, column, end_line, start, end)
    node: Node
    if kind == "d":
        name, args, joined, content_end = rest
        node = Directive(*base, name=name, args=list(args), joined=joined, content_end=content_end)
    elif kind == "s":
        (name, args, raw_args, tag_args, open_end_line, open_end, close_start, close_line, close_column,
         closed, children) = rest
        node = Section(*base, name=name, args=list(args), raw_args=raw_args, tag_args=tag_args,
                       open_end_line=open_end_line, open_end=open_end, close_start=close_start,
                       close_line=close_line, close_column=close_column, closed=closed)
        node.children = [_decode(path, c, node) for c in children]
    elif kind == "c":
        node = Comment(*base, text=rest[0])
    elif kind == "b":
        node = Blank(*base)
    else:
        raise ValueError(f"unknown node kind {kind!r}")
    node.parent = parent
    return node


def load(path: str, data: bytes) -> ConfigFile | None:
    """The parse of `data` (the bytes of `path`) saved earlier, if any."""
    d = _dir()
    raw = read_private(d, f"{_key(path, data)}.json", MAX_ENTRY_BYTES) if d is not None else None
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
        if doc.get("format") != FORMAT or doc.get("path") != path:
            return None
        text = data.decode("utf-8", "surrogateescape")
        if text.startswith("\ufeff") != doc.get("bom", False):
            return None
        cf = ConfigFile(path, text, [], doc["newline"])
        cf.children = [_decode(path, item, cf) for item in doc["nodes"]]
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    return cf


def store(path: str, data: bytes, cf: ConfigFile) -> None:
    d = _dir()
    if d is None:
        return
    try:
        doc = {"format": FORMAT, "path": path, "newline": cf.newline, "bom": cf.text.startswith("\ufeff"),
               "nodes": [_encode(n) for n in cf.children]}
        raw = json.dumps(doc, separators=(",", ":")).encode()
    except (ValueError, TypeError, RecursionError):
        return
    write_private(d, f"{_key(path, data)}.json", raw)
