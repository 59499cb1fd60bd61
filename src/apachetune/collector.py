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
            gc.enable()
