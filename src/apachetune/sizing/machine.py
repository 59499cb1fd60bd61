"""What the kernel lets the server run: the task limits every worker counts against, and the
memory limit of the cgroup it runs in (a container's `memory.max`, not the host's MemAvailable).

Every reader takes a `root` (default "/"), so tests replay a fixture tree of /proc and /sys.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
# What the rest of the machine keeps of the task limit: httpd's workers may take half of what
# is free, never all of it (a fork bomb of our own making would take sshd with it).
TASK_SHARE = 0.5


@dataclass(frozen=True)
class TaskLimits:
    pid_max: int | None
    threads_max: int | None
    tasks_now: int | None  # threads running on the machine now

    @property
    def workers_allowed(self) -> int | None:
        """Workers (each a thread or a process: each takes a pid) that fit: TASK_SHARE of what
        the lower of pid_max and threads-max leaves free now."""
        limits = [v for v in (self.pid_max, self.threads_max) if v]
        if not limits:
            return None
        free = min(limits) - (self.tasks_now or 0)
        return max(1, int(free * TASK_SHARE))


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().split()
    except OSError:
        return None
    return int(text[0]) if text and text[0].isdigit() else None


def task_limits(root: str | os.PathLike[str] = "/") -> TaskLimits:
    proc = Path(root) / "proc"
    tasks = None
    try:  # /proc/loadavg's fourth field: running/total scheduling entities (threads)
        fields = (proc / "loadavg").read_text().split()
        tasks = int(fields[3].split("/")[1])
    except (OSError, IndexError, ValueError):
        pass
    return TaskLimits(_read_int(proc / "sys" / "kernel" / "pid_max"),
                      _read_int(proc / "sys" / "kernel" / "threads-max"), tasks)


@dataclass(frozen=True)
class CgroupMemory:
    limit_mib: float  # the lowest memory limit on the way from the process's cgroup to the root
    used_mib: float  # what that cgroup uses now
    where: str  # the file the limit came from

    @property
    def available_mib(self) -> float:
        return max(0.0, self.limit_mib - self.used_mib)


def cgroup_memory(root: str | os.PathLike[str] = "/", pid: str = "self") -> CgroupMemory | None:
    """The memory limit of `pid`'s cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`), the
    lowest one up the hierarchy; None when there is none (no cgroup, or "max")."""
    base = Path(root)
    try:
        lines = (base / "proc" / pid / "cgroup").read_text().splitlines()
    except OSError:
        return None
    best: CgroupMemory | None = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        if controllers == "":  # v2: one unified hierarchy
            top = base / "sys" / "fs" / "cgroup"
            limit_name, usage_name = "memory.max", "memory.current"
        elif "memory" in controllers.split(","):  # v1: the memory controller's own hierarchy
            top = base / "sys" / "fs" / "cgroup" / "memory"
            limit_name, usage_name = "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        d = top / rel.lstrip("/")
        while True:
            limit = _read_int(d / limit_name)
            # v1 writes "unlimited" as a huge page-aligned number; anything above 2^60 is none.
            if limit is not None and limit < 1 << 60:
                used = _read_int(d / usage_name) or 0
                found = CgroupMemory(limit / MIB, used / MIB, str(d / limit_name))
                if best is None or found.available_mib < best.available_mib:
                    best = found
            if d == top or top not in d.parents:
                break
            d = d.parent
    return best
