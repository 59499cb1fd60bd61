"""The lint result cache: a re-run with nothing changed replays the report without parsing; any
change to what the run read (a file, a directory's entries, a path probed, an environment
variable, the settings file) lints again."""

import os
import time

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.config import resolver as parser

OLD = time.time() - 3600  # older than the racy window: a stat is trusted


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("APACHETUNE_NO_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "etc"
    (root / "sites").mkdir(parents=True)
    (root / "sites" / "a.conf").write_text("<VirtualHost *:80>\n  ServerName a\n  KeepAliveTimeout 5\n</VirtualHost>\n")
    (root / "httpd.conf").write_text(
        "LoadModule mpm_event_module modules/mod_mpm_event.so\nServerName x\n"
        "MaxRequestWorkers ${WORKERS}\nIncludeOptional sites/*.conf\n")
    age(root)
    return root


def age(root):
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(dirpath, name), (OLD, OLD))


def run(root, monkeypatch, *extra):
    """Lint the tree; returns (output, exit code, whether the files were parsed)."""
    parsed = []
    real = parser.parse_text
    monkeypatch.setattr(parser, "parse_text", lambda *a, **k: parsed.append(1) or real(*a, **k))
    monkeypatch.setenv("APACHETUNE_NO_CACHE", "0")
    result = CliRunner().invoke(cli, ["lint", str(root / "httpd.conf"), "--httpd-version", "2.4.71", *extra])
    monkeypatch.setattr(parser, "parse_text", real)
    return result.output, result.exit_code, bool(parsed)


@pytest.fixture(autouse=True)
def _no_parse_cache(monkeypatch):
    # Every miss must really parse, so that "parsed" tells a replay from a lint.
    from apachetune.config import cache

    monkeypatch.setattr(cache, "load", lambda path, data: None)


def test_unchanged_tree_is_replayed(tree, monkeypatch):
    monkeypatch.setenv("WORKERS", "500")
    first, code1, parsed1 = run(tree, monkeypatch)
    second, code2, parsed2 = run(tree, monkeypatch)
    assert parsed1 and not parsed2
    assert (second, code2) == (first, code1)
    assert "AH00513" in first or "MaxRequestWorkers" in first  # 500 > 16 x 25: httpd lowers it


def test_edited_file_is_linted_again(tree, monkeypatch):
    monkeypatch.setenv("WORKERS", "400")
    first, _, _ = run(tree, monkeypatch)
    site = tree / "sites" / "a.conf"
    site.write_text(site.read_text().replace("KeepAliveTimeout 5", "KeepAliveTimout 5"))
    age(tree)
    second, code, parsed = run(tree, monkeypatch)
    assert parsed and "KeepAliveTimout" in second and second != first and code == 1


def test_new_file_in_an_included_directory_is_linted_again(tree, monkeypatch):
    monkeypatch.setenv("WORKERS", "400")
    run(tree, monkeypatch)
    (tree / "sites" / "b.conf").write_text("MaxRequestWorker 10\n")
    age(tree)
    out, code, parsed = run(tree, monkeypatch)
    assert parsed and "MaxRequestWorker" in out and code == 1


def test_environment_variable_change_is_linted_again(tree, monkeypatch):
    monkeypatch.setenv("WORKERS", "400")
    first, _, _ = run(tree, monkeypatch)
    monkeypatch.setenv("WORKERS", "800")
    second, _, parsed = run(tree, monkeypatch)
    assert parsed and second != first


def test_settings_file_appearing_is_linted_again(tree, monkeypatch, tmp_path):
    monkeypatch.setenv("WORKERS", "400")
    first, _, _ = run(tree, monkeypatch)
    (tmp_path / ".apachetune.yaml").write_text("fail-on: info\n")
    age(tmp_path)
    second, code, parsed = run(tree, monkeypatch)
    assert parsed and code == 1 and second == first  # same findings, now failing on info


def test_other_options_or_format_are_other_entries(tree, monkeypatch):
    monkeypatch.setenv("WORKERS", "400")
    text, _, _ = run(tree, monkeypatch)
    as_json, _, parsed = run(tree, monkeypatch, "--format", "json")
    assert parsed and as_json.lstrip().startswith("{") and as_json != text


def test_file_modified_just_now_is_not_cached(tree, monkeypatch):
    monkeypatch.setenv("WORKERS", "400")
    (tree / "httpd.conf").touch()  # within the racy window: its stat cannot be trusted yet
    run(tree, monkeypatch)
    _, _, parsed = run(tree, monkeypatch)
    assert parsed


def test_no_cache_switch_always_lints(tree, monkeypatch):
    monkeypatch.setenv("WORKERS", "400")
    run(tree, monkeypatch)
    parsed = []
    real = parser.parse_text
    monkeypatch.setattr(parser, "parse_text", lambda *a, **k: parsed.append(1) or real(*a, **k))
    monkeypatch.setenv("APACHETUNE_NO_CACHE", "1")
    CliRunner().invoke(cli, ["lint", str(tree / "httpd.conf"), "--httpd-version", "2.4.71"])
    assert parsed


def test_planted_entry_is_ignored(tree, monkeypatch, tmp_path):
    monkeypatch.setenv("WORKERS", "400")
    first, _, _ = run(tree, monkeypatch)
    entries = list((tmp_path / "cache").glob("lint-results-v*/*.json"))
    assert len(entries) == 1
    entries[0].chmod(0o666)  # writable by others: never trusted
    second, _, parsed = run(tree, monkeypatch)
    assert parsed and second == first


def test_replay_loads_neither_lark_nor_yaml_nor_rich(tree, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("WORKERS", "400")
    monkeypatch.setenv("APACHETUNE_NO_CACHE", "0")
    code = ("import sys\nimport apachetune.cli\nfrom apachetune.cli import main\n"
            "apachetune.cli._leave = lambda code: None  # (not os._exit: the modules are asked after)\n"
            "sys.argv = ['apachetune', *sys.argv[1:]]\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('lark', 'yaml', 'rich') if m in sys.modules), file=sys.stderr)\n")
    argv = [sys.executable, "-c", code, "lint", str(tree / "httpd.conf"), "--httpd-version", "2.4.71"]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    second = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert "yaml" in first.stderr.splitlines()[-1]  # the first run linted (rule metadata read)
    assert second.stderr.splitlines()[-1] == "[]" and second.stdout == first.stdout
    assert second.returncode == first.returncode
