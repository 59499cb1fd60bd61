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

TOKEN_HEADER = "X-Apachetune-Run"  # the per-run token every response of our server carries


class ServerExited(Exception):
    """The server exited before it answered; the message is what it wrote on stderr."""


class NotOurServer(Exception):
    """Something else answered on the port: another server took it between our choosing it and
    our server binding it. Load-testing it would measure the wrong server."""


def new_token() -> str:
    return secrets.token_hex(8)


def wait_until_serving(proc: subprocess.Popen, url: str, seconds: float, any_status: bool = False,
                       token: str | None = None) -> None:
    """Poll `url` until the server answers (with any HTTP status if `any_status`), and, with a
    `token`, check the answer carries it (else NotOurServer). Raises ServerExited if it exits
    first, TimeoutError if `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerExited(proc.stderr.read().decode(errors="replace").strip() if proc.stderr else "")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                r.read()
                _check_token(r.headers, token, url)
            return
        except urllib.error.HTTPError as e:
            if any_status:
                _check_token(e.headers, token, url)
                return
            time.sleep(0.05)
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(url)


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
