"""SARIF 2.1.0 for code scanning (GitHub's upload-sarif and others)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from apachetune import __version__
from apachetune.lint.finding import LintResult
from apachetune.lint.metadata import all_rules
from apachetune.report import jsontext

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
HELP_BASE = "https://github.com/apachetune/apachetune/blob/main/docs/rules/"


@lru_cache(maxsize=4096)  # findings repeat files: one path computation a file
def _uri(path: str, base: Path) -> str:
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _region(loc) -> dict:
    return {"startLine": loc.line, "startColumn": loc.column}


def render(result: LintResult, base: Path | None = None) -> str:
    base = base or Path.cwd()
    rules = all_rules()
    used = sorted({f.rule for f in result.findings} | set())
    index = {rid: i for i, rid in enumerate(used)}
    descriptors = []
    for rid in used:
        meta = rules[rid]
        descriptors.append({
            "id": rid, "name": meta.name,
            "shortDescription": {"text": meta.title},
            "fullDescription": {"text": meta.rationale},
            "help": {"text": meta.fix},
            "helpUri": HELP_BASE + f"{rid}.md",
            "defaultConfiguration": {"level": _LEVEL[meta.severity]},
            "properties": {"tags": list(meta.groups)},
        })
    results = []
    for f in result.findings:
        item = {
            "ruleId": f.rule, "ruleIndex": index[f.rule], "level": _LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _uri(f.location.file, base)},
                "region": _region(f.location)}}],
        }
        if f.related:
            item["relatedLocations"] = [
                {"id": i, "physicalLocation": {"artifactLocation": {"uri": _uri(r.file, base)},
                                               "region": _region(r)}}
                for i, r in enumerate(f.related)]
        results.append(item)
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "apachetune", "version": __version__,
                                "informationUri": "https://github.com/apachetune/apachetune",
                                "rules": descriptors}},
            "originalUriBaseIds": {"SRCROOT": {"uri": base.as_uri() + "/"}},
            "results": results,
        }],
    }
    return jsontext.dumps(doc, one_line_items=frozenset({"results", "rules"}))
