"""Facts about the server's host that some rules need (`lint --measure` or `lint --facts FILE`).

Lint is pure: rules never read /proc themselves. The CLI reads the host once into HostLimits
(from a proc tree, so tests use a fixture tree) or loads it from a facts file written by
`apachetune size --save-facts` (memory) with an optional "limits" object (somaxconn, nofile,
mounts). Without host facts these rules say nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from apachetune.sizing.facts_file import read_facts

NETWORK_FILESYSTEMS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse.sshfs", "glusterfs",
                                 "fuse.glusterfs", "ceph", "fuse.ceph", "lustre", "afs", "ocfs2", "gfs2"})


@dataclass(frozen=True)
class HostLimits:
    somaxconn: int | None = None  # net.core.somaxconn: the kernel clamps every listen backlog to it
    nofile: int | None = None  # httpd's soft RLIMIT_NOFILE (descriptors per process)
    mounts: tuple[tuple[str, str], ...] = ()  # (mount point, file system type)
    available_mib: float | None = None  # memory httpd may use (MemAvailable or the cgroup limit)
    per_worker_mib: float | None = None  # measured (PSS/USS) per worker, with the process base below
    per_process_mib: float | None = None
    parent_mib: float | None = None
    source: str = ""
    notes: list[str] = field(default_factory=list)

    def fstype(self, path: str) -> str | None:
        """The file system type holding `path` (the longest mount point above it)."""
        best = None
        for point, kind in self.mounts:
            if path == point or path.startswith(point.rstrip("/") + "/") or point == "/":
                if best is None or len(point) > len(best[0]):
                    best = (point, kind)
        return best[1] if best else None


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _mounts(proc: Path) -> tuple[tuple[str, str], ...]:
    try:
        text = (proc / "self" / "mounts").read_text(errors="replace")
    except OSError:
        return ()
    out = []
    for line in text.splitlines()[:10000]:
        words = line.split()
        if len(words) >= 3:
            out.append((words[1].replace("\\040", " "), words[2]))
    return tuple(out)


def _nofile(proc: Path, pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        for line in (proc / str(pid) / "limits").read_text().splitlines():
            if line.startswith("Max open files"):
                soft = line.split()[3]
                return None if soft == "unlimited" else int(soft)
    except (OSError, ValueError, IndexError):
        return None
    return None


def read_host(proc: Path = Path("/proc"), httpd_pid: int | None = None) -> HostLimits:
    """This machine: somaxconn, mounts, httpd's descriptor limit (when a pid is known), memory."""
    mem = _read_meminfo(proc)
    return HostLimits(somaxconn=_read_int(proc / "sys" / "net" / "core" / "somaxconn"),
                      nofile=_nofile(proc, httpd_pid), mounts=_mounts(proc), available_mib=mem,
                      source=f"measured on this host ({proc})")


def _read_meminfo(proc: Path) -> float | None:
    try:
        for line in (proc / "meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def load_facts(path: str | os.PathLike[str]) -> HostLimits:
    """A facts file from `apachetune size --save-facts` (+ an optional "limits" object), each
    value checked (sizing/facts_file.py)."""
    data = read_facts(path, for_sizing=False)
    limits = data.get("limits") or {}
    httpd = data.get("httpd") or {}
    available = free = data.get("available_mib")
    held = (httpd.get("parent_pss_mib") or 0.0) + sum(c.get("pss_mib") or 0.0 for c in httpd.get("children") or ())
    if free is not None and held:  # what httpd held when measured is its pool's too (as size counts it)
        available = free + held
    return HostLimits(
        somaxconn=limits.get("somaxconn"), nofile=limits.get("nofile"),
        mounts=tuple((point, kind) for point, kind in limits.get("mounts", ())),
        available_mib=available,
        per_worker_mib=httpd.get("per_worker_mib"), per_process_mib=httpd.get("per_process_mib"),
        parent_mib=httpd.get("parent_pss_mib"),
        source=f"facts file {path}" + (f": {free:g} MiB free plus the {held:.1f} MiB httpd held" if free is not None
                                       and held else ""))
