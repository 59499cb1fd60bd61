"""Reading httpd configuration: grammar -> lossless tree -> resolved effective config.

The names below load on first use (PEP 562): importing a light submodule such as
config.observed must not load Lark and the grammar.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "parse_file": "parser", "parse_text": "parser",
    "Blank": "tree", "Comment": "tree", "ConfigFile": "tree", "Directive": "tree", "Node": "tree",
    "Section": "tree", "split_words": "words",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
