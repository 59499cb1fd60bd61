"""What the kernel lets the server run: the task limits every worker counts against, and the
memory limit and CPUs of the cgroup it runs in (a container's `memory.max`, not the host's
MemAvailable; its `cpu.max` quota or cpuset, not the host's cores).

Every reader takes a `root` (default "/"), so tests replay a fixture tree of /proc and /sys.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
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


def _cgroups(base: Path, pid: str) -> list[tuple[list[str], str]] | None:
    """/proc/PID/cgroup's lines as (controllers, path); v2's unified line has no controller
    ([""]). None when the file cannot be read."""
    try:
        lines = (base / "proc" / pid / "cgroup").read_text().splitlines()
    except OSError:
        return None
    return [(parts[1].split(","), parts[2]) for parts in (line.split(":", 2) for line in lines) if len(parts) == 3]


def _up_from(top: Path, rel: str) -> Iterator[Path]:
    """The cgroup's directory under `top`, then each parent up to `top` itself."""
    d = top / rel.lstrip("/")
    while True:
        yield d
        if d == top or top not in d.parents:
            return
        d = d.parent


def cgroup_memory(root: str | os.PathLike[str] = "/", pid: str = "self") -> CgroupMemory | None:
    """The memory limit of `pid`'s cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`), the
    lowest one up the hierarchy; None when there is none (no cgroup, or "max")."""
    base = Path(root)
    best: CgroupMemory | None = None
    for controllers, rel in _cgroups(base, pid) or []:
        if controllers == [""]:  # v2: one unified hierarchy
            top = base / "sys" / "fs" / "cgroup"
            limit_name, usage_name = "memory.max", "memory.current"
        elif "memory" in controllers:  # v1: the memory controller's own hierarchy
            top = base / "sys" / "fs" / "cgroup" / "memory"
            limit_name, usage_name = "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        for d in _up_from(top, rel):
            limit = _read_int(d / limit_name)
            # v1 writes "unlimited" as a huge page-aligned number; anything above 2^60 is none.
            if limit is not None and limit < 1 << 60:
                used = _read_int(d / usage_name) or 0
                found = CgroupMemory(limit / MIB, used / MIB, str(d / limit_name))
                if best is None or found.available_mib < best.available_mib:
                    best = found
    return best


@dataclass(frozen=True)
class CpuLimit:
    cpus: float  # CPUs' worth of time the cgroup may use (a quota of 1.5 is 1.5), or CPUs it may run on
    where: str  # what set it: the cgroup file, or the process's CPU affinity
    period: float | None = None  # a quota's CFS period, seconds (the kernel's default is 0.1)


def _quota_v2(d: Path) -> float | None:
    try:  # cpu.max: "$MAX $PERIOD", "max" when there is no quota
        quota, period = (d / "cpu.max").read_text().split()[:2]
        return int(quota) / int(period) if quota != "max" and int(period) > 0 else None
    except (OSError, ValueError):
        return None


def _quota_v1(d: Path) -> float | None:
    quota, period = _read_signed(d / "cpu.cfs_quota_us"), _read_int(d / "cpu.cfs_period_us")
    return quota / period if quota is not None and quota > 0 and period else None  # -1: none


def _period_v2(d: Path) -> float | None:
    try:
        return int((d / "cpu.max").read_text().split()[1]) / 1e6
    except (OSError, ValueError, IndexError):
        return None


def _period_v1(d: Path) -> float | None:
    period = _read_int(d / "cpu.cfs_period_us")
    return period / 1e6 if period else None


