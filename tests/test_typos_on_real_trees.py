"""A typo in a stock tree is an error, as `apache2 -t` says it is. Debian's tree loads modules
that define no directive (authz_host, status, ...); they are httpd's own, not third-party
modules that could define the unknown name, so AT501 stays on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.config.resolver import ResolveOptions, resolve
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


def _sample_with(tmp_path: Path, line: str) -> Path:
    tree = tmp_path / "sample"
    shutil.copytree(ROOT / "fixtures" / "sample", tree, symlinks=True)
    main = tree / "apache2.conf"
    main.write_text(main.read_text() + line + "\n")
    return main


def test_simulate_and_validate_refuse_a_whole_configuration_httpd_would_not_start(tmp_path):
    # The typo meant MaxRequestWorkers 40: simulating the default 400 instead would answer
    # another question. Refused with httpd's words, where the line is, before anything runs.
    main = _sample_with(tmp_path, "MaxRequestWorker 40")
    line = len(main.read_text().splitlines())
    for argv in (["simulate", str(main), "--clients", "10", "--seconds", "1"],
                 ["validate", "--mpm", "worker", "--config", str(main), "--plan", "static"]):
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code == 2, (argv, result.output)
        assert f"{main}:{line}:1: httpd would not start with this configuration: Invalid command " \
               "'MaxRequestWorker'" in result.output and "did you mean MaxRequestWorkers?" in result.output
        assert "Traceback" not in result.output and "req/s" not in result.output


def test_size_says_httpd_would_not_start_and_still_recommends(tmp_path):
    # the recommendation stands (generate refuses to write into the tree until the line is fixed)
    main = _sample_with(tmp_path, "MaxRequestWorker 40")
    result = CliRunner().invoke(cli, ["size", str(main), "--rate", "100", "--curve", "--no-measure",
                                      "--per-worker-mb", "20", "--memory", "2G"])
    assert result.exit_code == 0, result.output
    assert "warning: " in result.stderr and "Invalid command 'MaxRequestWorker'" in result.stderr
    assert "after (recommended)" in result.output


def test_simulate_runs_a_fragment_with_an_unknown_line_and_says_so(tmp_path):
    # A file that loads no module may be included by one that loads what defines the line
    frag = tmp_path / "mpm.conf"
    frag.write_text("<IfModule mpm_worker_module>\n  MaxRequestWorker 40\n  ThreadsPerChild 10\n</IfModule>\n")
    result = CliRunner().invoke(cli, ["simulate", str(frag), "--mpm", "worker", "--clients", "10",
                                      "--seconds", "1", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert f"warning: {frag}:2:3: Invalid command 'MaxRequestWorker'" in result.stderr
    assert json.loads(result.stdout)["section"]["ThreadsPerChild"] == 10
    frag.write_text(frag.read_text().replace("MaxRequestWorker ", "MaxRequestWorkers "))
    result = CliRunner().invoke(cli, ["simulate", str(frag), "--mpm", "worker", "--clients", "10", "--seconds", "1"])
    assert result.exit_code == 0 and "warning" not in result.stderr


def test_a_module_assumed_loaded_and_loaded_by_a_line_is_at_that_line(tmp_path):
    conf = tmp_path / "httpd.conf"
    conf.write_text("LoadModule mpm_worker_module modules/mod_mpm_worker.so\nThreadsPerChild 10\n")
    eff = resolve(str(conf), ResolveOptions(env={}, modules=["mpm_worker_module"]))
    assert eff.module_positions["mpm_worker_module"].line == 1
    assert not any("already loaded" in w for w in eff.warnings)


def _debian_with_every_module(tmp_path: Path) -> Path:
    """Debian's tree with every module it ships enabled (one MPM, no PHP), every conf-available
    and the default-ssl site: the stock .conf files of 130-odd modules, read by one httpd."""
    import re

    from apachetune.config.directives import shipped_modules

    tree = tmp_path / "apache2"
    shutil.copytree(DEBIAN, tree, symlinks=True)

    def third_party(load: Path) -> bool:
        # a machine with other packages' modules (mod_perl, mod_wsgi...): those may register
        # providers and filters lint cannot know, and are tests/test_module_table.py's matter
        return any(m not in shipped_modules() for m in re.findall(r"^\s*LoadModule\s+(\S+)", load.read_text(), re.M))

    for link in sorted((tree / "mods-enabled").iterdir()):
        load = tree / "mods-available" / f"{link.stem}.load"
        if link.suffix in (".load", ".conf") and load.exists() and third_party(load):
            link.unlink()
    for load in sorted((tree / "mods-available").glob("*.load")):
        name = load.stem
        if name.startswith(("mpm_", "php")) and name != "mpm_event" or third_party(load):
            continue
        for suffix in (".load", ".conf"):
            src = tree / "mods-available" / f"{name}{suffix}"
            link = tree / "mods-enabled" / f"{name}{suffix}"
            if src.exists() and not link.exists():
                link.symlink_to(f"../mods-available/{name}{suffix}")
    for conf in sorted((tree / "conf-available").glob("*.conf")):
        if not (tree / "conf-enabled" / conf.name).exists():
            (tree / "conf-enabled" / conf.name).symlink_to(f"../conf-available/{conf.name}")
    if (tree / "sites-available" / "default-ssl.conf").exists() and not (tree / "sites-enabled" / "default-ssl.conf").exists():
        (tree / "sites-enabled" / "default-ssl.conf").symlink_to("../sites-available/default-ssl.conf")
    return tree


_NOT_MUTATED = {"include", "includeoptional", "loadmodule", "defaultruntimedir", "user", "group",
                "sslcertificatefile", "sslcertificatekeyfile", "sslcertificatechainfile",
                "sslcacertificatefile", "sslcacertificatepath", "sslcarevocationfile", "sslcarevocationpath",
                "sslpassphrasedialog", "documentroot", "errorlog", "customlog", "alias", "scriptalias"}
SEEDS = int(__import__("os").environ.get("APACHETUNE_MUTATION_SEEDS", "8"))
_MUTATIONS = (lambda w: w[:-1], lambda w: w + "x", lambda w: w.swapcase(), lambda w: w[:1] + w[2:],
              lambda w: "-" + w, lambda w: "0", lambda w: "+" + w, lambda w: w + "=")


@pytest.mark.skipif(APACHE2 is None or not (DEBIAN / "apache2.conf").exists(), reason="needs Debian's apache2")
@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_changed_value_in_the_whole_stock_tree_gets_httpds_verdict(tmp_path, seed):
    """One argument of one directive changed (a letter dropped or added, a sign, a zero...),
    chosen by a seeded draw over the enabled files: lint has an error exactly when apache2 -t
    fails (the findings of what httpd refuses: AT5xx and AT116; AT1xx errors are start-up
    changes httpd makes and goes on). Left out: DefaultRuntimeDir (Debian's apache2ctl creates that
    directory itself), User/Group (the names are this machine's user database's), the directives
    naming absolute files (lint judges those only where the parent directory exists:
    test_core_readers.py)."""
    import random

    from apachetune.config.envvars import read_envvars

    rng = random.Random(seed)
    tree = _debian_with_every_module(tmp_path)
    files = sorted({p.resolve() for d in ("mods-enabled", "conf-enabled", "sites-enabled")
                    for p in (tree / d).glob("*.conf")} | {tree / "apache2.conf"})
    lines = [(f, i) for f in files for i, line in enumerate(f.read_text().split("\n"))
             if len(line.split()) >= 2 and not line.strip().startswith(("#", "<"))
             and line.split()[0].lower() not in _NOT_MUTATED]
    env = read_envvars(tree / "envvars")
    disagreements = []
    for _ in range(6):
        path, index = rng.choice(lines)
        original = path.read_text()
        text = original.split("\n")
        words = text[index].split()
        k = rng.randrange(1, len(words))
        words[k] = rng.choice(_MUTATIONS)(words[k])
        text[index] = " ".join(words)
        path.write_text("\n".join(text))
        proc = run_httpd("-t", "-d", str(tree), "-f", str(tree / "apache2.conf"), env=env)
        result = lint_file(tree / "apache2.conf", LintOptions(ResolveOptions(env=env), Settings()))
        errors = [f.message for f in result.findings
                  if f.severity == "error" and (f.rule.startswith("AT5") or f.rule == "AT116")]
        if bool(errors) != (proc.returncode != 0):
            disagreements.append((path.name, index + 1, text[index], proc.stderr.strip()[-200:], errors[:2]))
        path.write_text(original)
    assert disagreements == []


# Mistakes a hand edit of Debian's stock tree makes, each in its file: (file, text, replaced by).
# Found by a differential fuzz (one character dropped or swapped, a word doubled or dropped, a
# quote or '>' lost, a digit changed: apache2 -t against lint); the LoadModule path was passed
# silently until a missing module directory was judged for a tree installed here.
_HAND_EDITS = [
    ("mods-available/authn_core.load", "/usr/lib/apache2/modules/", "/usr/lib/apache2/modles/"),
    ("mods-available/status.load", "/usr/lib/apache2/", "/usr/lib/apache8/"),
    ("mods-available/status.load", "mod_status.so", "mod_stats.so"),
    ("mods-available/ssl.conf", "exec:/usr/share/apache2/ask-for-passphrase", "exec:/usr/share/apache2/ask-for-passphrse"),
    ("apache2.conf", "<Directory /var/www/>", "<Directory /var/www/"),
    ("apache2.conf", "</Directory>", "</Directry>"),
    ("apache2.conf", "Require all granted", "Require all grantd"),
    ("apache2.conf", "Options Indexes FollowSymLinks", "Options Indexes FolowSymLinks"),
    ("apache2.conf", "AllowOverride None", "AllowOverride Nne"),
    ("apache2.conf", "Include ports.conf", "Include port.conf"),
    ("apache2.conf", "IncludeOptional conf-enabled/*.conf", "IncludeOptional conf-enabled/*.con"),
    ("apache2.conf", '"%h %l %u %t \\"%r\\" %>s %O" common', '"%h %l %u %t \\"%r\\" %>s %O common'),
    ("apache2.conf", "ErrorLog ${APACHE_LOG_DIR}/error.log", "ErrorLog ${APACHE_LOG_DIR/error.log"),
    ("apache2.conf", "KeepAlive On", "KeepAlive Onn"),
    ("apache2.conf", "MaxKeepAliveRequests 100", "MaxKeepAliveRequests 1OO"),
    ("apache2.conf", "User ${APACHE_RUN_USER}", "User ${APACHE_RUN_USR}"),
    ("apache2.conf", "Group ${APACHE_RUN_GROUP}", "Group ${APACHE_RUN_GRP}"),
    ("apache2.conf", "User ${APACHE_RUN_USER}", "User #33"),
    ("apache2.conf", "AccessFileName .htaccess", "AccessFileName .htaccess .htaccess"),
    ("ports.conf", "Listen 80", "Listen 8O"),
    ("ports.conf", "<IfModule ssl_module>", "<IfModule ssl_module"),
    ("mods-available/mpm_event.conf", "StartServers", "StartServer"),
    ("mods-available/mpm_event.conf", "ThreadsPerChild         25", "ThreadsPerChild         2 5"),
    ("mods-available/mpm_event.conf", "ThreadsPerChild         25", "ThreadsPerChild         x25"),
    ("sites-available/000-default.conf", "<VirtualHost *:80>", "<VirtualHost *:80"),
    ("sites-available/000-default.conf", "ServerAdmin webmaster@localhost", "ServerAdmin"),
    ("sites-available/000-default.conf", "</VirtualHost>", "</Virtualhost>\n</VirtualHost>"),
]


@pytest.mark.skipif(APACHE2 is None or not (DEBIAN / "apache2.conf").exists(), reason="needs Debian's apache2")
@pytest.mark.parametrize("name, old, new", _HAND_EDITS)
def test_a_hand_edit_of_the_stock_tree_gets_httpds_verdict(tmp_path, name, old, new):
    from apachetune.config.envvars import read_envvars

    tree = tmp_path / "apache2"
    shutil.copytree(DEBIAN, tree, symlinks=True)
    path = tree / name
    text = path.read_text()
    if old not in text:
        pytest.skip(f"{name} has no {old!r} in this Debian release")
    path.write_text(text.replace(old, new, 1))
    env = read_envvars(tree / "envvars")
    proc = run_httpd("-t", "-d", str(tree), "-f", str(tree / "apache2.conf"), env=env)
    result = lint_file(tree / "apache2.conf", LintOptions(ResolveOptions(env=env), Settings()))
    errors = [f.message for f in result.findings  # AT1xx errors are changes httpd makes and goes on
              if f.severity == "error" and (f.rule.startswith("AT5") or f.rule == "AT116")]
    assert bool(errors) == (proc.returncode != 0), (proc.stderr, errors)
    if proc.returncode:
        lines = [line for line in proc.stderr.strip().splitlines()
                 if not line.startswith(("AH00014", "AH00558", "[")) and line.strip()]  # the reason, not the banner
        said = lines[-1].rsplit(": ", 1)[-1].strip()
        assert any(said in e for e in errors), (said, errors)
