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


@pytest.mark.parametrize("fx", [p for p in _pinned_cases() if p.values[0].kind == "bad"])
def test_a_moved_finding_or_a_changed_fix_fails_the_pins(fx, tmp_path):
    """The mutation check: a finding reported one line lower (the fixture shifted by a comment
    line), or a fix with another value, no longer equals the pinned expectation."""
    import dataclasses

    from apachetune.lint.fixtures import pinned

    expected = fx.expected()
    text = fx.path.read_text(encoding="utf-8", errors="surrogateescape")
    first, _, rest = text.partition("\n")
    keep_first = first.lstrip("\ufeff").startswith("# lint-args:") or first.startswith("\ufeff")
    shifted = (first + "\n# a line added above\n" + rest) if keep_first else ("# a line added above\n" + text)
    moved = tmp_path / "fixtures" / "rules" / fx.rule / fx.path.name  # pinned() strips the checkout
    moved.parent.mkdir(parents=True)
    moved.write_text(shifted, encoding="utf-8", errors="surrogateescape")
    got = pinned(dataclasses.replace(fx, path=moved), lint_json(moved)["findings"])
    anchored = [e for e in expected if (e["line"], e["column"]) != (1, 1)]  # not a whole-file finding
    if anchored:
        assert got != expected, f"{fx.path}: a shifted fixture still matches its pins"
    for e in expected:
        for key, value in (e.get("fix") or {}).get("set", {}).items():
            mutated = [dict(x, fix={**x["fix"], "set": {**x["fix"]["set"], key: value + "0"}}) if x is e else x
                       for x in expected]
            assert pinned(fx, lint_json(fx.path)["findings"]) != mutated
