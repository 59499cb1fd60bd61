"""Run a command where deeply nested configurations cannot exhaust Python's stack.

httpd reads `<IfModule>` nested 500 deep without complaint; our parser, resolver and rules walk
sections recursively. The CLI therefore runs each command in a thread with a large stack (virtual
memory: only the pages a deep walk touches are used) and a recursion limit that covers the parser's
MAX_NESTING, instead of dying with RecursionError.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 200_000
CLEANUP_SECONDS = 60  # how long an interrupted command may take to stop its servers and clients


def run_deep(fn: Callable[[], Any]) -> Any:
    """fn() in a big-stack thread; its result returned, its exception re-raised here."""
    outcome: dict[str, Any] = {}
    # Our own "finished" flag: after a signal interrupts Thread.join, CPython 3.11 may report the
    # thread as no longer alive while it still runs (its state lock was taken by the interrupted
    # join), and we would leave before its clean-up.
    finished = threading.Event()

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = e
        finally:
            finished.set()

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
    old_size = threading.stack_size(STACK_BYTES)
    try:
        worker = threading.Thread(target=target, name="apachetune", daemon=True)
        worker.start()
    finally:
        threading.stack_size(old_size)
    try:
        while not finished.wait(0.2):
            pass
    except BaseException as e:
        # Ctrl-C, SIGTERM or SIGHUP lands in this (the main) thread, but the command and its
        # `with` blocks (servers, load generators, temporary directories) run in the worker:
        # raise the same exception there and wait for its clean-up before leaving.
        _raise_in(worker, type(e))
        deadline = time.monotonic() + CLEANUP_SECONDS
        while time.monotonic() < deadline and not _waiting_for_user(worker) and not finished.wait(0.1):
            pass
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _raise_in(thread: threading.Thread, exc_type: type[BaseException]) -> None:
    """Raise `exc_type` in `thread` at its next Python instruction (CPython's async exception)."""
    if thread.ident is not None:
        import ctypes  # only to stop a command: 4 ms of imports every run otherwise

        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exc_type))


def _waiting_for_user(thread: threading.Thread) -> bool:
    """True when `thread` is blocked in a prompt (a read from the terminal that no exception
    interrupts, and that holds nothing to clean up)."""
    frame = sys._current_frames().get(thread.ident or -1)
    return frame is not None and frame.f_code.co_filename.replace("\\", "/").endswith("click/termui.py")
