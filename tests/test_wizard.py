"""The wizard, through its prompts (scripted input) and in a real terminal (a pty)."""

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.config.parser import parse_file

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fixtures" / "sample" / "apache2.conf"


def test_scripted_answers_write_a_new_file(tmp_path):
    out = tmp_path / "tuned.conf"
    # MPM, memory, reserve, per-worker MiB, peak rate, response time, write?, where
    answers = "worker\n1024\n0\n2\n200\n100\ny\n" + f"{out}\n"
    result = CliRunner().invoke(cli, ["wizard", str(SAMPLE), "--no-measure", "--no-httpd-check"], input=answers)
    assert result.exit_code == 0, result.output
    assert "worker: now and recommended" in result.output
    values = {d.name: d.args[0] for d in parse_file(out).directives()}
    # 1024 MiB * 0.9 / (2 MiB + 6/30) workers, and the load needs 2 x 27.
    assert int(values["MaxRequestWorkers"]) % int(values["ThreadsPerChild"]) == 0
    assert "<IfModule mpm_worker_module>" in out.read_text()


def test_yes_accepts_defaults_and_writes_nothing_without_a_target(tmp_path):
    result = CliRunner().invoke(cli, ["wizard", str(SAMPLE), "--yes", "--no-measure"])
    assert result.exit_code == 0, result.output
    assert "Nothing written" in result.output and "event: now and recommended" in result.output


def test_bad_answer_is_asked_again(tmp_path):
    out = tmp_path / "t.conf"
    answers = "nonsense\nevent\n-5\n1024\n0\n0.5\n0\n20\ny\n" + f"{out}\n"
    result = CliRunner().invoke(cli, ["wizard", str(SAMPLE), "--no-measure", "--no-httpd-check"], input=answers)
    assert result.exit_code == 0, result.output
    assert "is not one of" in result.output and out.exists()


def test_in_a_real_terminal(tmp_path):
    """Drive the wizard through a pseudo-terminal, answering prompts as a person would."""
    out = tmp_path / "pty.conf"
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "apachetune", "wizard", str(SAMPLE), "--no-measure",
                             "--no-httpd-check"], stdin=slave, stdout=slave, stderr=slave, env=env,
                            close_fds=True, start_new_session=True)
    os.close(slave)
    answers = iter([("MPM", "event"), ("Memory available", "2048"), ("other services", "256"),
                    ("per worker", "0.5"), ("Peak requests", "500"), ("response time", "20"),
                    ("Write the tuned", "y"), ("Where", str(out))])
    seen = b""
    pending = next(answers)
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            if pending and pending[0].encode() in seen.rsplit(b"\n", 1)[-1]:
                os.write(master, pending[1].encode() + b"\r")
                pending = next(answers, None)
            if proc.poll() is not None and not ready:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
        os.close(master)
    text = seen.decode(errors="replace")
    assert proc.returncode == 0, text
    assert "now and recommended" in text and out.exists(), text
    assert "MaxRequestWorkers" in out.read_text()
