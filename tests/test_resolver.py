"""The resolver on its own (no httpd needed): includes, defines, conditionals, errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from apachetune.config.conditions import ConditionError, Version, ifversion, module_loaded
from apachetune.config.envvars import read_envvars
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.errors import ResolveError

ROOT = Path(__file__).resolve().parents[1]
TREES = ROOT / "fixtures" / "trees"


def write(tmp_path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path / next(iter(files))


def names(eff):
    return [(d.name, d.args) for d in eff.directives]


def test_include_order_and_wildcards():
    eff = resolve(TREES / "edge" / "main.conf", ResolveOptions(env={}))
    aliases = [d.args[0] for d in eff.all("Alias")]
    # conf.d/ read recursively in strcmp order (dot-files and upper case first); sites/*/ skips
    # the dot-directory and the plain file.
    assert aliases[:5] == ["/conf-d-dot", "/conf-d-B", "/conf-d-a", "/conf-d-b", "/conf-d-z"]
    assert "/site-a" in aliases and "/site-b" in aliases and "/hidden" not in aliases
    assert aliases.index("/site-a") < aliases.index("/site-b")


def test_defines_and_substitution_in_section_args():
    eff = resolve(TREES / "edge" / "main.conf", ResolveOptions(env={}))
    assert eff.get("Listen").args == ["127.0.0.1:8080"]
    (directory,) = [s for s in eff.sections if s.name == "Directory"]
    assert directory.args == ["/tmp/html"]
    assert eff.defines["DOCROOT"] == "/tmp" and "NOT_THERE" not in eff.defines


def test_inactive_sections_are_recorded_with_a_reason():
    eff = resolve(TREES / "edge" / "main.conf", ResolveOptions(env={}))
    reasons = {(s.node.name, s.node.raw_args): s.reason for s in eff.inactive}
    assert reasons[("IfModule", "mpm_prefork_module")] == "module mpm_prefork_module is not loaded"
    assert reasons[("IfDefine", "!WITH_EXTRA")] == "WITH_EXTRA is defined"
    assert "does not satisfy" in reasons[("IfVersion", "< 2.4")]


def test_httpd_version_option_changes_ifversion(tmp_path):
    main = write(tmp_path, {"a.conf": "<IfVersion >= 2.4.60>\nServerTokens Prod\n</IfVersion>\n"})
    assert resolve(main, ResolveOptions(env={})).get("ServerTokens") is not None
    assert resolve(main, ResolveOptions(env={}, httpd_version="2.4.58")).get("ServerTokens") is None


def test_cli_context_defines_and_modules(tmp_path):
    main = write(tmp_path, {"a.conf": (
        "<IfDefine SSL>\nListen 443\n</IfDefine>\n"
        "<IfModule ssl_module>\nSSLEngine on\n</IfModule>\n"
        "<IfModule mod_php.c>\nphp_value x 1\n</IfModule>\n")})
    assert names(resolve(main, ResolveOptions(env={}))) == []
    eff = resolve(main, ResolveOptions(env={}, defines=["SSL"], modules=["ssl_module", "php_module"]))
    assert [n for n, _ in names(eff)] == ["Listen", "SSLEngine", "php_value"]


def test_environment_and_undefined_variables(tmp_path):
    main = write(tmp_path, {"a.conf": "ServerName ${HOST}\nServerAdmin ${NOPE}\nDefine HOST fromdefine\nServerAlias ${HOST}\n"})
    eff = resolve(main, ResolveOptions(env={"HOST": "fromenv"}))
    assert names(eff) == [("ServerName", ["fromenv"]), ("ServerAdmin", ["${NOPE}"]),
                          ("ServerAlias", ["fromdefine"])]
    assert any("${NOPE}" in w and "AH00111" in w for w in eff.warnings)


def test_debian_envvars_are_read():
    env = read_envvars(TREES / "debian" / "envvars")
    assert env["APACHE_LOG_DIR"] == "/var/log/apache2"
    assert env["APACHE_RUN_USER"] == "www-data"
    eff = resolve(TREES / "debian" / "apache2.conf", ResolveOptions(env={}))
    assert eff.get("ErrorLog").args == ["/var/log/apache2/error.log"]
    assert eff.mpm == "event"


def test_envvars_suffix_for_a_second_instance(tmp_path):
    inst = tmp_path / "apache2-two"
    inst.mkdir()
    (inst / "envvars").write_text((TREES / "debian" / "envvars").read_text())
    assert read_envvars(inst / "envvars")["APACHE_PID_FILE"] == "/var/run/apache2-two/apache2.pid"


def test_rhel_layout():
    eff = resolve(TREES / "rhel" / "conf" / "httpd.conf", ResolveOptions(env={}, server_root=str(TREES / "rhel")))
    assert eff.mpm == "event"
    assert eff.get("MaxRequestWorkers").args == ["400"]
    assert eff.get("MaxRequestWorkers").file.endswith("conf.d/zz-mpm-tuning.conf")


def test_include_cycle_is_an_error_at_the_include_line():
    with pytest.raises(ResolveError) as info:
        resolve(TREES / "include-cycle" / "main.conf", ResolveOptions(env={}))
    err = info.value
    assert err.position.file.endswith("second.conf") and err.position.line == 2
    assert "Include cycle" in err.message and "main.conf -> " in err.message


def test_missing_include_is_an_error_at_the_include_line():
    with pytest.raises(ResolveError) as info:
        resolve(TREES / "include-missing" / "main.conf", ResolveOptions(env={}))
    assert (info.value.position.line, info.value.position.column) == (3, 1)
    assert "does-not-exist.conf" in info.value.message


def test_include_optional_of_nothing_is_silent(tmp_path):
    main = write(tmp_path, {"a.conf": "IncludeOptional nope/*.conf\nIncludeOptional nope.conf\nIncludeOptional x*.conf\nListen 1\n"})
    assert names(resolve(main, ResolveOptions(env={}))) == [("Listen", ["1"])]


def test_wildcard_without_match_fails_for_include(tmp_path):
    main = write(tmp_path, {"a.conf": "Include conf.d/*.conf\n", "conf.d/readme.txt": "x"})
    with pytest.raises(ResolveError, match="No matches for the wildcard"):
        resolve(main, ResolveOptions(env={}))


def test_unclosed_true_ifmodule_is_accepted_false_is_not(tmp_path):
    true_main = write(tmp_path, {"t.conf": "<IfModule version_module>\nListen 1\n"})
    assert names(resolve(true_main, ResolveOptions(env={}))) == [("Listen", ["1"])]
    false_main = write(tmp_path, {"f.conf": "<IfModule nope_module>\nListen 1\n"})
    with pytest.raises(ResolveError, match="Expected </IfModule> before end of configuration"):
        resolve(false_main, ResolveOptions(env={}))


def test_lone_snippet_with_assumed_mpm():
    corpus = ROOT.parent / "shared" / "corpus" / "apache__httpd__docs_conf_extra_httpd-mpm.conf.in.conf"
    if not corpus.exists():
        pytest.skip("shared corpus not present")
    eff = resolve(corpus, ResolveOptions(env={}, mpm="worker", modules=["mpm_worker_module"]))
    assert eff.mpm == "worker"
    assert eff.get("ThreadsPerChild").args == ["25"]
    assert eff.get("MaxSpareThreads").args == ["250"]  # trailing whitespace is not part of it


def test_two_mpms_are_both_reported(tmp_path):
    main = write(tmp_path, {"a.conf": "LoadModule mpm_event_module x.so\nLoadModule mpm_prefork_module y.so\n"})
    eff = resolve(main, ResolveOptions(env={}))
    assert eff.mpms_loaded == ["event", "prefork"]


@pytest.mark.parametrize("args, expected", [
    (">= 2.4", True), ("2.4", False), ("= 2.4.71", True), ("== 2.4.71", True), ("< 2.4.71", False),
    ("<= 2.4.71", True), ("> 2.4.70", True), ('>= "2.4"', True), ('"2.4.71"', True),
    (r"~ ^2\.4", True), (r"/^2\.4/", True), (r"!~ ^2\.4", False), ("!= 2.2", True), ("!>= 2.5", True),
])
def test_ifversion_operators(args, expected):
    assert ifversion(args, Version.parse("2.4.71")) is expected


@pytest.mark.parametrize("args", ["=~ 2.4", ">= two", "= /unterminated"])
def test_ifversion_errors(args):
    with pytest.raises(ConditionError):
        ifversion(args, Version.parse("2.4.71"))


def test_ifmodule_matches_identifier_or_source_file():
    loaded = {"ssl_module", "mpm_event_module", "http_module"}
    assert module_loaded("ssl_module", loaded) and module_loaded("mod_ssl.c", loaded)
    assert module_loaded("event.c", loaded) and module_loaded("http_core.c", loaded)
    assert not module_loaded("mod_SSL.c", loaded) and not module_loaded("ssl", loaded)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "apachetune", *args], capture_output=True, text=True)


def test_cli_parse_json_has_positions():
    proc = run_cli("parse", str(ROOT / "fixtures" / "sample" / "apache2.conf"), "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    mrw = [d for d in payload["effective"] if d.get("directive") == "MaxRequestWorkers"]
    assert mrw and mrw[0]["line"] == 11 and mrw[0]["args"] == ["400"]
    assert payload["files"][mrw[0]["file"]]["file"].endswith("mods-enabled/mpm_event.conf")
    assert payload["mpm"] == "event"


def test_cli_parse_errors_are_positioned_and_exit_2():
    proc = run_cli("parse", str(ROOT / "fixtures" / "broken" / "stray-end.conf"))
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("stray-end.conf:3:3: </VirtualHost> without matching <VirtualHost> section")
    assert "Traceback" not in proc.stderr
    proc = run_cli("parse", str(TREES / "include-cycle" / "main.conf"))
    assert proc.returncode == 2 and "second.conf:2:1: Include cycle" in proc.stderr


def test_cli_parse_dump_and_tree():
    proc = run_cli("parse", str(ROOT / "fixtures" / "sample" / "apache2.conf"), "--dump")
    assert proc.returncode == 0 and "# In file:" in proc.stdout and "ThreadsPerChild 30" in proc.stdout
    proc = run_cli("parse", str(ROOT / "fixtures" / "sample" / "apache2.conf"))
    assert "MaxRequestWorkers 400" in proc.stdout and "mpm_event.conf:11" in proc.stdout
