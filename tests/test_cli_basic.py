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
