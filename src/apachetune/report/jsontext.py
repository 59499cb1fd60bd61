"""JSON text for reports: indented where a reader looks, one line per finding.

json.dumps(indent=2) runs Python's own encoder, value by value (CPython's C encoder does not
indent): 80,000 findings took 1.5x (JSON) and 3x (SARIF) the time of finding them (issue 16,
docs/benchmarks.md). Here the document's frame is indented as before, and each item of the
lists named in `one_line_items` (the findings, SARIF's results and rules) is written on its own
line by the C encoder: the same JSON value, and a file that greps and diffs a finding a line.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))  # C; no indent
INDENT = "  "


def dumps(value: Any, one_line_items: frozenset[str] = frozenset()) -> str:
    out: list[str] = []
    _write(value, "", one_line_items, False, out)
    out.append("\n")
    return utf8("".join(out))


# A configuration's bytes that are not UTF-8 are read as lone surrogates (surrogateescape), and
# standard output writes them back as those bytes: a JSON document quoting such a line (a
# finding's message, a directive's arguments) was then not UTF-8, and JSON readers refused it.
_STRAY_BYTE = re.compile("[\udc80-\udcff]")


def utf8(encoded: str) -> str:
    """JSON text (ensure_ascii=False) that is valid UTF-8 whatever the configuration's bytes:
    each byte that is not UTF-8 is written as the text \\xNN (Python's backslashreplace)."""
    if encoded.isascii():
        return encoded
    return _STRAY_BYTE.sub(lambda m: f"\\\\x{ord(m.group()) - 0xDC00:02x}", encoded)


def _write(value: Any, indent: str, one_line_items: frozenset[str], items_on_one_line: bool,
           out: list[str]) -> None:
    inner = indent + INDENT
    if isinstance(value, dict) and value:
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):  # as json.dumps writes a number, true or null as a key
                key = next(iter(json.loads(_ENCODER.encode({key: 0}))))
            out.append(("," if i else "") + "\n" + inner + _ENCODER.encode(key) + ": ")
            _write(item, inner, one_line_items, key in one_line_items, out)
        out.append("\n" + indent + "}")
    elif isinstance(value, list) and value:
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + "\n" + inner)
            if items_on_one_line:
                out.append(_ENCODER.encode(item))
            else:
                _write(item, inner, one_line_items, False, out)
        out.append("\n" + indent + "]")
    else:
        out.append(_ENCODER.encode(value))
