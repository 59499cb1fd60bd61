"""Hostile input (issue 11): special files, endless walks, deep nesting, absurd numbers.

Each case answers as httpd does (checked against apache2 where it is installed), at once, with a
positioned one-line error, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune import httpd
from apachetune.cli import cli
from httpd_oracle import APACHE2, run_httpd

ROOT = Path(__file__).resolve().parents[1]
MPM = f"{httpd.load_module_line('mpm_event')}\n"


def lint(conf: Path, *args: str, timeout: float = 60):
    """The real command in a subprocess, so a hang is a test failure, not a stuck suite."""
    return subprocess.run([sys.executable, "-m", "apachetune", "lint", str(conf), "--format", "json", *args],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("target, words", [
    ("/dev/zero", "AH00554: Access to file /dev/zero denied by server: not a regular file"),
    ("/dev/stdin", "not a regular file"),
    ("/dev/null", "not a regular file"),
])
def test_special_files_are_refused_as_httpd_does(tmp_path, target, words):
    conf = tmp_path / "main.conf"
    conf.write_text(f"{MPM}Include {target}\n")
    proc = lint(conf)
    data = json.loads(proc.stdout)
    assert proc.returncode == 2 and data["findings"][0]["rule"] == "AT509", proc.stderr
    assert words in data["findings"][0]["message"] and data["findings"][0]["line"] == 2
    if APACHE2 and target == "/dev/zero":
        assert "AH00554" in run_httpd("-t", "-f", str(conf)).stderr


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.conf"
    os.mkfifo(fifo)
    conf = tmp_path / "main.conf"
    conf.write_text(f"{MPM}Include {fifo}\n")
    proc = lint(conf, timeout=30)
    assert proc.returncode == 2 and "not a regular file" in proc.stdout


def test_include_of_proc_stops_where_httpd_stops(tmp_path):
    """IncludeOptional /proc/self/* used to walk the whole file system through /proc/self/root."""
    conf = tmp_path / "main.conf"
    conf.write_text(f"{MPM}IncludeOptional /proc/self/*\n")
    proc = lint(conf, timeout=60)
    assert proc.returncode == 2
    message = json.loads(proc.stdout)["findings"][0]["message"]
    if APACHE2:
        httpd = run_httpd("-t", "-f", str(conf)).stderr
        assert message.split(":")[0] in httpd, (message, httpd)


def test_symlink_loop_is_named_as_such(tmp_path):
    (tmp_path / "a.conf").symlink_to(tmp_path / "b.conf")
    (tmp_path / "b.conf").symlink_to(tmp_path / "a.conf")
    conf = tmp_path / "main.conf"
    conf.write_text(f"{MPM}Include {tmp_path / 'a.conf'}\n")
    message = json.loads(lint(conf).stdout)["findings"][0]["message"]
    assert "Too many levels of symbolic links" in message
    if APACHE2:
        assert "Too many levels of symbolic links" in run_httpd("-t", "-f", str(conf)).stderr


def test_deep_nesting_is_read_like_httpd(tmp_path):
    conf = tmp_path / "deep.conf"
    conf.write_text(MPM + "<IfModule mpm_event_module>\n" * 500 + "MaxRequestWorkers 50\n"
                    + "</IfModule>\n" * 500)
    proc = lint(conf)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["mpm"]["configured"]["MaxRequestWorkers"] == "50"
    conf.write_text(MPM + "<Directory /a>\n" * 5000 + "Options None\n" + "</Directory>\n" * 5000)
    proc = lint(conf)
    findings = json.loads(proc.stdout)["findings"]
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    # httpd: "<Directory not allowed in <Directory> context" at the second one (line 3 here).
    first = min((f for f in findings if f["rule"] == "AT504"), key=lambda f: f["line"])
    assert first["line"] == 3 and "<Directory not allowed in <Directory> context" in first["message"]


def test_nesting_beyond_the_limit_is_a_positioned_error(tmp_path):
    from apachetune.config.parser import MAX_NESTING

    conf = tmp_path / "deeper.conf"
    conf.write_text("<IfModule x>\n" * (MAX_NESTING + 1))
    proc = lint(conf)
    (finding,) = json.loads(proc.stdout)["findings"]
    assert proc.returncode == 2 and finding["line"] == MAX_NESTING + 1 and "nested more than" in finding["message"]


@pytest.mark.parametrize("value", ["inf", "1e308", "1e400", "-inf", "nan", "0x10"])
def test_async_request_worker_factor_extremes(tmp_path, value):
    conf = tmp_path / "mpm.conf"
    conf.write_text(f"ThreadsPerChild 25\nAsyncRequestWorkerFactor {value}\n")
    proc = lint(conf, "--mpm", "event")
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-1500:]
    data = json.loads(proc.stdout)
    if value in ("inf", "1e308", "1e400"):  # event.c's cast gives 0, then its floor of 1
        assert data["mpm"]["effective"]["AsyncRequestWorkerFactor"] == 1.0


@pytest.mark.parametrize("args, words", [
    (["--memory", "1e308"], "between"), (["--memory", "nan"], "not a size"), (["--rate", "inf"], "finite"),
    (["--per-worker-mb", "nan"], "finite"), (["--pid", "-1"], "between"), (["--rate", "nan"], "finite"),
    (["--headroom", "nan"], "finite"), (["--memory", "4X"], "not a size"),
    (["--pidfile", "/dev/zero"], "not a regular file"), (["--pidfile", "/dev/null"], "not a regular file"),
    (["--access-log", "/dev/zero"], "not a regular file"), (["--facts", "/dev/zero"], "not a regular file"),
])
def test_numeric_and_file_options_are_usage_errors(args, words):
    r = CliRunner().invoke(cli, ["size", str(ROOT / "fixtures" / "sample" / "apache2.conf"),
                                 "--service-time-ms", "50", *args])
    assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output, r.output


def test_memory_accepts_units():
    for text, mib in (("4G", 4096), ("4GiB", 4096), ("512M", 512), ("2048", 2048), ("1.5T", 1.5 * 1024 * 1024)):
        r = CliRunner().invoke(cli, ["size", str(ROOT / "fixtures" / "sample" / "apache2.conf"), "--no-measure",
                                     "--memory", text, "--rate", "10", "--service-time-ms", "50",
                                     "--format", "json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["inputs"]["available_mib"]["value"] == mib


def test_a_directive_continued_over_20000_lines(tmp_path):
    conf = tmp_path / "cont.conf"
    conf.write_text(MPM + "Bogus a \\\n" * 20000 + "end\n")
    (finding,) = [f for f in json.loads(lint(conf, "--rule", "AT501").stdout)["findings"]]
    assert (finding["line"], finding["column"]) == (2, 1) and "reports line 20002" in finding["message"]
    if APACHE2:
        assert "line 20002 of" in run_httpd("-t", "-f", str(conf)).stderr


@pytest.mark.parametrize("body, line", [
    ("Define X " + "a" * (16 * 1024 * 1024) + "\n", 4),  # one physical line
    ("Define X " + "a" * (8 * 1024 * 1024) + " \\\n" + "b" * (8 * 1024 * 1024) + "\n", 5),  # joined
])
def test_a_logical_line_over_16_mib_is_refused_as_httpd_does(tmp_path, body, line):
    conf = tmp_path / "long.conf"
    conf.write_text(MPM + "ServerName x\n# fine\n" + body + "ServerName y\n")
    r = lint(conf)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    (finding,) = json.loads(r.stdout)["findings"]
    assert (finding["file"], finding["line"], finding["column"]) == (str(conf), line, 1)
    assert finding["message"] == f"Error reading {conf} at line {line}: Line too long"
    if APACHE2:
        assert f"Error reading {conf} at line {line}: Line too long" in run_httpd("-t", "-f", str(conf)).stderr


def test_a_logical_line_just_under_16_mib_is_read(tmp_path):
    conf = tmp_path / "long.conf"
    conf.write_text(MPM + "ServerName x\nDefine X " + "a" * (16 * 1024 * 1024 - 64) + "\n")
    r = lint(conf)
    assert r.returncode in (0, 1), r.stderr


@pytest.mark.parametrize("command", [["lint"], ["simulate", "--clients", "5", "--seconds", "1"],
                                     ["size", "--service-time-ms", "50"], ["parse"], ["vhosts"]])
def test_an_env_file_that_is_not_there_is_a_usage_error(tmp_path, command):
    """--env-file naming nothing was a FileNotFoundError traceback from every command that reads a tree."""
    conf = ROOT / "fixtures" / "sample" / "apache2.conf"
    r = CliRunner().invoke(cli, [*command, str(conf), "--env-file", str(tmp_path / "envvars")])
    assert r.exit_code == 2 and "does not exist" in r.output and "Traceback" not in r.output, r.output


def test_an_envvars_file_that_cannot_be_read_is_named(tmp_path):
    from apachetune.config.envvars import read_envvars
    from apachetune.errors import ResolveError

    (tmp_path / "envvars").mkdir()  # generate's check reads a copied tree's envvars when it exists
    with pytest.raises(ResolveError, match=r"envvars file .*envvars: Is a directory"):
        read_envvars(tmp_path / "envvars")
