"""Output formats over one result model (LintResult): text, json, sarif, github."""

from __future__ import annotations

from apachetune.report import github, json_report, sarif, text

FORMATS = {"text": text.render, "json": json_report.render, "sarif": sarif.render,
           "github": github.render}
