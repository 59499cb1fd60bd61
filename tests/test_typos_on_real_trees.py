"""A typo in a stock tree is an error, as `apache2 -t` says it is. Debian's tree loads modules
that define no directive (authz_host, status, ...); they are httpd's own, not third-party
modules that could define the unknown name, so AT501 stays on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from apachetune.config.resolver import ResolveOptions
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings
from httpd_oracle import APACHE2, run_httpd

ROOT = Path(__file__).resolve().parents[1]
DEBIAN = Path("/etc/apache2")


def at501(main: Path, env: dict | None = None) -> list[str]:
    result = lint_file(main, LintOptions(ResolveOptions(env=env), Settings()))
    return [f.message for f in result.findings if f.rule == "AT501"]


@pytest.mark.parametrize("typo, name", [("KeepAliveTimeout 5", "KeepAliveTimout 5"),
                                        (None, "MaxRequestWorker 400")])
def test_a_typo_in_debians_stock_tree_is_an_error(tmp_path, typo, name):
    if not (DEBIAN / "apache2.conf").exists():
        pytest.skip("no /etc/apache2 on this machine")
    tree = tmp_path / "apache2"
    shutil.copytree(DEBIAN, tree, symlinks=True)
    main = tree / "apache2.conf"
    text = main.read_text()
    text = text.replace(typo, name, 1) if typo else text + name + "\n"
    main.write_text(text)
    from apachetune.config.envvars import read_envvars

    env = read_envvars(tree / "envvars")
    found = at501(main, env)
    word = name.split()[0]
    assert any(f"Invalid command '{word}'" in m for m in found), found
    if APACHE2:
        proc = run_httpd("-t", "-d", str(tree), "-f", str(main), env=env)
        assert proc.returncode != 0 and f"Invalid command '{word}'" in proc.stderr


def test_a_typo_in_the_bundled_sample_is_an_error(tmp_path):
    tree = tmp_path / "sample"
    shutil.copytree(ROOT / "fixtures" / "sample", tree, symlinks=True)
    main = tree / "apache2.conf"
    main.write_text(main.read_text() + "MaxRequestWorker 400\n")
    assert any("Invalid command 'MaxRequestWorker'" in m for m in at501(main, {}))


def test_a_third_party_module_turns_unknown_names_into_warnings(tmp_path):
    so = tmp_path / "mod_example.so"
    so.write_bytes(b"")
    conf = tmp_path / "httpd.conf"
    conf.write_text("LoadModule mpm_event_module modules/mod_mpm_event.so\n"
                    "LoadModule authz_host_module modules/mod_authz_host.so\n"
                    f"LoadModule example_module {so}\nExampleDirective on\n")
    result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
    [f] = [f for f in result.findings if f.rule == "AT501"]  # example_module may define it: a warning
    assert f.severity == "warning" and "example_module" in f.message
    conf.write_text("LoadModule mpm_event_module modules/mod_mpm_event.so\n"
                    "LoadModule authz_host_module modules/mod_authz_host.so\n"
                    "LoadModule status_module modules/mod_status.so\nExampleDirective on\n")
    assert at501(conf, {}) != []  # httpd's own modules define no such thing
