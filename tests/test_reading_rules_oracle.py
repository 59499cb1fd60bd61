"""Each value from the fidelity issue gets httpd's verdict: where `apache2 -t` refuses, lint has
an error with httpd's words; where httpd accepts, lint has no error."""

from __future__ import annotations

import pytest

from apachetune import httpd
from apachetune.config.resolver import ResolveOptions
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings
from httpd_oracle import needs_httpd, run_httpd

CASES = [
    "KeepAliveTimeout -1", "KeepAliveTimeout abc", "KeepAliveTimeout 1e3", "KeepAliveTimeout 0x10",
    "KeepAliveTimeout 99999999999999999999", "KeepAliveTimeout 5", "KeepAliveTimeout 5ms",
    "KeepAliveTimeout 2min", "KeepAliveTimeout 1h", "KeepAliveTimeout 5.5",
    "ListenCoresBucketsRatio 0", "ListenCoresBucketsRatio -1", "ListenCoresBucketsRatio abc",
    "ListenCoresBucketsRatio 2", "Listen", "Listen 127.0.0.1:8081 http", "Define a b c", "Define a:b",
    "Define a b", "Include a b", "ServerRoot /nonexistent", "AsyncRequestWorkerFactor nan",
    "AsyncRequestWorkerFactor 0x10", "AsyncRequestWorkerFactor 0", "AsyncRequestWorkerFactor 1.5x",
    "MaxRequestWorkers \u0661\u0665\u0660", "Timeout abc",
    "MaxMemFree -1", "MaxMemFree abc", "MaxMemFree 99999999999999999999", "MaxMemFree 9223372036854775807",
    "MaxMemFree 9223372036854775808", "MaxMemFree 4194304", "MaxMemFree 12x", "MaxMemFree -0",
]


@needs_httpd
@pytest.mark.parametrize("line", CASES)
def test_lint_and_httpd_agree_on_the_value(tmp_path, line):
    conf = tmp_path / "httpd.conf"
    conf.write_text(f"{httpd.load_module_line('mpm_event')}\nServerName x\nErrorLog {tmp_path}/e.log\n"
                    f"ServerTokens Prod\nTraceEnable Off\n{line}\n")
    proc = run_httpd("-t", "-f", str(conf), "-d", str(tmp_path))
    result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))  # root: the file's directory
    errors = [f for f in result.findings if f.severity == "error"]
    if proc.returncode == 0:
        assert errors == [], (line, [f.message for f in errors])
    else:
        said = proc.stderr.strip().splitlines()[-1].split(f"{conf}:", 1)[-1].strip()
        assert errors, (line, said)
        assert any(said in f.message for f in errors), (said, [f.message for f in errors])


def test_a_missing_module_file_is_judged_only_where_its_directory_exists(tmp_path):
    modules = httpd.modules_dir()
    conf = tmp_path / "httpd.conf"
    for path, expected in ((modules / "mod_nothere.so", modules.is_dir()),
                           (tmp_path / "elsewhere" / "mod_nothere.so", False)):
        conf.write_text(f"{httpd.load_module_line('mpm_event')}\nLoadModule nothere_module {path}\n")
        result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
        assert any(f.rule == "AT510" and "Cannot load" in f.message for f in result.findings) == expected
