"""Rule fixtures: fixtures/rules/<ID>/{bad,good,suppressed}*.conf and what each bad one reports.

A bad fixture's findings for its own rule are pinned in `<name>.expected.yaml` (rule, line, column,
message and fix), so a finding that moves or changes text fails a test. The first line of a fixture
may be `# lint-args: ...` (CLI arguments such as `--mpm event`). Used by the meta-tests, by
`tools/pin_rule_fixtures.py` and by the generated rule pages.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from apachetune.paths import repo_fixtures_dir

KINDS = ("bad", "good", "suppressed")


@dataclass(frozen=True)
class RuleFixture:
    rule: str
    kind: str  # bad | good | suppressed
    path: Path

    @property
    def expected_path(self) -> Path:
        return self.path.with_suffix(".expected.yaml")

    @property
    def lint_args(self) -> list[str]:
        first = self.path.read_text(encoding="utf-8", errors="replace").lstrip("\ufeff").split("\n", 1)[0]
        return shlex.split(first.split(":", 1)[1]) if first.startswith("# lint-args:") else []

    def expected(self) -> list[dict[str, Any]] | None:
        if not self.expected_path.exists():
            return None
        return yaml.safe_load(self.expected_path.read_text()) or []


def rule_fixtures(rule: str, root: Path | None = None) -> list[RuleFixture]:
    base = (root or repo_fixtures_dir() or Path("/nonexistent")) / "rules" / rule
    if not base.is_dir():
        return []
    return [RuleFixture(rule, kind, p) for kind in KINDS for p in sorted(base.glob(f"{kind}*.conf"))]


def pinned(fixture: RuleFixture, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fixture's findings for its own rule, as the expected file stores them."""
    out = []
    root = str(fixture.path.resolve().parents[3]) + "/"  # the checkout: messages pinned without it
    for f in findings:
        if f["rule"] != fixture.rule:
            continue
        entry: dict[str, Any] = {"rule": f["rule"], "line": f["line"], "column": f["column"],
                                 "message": f["message"].replace(root, "")}
        if Path(f["file"]).resolve() != fixture.path.resolve():
            entry["file"] = str(Path(f["file"]).resolve().relative_to(fixture.path.parent.resolve()))
        if f.get("fix"):
            entry["fix"] = {k: v for k, v in f["fix"].items() if k != "description"}
        out.append(entry)
    return out
