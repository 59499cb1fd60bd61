"""How long the load client's process could not run while it measured (as jHiccup does): a
thread asks to sleep 5 ms again and again and keeps the worst overshoot. A run that saw a stall
of hundreds of milliseconds on a shared machine measured the machine, not the server."""

from __future__ import annotations

import threading
import time
from types import TracebackType

TICK = 0.005


class HiccupMeter:
    def __init__(self) -> None:
        self.worst = 0.0  # seconds beyond the tick, the longest seen
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hiccups", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            asked = time.monotonic()
            time.sleep(TICK)
            self.worst = max(self.worst, time.monotonic() - asked - TICK)

    def __enter__(self) -> HiccupMeter:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def worst_ms(self) -> float:
        return self.worst * 1000
