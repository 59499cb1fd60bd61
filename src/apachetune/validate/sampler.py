"""Watching a target under load: its status page and its processes' memory, in the background."""

from __future__ import annotations

import threading
import time
from typing import Any

from apachetune.procmem import total_pss_uss
from apachetune.validate.targets import Target


def established(pids: list[int]) -> int | None:
    """Client connections the server's children hold open (ESTABLISHED TCP sockets); None when
    they cannot be read (another user's processes without root)."""
    import psutil

    n = 0
    try:
        for pid in pids:
            n += sum(1 for c in psutil.Process(pid).net_connections("tcp") if c.status == psutil.CONN_ESTABLISHED)
    except psutil.NoSuchProcess:
        pass  # a child that exited between the listing and the look holds nothing
    except psutil.Error:
        return None
    return n


class Sampler:
    """Polls the status page and the memory of the target's processes in the background.

    Memory is also read on its own, every `memory_interval` (reading /proc is cheap, the status
    page may wait for a free worker), into `peak_pss_mib`: a worker that frees its request's
    memory at the end of each request holds it only most of the time, so the peak needs many
    looks."""

    def __init__(self, target: Target, interval: float = 0.25, memory_interval: float = 0.05):
        self.target, self.interval, self.memory_interval = target, interval, memory_interval
        self.samples: list[dict[str, Any]] = []
        self.peak_pss_mib = 0.0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True),
                         threading.Thread(target=self._run_memory, daemon=True)]

    def _run(self):
        start = time.monotonic()
        while not self._stop.is_set():
            st = self.target.status()
            pids = self.target.pids()
            pss, uss = total_pss_uss(pids)
            self.peak_pss_mib = max(self.peak_pss_mib, pss)
            self.samples.append({"t": round(time.monotonic() - start, 2), "busy": int(st.get("BusyWorkers", 0) or 0),
                                 "idle": int(st.get("IdleWorkers", 0) or 0),
                                 "processes": int(st.get("Processes", 0) or 0) if "Processes" in st else None,
                                 "children": max(0, len(pids) - 1), "connections": established(pids[1:]),
                                 "pss_mib": round(pss, 2), "uss_mib": round(uss, 2)})
            self._stop.wait(self.interval)

    def _run_memory(self):
        while not self._stop.wait(self.memory_interval):
            self.peak_pss_mib = max(self.peak_pss_mib, total_pss_uss(self.target.pids())[0])

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join(5)
        return False
