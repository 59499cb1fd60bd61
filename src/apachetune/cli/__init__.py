"""The `apachetune` command: a click group; each subcommand lives in its own module.

Commands are thin: parse arguments, call the library, hand the result to a
reporter, return an exit code. Library modules never import click.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

import click

from apachetune import __version__
from apachetune.console import error
from apachetune.errors import ApachetuneError

# name -> module under apachetune.cli that defines a click command called `command`.
# Imported lazily so `apachetune --version` stays fast.
COMMANDS = {
    "compare": "compare",
    "explain": "explain",
    "generate": "generate",
    "lint": "lint",
    "parse": "parse",
    "restore": "restore",
    "rules": "rules",
    "size": "size",
    "validate": "validate",
    "vhosts": "vhosts",
    "wizard": "wizard",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        mod = COMMANDS.get(name)
        if mod is None:
            return None
        return importlib.import_module(f"apachetune.cli.{mod}").command

    def invoke(self, ctx: click.Context):
        # Library errors carry a position and an exit code: print them as `error: file:line:col:
        # message` and exit, never a traceback (the same in-process and from the shell).
        from apachetune.deep import run_deep

        def invoke() -> object:
            with ctx.scope(cleanup=False):  # click's current context is per thread
                return super(LazyGroup, self).invoke(ctx)

        try:
            return run_deep(invoke)
        except ApachetuneError as e:
            error(str(e))
            ctx.exit(e.exit_code)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="apachetune")
def cli() -> None:
    """Apache httpd configuration linter and MPM tuning advisor."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stop as on Ctrl-C, so every server, client and temporary directory a
    command started is cleaned up (validate and compare start servers in their own sessions,
    which a signal to us does not reach)."""


def _terminate(signum, frame) -> None:
    raise Terminated(signum)


def main() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    try:
        rc = cli.main(standalone_mode=False)
    except click.exceptions.Abort as e:  # click turns KeyboardInterrupt (and Terminated) into Abort
        if isinstance(e.__cause__, Terminated):
            signum = e.__cause__.args[0] if e.__cause__.args else signal.SIGTERM
            error(f"stopped by {signal.Signals(signum).name}")
            sys.exit(128 + signum)
        error("aborted")
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(2 if e.exit_code in (1, 2) else e.exit_code)
    except ApachetuneError as e:
        error(str(e))
        sys.exit(e.exit_code)
    except Terminated as e:
        signum = e.args[0] if e.args else signal.SIGTERM
        error(f"stopped by {signal.Signals(signum).name}")
        sys.exit(128 + signum)
    except KeyboardInterrupt:
        error("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        # `apachetune parse big.conf | head`: the reader left; that is not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    sys.exit(rc if isinstance(rc, int) else 0)
