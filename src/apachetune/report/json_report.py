"""The JSON contract: {"mpm": {...}, "findings": [{rule, severity, message, file, line, column}],
"summary": {error, warning, info}} (keys may be added, never renamed)."""

from __future__ import annotations

from apachetune.lint.finding import LintResult
from apachetune.report import jsontext


def render(result: LintResult) -> str:
    return jsontext.dumps(result.to_json(), one_line_items=frozenset({"findings"}))
