"""Rule metadata: one YAML file a rule under rules/ (id, name, severity, texts, references)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from apachetune.datafiles import load_yaml
from apachetune.lint.finding import SEVERITIES
from apachetune.paths import rules_dir


@dataclass(frozen=True)
class RuleOption:
    """A rule's threshold, settable in .apachetune.yaml (`rules: {AT302: {options: {...}}}`)."""

    name: str
    type: str  # int | float
    default: int | float
    minimum: int | float
    description: str

    def parse(self, value: object) -> int | float:
        """The value, or ValueError saying what was expected."""
        kind = int if self.type == "int" else float
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                (kind is int and not float(value).is_integer()) or value != value or \
                value in (float("inf"), float("-inf")):
            raise ValueError(f"expected {'an integer' if kind is int else 'a number'} >= {self.minimum}, "
                             f"got {value!r}")
        if value < self.minimum:
            raise ValueError(f"expected a value >= {self.minimum}, got {value!r}")
        return kind(value)


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
    options: dict[str, RuleOption] = field(default_factory=dict)

    @property
    def doc_page(self) -> str:
        return f"docs/rules/{self.id}.md"


REQUIRED = ("id", "name", "severity", "title", "rationale", "fix", "references", "groups", "fixable")


@lru_cache(maxsize=1)
def all_rules() -> dict[str, RuleMeta]:
    rules: dict[str, RuleMeta] = {}
    paths = sorted(rules_dir().glob("*.yaml"))
    for path, data in zip(paths, load_yaml(paths, "rules"), strict=True):
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
            path=path, options=_options(path, data.get("options") or {}))
    return rules


def _options(path: Path, raw: dict[str, Any]) -> dict[str, RuleOption]:
    out = {}
    for name, spec in raw.items():
        if spec.get("type") not in ("int", "float") or "default" not in spec:
            raise ValueError(f"{path}: option {name}: needs type (int or float) and default")
        out[name] = RuleOption(name, spec["type"], spec["default"], spec.get("minimum", 0),
                               spec.get("description", ""))
    return out


def option_default(rule: str, name: str) -> int | float:
    """A rule's threshold as shipped: the one table lint and generate both read."""
    return all_rules()[rule].options[name].default


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
