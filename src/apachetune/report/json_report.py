"""The JSON contract: {"mpm": {...}, "findings": [{rule, severity, message, file, line, column}],
"summary": {error, warning, info}} (keys may be added, never renamed)."""

from __future__ import annotations

import json

from apachetune.lint.finding import LintResult


def render(result: LintResult) -> str:
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"
