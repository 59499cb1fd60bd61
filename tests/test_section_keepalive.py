"""The keep-alive settings a simulation or a validation run takes from a configuration file are
read as httpd reads them: KeepAliveTimeout as a time with a unit ("1500ms", "1h"),
MaxKeepAliveRequests and Timeout with atoi, KeepAlive as a flag. A simulation of
fixtures/rules/AT707/good-milliseconds.conf ("KeepAliveTimeout 15000ms") once ended in a
traceback (float("15000ms")), found by running every fixture through every command."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from apachetune import httpd
from apachetune.cli import cli
from apachetune.errors import UsageError
from apachetune.validate.section import directive_line, load_directives
from httpd_oracle import needs_httpd, run_httpd

SECTION = "StartServers 1\nMaxRequestWorkers 4\nMinSpareServers 1\nMaxSpareServers 2\n"


@pytest.mark.parametrize("lines, expected", [
    ("KeepAliveTimeout 15000ms", {"KeepAliveTimeout": 15}),
    ("KeepAliveTimeout 1500ms", {"KeepAliveTimeout": 1.5}),
    ("KeepAliveTimeout 1h", {"KeepAliveTimeout": 3600}),
    ("KeepAliveTimeout 2mi", {"KeepAliveTimeout": 120}),
    ("KeepAliveTimeout s", {"KeepAliveTimeout": 0}),  # no digits: zero seconds
    ("Timeout 30s", {"Timeout": 30}),  # atoi: the unit is ignored
    ("Timeout 1h", {"Timeout": 1}),
    ("MaxKeepAliveRequests 100abc", {"MaxKeepAliveRequests": 100}),
    ("KeepAlive off", {"KeepAlive": "Off"}),
    ("KeepAlive ON", {"KeepAlive": "On"}),
])
def test_keepalive_settings_are_read_as_httpd_reads_them(tmp_path, lines, expected):
    conf = tmp_path / "httpd.conf"
    conf.write_text(SECTION + lines + "\n")
    section = load_directives(str(conf), "prefork")
    assert {k: section[k] for k in expected} == expected
    assert all(type(section[k]) is type(v) for k, v in expected.items())


@pytest.mark.parametrize("line, message", [
    ("KeepAliveTimeout 0x10", "KeepAliveTimeout has wrong format"),  # base 10: "x10" is no unit
    ("KeepAliveTimeout 5 days", "KeepAliveTimeout takes one argument"),
    ("KeepAliveTimeout -1", "KeepAliveTimeout has wrong format"),
    ("KeepAlive maybe", "KeepAlive must be On or Off"),
])
def test_a_refused_keepalive_setting_is_a_usage_error_with_its_position(tmp_path, line, message):
    conf = tmp_path / "httpd.conf"
    conf.write_text(SECTION + line + "\n")
    with pytest.raises(UsageError) as e:
        load_directives(str(conf), "prefork")
    assert f"{conf}:5:1" in str(e.value) and message in str(e.value)


@pytest.mark.parametrize("line", ["KeepAliveTimeout 15000ms", "KeepAliveTimeout 1h", "Timeout 1h",
                                  "KeepAliveTimeout 0x10"])
def test_simulate_reports_or_refuses_a_file_with_unusual_times(tmp_path, line):
    conf = tmp_path / "httpd.conf"
    conf.write_text(SECTION + line + "\n")
    result = CliRunner().invoke(cli, ["simulate", str(conf), "--mpm", "prefork", "--seconds", "1",
                                      "--rate", "10"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    if "0x10" in line:
        assert result.exit_code == 2 and "KeepAliveTimeout has wrong format" in result.output
    else:
        assert result.exit_code == 0, result.output


def test_a_fractional_time_is_written_in_milliseconds():
    assert directive_line("KeepAliveTimeout", 1.5) == "KeepAliveTimeout 1500ms"
    assert directive_line("KeepAliveTimeout", 15.0) == "KeepAliveTimeout 15"
    assert directive_line("KeepAliveTimeout", 5) == "KeepAliveTimeout 5"
    assert directive_line("StartServers", 2) == "StartServers 2"
    # only the time: a fractional factor is atof's number, not milliseconds
    assert directive_line("AsyncRequestWorkerFactor", 1.5) == "AsyncRequestWorkerFactor 1.5"


@needs_httpd
def test_httpd_starts_with_the_lines_written_for_a_server(tmp_path):
    """What validate writes for its servers after reading "1500ms": httpd accepts it ("0.5"
    would be refused: zero seconds and an unknown unit)."""
    conf = tmp_path / "httpd.conf"
    conf.write_text(SECTION + "KeepAliveTimeout 1500ms\nTimeout 1h\nKeepAlive on\n")
    section = load_directives(str(conf), "prefork")
    body = "\n".join(directive_line(k, section[k]) for k in ("KeepAlive", "KeepAliveTimeout", "Timeout"))
    assert "KeepAliveTimeout 1500ms" in body
    test = tmp_path / "t.conf"
    test.write_text(f"ServerRoot {tmp_path}\nServerName localhost\nPidFile {tmp_path}/pid\n"
                    f"ErrorLog {tmp_path}/e.log\nListen 127.0.0.1:1\n{httpd.load_module_line('mpm_prefork')}\n"
                    f"{body}\n")
    bad = tmp_path / "bad.conf"
    bad.write_text(test.read_text().replace("1500ms", "1.5"))
    assert run_httpd("-t", "-f", str(test)).returncode == 0
    assert "KeepAliveTimeout has wrong format" in run_httpd("-t", "-f", str(bad)).stderr
