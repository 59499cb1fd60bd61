"""GitHub Actions workflow commands: one ::error/::warning/::notice line a finding."""

from __future__ import annotations

from apachetune.lint.finding import LintResult
from apachetune.report.paths import display_path

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render(result: LintResult) -> str:
    lines = []
    for f in result.findings:
        loc = f.location
        lines.append(
            f"::{_LEVEL[f.severity]} file={_escape(display_path(loc.file), True)},line={loc.line},col={loc.column},"
            f"title={_escape(f.rule + ' ' + f.title, True)}::{_escape(f.message)}")
    return "\n".join(lines) + ("\n" if lines else "")
