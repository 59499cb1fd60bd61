"""Python's cyclic garbage collector, paused while a large graph that lives on is built.

A resolve creates its whole tree at once and keeps it (some six objects a line), and lint walks it
into lists of the same size. The collector would rescan that growing graph again and again: on a
200,000-line tree more than half of lint's time, and a cost per line that rises with the size.
Nothing built there is garbage, so the collector waits until it is done.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            # What was built lives on: move it to the oldest generation now (freeze, then
            # unfreeze: two list splices) rather than let the first young collection after this
            # scan every object of it (50 ms on a 50,000-line tree, on every cold lint).
            gc.freeze()
            gc.unfreeze()
            gc.enable()


# A command that reports and exits hands what it built to the kernel (apachetune.cli._leave)
# instead of freeing it object by object; these references keep it alive until then.
_kept: list[object] = []
_keeping = False


def keep_until_exit() -> None:
    """From now on `keep` holds on to what it is given (the CLI of a short-lived command only:
    a library caller's objects are freed as usual)."""
    global _keeping
    _keeping = True


def keep(obj: object) -> None:
    if _keeping:
        _kept.append(obj)
