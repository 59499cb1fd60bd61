"""`apachetune lint --fix`: every fixable rule's fix removes its finding and adds none."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.lint.fix import plan_fixes
from apachetune.lint.fixtures import rule_fixtures
from apachetune.lint.metadata import all_rules
from httpd_oracle import APACHE2

ROOT = Path(__file__).resolve().parents[1]


def options_for(fx):
    """LintOptions the CLI would build from the fixture's `# lint-args:` line."""
    from apachetune.cli.options import make_resolve_options
    from apachetune.lint.engine import LintOptions
    from apachetune.lint.host import load_facts
    from apachetune.lint.settings import Settings

    args = fx.lint_args
    mpm = args[args.index("--mpm") + 1] if "--mpm" in args else None
    facts = args[args.index("--facts") + 1] if "--facts" in args else None
    cpus = int(args[args.index("--cpus") + 1]) if "--cpus" in args else None
    resolve = make_resolve_options(None, (), (), "2.4.71", mpm, None)
    if mpm:
        resolve.modules.append(f"mpm_{mpm}_module")
    settings = Settings()
    if "--keepalive-clients" in args:
        settings.options["AT302"] = {"idle_clients": float(args[args.index("--keepalive-clients") + 1])}
    return LintOptions(resolve, settings, snippet=mpm is not None, cpus=cpus,
                       host=load_facts(ROOT / facts) if facts else None)


def fixable_cases():
    """The bad fixtures of fixable rules whose every pinned finding carries a fix (a rule such as
    AT510 fixes only the unambiguous cases: its other fixtures pin findings without one)."""
    for rid, meta in all_rules().items():
        if not meta.fixable:
            continue
        for fx in rule_fixtures(rid, ROOT / "fixtures"):
            if fx.kind == "bad" and all("fix" in e for e in fx.expected() or [{}]):
                yield pytest.param(fx, id=f"{rid}-{fx.path.stem}")


@pytest.mark.parametrize("fx", list(fixable_cases()))
def test_fix_removes_the_finding_and_adds_none(fx, tmp_path):
    conf = tmp_path / fx.path.name
    shutil.copy(fx.path, conf)
    outcome = plan_fixes(str(conf), options_for(fx))
    assert fx.rule in {f.rule for f in outcome.before.findings}
    assert outcome.new, f"{fx.rule}: fixable, but its fix changed nothing"
    assert fx.rule not in {f.rule for f in outcome.after.findings}, outcome.changes
    assert not outcome.introduced, (outcome.introduced, outcome.changes)
    # Minimal: every changed line is one the fixes name (or a line they add).
    old = outcome.original[str(conf)].decode().splitlines()
    new = outcome.new[str(conf)].decode().splitlines()
    assert sum(1 for line in old if line not in new) <= len(outcome.changes)


def test_every_fixable_rule_has_a_fixture_that_exercises_its_fix():
    covered = {fx.values[0].rule for fx in fixable_cases()}
    assert covered == {rid for rid, m in all_rules().items() if m.fixable}


def copy_debian(tmp_path: Path) -> Path:
    root = tmp_path / "debian"
    shutil.copytree(ROOT / "fixtures" / "trees" / "debian", root, symlinks=True)
    return root


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.skipif(APACHE2 is None, reason="needs apache2")
def test_fix_on_the_debian_tree_is_minimal_checked_and_undoable(tmp_path):
    root = copy_debian(tmp_path)
    main = root / "apache2.conf"
    (root / "mods-available" / "mpm_event.conf").write_text(
        (root / "mods-available" / "mpm_event.conf").read_text().replace(
            "MaxRequestWorkers       150", "MaxRequestWorkers       160"))
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}
    r = run("lint", main, "--fix", "--diff")
    assert r.exit_code == 0 and "-MaxRequestWorkers" in r.stdout
    assert {p: p.read_bytes() for p in before} == before  # --diff writes nothing
    r = run("lint", main, "--fix", "--format", "json")
    assert r.exit_code in (0, 1), r.stderr
    assert "apache2 -t: passed" in r.stderr
    remaining = {f["rule"] for f in json.loads(r.stdout)["findings"]}
    fixable = {rid for rid, m in all_rules().items() if m.fixable}
    assert not remaining & fixable, remaining
    changed = [p for p, data in before.items() if p.read_bytes() != data]
    assert changed and all(".bak" not in p.name for p in root.rglob("*"))
    # Only named lines changed: every differing line is reported in the change list.
    run_dirs = list(Path(os.environ["APACHETUNE_BACKUP_DIR"]).iterdir())
    assert len(run_dirs) == 1
    r = run("restore", run_dirs[0])
    assert r.exit_code == 0 and {p: p.read_bytes() for p in before} == before


