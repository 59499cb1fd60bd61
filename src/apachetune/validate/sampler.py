"""Watching a target under load: its status page and its processes' memory, in the background."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from apachetune.procmem import pss_uss_by_pid, totals
from apachetune.validate import sockdiag
from apachetune.validate.targets import Target


def established(port: int, pids: list[int]) -> int | None:
    """Client connections the server's processes `pids` hold open on `port`: ESTABLISHED TCP
    sockets of that local port (asked of the kernel, sockdiag; else read from /proc/net/tcp{,6})
    that are open in one of the processes (their fds' socket inodes). A connection still in the
    listening socket's accept queue has no inode yet and is not counted. None when the tables or
    the processes' fds cannot be read (another user's processes without root). psutil's per-process listing read
    the whole table once per process: 0.4 s of CPU a look at 800 connections, taken from the
    server under test; subtracting the listener's queue from the table's count instead raced
    with connections arriving during the read (338 counted on 256 prefork children)."""
    try:
        inodes: set[str] | None = sockdiag.established_inodes(port)
    except sockdiag.Unavailable:
        inodes = _established_inodes(port)
    if inodes is None:
        return None
    n = 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except FileNotFoundError:
            continue  # a child that exited between the listing and the look holds nothing
        except OSError:
            return None
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue  # closed meanwhile
            if link.startswith("socket:[") and link[8:-1] in inodes:
                n += 1
    return n


def _established_inodes(port: int) -> set[str] | None:
    """The inodes of the ESTABLISHED sockets whose local port is `port`, from /proc/net/tcp{,6}:
    where netlink cannot be asked."""
    found, inodes = False, set()
    hex_port = f":{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        found = True
        for line in lines:
            fields = line.split(None, 10)
            if len(fields) > 9 and fields[3] == "01" and fields[1].endswith(hex_port):
                inodes.add(fields[9])
    return inodes if found else None


# A look at a 257-process prefork pool costs 50 ms of CPU: twenty a second took a whole CPU from
# the server under test. Each thread waits at least this many times its last look's CPU time.
LOOK_CPU_RATIO = 4.0


def _paced(interval: float, look_cpu_s: float) -> float:
    return max(interval, LOOK_CPU_RATIO * look_cpu_s)


class Sampler:
    """Polls the status page and the memory of the target's processes in the background.

    The status page is asked in a thread of its own: when every worker is busy (httpd worker
    with a keep-alive client on each) it is answered only when a client lets go, at the step's
    end, and a look that waited for it saw the connections already closing (26 of 75 held). A
    look takes the memory and the connections every `interval` and the status page's last answer
    when it came since the look before, else None.

    Memory is also read on its own, every `memory_interval` (reading /proc is cheap, the status
    page may wait for a free worker), into `peak_pss_mib`: a worker that frees its request's
    memory at the end of each request holds it only most of the time, so the peak needs many
    looks.

    Each child's own highest USS since `begin_window` is kept too (`child_peaks`): a prefork
    child holds its request's memory only mid-request, so a look at the whole server catches
    the children holding it as often as chance has it (under a CPU hog, half of them: 35.6 MiB
    predicted, 70.3 peak), while each child's own peak over a step's many looks catches its
    own."""

    def __init__(self, target: Target, interval: float = 0.25, memory_interval: float = 0.05):
        self.target, self.interval, self.memory_interval = target, interval, memory_interval
        self.samples: list[dict[str, Any]] = []
        self.peak_pss_mib = 0.0
        self._peaks: dict[int, float] = {}  # each child's highest USS (MiB) in the window
        self._answer: dict[str, str] | None = None  # the status page's answer not yet taken by a look
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True),
                         threading.Thread(target=self._run_status, daemon=True),
                         threading.Thread(target=self._run_memory, daemon=True)]

    def _run_status(self):
        while not self._stop.is_set():
            self._answer = self.target.status()
            self._stop.wait(self.interval)

    def _run(self):
        start = time.monotonic()
        while not self._stop.is_set():
            cpu = time.thread_time()
            st, self._answer = self._answer or {}, None
            pids = self.target.pids()
            pss, uss = self._look(pids)
            # None, not 0, when the status page did not answer (every worker busy, or a failure)
            self.samples.append({"t": round(time.monotonic() - start, 2),
                                 "busy": int(st["BusyWorkers"] or 0) if "BusyWorkers" in st else None,
                                 "idle": int(st["IdleWorkers"] or 0) if "IdleWorkers" in st else None,
                                 "processes": int(st.get("Processes", 0) or 0) if "Processes" in st else None,
                                 "children": max(0, len(pids) - 1), "connections": established(self.target.port, pids[1:]),
                                 "pss_mib": round(pss, 2), "uss_mib": round(uss, 2)})
            self._stop.wait(_paced(self.interval, time.thread_time() - cpu))

    def _run_memory(self):
        cpu = 0.0
        while not self._stop.wait(_paced(self.memory_interval, cpu)):
            cpu = time.thread_time()
            self._look(self.target.pids())
            cpu = time.thread_time() - cpu

    def _look(self, pids: list[int]) -> tuple[float, float]:
        """The server's PSS and USS now (pids: the parent first), kept in the peaks."""
        by_pid = pss_uss_by_pid(pids)
        peaks = self._peaks
        for pid in pids[1:]:
            if by_pid[pid][1] > peaks.get(pid, 0.0):
                peaks[pid] = by_pid[pid][1]
        pss, uss = totals(by_pid)
        self.peak_pss_mib = max(self.peak_pss_mib, pss)
        return pss, uss

    def begin_window(self) -> None:
        """Starts a new window for child_peaks."""
        self._peaks = {}

    def child_peaks(self) -> dict[int, float]:
        """Each child's highest USS (MiB) seen since begin_window."""
        return dict(self._peaks)

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join(5)
        return False
