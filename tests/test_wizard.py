"""The wizard, through its prompts (scripted input) and in a real terminal (a pty)."""

import json
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


def test_the_recommendation_is_simulated_before_and_after_under_the_rate_given(tmp_path):
    """After the table, the recommended section and the current one simulated at the peak rate
    given (issue 17: the wizard shows it); with no rate, the wizard says why there is none."""
    # MPM, memory, reserve, per-worker MiB, peak rate, response time, write?
    given = CliRunner().invoke(cli, ["wizard", str(SAMPLE), "--no-measure"], input="event\n1024\n0\n2\n200\n50\nn\n")
    assert given.exit_code == 0, given.output
    assert "Simulated under the load sized for" in given.output and "(peak)" in given.output
    assert "after (recommended): event, knee at" in given.output and "before (current, " in given.output
    none = CliRunner().invoke(cli, ["wizard", str(SAMPLE), "--no-measure"], input="event\n1024\n0\n2\n0\n50\nn\n")
    assert none.exit_code == 0, none.output
    assert "Simulated under" not in none.output and "No simulated before and after" in none.output


def test_yes_accepts_defaults_and_writes_nothing_without_a_target(tmp_path):
    result = CliRunner().invoke(cli, ["wizard", str(SAMPLE), "--yes", "--no-measure"])
    assert result.exit_code == 0, result.output
    assert "Nothing written" in result.output and "event: now and recommended" in result.output


def test_an_accepted_default_keeps_its_source_and_an_answer_is_given():
    """Issue 13: every input says where it came from. A default the user accepts (the profile's
    memory a worker) is not "given"; a typed answer is."""
    # MPM, memory, reserve, per-worker MiB (the default), peak rate, response time, write? no
    answers = "event\n1024\n0\n\n200\n\nn\n"
    result = CliRunner().invoke(cli, ["wizard", str(SAMPLE), "--no-measure", "--no-httpd-check"], input=answers)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "0.25 MiB a worker (profile static; accepted in the wizard)" in text.replace("│ ", "").replace(" │", "")


def test_bad_answer_is_asked_again(tmp_path):
    out = tmp_path / "t.conf"
    answers = "nonsense\nevent\n-5\n1024\n0\n0.5\n0\n20\ny\n" + f"{out}\n"
    result = CliRunner().invoke(cli, ["wizard", str(SAMPLE), "--no-measure", "--no-httpd-check"], input=answers)
    assert result.exit_code == 0, result.output
    assert "is not one of" in result.output and out.exists()


def drive(args: list[str], answers: list[tuple[str, str]], timeout: float = 60) -> tuple[int, str, list[str]]:
    """Run `apachetune wizard ARGS` in a pseudo-terminal, answering each prompt (matched by a piece
    of its text) as a person would. Returns the exit code, everything shown, and the prompts
    answered (in order)."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "apachetune", "wizard", *args], stdin=slave, stdout=slave,
                            stderr=slave, env=env, close_fds=True, start_new_session=True)
    os.close(slave)
    pending = iter(answers)
    current = next(pending, None)
    answered: list[str] = []
    seen = b""
    deadline = time.monotonic() + timeout
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
            if current and current[0].encode() in seen.rsplit(b"\n", 1)[-1]:
                os.write(master, current[1].encode() + b"\r")
                answered.append(current[0])
                current = next(pending, None)
            if proc.poll() is not None and not ready:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
        os.close(master)
    return proc.returncode, seen.decode(errors="replace"), answered


def sample_copy(tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "site"
    shutil.copytree(SAMPLE.parent, root)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


SIZING = [("Memory available", "2048"), ("other services", "256"), ("per worker", "0.5"),
          ("Peak requests", "500"), ("response time", "20")]


def test_in_a_real_terminal(tmp_path):
    """A new file: every question, then where to write."""
    out = tmp_path / "pty.conf"
    code, text, _ = drive([str(SAMPLE), "--no-measure", "--no-httpd-check"],
                          [("MPM", "event"), *SIZING, ("Write the tuned", "y"), ("Where", str(out))])
    assert code == 0, text
    assert "now and recommended" in text and out.exists(), text
    assert "MaxRequestWorkers" in out.read_text()


def test_in_place_asks_before_writing(tmp_path):
    root = sample_copy(tmp_path)
    before = snapshot(root)
    args = [str(root / "apache2.conf"), "--in-place", "--no-measure", "--no-httpd-check"]
    code, text, answered = drive(args, [("MPM", "event"), *SIZING, ("Write to the files", "n")])
    assert code == 0 and "Nothing written" in text and snapshot(root) == before, text
    assert answered[-1] == "Write to the files"
    code, text, _ = drive(args, [("MPM", "event"), *SIZING, ("Write to the files", "y")])
    assert code == 0, text
    assert snapshot(root) != before and "updated" in text


def test_a_tree_that_cannot_take_a_write_is_refused_before_the_first_question(tmp_path):
    root = sample_copy(tmp_path)
    with open(root / "apache2.conf", "a") as fh:
        fh.write("\nMaxSpareServers 10\n")  # a prefork directive on an event server: AT403, an error
    code, text, answered = drive([str(root / "apache2.conf"), "--in-place", "--no-measure"],
                                 [("MPM", "event")], timeout=30)
    assert code == 1 and answered == [], text
    assert "block writing" in text and "AT403" in text and "nothing was asked" in text


def test_choosing_another_mpm_uses_its_defaults_and_offers_the_switch(tmp_path):
    root = sample_copy(tmp_path)
    main = root / "apache2.conf"
    size = CliRunner().invoke(cli, ["size", str(main), "--no-measure", "--target-mpm", "prefork", "--format", "json"])
    per_worker = json.loads(size.output)["inputs"]["per_worker_mib"]["value"]
    code, text, answered = drive(
        [str(main), "--in-place", "--no-measure", "--no-httpd-check"],
        [("MPM", "prefork"), ("Switch it to prefork", "y"), ("Memory available", "8192"),
         ("other services", "256"), ("per worker", ""), ("Peak requests", "20"), ("response time", "20"),
         ("Write to the files", "y")])
    assert code == 0, text
    assert f"[{per_worker}]" in text  # the prompt's default: size's per-worker figure for prefork
    assert "LoadModule mpm_prefork_module" in (root / "mods-enabled" / "mpm_event.load").read_text()
    values = {d.name: d.args[0] for d in parse_file(root / "mods-enabled" / "mpm_event.conf").directives()}
    assert "MaxRequestWorkers" in values