def _read_signed(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def cpu_list_size(text: str) -> int | None:
    """How many CPUs a kernel CPU list names ("0-3,8,10-11" is 7); None when it names none."""
    count = 0
    try:
        for part in text.strip().split(","):
            if not part:
                continue
            first, _, last = part.partition("-")
            count += int(last or first) - int(first) + 1
    except ValueError:
        return None
    return count or None


def cgroup_cpus(root: str | os.PathLike[str] = "/", pid: str = "self") -> CpuLimit | None:
    """The CPUs `pid`'s cgroup may use: the lowest CPU quota up the hierarchy (v2 `cpu.max`, v1
    `cpu.cfs_quota_us` / `cpu.cfs_period_us`: `docker --cpus`, systemd's CPUQuota=) and the
    size of its cpuset (`docker --cpuset-cpus`, systemd's AllowedCPUs=); None when neither
    limits it."""
    quota, cpuset = _cgroup_limits(root, pid)
    if quota is None or cpuset is None:
        return quota or cpuset
    return quota if quota.cpus <= cpuset.cpus else cpuset


def _cgroup_limits(root: str | os.PathLike[str], pid: str) -> tuple[CpuLimit | None, CpuLimit | None]:
    """The lowest CPU quota up `pid`'s cgroup hierarchy, and the smallest cpuset."""
    base = Path(root)
    best: dict[bool, CpuLimit] = {}  # is a quota -> the lowest found
    Reader = tuple[Path, str, Callable[[Path], float | None], Callable[[Path], float | None] | None]
    for controllers, rel in _cgroups(base, pid) or []:
        readers: list[Reader] = []  # (hierarchy, file, its CPUs, a quota's period)
        if controllers == [""]:  # v2: one hierarchy holds both
            top = base / "sys" / "fs" / "cgroup"
            readers = [(top, "cpu.max", _quota_v2, _period_v2),
                       (top, "cpuset.cpus.effective", _cpuset("cpuset.cpus.effective"), None)]
        else:  # v1: each controller its own hierarchy
            if "cpu" in controllers:
                readers.append((base / "sys" / "fs" / "cgroup" / "cpu", "cpu.cfs_quota_us", _quota_v1, _period_v1))
            if "cpuset" in controllers:
                readers.append((base / "sys" / "fs" / "cgroup" / "cpuset", "cpuset.effective_cpus",
                                _cpuset("cpuset.effective_cpus", "cpuset.cpus"), None))
        for top, name, read, period in readers:
            for d in _up_from(top, rel):
                cpus = read(d)
                kind = period is not None
                if cpus is not None and (kind not in best or cpus < best[kind].cpus):
                    best[kind] = CpuLimit(cpus, str(d / name), period(d) if period else None)
    return best.get(True), best.get(False)


def _cpuset(*names: str) -> Callable[[Path], float | None]:
    def read(d: Path) -> float | None:
        for name in names:
            try:
                size = cpu_list_size((d / name).read_text())
            except OSError:
                continue
            if size:
                return float(size)
        return None
    return read


@dataclass(frozen=True)
class CpuAllowance:
    """The CPUs a server can use: whole `cores` its threads may run on (the CPUs online, or
    fewer by affinity, cpuset or a quota rounded to the nearest whole one, at least 1), the
    cgroup's `quota` when it allows less time than the CPUs its threads may run on (0.25, 1.5,
    and 1.0 on 2 CPUs: two threads run 50 ms of each 100 ms period, then both wait), and where
    the figure came from; `period`: the quota's CFS period in seconds (cpu.max's second field,
    cpu.cfs_period_us), which sets how long a throttled cgroup waits (None: no quota binds)."""

    cores: int
    quota: float | None
    source: str
    period: float | None = None
    # the whole CPUs its threads may run on (online, affinity, cpuset): under a quota they run
    # there at full speed until the period's budget is spent (0: not read, take `cores`)
    runs_on: int = 0

    def __post_init__(self) -> None:
        if self.runs_on < self.cores:
            object.__setattr__(self, "runs_on", self.cores)

    @property
    def cpu_time(self) -> float:
        """CPUs' worth of time a second: the quota when one binds, else the cores."""
        return self.quota if self.quota is not None else float(self.cores)


def cpus_text(n: object, noun: str = "CPU") -> str:
    """A count of CPUs in words: "1 CPU", "2 CPUs", "1.5 CPUs" (`n` as it is to be printed)."""
    try:
        one = float(str(n)) == 1
    except ValueError:
        one = False
    return f"{n} {noun}{'' if one else 's'}"


def cpu_allowance(root: str | os.PathLike[str] = "/", pid: str = "self", online: int | None = None) -> CpuAllowance:
    """What `pid` may use of this machine's CPUs (its affinity and its cgroup's quota or
    cpuset), each limit read once."""
    count = online or os.cpu_count() or 1
    source = "CPUs online"
    if str(root) == "/" and hasattr(os, "sched_getaffinity"):
        try:
            allowed = len(os.sched_getaffinity(int(pid) if pid.isdigit() else 0))
        except OSError:
            allowed = count
        if allowed < count:
            count, source = allowed, "CPU affinity"
    quota, cpuset = _cgroup_limits(root, pid)
    if cpuset is not None and cpuset.cpus < count:
        count, source = int(cpuset.cpus), f"cgroup limit {cpuset.where}: {cpus_text(f'{cpuset.cpus:g}')}"
    if quota is not None and quota.cpus < count:
        cores = max(1, math.floor(quota.cpus + 0.5))
        return CpuAllowance(cores, quota.cpus, f"cgroup limit {quota.where}: {cpus_text(f'{quota.cpus:g}')}",
                            quota.period, runs_on=count)
    return CpuAllowance(count, None, source)


def usable_cpus(root: str | os.PathLike[str] = "/", pid: str = "self",
                online: int | None = None) -> tuple[int, str]:
    """CPUs the server can keep busy, and where the figure came from: the CPUs online (or the
    process's affinity, on this machine), lowered by its cgroup's quota or cpuset. A fractional
    quota is rounded to the nearest whole CPU (at least 1): sizing counts whole cores
    (cpu_allowance keeps the quota too)."""
    allowance = cpu_allowance(root, pid, online)
    return allowance.cores, allowance.source
