"""Every rule: metadata, a registered check, a doc page in sync, and fixtures that prove it.

fixtures/rules/<ID>/bad*.conf must trigger the rule, good*.conf must not (gixy's discipline).
A first line `# lint-args: ...` gives the CLI arguments for that fixture (e.g. --mpm event).
"""

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.lint.checks import CHECKS
from apachetune.lint.metadata import all_rules

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "rules"
RULE_IDS = sorted(all_rules())


def test_every_rule_has_a_check_and_every_check_a_rule():
    from apachetune.lint.engine import ENGINE_RULES

    assert set(CHECKS) | set(ENGINE_RULES) == set(RULE_IDS)
    assert not set(CHECKS) & set(ENGINE_RULES)


def test_rule_docs_are_in_sync():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from gen_rule_docs import expected

    for path, text in expected().items():
        assert path.exists(), f"{path} missing: run python tools/gen_rule_docs.py"
        assert path.read_text() == text, f"{path} is stale: run python tools/gen_rule_docs.py"


def fixture_cases():
    for rid in RULE_IDS:
        for kind in ("bad", "good"):
            files = sorted((FIXTURES / rid).glob(f"{kind}*.conf"))
            yield pytest.param(rid, kind, files, id=f"{rid}-{kind}")


def lint_json(path: Path) -> dict:
    first = path.read_text(encoding="utf-8", errors="replace").lstrip("\ufeff").splitlines()[0]
    args = shlex.split(first.split(":", 1)[1]) if first.startswith("# lint-args:") else []
    result = CliRunner().invoke(cli, ["lint", str(path), "--format", "json", *args])
    assert result.exit_code in (0, 1, 2), result.output
    import json

    return json.loads(result.output)


@pytest.mark.parametrize("rid, kind, files", list(fixture_cases()))
def test_fixture_triggers_or_not(rid, kind, files):
    assert files, f"fixtures/rules/{rid}/ has no {kind}*.conf"
    for path in files:
        rules_found = [f["rule"] for f in lint_json(path)["findings"]]
        if kind == "bad":
            assert rid in rules_found, f"{path} should trigger {rid}: {rules_found}"
        else:
            assert rid not in rules_found, f"{path} should not trigger {rid}"


@pytest.mark.parametrize("rid", RULE_IDS)
def test_metadata_is_complete(rid):
    meta = all_rules()[rid]
    assert meta.title and meta.rationale and meta.fix and meta.groups
    assert meta.name.count(".") == 1


def _pinned_cases():
    from apachetune.lint.fixtures import rule_fixtures

    for rid in RULE_IDS:
        for fx in rule_fixtures(rid, ROOT / "fixtures"):
            yield pytest.param(fx, id=f"{rid}-{fx.path.stem}")


@pytest.mark.parametrize("fx", list(_pinned_cases()))
def test_fixture_findings_are_pinned(fx):
    """bad*: exactly the pinned findings (rule, line, column, message, fix) for the fixture's rule;
    good* and suppressed*: none. Regenerate with tools/pin_rule_fixtures.py and read the diff."""
    from apachetune.lint.fixtures import pinned

    got = pinned(fx, lint_json(fx.path)["findings"])
    if fx.kind == "bad":
        expected = fx.expected()
        assert expected is not None, f"{fx.expected_path} missing: run python tools/pin_rule_fixtures.py"
        assert expected, f"{fx.expected_path} pins no finding"
        assert got == expected
    else:
        assert got == [], f"{fx.path} should not trigger {fx.rule}"
