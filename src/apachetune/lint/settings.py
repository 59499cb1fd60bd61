"""`.apachetune.yaml`: which rules run, at what severity, with which thresholds.

    rules:
      AT301: disable          # an id, a rule name or a group
      keepalive: {severity: error}
      AT302: {options: {max_seconds: 10}}
    fail-on: warning          # default threshold for the exit code

A mistake is reported at its line and column in the file (never a traceback).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apachetune.config import observed
from apachetune.errors import UsageError
from apachetune.lint.finding import SEVERITIES
from apachetune.lint.metadata import all_rules, resolve_selector

if TYPE_CHECKING:
    import yaml  # imported by load_settings only: most lints read no settings file

CONFIG_NAMES = (".apachetune.yaml", ".apachetune.yml")


@dataclass
class Settings:
    disabled: set[str] = field(default_factory=set)
    severity: dict[str, str] = field(default_factory=dict)
    options: dict[str, dict[str, int | float]] = field(default_factory=dict)  # rule -> option -> value
    fail_on: str | None = None
    source: str | None = None

    def option(self, rule: str, name: str) -> int | float:
        value = self.options.get(rule, {}).get(name)
        return value if value is not None else all_rules()[rule].options[name].default


def find_config(start: Path) -> Path | None:
    for directory in [start, *start.parents]:
        for name in CONFIG_NAMES:
            candidate = directory / name
            if observed.isfile(str(candidate)):
                return candidate
    return None


class _Error(UsageError):
    def __init__(self, path: Path, node: yaml.Node | None, message: str):
        where = f"{path}:{node.start_mark.line + 1}:{node.start_mark.column + 1}" if node is not None else str(path)
        super().__init__(f"{where}: {message}")


def _mapping(path: Path, node: yaml.Node, what: str) -> list[tuple[yaml.Node, yaml.Node]]:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise _Error(path, node, f"{what}: expected a mapping")
    pairs: list[tuple[yaml.Node, yaml.Node]] = node.value
    return pairs


def _scalar(node: yaml.Node) -> Any:
    import yaml

    return yaml.safe_load(yaml.serialize(node)) if isinstance(node, yaml.ScalarNode) else None


def load_settings(path: Path | None) -> Settings:
    if path is None:
        return Settings()
    import yaml  # here: most lints read no settings file

    try:
        root = yaml.compose(path.read_text())
        observed.file_read(str(path))
    except OSError as e:
        raise UsageError(f"{path}: cannot read settings: {e.strerror}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise UsageError(f"{where}: not valid YAML: {getattr(e, 'problem', e)}") from None
    settings = Settings(source=str(path))
    if root is None:
        return settings
    for key_node, value_node in _mapping(path, root, "the top level"):
        key = key_node.value
        if key == "fail-on":
            fail_on = _scalar(value_node)
            if fail_on not in SEVERITIES:
                raise _Error(path, value_node, f"fail-on must be one of {', '.join(SEVERITIES)}")
            settings.fail_on = fail_on
        elif key == "rules":
            if isinstance(value_node, yaml.ScalarNode) and _scalar(value_node) is None:
                continue
            for sel_node, rule_node in _mapping(path, value_node, "rules"):
                _rule_setting(path, settings, sel_node, rule_node)
        else:
            raise _Error(path, key_node, f"unknown key {key!r} (expected rules or fail-on)")
    return settings


def _rule_setting(path: Path, settings: Settings, sel_node: yaml.Node, node: yaml.Node) -> None:
    import yaml

    selector = str(sel_node.value)
    try:
        ids = resolve_selector(selector)
    except KeyError:
        raise _Error(path, sel_node, f"unknown rule, name or group {selector!r}") from None
    value = _scalar(node)
    if value in ("disable", False):
        settings.disabled |= ids
        return
    if value in ("enable", True):
        settings.disabled -= ids
        return
    if not isinstance(node, yaml.MappingNode):
        raise _Error(path, node, f"{selector}: expected enable, disable or {{severity: ..., options: ...}}")
    for key_node, val_node in node.value:
        if key_node.value == "severity":
            sev = _scalar(val_node)
            if sev not in SEVERITIES:
                raise _Error(path, val_node, f"{selector}: severity must be one of {', '.join(SEVERITIES)}")
            for i in ids:
                settings.severity[i] = sev
        elif key_node.value == "options":
            _options(path, settings, selector, ids, val_node)
        else:
            raise _Error(path, key_node, f"{selector}: unknown key {key_node.value!r} (expected severity "
                         "or options)")


def _options(path: Path, settings: Settings, selector: str, ids: set[str], node: yaml.Node) -> None:
    rules = all_rules()
    for key_node, val_node in _mapping(path, node, f"{selector}: options"):
        name = key_node.value
        owners = [i for i in sorted(ids) if name in rules[i].options]
        if not owners:
            known = sorted({o for i in ids for o in rules[i].options})
            raise _Error(path, key_node, f"{selector}: unknown option {name!r}"
                         + (f" (options: {', '.join(known)})" if known else " (this rule has no options)"))
        for rule in owners:
            try:
                settings.options.setdefault(rule, {})[name] = rules[rule].options[name].parse(_scalar(val_node))
            except ValueError as e:
                raise _Error(path, val_node, f"{rule}: option {name}: {e}") from None
