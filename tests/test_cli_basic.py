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
    code = ("import sys\nfrom apachetune.cli import main\nsys.argv = ['apachetune', *sys.argv[1:]]\n"
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
