"""`apachetune lint` end to end: exit codes, formats, suppressions, settings, real configs."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sarif_pydantic import Sarif

from apachetune import httpd
from apachetune.cli import cli
from httpd_oracle import CORPUS, render_upstream

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fixtures" / "sample" / "apache2.conf"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "apachetune", *args], capture_output=True, text=True,
                          cwd=cwd)


def lint_json(*args):
    result = CliRunner().invoke(cli, ["lint", *map(str, args), "--format", "json"])
    return result.exit_code, json.loads(result.output)


def test_sample_json_contract_and_exit_codes():
    proc = run("lint", str(SAMPLE), "--format", "json")
    assert proc.returncode == 0  # the sample has warnings, and --fail-on defaults to error
    data = json.loads(proc.stdout)
    assert {"mpm", "findings", "summary"} <= set(data)
    mpm = data["mpm"]
    assert mpm["name"] == "event"
    assert mpm["configured"]["MaxRequestWorkers"] == "400"
    assert mpm["effective"]["MaxRequestWorkers"] == 390
    assert mpm["startup_messages"] == [{"code": "AH00513", "text": (
        "WARNING: MaxRequestWorkers of 400 is not an integer multiple of ThreadsPerChild of 30, "
        "decreasing to nearest multiple 390, for a maximum of 13 servers.")}]
    at108 = [f for f in data["findings"] if f["rule"] == "AT108"]
    assert at108 and at108[0]["file"].endswith("mods-enabled/mpm_event.conf") and at108[0]["line"] == 11
    assert {"rule", "severity", "message", "file", "line", "column"} <= set(at108[0])
    assert data["summary"] == {"error": 0, "warning": 2, "info": 1}
    at705 = [f for f in data["findings"] if f["rule"] == "AT705"]  # Options Indexes on /var/www/
    assert at705 and at705[0]["file"].endswith("apache2.conf") and at705[0]["line"] == 30
    assert run("lint", str(SAMPLE), "--fail-on", "warning").returncode == 1
    assert run("lint", str(SAMPLE), "--fail-on", "info").returncode == 1


def test_text_report_shows_the_line():
    proc = run("lint", str(SAMPLE))
    assert "AT108" in proc.stdout and "| MaxRequestWorkers      400" in proc.stdout
    assert "httpd (event MPM) will print at start-up:" in proc.stdout


def test_sarif_is_valid_sarif_2_1_0(tmp_path):
    out = tmp_path / "report.sarif"
    proc = run("lint", str(SAMPLE), "--format", "sarif", "-o", str(out))
    assert proc.returncode == 0
    doc = Sarif.model_validate(json.loads(out.read_text()))
    assert doc.version == "2.1.0"
    results = doc.runs[0].results
    assert {r.rule_id for r in results} == {"AT108", "AT202", "AT705"}
    raw = json.loads(out.read_text())
    loc = raw["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert loc["region"]["startLine"] >= 1 and not loc["artifactLocation"]["uri"].startswith("/work")


def test_github_annotations():
    proc = run("lint", str(SAMPLE), "--format", "github")
    lines = proc.stdout.splitlines()
    assert any(ln.startswith("::warning file=") and ",line=11," in ln and "AT108" in ln for ln in lines)
    assert any(ln.startswith("::notice ") for ln in lines)


def test_syntax_and_include_errors_exit_2_with_position():
    proc = run("lint", str(ROOT / "fixtures" / "broken" / "mismatched.conf"))
    assert proc.returncode == 2 and "4:3" in proc.stdout and "AT508" in proc.stdout
    code, data = lint_json(ROOT / "fixtures" / "trees" / "include-cycle" / "main.conf")
    assert code == 2 and data["findings"][0]["rule"] == "AT509"
    assert data["findings"][0]["file"].endswith("second.conf") and data["findings"][0]["line"] == 2


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "fixtures" / "broken").glob("*.conf")))
def test_broken_fixtures_report_at508_at_the_right_line(name):
    import yaml

    line, column, message = yaml.safe_load((ROOT / "fixtures" / "broken" / "expected.yaml").read_text())[name]
    code, data = lint_json(ROOT / "fixtures" / "broken" / name)
    assert code == 2
    (finding,) = data["findings"]
    assert (finding["rule"], finding["line"], finding["column"], finding["message"]) == ("AT508", line, column, message)


def test_inline_suppression(tmp_path):
    conf = tmp_path / "mpm.conf"
    conf.write_text("# apachetune: disable=AT108\nThreadsPerChild 30\nMaxRequestWorkers 400\n")
    code, data = lint_json(conf, "--mpm", "event")
    # The comment silences the directive below it only (AT108 is reported at MaxRequestWorkers).
    assert "AT108" in [f["rule"] for f in data["findings"]]
    conf.write_text("ThreadsPerChild 30\n# apachetune: disable=AT108,AT202\nMaxRequestWorkers 400\n")
    assert "AT108" not in [f["rule"] for f in lint_json(conf, "--mpm", "event")[1]["findings"]]
    conf.write_text("# apachetune: disable-file=AT108\nThreadsPerChild 30\nMaxRequestWorkers 400\n")
    assert "AT108" not in [f["rule"] for f in lint_json(conf, "--mpm", "event")[1]["findings"]]
    # a comment continued over two lines (httpd joins a trailing backslash's line, comments too)
    conf.write_text("ThreadsPerChild 30\n# apache\\\ntune: disable=AT108\nMaxRequestWorkers 400\n")
    assert "AT108" not in [f["rule"] for f in lint_json(conf, "--mpm", "event")[1]["findings"]]


def test_settings_file_disables_and_overrides(tmp_path):
    conf = tmp_path / "mpm.conf"
    conf.write_text("ThreadsPerChild 30\nKeepAlive Off\n")
    (tmp_path / ".apachetune.yaml").write_text("rules:\n  AT108: {severity: error}\n  keepalive: disable\n")
    result = CliRunner().invoke(cli, ["lint", str(conf), "--mpm", "event", "--format", "json",
                                      "--config", str(tmp_path / ".apachetune.yaml")])
    data = json.loads(result.output)
    assert result.exit_code == 1
    assert [(f["rule"], f["severity"]) for f in data["findings"]] == [("AT108", "error")]
    (tmp_path / "bad.yaml").write_text("rules:\n  AT999: disable\n")
    proc = run("lint", str(conf), "--mpm", "event", "--config", str(tmp_path / "bad.yaml"))
    assert proc.returncode == 2 and "AT999" in proc.stderr and "Traceback" not in proc.stderr


def test_rule_selection():
    code, data = lint_json(SAMPLE, "--rule", "capacity")
    assert {f["rule"] for f in data["findings"]} == {"AT108", "AT202"}
    code, data = lint_json(SAMPLE, "--rule", "AT202")
    assert {f["rule"] for f in data["findings"]} == {"AT202"}


def test_rules_and_explain():
    from apachetune.lint.metadata import all_rules

    proc = run("rules")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == len(all_rules())
    proc = run("rules", "--groups")
    groups = {line.split()[0]: line.split()[3:] for line in proc.stdout.splitlines()}
    assert "AT701" in groups["security"] and "AT601" in groups["performance"]
    proc = run("rules", "--group", "security")
    assert proc.returncode == 0 and all(" AT7" in f" {line[:5]}" or line.startswith("AT304")
                                        for line in proc.stdout.splitlines())
    assert run("rules", "--group", "nope").returncode == 2
    proc = run("explain", "AT108")
    assert proc.stdout.startswith("# AT108: MaxRequestWorkers is not a multiple of ThreadsPerChild")
    assert "AH00513" in proc.stdout
    assert run("explain", "AT000").returncode == 2


def test_debian_tree_has_no_error():
    code, data = lint_json(ROOT / "fixtures" / "trees" / "debian" / "apache2.conf")
    assert code == 0 and data["summary"]["error"] == 0, data["findings"]


@pytest.mark.skipif(not CORPUS.is_dir() or httpd.binary() is None,
                    reason="needs the shared corpus and httpd's module directory")
@pytest.mark.parametrize("with_mpm_conf", [True, False])
def test_upstream_default_config_has_no_error(tmp_path, with_mpm_conf):
    main = render_upstream(tmp_path / "apache2", with_mpm_conf=with_mpm_conf)
    code, data = lint_json(main)
    assert code == 0 and data["summary"]["error"] == 0, data["findings"]


def test_lone_upstream_mpm_snippet_per_mpm():
    path = CORPUS / "apache__httpd__docs_conf_extra_httpd-mpm.conf.in.conf"
    if not path.exists():
        pytest.skip("shared corpus not present")
    for mpm in ("prefork", "worker", "event"):
        code, data = lint_json(path, "--mpm", mpm)
        assert data["summary"]["error"] == 0, (mpm, data["findings"])
        assert data["mpm"]["name"] == mpm and data["mpm"]["startup_messages"] == []


def test_rule_thresholds_are_options_in_apachetune_yaml(tmp_path):
    conf = tmp_path / "prefork.conf"
    conf.write_text("KeepAliveTimeout 8\nMaxKeepAliveRequests 50\n")
    code, data = lint_json(conf, "--mpm", "prefork")
    assert "AT302" in [f["rule"] for f in data["findings"]]  # default max_seconds 5
    settings = tmp_path / ".apachetune.yaml"
    settings.write_text("rules:\n  AT302: {options: {max_seconds: 10}}\n  keepalive:\n    options:\n"
                        "      min_requests: 60\n")
    code, data = lint_json(conf, "--mpm", "prefork", "--config", str(settings))
    rules = [f["rule"] for f in data["findings"]]
    assert "AT302" not in rules and "AT303" in rules  # 50 < 60 now


@pytest.mark.parametrize("text, where, words", [
    ("rules:\n  AT302: {options: {max_seconds: abc}}\n", ":2:34:", "expected a number"),
    ("rules:\n  AT302:\n    options:\n      max_secs: 3\n", ":4:7:", "unknown option 'max_secs'"),
    ("rules:\n  AT303: {options: {min_requests: 2.5}}\n", ":2:35:", "expected an integer"),
    ("rules:\n  AT999: disable\n", ":2:3:", "unknown rule"),
    ("fail-on: sometimes\n", ":1:10:", "fail-on must be one of"),
    ("rules: [\n", ":2:1:", "not valid YAML"),
])
def test_settings_errors_are_positioned(tmp_path, text, where, words):
    settings = tmp_path / ".apachetune.yaml"
    settings.write_text(text)
    proc = run("lint", str(SAMPLE), "--config", str(settings))
    assert proc.returncode == 2 and f"{settings}{where}" in proc.stderr and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
