"""The layering the architecture document promises, checked on the source (imports, not text)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "apachetune"


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def modules():
    return sorted(p for p in PKG.rglob("*.py"))


def test_only_the_httpd_module_and_the_process_runners_start_programs():
    # httpd.py runs httpd; validate/ runs mpmd, wrk and stops process groups; config/native.py
    # runs the C compiler once, to build the C parser. Nobody else forks.
    allowed = {PKG / "httpd.py", PKG / "config" / "native.py", PKG / "validate" / "mpmd_server.py", PKG / "validate" / "processes.py",
               PKG / "validate" / "load.py"}
    users = {p for p in modules() if "subprocess" in imports(p)}
    assert users <= allowed, sorted(str(p.relative_to(PKG)) for p in users - allowed)
    assert PKG / "httpd.py" in users


def test_validate_does_not_reach_into_generate_or_cli():
    for p in (PKG / "validate").rglob("*.py"):
        bad = {m for m in imports(p) if m.startswith(("apachetune.generate", "apachetune.cli"))}
        assert not bad, (p.name, bad)


def test_no_library_package_imports_the_cli():
    for p in modules():
        # __main__.py and entry.py start the executable: they hand over to the CLI
        if p.parent.name == "cli" or (p.parent == PKG and p.name in ("__main__.py", "entry.py")):
            continue
        bad = {m for m in imports(p) if m.startswith("apachetune.cli")}
        assert not bad, (str(p.relative_to(PKG)), bad)


def test_the_modules_directory_is_named_once():
    # Distribution knowledge lives in httpd.py; everything else asks it.
    holders = [p for p in modules() if "/usr/lib/apache2/modules" in p.read_text()]
    assert holders == [PKG / "httpd.py"]


def test_results_are_rendered_by_report_not_by_the_cli():
    # cli/ parses options and calls; the tables of lint, size, the wizard, validate and compare
    # are report/'s (issue 10).
    for p in (PKG / "cli").glob("*.py"):
        assert "rich.table" not in imports(p), p.name
