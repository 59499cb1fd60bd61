"""Servers started in their own session: waiting until one answers, and stopping it (SIGTERM to
its process group, then SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request


class ServerExited(Exception):
    """The server exited before it answered; the message is what it wrote on stderr."""


def wait_until_serving(proc: subprocess.Popen, url: str, seconds: float, any_status: bool = False) -> None:
    """Poll `url` until the server answers (with any HTTP status if `any_status`). Raises
    ServerExited if it exits first, TimeoutError if `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerExited(proc.stderr.read().decode(errors="replace").strip() if proc.stderr else "")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except urllib.error.HTTPError:
            if any_status:
                return
            time.sleep(0.05)
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(url)


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
