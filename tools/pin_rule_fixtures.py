"""Write fixtures/rules/<ID>/<bad*>.expected.yaml from what lint reports now.

Run it after adding a rule or a bad fixture, then read the diff: the pinned line, column, message
and fix are what the meta-test holds the rule to. `--check` exits 1 if any file would change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from apachetune.cli import cli  # noqa: E402
from apachetune.lint.fixtures import pinned, rule_fixtures  # noqa: E402
from apachetune.lint.metadata import all_rules  # noqa: E402


def lint_findings(fixture) -> list[dict]:
    result = CliRunner().invoke(cli, ["lint", str(fixture.path), "--format", "json", *fixture.lint_args])
    return json.loads(result.output)["findings"]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    only = [a for a in argv if not a.startswith("--")]
    changed = []
    for rid in all_rules():
        if only and rid not in only:
            continue
        for fx in rule_fixtures(rid, ROOT / "fixtures"):
            if fx.kind != "bad":
                continue
            text = yaml.safe_dump(pinned(fx, lint_findings(fx)), sort_keys=False, allow_unicode=True, width=100)
            old = fx.expected_path.read_text() if fx.expected_path.exists() else None
            if old != text:
                changed.append(fx.expected_path)
                if not check:
                    fx.expected_path.write_text(text)
    for path in changed:
        print(f"{'would change' if check else 'wrote'} {path.relative_to(ROOT)}")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
