"""Run a command where deeply nested configurations cannot exhaust Python's stack.

httpd reads `<IfModule>` nested 500 deep without complaint; our parser, resolver and rules walk
sections recursively. The CLI therefore runs each command in a thread with a large stack (virtual
memory: only the pages a deep walk touches are used) and a recursion limit that covers the parser's
MAX_NESTING, instead of dying with RecursionError.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 200_000


def run_deep(fn: Callable[[], Any]) -> Any:
    """fn() in a big-stack thread; its result returned, its exception re-raised here."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = e

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
    old_size = threading.stack_size(STACK_BYTES)
    try:
        worker = threading.Thread(target=target, name="apachetune", daemon=True)
        worker.start()
    finally:
        threading.stack_size(old_size)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
