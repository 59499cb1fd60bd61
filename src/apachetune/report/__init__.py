"""Output formats over one result model (LintResult): text, json, sarif, github.

The formatters load on first use (PEP 562): naming the formats, as lint's --format choices do,
loads none of them, nor what they import (rule metadata, yaml).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# format name -> the module under apachetune.report whose render(result) -> str writes it
_MODULES = {"github": "github", "json": "json_report", "sarif": "sarif", "text": "text"}
FORMAT_NAMES = tuple(sorted(_MODULES))


def __getattr__(name: str) -> Any:
    if name != "FORMATS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    formats: dict[str, Callable[..., str]] = {
        fmt: importlib.import_module(f"{__name__}.{module}").render for fmt, module in _MODULES.items()}
    return formats
