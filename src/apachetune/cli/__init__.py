"""The `apachetune` command: a click group; each subcommand lives in its own module.

Commands are thin: parse arguments, call the library, hand the result to a
reporter, return an exit code. Library modules never import click.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys

import click

from apachetune import __version__, collector, entry, streams
from apachetune.errors import ApachetuneError


def error(message: str) -> None:
    from apachetune.console import error as print_error  # rich: loaded only to print

    print_error(message)


# name -> (module under apachetune.cli that defines a click command called `command`, its one-line
# help). Imported lazily, and the list in --help comes from here, so `apachetune --version` and
# `apachetune --help` load no command (and none of rich, lark, yaml or psutil).
COMMANDS = {
    "compare": ("compare", "Run one plan on prefork, worker and event, side by side."),
    "explain": ("explain", "Explain a lint rule: why it matters and how to fix it."),
    "generate": ("generate", "Write a tuned MPM section (new file or minimal edit)."),
    "lint": ("lint", "Lint a configuration: httpd's checks, MPM sizing, tuning."),
    "mpmd": ("mpmd", "Calibrate the bundled server (mpmd) on this machine."),
    "parse": ("parse", "Show the configuration httpd would read (or as JSON)."),
    "restore": ("restore", "Restore the files of a backup run (all or nothing)."),
    "rules": ("rules", "List the lint rules (id, severity, name, title)."),
    "simulate": ("simulate", "Predict an MPM section under a workload, in simulated time."),
    "size": ("size", "Recommend MaxRequestWorkers and a full MPM section."),
    "validate": ("validate", "Run an MPM section under load on mpmd or httpd."),
    "vhosts": ("vhosts", "Show which virtual host answers on each address:port."),
    "wizard": ("wizard", "Size httpd interactively and write the tuned settings."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, summary = COMMANDS[name]
        command = importlib.import_module(f"apachetune.cli.{module}").command
        command.short_help = summary
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in self.list_commands(ctx)])

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


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> None:
    streams.never_fail()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    # Ctrl-C raises where the main thread is, as Python's own handler does, but from a handler of
    # ours: asyncio.run replaces only the default one, with one that cancels the load client's
    # task instead, and on Python 3.11 a client's asyncio.wait_for can swallow that cancellation
    # (validate then ran on to its end and exited 0 after SIGINT, once in the suite).
    signal.signal(signal.SIGINT, _interrupt)
    short_lived = entry.short_lived(sys.argv)
    if short_lived:
        gc.disable()
        collector.keep_until_exit()
    try:
        _run()
    except SystemExit as e:
        if short_lived:
            _leave(e.code)
        raise
    finally:
        gc.freeze()  # the interpreter's last collection at exit then has nothing to walk


def _leave(code: object) -> None:
    """Exit a short-lived command without tearing down what it built: freeing a 50,000-line tree
    object by object took 0.05 s of a 0.3 s lint, memory the kernel takes back at once. Output is
    flushed first; nothing of ours waits for atexit (temporary directories are `with` blocks)."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): printed as the interpreter would
        print(code, file=sys.stderr)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # the reader left (`| head`), or already closed
            pass
    os._exit(status)


def _stop_leftover_children() -> None:
    """After a stopped command's own clean-up: kill any process of ours still running. A signal
    that lands while a program is being started (between fork and Popen returning) leaves one
    its clean-up never knew of (wrk, seen under a CPU hog); a stop never leaves one behind."""
    try:
        import psutil

        for child in psutil.Process().children(recursive=True):
            try:
                child.kill()
            except psutil.Error:
                continue
    except Exception:  # noqa: BLE001 - best effort on the way out; the exit code is what matters
        pass


def _run() -> None:
    try:
        rc = cli.main(standalone_mode=False)
    except (click.exceptions.Abort, Terminated, KeyboardInterrupt) as e:
        _stop_leftover_children()
        _stopped(e)
    except click.ClickException as e:
        e.show()
        sys.exit(2 if e.exit_code in (1, 2) else e.exit_code)
    except ApachetuneError as e:
        error(str(e))
        sys.exit(e.exit_code)
    except BrokenPipeError:
        # `apachetune parse big.conf | head`: the reader left; that is not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    sys.exit(rc if isinstance(rc, int) else 0)


def _stopped(e: BaseException) -> None:
    """The message and exit code of a command stopped by a signal or Ctrl-C."""
    # click turns KeyboardInterrupt (and Terminated) into Abort, keeping it as the cause
    cause = e.__cause__ if isinstance(e, click.exceptions.Abort) else e
    if isinstance(cause, Terminated):
        signum = cause.args[0] if cause.args else signal.SIGTERM
        error(f"stopped by {signal.Signals(signum).name}")
        sys.exit(128 + signum)
    error("aborted" if isinstance(e, click.exceptions.Abort) else "interrupted")
    sys.exit(130)
