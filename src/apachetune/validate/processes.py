"""Servers started in their own session: waiting until one answers, and stopping it (SIGTERM to
its process group, then SIGKILL)."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable

TOKEN_HEADER = "X-Apachetune-Run"  # the per-run token every response of our server carries


class ServerExited(Exception):
    """The server exited before it answered; the message is what it wrote on stderr."""


class NotOurServer(Exception):
    """Something else answered on the port: another server took it between our choosing it and
    our server binding it. Load-testing it would measure the wrong server."""


def new_token() -> str:
    return secrets.token_hex(8)


def wait_until_serving(proc: subprocess.Popen, url: str, seconds: float, any_status: bool = False,
                       token: str | None = None, ready_fd: int | None = None) -> None:
    """Wait until the server answers `url` (with any HTTP status if `any_status`), and, with a
    `token`, check the answer carries it (else NotOurServer). With `ready_fd` (the read end of a
    pipe the server writes "ready" to once it listens, mpmd's -r), wait on that instead of
    polling; else poll with a back-off from 1 ms (a server up in 5 ms is seen in 5 ms, not 50).
    Raises ServerExited if it exits first, TimeoutError if `seconds` pass."""
    deadline = time.monotonic() + seconds
    if ready_fd is not None:
        _wait_ready(proc, ready_fd, deadline)
    pause = 0.001
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerExited(proc.stderr.read().decode(errors="replace").strip() if proc.stderr else "")
        try:
            with urllib.request.urlopen(url, timeout=max(0.1, min(2.0, deadline - time.monotonic()))) as r:
                r.read()
                _check_token(r.headers, token, url)
            return
        except urllib.error.HTTPError as e:
            if any_status:
                _check_token(e.headers, token, url)
                return
        except OSError:
            pass
        time.sleep(pause)
        pause = min(0.05, pause * 2)
    raise TimeoutError(url)


def await_start(proc: subprocess.Popen, url: str, seconds: float, *, name: str, error: type[Exception],
                cleanup: Callable[[], object], stop: Callable[[], object], **wait: object) -> None:
    """wait_until_serving for a server we just started, its failures turned into `error` (the
    caller's own exception) after tidying up: `cleanup` when it exited by itself, `stop` when it
    still runs (another server answered, or it did not answer in time)."""
    try:
        wait_until_serving(proc, url, seconds, **wait)  # type: ignore[arg-type]
    except ServerExited as e:
        cleanup()
        raise error(f"{name} did not start: {e}") from None
    except NotOurServer as e:
        stop()
        raise error(str(e)) from None
    except TimeoutError:
        stop()
        raise error(f"{name} did not answer within {seconds:g} s") from None


def _wait_ready(proc: subprocess.Popen, fd: int, deadline: float) -> None:
    """Block until the server writes to `fd` (or closes it by exiting)."""
    import select

    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no readiness from the server")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            if os.read(fd, 64):
                return
            proc.wait(5)  # end of file: the server exited before listening
            raise ServerExited(proc.stderr.read().decode(errors="replace").strip() if proc.stderr else "")


def _check_token(headers, token: str | None, url: str) -> None:
    if token is not None and headers.get(TOKEN_HEADER) != token:
        raise NotOurServer(f"another server answered at {url} (no {TOKEN_HEADER}: {token}); "
                           "it took the port first")


def stop_group(proc: subprocess.Popen | None, grace: float = 15.0) -> int | None:
    """Stop `proc` and everything it forked; returns its exit code (None if never started)."""
    if proc is None:
        return None
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        except ProcessLookupError:
            pass
    return proc.returncode
