import os
import subprocess
import sys

from click.testing import CliRunner

from apachetune import __version__
from apachetune.cli import cli


def test_version_flag():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_unknown_command_exits_2_without_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "apachetune", "no-such-command"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


HEAVY = ("rich", "lark", "yaml", "psutil")


def _modules_loaded_by(*argv: str) -> set[str]:
    """The heavy libraries a run of `apachetune ARGV` imports (in a fresh interpreter)."""
    # (a short-lived command leaves with os._exit, apachetune.cli._leave: kept from it here)
    code = ("import sys\nimport apachetune.cli\nfrom apachetune.cli import main\n"
            "apachetune.cli._leave = lambda code: None\nsys.argv = ['apachetune', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    return set(eval(proc.stderr.strip().splitlines()[-1]))


def test_version_and_help_load_no_heavy_library():
    assert _modules_loaded_by("--version") == set()
    assert _modules_loaded_by("--help") == set()
    assert _modules_loaded_by("lint", "--help") == set()


def test_help_lists_every_command_with_its_summary():
    from apachetune.cli import COMMANDS

    out = CliRunner().invoke(cli, ["--help"]).output
    for name, (_module, summary) in COMMANDS.items():
        assert f"{name}  " in out and summary in out
        assert CliRunner().invoke(cli, [name, "--help"]).exit_code == 0


def test_short_lived_command_leaves_with_its_whole_output_and_exit_code(tmp_path):
    """lint exits through os._exit (apachetune.cli._leave): what it printed is flushed first, and
    the exit code is the command's (1: a finding at the failing severity; 2: unreadable)."""
    import json

    conf = tmp_path / "httpd.conf"
    vhosts = "".join(f"<VirtualHost *:80>\n  ServerName s{i}.example\n  Bogus{i} on\n</VirtualHost>\n"
                     for i in range(300))
    conf.write_text("LoadModule mpm_event_module modules/mod_mpm_event.so\nListen 80\n" + vhosts)
    argv = [sys.executable, "-m", "apachetune", "lint", str(conf), "--format", "json", "--httpd-version", "2.4.71"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "APACHETUNE_NO_CACHE": "1"})
    report = json.loads(proc.stdout)  # the whole report, not a truncated buffer
    assert sum(f["rule"] == "AT501" for f in report["findings"]) == 300
    assert proc.returncode == 1
    conf.write_text("<VirtualHost *:80>\n")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