def test_only_fixable_rules_carry_fixes():
    from apachetune.lint.engine import lint

    for rid in all_rules():
        for fx in rule_fixtures(rid, ROOT / "fixtures"):
            for f in lint(str(fx.path), options_for(fx)).findings:
                assert f.fix is None or all_rules()[f.rule].fixable, (f.rule, fx.path)


@pytest.mark.skipif(APACHE2 is None, reason="needs apache2")
@pytest.mark.parametrize("fx", list(fixable_cases()))
def test_lint_fix_cli_on_every_fixable_fixture(fx, tmp_path):
    """The whole command: where apache2 -t accepts the fixture, --fix writes, the rule is gone,
    apache2 -t still passes and a backup exists; where it does not (a module file missing on
    this machine, a DocumentRoot that does not exist), nothing is written."""
    from apachetune.generate.check import httpd_check

    conf = tmp_path / fx.path.name
    shutil.copy(fx.path, conf)
    args = [a if not a.endswith("host.json") else str(ROOT / a) for a in fx.lint_args]
    options = options_for(fx)
    before = conf.read_bytes()
    r = run("lint", conf, *args, "--fix", "--format", "json")
    if options.snippet:
        original_ok = True  # checked inside a minimal server that loads its MPM
    else:
        original_ok = httpd_check(str(conf), options.resolve, {}).ok
    if not original_ok:
        assert r.exit_code != 0 and "nothing was written" in r.stderr and conf.read_bytes() == before
        return
    assert "apache2 -t: passed" in r.stderr, r.stderr
    assert fx.rule not in {f["rule"] for f in json.loads(r.stdout)["findings"]}
    assert conf.read_bytes() != before
    (backup,) = Path(os.environ["APACHETUNE_BACKUP_DIR"]).glob(f"*/files{conf.resolve()}")
    assert backup.read_bytes() == before


def _small_tree(root: Path) -> Path:
    (root / "conf" / "conf.d").mkdir(parents=True)
    (root / "htdocs").mkdir()
    (root / "htdocs" / "index.html").write_text("hi\n")
    (root.parent / "outside-logs").mkdir()
    (root / "logs").symlink_to("../outside-logs")  # as RHEL's logs -> ../../var/log/httpd
    (root / "conf" / "conf.d" / "a.conf").write_text("KeepAlive On\n")
    (root / "conf" / "conf.d" / "b.conf").symlink_to("a.conf")
    main = root / "conf" / "httpd.conf"
    main.write_text(f"ServerRoot {root}\nServerName x\nInclude conf/conf.d/a.conf\n")
    return main


def test_the_check_tree_links_all_but_the_directories_it_changes(tmp_path):
    from apachetune.generate.check import shadow_tree

    root = tmp_path / "root"
    main = _small_tree(root)
    copy = tmp_path / "copy"
    shadow_tree(root, copy, [root / "conf" / "conf.d", main.parent])
    assert not (copy / "conf").is_symlink() and not (copy / "conf" / "conf.d").is_symlink()
    assert (copy / "htdocs").is_symlink() and (copy / "htdocs").resolve() == root / "htdocs"
    assert (copy / "conf" / "conf.d" / "a.conf").resolve() == root / "conf" / "conf.d" / "a.conf"
    assert os.readlink(copy / "conf" / "conf.d" / "b.conf") == "a.conf"  # inside the copy: kept relative
    assert (copy / "logs").resolve() == tmp_path / "outside-logs"  # outside it: the original's target


@pytest.mark.skipif(APACHE2 is None, reason="needs apache2")
def test_the_httpd_check_of_a_tree_that_holds_the_temporary_directory(tmp_path, monkeypatch):
    """A config in /tmp has /tmp as its server root, and the check's copy is made in /tmp: the
    copy must not copy itself (it did, until the path was too long, with a traceback)."""
    import tempfile

    from apachetune import httpd
    from apachetune.config.resolver import ResolveOptions
    from apachetune.generate.check import httpd_check

    root = tmp_path / "root"
    main = _small_tree(root)
    main.write_text(main.read_text() + httpd.load_module_line("mpm_event") + "\n")
    (root / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root / "tmp"))
    a = str(root / "conf" / "conf.d" / "a.conf")
    assert httpd_check(str(main), ResolveOptions(env={}), {a: b"KeepAlive Off\n"}).ok
    refused = httpd_check(str(main), ResolveOptions(env={}), {a: b"KeepAliveTimeout -1\n"})
    assert not refused.ok and "KeepAliveTimeout" in refused.problems[0]
    assert (root / "conf" / "conf.d" / "a.conf").read_text() == "KeepAlive On\n"
    assert list((root / "tmp").iterdir()) == []
