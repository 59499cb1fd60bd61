"""A process's memory as sizing and validation count it: PSS and USS, never summed RSS.

RSS counts every page shared with the parent and the other children once per process, the
classic reason sizing tools under-recommend. PSS (/proc/PID/smaps_rollup, through psutil's
memory_full_info) gives each process its share of shared pages, so a sum over a server's
processes is what the server really costs; USS is what would be freed if the process exited.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

MIB = 1024 * 1024


@dataclass(frozen=True)
class ProcessMemory:
    rss_mib: float
    pss_mib: float
    uss_mib: float


def process_memory(proc: psutil.Process) -> ProcessMemory:
    """One process (raises psutil.Error when it is gone or not ours to read). Kernels without
    PSS (before 2.6.25) report USS in its place."""
    info = proc.memory_full_info()
    return ProcessMemory(info.rss / MIB, getattr(info, "pss", info.uss) / MIB, info.uss / MIB)


def _rollup_kib(pid: int) -> tuple[int, int] | None:
    """PSS and USS (KiB) from /proc/PID/smaps_rollup, the figures psutil reads there (USS: the
    Private_* lines), asked only where the kernel has the file (Linux 4.14+): (0, 0) for a
    process that is gone, None for one that cannot be read (psutil says why)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            text = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return 0, 0
    except OSError:
        return None
    pss = uss = 0
    for line in text.split(b"\n"):
        if line.startswith(b"Pss:"):
            pss += int(line.split()[1])
        elif line.startswith(b"Private_"):
            uss += int(line.split()[1])
    return pss, uss


_HAS_ROLLUP = Path("/proc/self/smaps_rollup").exists()


def pss_uss_by_pid(pids: Iterable[int]) -> dict[int, tuple[float, float]]:
    """PSS and USS (MiB) of each of `pids`; a process that exits meanwhile counts 0.

    Read straight from smaps_rollup where there is one: a validation run looks at every process
    ten times a second while the server is CPU-bound, and psutil's way (a Process object, its
    stat file, then the rollup) cost twice the CPU taken from the server under test."""
    found = {}
    for pid in pids:
        kib = _rollup_kib(pid) if _HAS_ROLLUP else None
        if kib is not None:
            found[pid] = (kib[0] / 1024, kib[1] / 1024)
            continue
        try:
            m = process_memory(psutil.Process(pid))
        except psutil.Error:
            found[pid] = (0.0, 0.0)
            continue
        found[pid] = (m.pss_mib, m.uss_mib)
    return found


def totals(by_pid: dict[int, tuple[float, float]]) -> tuple[float, float]:
    """Sum of PSS and USS (MiB) over a pss_uss_by_pid answer."""
    return sum(p for p, _ in by_pid.values()), sum(u for _, u in by_pid.values())


def total_pss_uss(pids: Iterable[int]) -> tuple[float, float]:
    """Sum of PSS and USS (MiB) over `pids`."""
    return totals(pss_uss_by_pid(pids))
