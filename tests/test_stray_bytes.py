"""Bytes a text editor should not have left in a configuration: a NUL, bytes that are not UTF-8.

httpd reads a line up to its first NUL (ap_cfg_getline takes the buffer's strlen): the rest of
that physical line is never read. lint once read "KeepAlive On\\0xyz" as two arguments and an
Include path with a NUL ended in a traceback (os.stat: "embedded null byte"); every JSON report
quoting a line with bytes that are not UTF-8 was itself not UTF-8. Found by running every
fixture, mutated, through every command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from apachetune import httpd
from apachetune.cli import cli
from apachetune.config.parser import parse_text
from apachetune.config.resolver import ResolveOptions
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings
from httpd_oracle import needs_httpd, run_httpd

NUL_CASES = [
    "KeepAlive On\0xyz",  # accepted: httpd never reads "xyz"
    "KeepAlive\0 On",  # "KeepAlive" alone: refused
    "<IfModule x\0>\n</IfModule>",  # the closing '>' is after the NUL
    "Include {tmp}/nothere\0/x",  # the path ends at the NUL
    "ServerName a \\\0\nKeepAlive bogus",  # no continuation: the backslash is not before the newline
    "# a comment \\\0\nKeepAlive bogus",
    "ServerName \"a b\0c\"",  # the quote is never closed
]


def _lint_errors(conf) -> list[str]:
    result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
    return [f"{f.location.line}: {f.message}" for f in result.findings if f.severity == "error"]


def test_a_line_ends_at_its_nul_and_positions_stay_the_files():
    cf = parse_text("KeepAlive On\0xyz \\\nTimeout 5\n", "t.conf")
    directives = [(n.name, n.args, n.line, n.column) for n in cf.walk() if hasattr(n, "args")]
    assert directives == [("KeepAlive", ["On"], 1, 1), ("Timeout", ["5"], 2, 1)]
    assert cf.to_bytes() == b"KeepAlive On\0xyz \\\nTimeout 5\n"  # every byte kept


@needs_httpd
@pytest.mark.parametrize("body", NUL_CASES)
def test_lint_reads_a_line_with_a_nul_as_httpd_does(tmp_path, body):
    conf = tmp_path / "httpd.conf"
    conf.write_text(f"{httpd.load_module_line('mpm_event')}\nServerName x\nServerTokens Prod\nTraceEnable Off\n"
                    f"ErrorLog {tmp_path}/e.log\n{body.format(tmp=tmp_path)}\n")
    proc = run_httpd("-t", "-f", str(conf), "-d", str(tmp_path))
    errors = _lint_errors(conf)
    if proc.returncode == 0:
        assert errors == [], (body, errors)
    else:
        said = proc.stderr.strip().splitlines()[-1].split(f"{conf}:", 1)[-1].strip()
        line = int(proc.stderr.split("Syntax error on line ", 1)[1].split()[0])
        assert any(e.startswith(f"{line}: ") and said in e for e in errors), (body, said, errors)


@pytest.mark.parametrize("argv", [["lint", "--format", "json"], ["lint", "--format", "sarif"],
                                  ["parse", "--json"], ["parse", "--raw", "--json"]])
def test_json_reports_are_utf8_whatever_the_configurations_bytes(tmp_path, argv):
    conf = tmp_path / "httpd.conf"
    conf.write_bytes(b"\xef\xbb\xef\xbb\xbfServerName x\nDocumentRoot /srv/\xff\xfe\n")
    result = CliRunner().invoke(cli, [*argv, str(conf)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    text = result.stdout_bytes.decode("utf-8")  # strict: raises on a stray byte
    doc = json.dumps(json.loads(text))
    assert "\\\\xff\\\\xfe" in doc  # the bytes named, as Python's backslashreplace writes them


def test_an_include_path_with_a_nul_is_a_finding_not_a_traceback(tmp_path):
    conf = tmp_path / "httpd.conf"
    conf.write_bytes(b"Include " + str(tmp_path).encode() + b"/a\0b/*.conf\n")
    result = CliRunner().invoke(cli, ["lint", "--format", "json", str(conf)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    messages = [f["message"] for f in json.loads(result.stdout)["findings"]]
    assert any(f"{tmp_path}/a" in m and "\\x00" not in m and "b/*.conf" not in m for m in messages), messages


@pytest.mark.parametrize("encoding", ["utf-8:strict", "ascii:strict", "latin-1:strict"])
def test_the_terminal_never_gets_a_traceback_for_a_stray_byte(tmp_path, encoding):
    """Python's "strict" output handler (en_US.UTF-8, or an ASCII terminal) once ended lint in
    a UnicodeEncodeError where a finding quoted a byte that is not UTF-8."""
    conf = tmp_path / "httpd.conf"
    conf.write_bytes(b"\xef\xbb\xef\xbb\xbfServerName x\nKeepAlive O\xffn\n")
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    proc = subprocess.run([sys.executable, "-m", "apachetune", "lint", str(conf)], capture_output=True, env=env,
                          timeout=120)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert b"AT501" in proc.stdout and b"KeepAlive must be On or Off" in proc.stdout
    if encoding.startswith("utf-8"):
        assert b"O\xffn" in proc.stdout  # the line quoted with its own bytes, as httpd quotes it
