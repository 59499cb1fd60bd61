"""A process's memory as sizing and validation count it: PSS and USS, never summed RSS.

RSS counts every page shared with the parent and the other children once per process, the
classic reason sizing tools under-recommend. PSS (/proc/PID/smaps_rollup, through psutil's
memory_full_info) gives each process its share of shared pages, so a sum over a server's
processes is what the server really costs; USS is what would be freed if the process exited.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

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


def total_pss_uss(pids: Iterable[int]) -> tuple[float, float]:
    """Sum of PSS and USS (MiB) over `pids`; processes that exit meanwhile count 0."""
    pss = uss = 0.0
    for pid in pids:
        try:
            m = process_memory(psutil.Process(pid))
        except psutil.Error:
            continue
        pss += m.pss_mib
        uss += m.uss_mib
    return pss, uss
