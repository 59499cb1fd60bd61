"""A cgroup of its own for a server under test (root, and a writable cgroup v1 or v2 hierarchy):
CPU 0 only (when the machine has two or more CPUs; every CPU with every_cpu=True), an optional
CFS quota and memory limit. Used
by the tests and benchmarks that check what apachetune reads from a real httpd's cgroup.

    with Sandbox(cpus=0.5, memory_mib=300) as box:
        start the server under box.wrapper() ...

`Sandbox.why_not()` says why one cannot be made here (None when it can)."""

from __future__ import annotations

import os
from pathlib import Path

V1 = Path("/sys/fs/cgroup")
V2_PLACES = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


def _v2_top() -> Path | None:
    for top in V2_PLACES:
        controllers = top / "cgroup.controllers"
        if controllers.exists() and {"cpu", "cpuset", "memory"} <= set(controllers.read_text().split()):
            return top
    return None


class Sandbox:
    def __init__(self, cpus: float | None = None, memory_mib: int | None = None, name: str | None = None,
                 period_us: int = 100_000, every_cpu: bool = False):
        self.cpus, self.memory_mib, self.period_us = cpus, memory_mib, period_us
        self.every_cpu = every_cpu  # run on every CPU (a quota of whole CPUs), not CPU 0 alone
        self.name = name or f"apachetune-test-{os.getpid()}-{id(self):x}"
        self.dirs: list[Path] = []

    @staticmethod
    def why_not() -> str | None:
        """Why no sandbox can be made here, found by making one (a read-only cgroupfs, a v2 root
        whose controllers cannot be delegated, a kernel without a controller...)."""
        if os.geteuid() != 0:
            return "needs root to make a cgroup"
        try:
            with Sandbox(cpus=0.5, memory_mib=64, name=f"apachetune-probe-{os.getpid()}"):
                pass
        except (OSError, RuntimeError) as e:
            return f"cannot make a cgroup here: {e}"
        return None

    def __enter__(self) -> Sandbox:
        try:
            return self._make()
        except BaseException:
            self.__exit__()
            raise

    def _make(self) -> Sandbox:
        one_cpu = (os.cpu_count() or 1) >= 2 and not self.every_cpu
        if all((V1 / c / "cgroup.procs").exists() for c in ("cpu", "cpuset", "memory")):
            cpu, cpuset, memory = (V1 / c / self.name for c in ("cpu", "cpuset", "memory"))
            for d in (cpu, cpuset, memory):
                d.mkdir(exist_ok=True)
                self.dirs.append(d)
            (cpuset / "cpuset.cpus").write_text("0" if one_cpu else (V1 / "cpuset" / "cpuset.cpus").read_text().strip())
            (cpuset / "cpuset.mems").write_text((V1 / "cpuset" / "cpuset.mems").read_text().strip())
            if self.cpus is not None:
                (cpu / "cpu.cfs_period_us").write_text(str(self.period_us))
                (cpu / "cpu.cfs_quota_us").write_text(str(int(self.cpus * self.period_us)))
            if self.memory_mib is not None:
                (memory / "memory.limit_in_bytes").write_text(str(self.memory_mib << 20))
            acct = V1 / "cpuacct"  # the CPU time the quota meters (a hierarchy of its own unless co-mounted with cpu)
            if (acct / "cgroup.procs").exists() and acct.resolve() != (V1 / "cpu").resolve():
                (acct / self.name).mkdir(exist_ok=True)
                self.dirs.append(acct / self.name)
            return self
        top = _v2_top()
        if top is None:
            raise RuntimeError(self.why_not() or "no cgroup hierarchy")
        (top / "cgroup.subtree_control").write_text("+cpu +cpuset +memory")
        d = top / self.name
        d.mkdir(exist_ok=True)
        self.dirs.append(d)
        if one_cpu:
            (d / "cpuset.cpus").write_text("0")
        if self.cpus is not None:
            (d / "cpu.max").write_text(f"{int(self.cpus * self.period_us)} {self.period_us}")
        if self.memory_mib is not None:
            (d / "memory.max").write_text(str(self.memory_mib << 20))
        return self

    def cpu_seconds(self) -> float:
        """The CPU time the cgroup's processes have used (what its quota meters: the kernel's
        work on their behalf included), from cpuacct.usage (v1) or cpu.stat's usage_usec (v2)."""
        for d in self.dirs:
            if (d / "cpuacct.usage").exists():
                return int((d / "cpuacct.usage").read_text()) / 1e9
            if (d / "cpu.stat").exists() and "usage_usec" in (text := (d / "cpu.stat").read_text()):
                return int(text.split("usage_usec", 1)[1].split()[0]) / 1e6
        raise RuntimeError("no CPU usage counter in the sandbox's cgroups")

    def wrapper(self) -> list[str]:
        """A command prefix that moves itself into the cgroup, then runs the rest."""
        joins = "; ".join(f"echo $$ > {d}/cgroup.procs" for d in self.dirs)
        return ["sh", "-c", f'{joins}; exec "$@"', "sh"]

    def __exit__(self, *exc: object) -> None:
        for d in self.dirs:
            try:
                d.rmdir()  # (only once every process in it has gone)
            except OSError:
                pass
