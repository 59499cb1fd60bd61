"""Stopping a server started in its own session: SIGTERM to its process group, then SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess


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
