"""Rule metadata: one YAML file a rule under rules/ (id, name, severity, texts, references)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from apachetune.lint.finding import SEVERITIES
from apachetune.paths import rules_dir


@dataclass(frozen=True)
class RuleMeta:
    id: str
    name: str
    severity: str
    title: str
    rationale: str
    fix: str
    references: tuple[str, ...]
    groups: tuple[str, ...]
    fixable: bool
    httpd_codes: tuple[str, ...]
    examples: dict[str, str]
    path: Path

    @property
    def doc_page(self) -> str:
        return f"docs/rules/{self.id}.md"


REQUIRED = ("id", "name", "severity", "title", "rationale", "fix", "references", "groups", "fixable")


@lru_cache(maxsize=1)
def all_rules() -> dict[str, RuleMeta]:
    rules: dict[str, RuleMeta] = {}
    for path in sorted(rules_dir().glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        missing = [k for k in REQUIRED if k not in data]
        if missing:
            raise ValueError(f"{path}: missing {', '.join(missing)}")
        if data["severity"] not in SEVERITIES:
            raise ValueError(f"{path}: severity must be one of {SEVERITIES}")
        if data["id"] != path.stem:
            raise ValueError(f"{path}: id {data['id']} does not match the file name")
        rules[data["id"]] = RuleMeta(
            id=data["id"], name=data["name"], severity=data["severity"], title=data["title"],
            rationale=data["rationale"], fix=data["fix"], references=tuple(data["references"]),
            groups=tuple(data["groups"]), fixable=bool(data["fixable"]),
            httpd_codes=tuple(data.get("httpd_codes", ())), examples=dict(data.get("examples") or {}),
            path=path)
    return rules


def resolve_selector(selector: str) -> set[str]:
    """A rule id, name or group -> the ids it selects (sqlfluff-style selectors)."""
    rules = all_rules()
    if selector in rules:
        return {selector}
    by_name = {r.id for r in rules.values() if r.name == selector}
    if by_name:
        return by_name
    by_group = {r.id for r in rules.values() if selector in r.groups}
    if by_group:
        return by_group
    raise KeyError(selector)
