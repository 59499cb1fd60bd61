"""`.apachetune.yaml`: which rules run and at what severity.

    rules:
      AT301: disable          # an id, a rule name or a group
      keepalive: {severity: error}
    fail-on: warning          # default threshold for the exit code
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from apachetune.errors import UsageError
from apachetune.lint.finding import SEVERITIES
from apachetune.lint.metadata import resolve_selector

CONFIG_NAMES = (".apachetune.yaml", ".apachetune.yml")


@dataclass
class Settings:
    disabled: set[str] = field(default_factory=set)
    severity: dict[str, str] = field(default_factory=dict)
    fail_on: str | None = None
    source: str | None = None


def find_config(start: Path) -> Path | None:
    for directory in [start, *start.parents]:
        for name in CONFIG_NAMES:
            candidate = directory / name
            if candidate.is_file():
                return candidate
    return None


def load_settings(path: Path | None) -> Settings:
    if path is None:
        return Settings()
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise UsageError(f"{path}: cannot read settings: {e}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a mapping at the top level")
    unknown = set(data) - {"rules", "fail-on"}
    if unknown:
        raise UsageError(f"{path}: unknown key(s): {', '.join(sorted(unknown))}")
    settings = Settings(source=str(path))
    fail_on = data.get("fail-on")
    if fail_on is not None:
        if fail_on not in SEVERITIES:
            raise UsageError(f"{path}: fail-on must be one of {', '.join(SEVERITIES)}")
        settings.fail_on = fail_on
    for selector, value in (data.get("rules") or {}).items():
        try:
            ids = resolve_selector(str(selector))
        except KeyError:
            raise UsageError(f"{path}: unknown rule, name or group {selector!r}") from None
        if value in ("disable", False):
            settings.disabled |= ids
        elif value in ("enable", True):
            settings.disabled -= ids
        elif isinstance(value, dict) and set(value) <= {"severity"}:
            sev = value.get("severity")
            if sev not in SEVERITIES:
                raise UsageError(f"{path}: {selector}: severity must be one of {', '.join(SEVERITIES)}")
            for i in ids:
                settings.severity[i] = sev
        else:
            raise UsageError(f"{path}: {selector}: expected enable, disable or {{severity: ...}}")
    return settings
