"""What the machine says: memory available, other services, and a running httpd's workers.

Memory per worker is measured with PSS and USS (procmem.py), never by summing RSS.
- prefork: a worker is a child; its cost is the child's PSS (private pages plus its share
  of the pages shared with the parent and the other children).
- worker/event: a child's cost is split into a fixed base (its share of what it inherited
  from the parent, i.e. PSS - USS) and the threads' own memory (USS / threads: their stacks
  and allocations); per worker = USS / threads, per process = PSS - USS.
Everything is collected into a frozen HostFacts that saves to and loads from JSON, so a
measurement can be replayed (--facts host.json) and tests never read the real machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import psutil

from apachetune.errors import UsageError
from apachetune.inputs import read_small
from apachetune.procmem import process_memory
from apachetune.sizing.facts_file import read_facts
from apachetune.sizing.machine import cgroup_memory, cpu_allowance, task_limits

MIB = 1024 * 1024
HTTPD_NAMES = ("apache2", "httpd")
# Other services whose memory must be left alone, by process name.
SERVICES = {
    "mysqld": "MySQL", "mariadbd": "MariaDB", "postgres": "PostgreSQL", "php-fpm": "PHP-FPM",
    "redis-server": "Redis", "memcached": "memcached", "java": "Java", "node": "Node.js",
    "varnishd": "Varnish", "nginx": "nginx", "mongod": "MongoDB", "elasticsearch": "Elasticsearch",
}


@dataclass(frozen=True)
class WorkerSample:
    pid: int
    threads: int
    rss_mib: float
    pss_mib: float
    uss_mib: float


@dataclass(frozen=True)
class HttpdFacts:
    parent_pid: int
    mpm: str | None
    children: tuple[WorkerSample, ...]
    parent_pss_mib: float
    per_worker_mib: float  # see the module docstring
    per_process_mib: float
    threads_per_child: int
    idle: str | None = None  # why the sample says nothing about a loaded server (None: it does)

    @property
    def total_pss_mib(self) -> float:
        """The server's PSS in this look: the parent and every child."""
        return self.parent_pss_mib + sum(c.pss_mib for c in self.children)


# A sample means something only once the workers have served: a server started this recently,
# or whose children have used this little CPU in all, has workers about as big as a fresh fork.
JUST_STARTED_SECONDS = 120
IDLE_CPU_SECONDS = 1.0


@dataclass(frozen=True)
class HostFacts:
    total_mib: float
    available_mib: float
    cpus: int
    services: dict[str, float] = field(default_factory=dict)  # service -> MiB (PSS)
    httpd: HttpdFacts | None = None
    memory_source: str = "MemAvailable"  # or the cgroup file whose limit is lower
    task_limit: int | None = None  # workers the kernel's task limits leave room for (machine.py)
    cpu_source: str = "CPUs online"  # or the affinity or cgroup limit that lowered it
    cpus_online: int | None = None  # what httpd's ListenCoresBucketsRatio counts (sysconf)
    # a cgroup's CPU quota below `cpus` (0.25, 1.5): the CPU time the server really has, which
    # bounds the requests a second; `cpus` stays the whole cores its threads may run on
    cpu_quota: float | None = None
    cpu_period: float | None = None  # that quota's CFS period, seconds (a throttled cgroup waits out its rest)
    cpu_runs_on: int | None = None  # the whole CPUs a quota's threads may run on, at full speed until it is spent

    @property
    def cpu_time(self) -> float:
        """CPUs' worth of time: the quota when one binds, else the cores."""
        if self.cpu_quota is None:
            return self.cpus
        return int(self.cpu_quota) if float(self.cpu_quota).is_integer() else self.cpu_quota  # (2, not 2.0)

    @property
    def reserved_mib(self) -> float:
        return sum(self.services.values())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def save(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> HostFacts:
        """A facts file, each value checked (facts_file.py); keys it does not know are ignored, so
        that a file from a newer apachetune still reads."""
        data = read_facts(path, for_sizing=True)
        httpd = data.get("httpd")
        if httpd is not None:
            children = tuple(WorkerSample(**_known(WorkerSample, c)) for c in httpd["children"])
            httpd = HttpdFacts(**{**_known(HttpdFacts, httpd), "children": children})
        return cls(data["total_mib"], data["available_mib"], data["cpus"], data.get("services") or {}, httpd,
                   data.get("memory_source", "MemAvailable"), data.get("task_limit"),
                   data.get("cpu_source", "CPUs online"), data.get("cpus_online"), data.get("cpu_quota"),
                   data.get("cpu_period"), data.get("cpu_runs_on"))


def _known(kind: type, values: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(kind)}
    return {k: v for k, v in values.items() if k in names}


def _mem(proc: psutil.Process) -> tuple[float, float, float]:
    m = process_memory(proc)
    return m.rss_mib, m.pss_mib, m.uss_mib


class SeveralHttpd(UsageError):
    """More than one httpd server runs and none was named: which one to measure is not known."""

    def __init__(self, message: str, listed: str):
        super().__init__(message)
        self.listed = listed


def configuration_of(cmdline: list[str], default: str | None) -> str | None:
    """The main configuration file an httpd command line runs: its -f (under its -d when
    relative), else `default` (the binary's SERVER_CONFIG_FILE); None when not known."""
    args, given = cmdline[1:], {}
    for i, a in enumerate(args):
        flag = a[:2]
        if flag in ("-f", "-d"):  # "-f FILE" or "-fFILE"
            value = a[2:] or (args[i + 1] if i + 1 < len(args) else "")
            if value:
                given[flag] = value
    conf = given.get("-f")
    if conf is None:
        return default
    return conf if os.path.isabs(conf) else os.path.join(given.get("-d", "/"), conf)


def _running(config_file: str, found: list[psutil.Process], passed_over: list[str] | None) -> list[psutil.Process]:
    """Of the servers found by name, those not known to run another configuration than
    `config_file` (the others are said in `passed_over`)."""
    from apachetune.config.locate import from_httpd_v

    mine = os.path.realpath(config_file)
    default: list[str | None] = []  # the binary's SERVER_CONFIG_FILE: httpd -V, asked once if needed
    kept = []
    for p in found:
        cmdline = p.info["cmdline"] or [p.info["name"]]
        runs = configuration_of(cmdline, None)
        if runs is None:  # no -f: the binary's own
            default = default or [from_httpd_v()]
            runs = default[0]
        if runs is not None and os.path.realpath(runs) != mine:
            if passed_over is not None:
                passed_over.append(f"pid {p.pid} runs {runs}")
            continue
        kept.append(p)
    return kept


def find_httpd(pid: int | None = None, pidfile: str | None = None, config_file: str | None = None,
               passed_over: list[str] | None = None) -> psutil.Process | None:
    """The httpd parent: the given pid, the pid in `pidfile`, or an apache2/httpd process whose
    parent is not one. With `config_file`, a server found by name that runs another
    configuration is passed over (said in `passed_over`): sizing one server from another's
    workers is the mistake issue 13 saw."""
    if pidfile:
        words = read_small(pidfile, "--pidfile", limit=4096).split()
        if not words or not words[0].isdigit() or not 0 < int(words[0]) <= 4_194_304:
            raise UsageError(f"--pidfile {pidfile}: no process id in it")
        pid = int(words[0])
    if pid:
        try:
            return psutil.Process(pid)
        except psutil.Error as e:
            raise UsageError(f"no such process {pid}: {e}") from None
    found = []
    for proc in psutil.process_iter(["name", "ppid", "cmdline"]):
        if proc.info["name"] not in HTTPD_NAMES:
            continue
        args = proc.info["cmdline"] or []
        if any(a in ("-t", "-S", "-V", "-v", "-l", "-L", "-M") for a in args[1:]):
            continue  # a one-shot check (apache2 -t), not a server
        try:
            parent = psutil.Process(proc.info["ppid"])
            if parent.name() not in HTTPD_NAMES:
                found.append(proc)
        except psutil.Error:
            continue
    if config_file is not None and found:
        found = _running(config_file, found, passed_over)
    if len(found) > 1:
        listed = "; ".join(f"pid {p.pid}: {' '.join(p.info['cmdline'] or [p.info['name']])}" for p in found)
        raise SeveralHttpd(f"{len(found)} httpd servers run on this machine ({listed}); say which one to "
                           "measure with --pid or --pidfile (or give the configuration, whose PidFile is read)",
                           listed)
    return found[0] if found else None


def cpu_seconds(parent: psutil.Process) -> float | None:
    """CPU time the server has used so far: the parent, its live children and those it has
    reaped (a prefork child recycled while the load is measured keeps counting), or None."""
    try:
        t = parent.cpu_times()
        total = t.user + t.system + t.children_user + t.children_system
        children = parent.children()
    except psutil.Error:
        return None
    for c in children:
        with contextlib.suppress(psutil.Error):
            ct = c.cpu_times()
            total += ct.user + ct.system
    return float(total)


def _mpm_of(proc: psutil.Process, children: list[psutil.Process]) -> str | None:
    try:
        for m in proc.memory_maps(grouped=True):
            for name in ("prefork", "worker", "event"):
                if f"mod_mpm_{name}.so" in m.path:
                    return name
    except psutil.Error:
        pass
    if children:
        return "prefork" if all(c.num_threads() == 1 for c in children) else None
    return None


def measure_httpd(parent: psutil.Process, samples: int = 1, interval: float = 1.0,
                  percentile: float = 0.9, threads_per_child: int | None = None) -> HttpdFacts:
    """Measure a running httpd's children; with several samples keep the high percentile.

    A threaded child's workers are guessed as its threads - 2 (httpd: the listener and the
    child's main thread are not workers) unless `threads_per_child` is known (e.g. the
    configured ThreadsPerChild), which is then used as is."""
    per_worker: list[float] = []
    per_process: list[float] = []
    last: list[WorkerSample] = []
    threads = 1
    children: list[psutil.Process] = []
    for i in range(max(1, samples)):
        children = [c for c in parent.children() if c.is_running()]
        last = []
        for child in children:
            try:
                rss, pss, uss = _mem(child)
                last.append(WorkerSample(child.pid, child.num_threads(), rss, pss, uss))
            except psutil.Error:
                continue
        for s in last:
            if s.threads <= 1:
                per_worker.append(s.pss_mib)
                per_process.append(0.0)
            else:
                # The listener and helper threads are not workers: count ThreadsPerChild-ish.
                workers = threads_per_child or max(1, s.threads - 2)
                per_worker.append(s.uss_mib / workers)
                per_process.append(max(0.0, s.pss_mib - s.uss_mib))
            threads = max(threads, s.threads)
        if i + 1 < samples:
            time.sleep(interval)
    if not last:
        raise UsageError(f"httpd (pid {parent.pid}) has no child processes to measure")
    mpm = _mpm_of(parent, children)
    _, parent_pss, _ = _mem(parent)
    tpc = 1 if mpm == "prefork" or threads <= 1 else threads_per_child or max(1, threads - 2)
    return HttpdFacts(parent.pid, mpm, tuple(last), parent_pss, _high(per_worker, percentile),
                      _high(per_process, percentile), tpc, _idle(parent, children))


def _idle(parent: psutil.Process, children: list[psutil.Process]) -> str | None:
    """Why this server's workers say nothing about a loaded one, or None."""
    try:
        uptime = time.time() - parent.create_time()
        cpu = 0.0
        for c in children:
            with contextlib.suppress(psutil.Error):
                t = c.cpu_times()
                cpu += t.user + t.system
    except psutil.Error:
        return None
    if uptime < JUST_STARTED_SECONDS:
        return f"it started {uptime:.0f} s ago"
    if cpu < IDLE_CPU_SECONDS:
        return f"its workers have used {cpu:.2f} s of CPU in all: they have hardly served"
    return None


def _high(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


def other_services() -> dict[str, float]:
    """PSS (MiB) of known services on this host, summed per service."""
    found: dict[str, float] = {}
    for proc in psutil.process_iter(["name"]):
        label = SERVICES.get((proc.info["name"] or "").split(":")[0])
        if not label:
            continue
        try:
            found[label] = found.get(label, 0.0) + _mem(proc)[1]
        except psutil.Error:
            continue
    return {k: round(v, 1) for k, v in found.items()}


def gather(pid: int | None = None, pidfile: str | None = None, samples: int = 1,
           interval: float = 1.0, include_httpd: bool = True, config_file: str | None = None,
           passed_over: list[str] | None = None) -> HostFacts:
    vm = psutil.virtual_memory()
    parent = find_httpd(pid, pidfile, config_file, passed_over) if include_httpd else None
    httpd = measure_httpd(parent, samples, interval) if parent is not None else None
    available, source = vm.available / MIB, "MemAvailable"
    # httpd's own cgroup when it runs (a systemd unit's MemoryMax= or CPUQuota= is its own, not
    # this shell's); ours otherwise, which in a container is the container's
    cgroup_of = str(parent.pid) if parent is not None else "self"
    cg = cgroup_memory(pid=cgroup_of)  # in a container, its memory.max is the limit, not the host's memory
    if cg is not None and cg.available_mib < available:
        available, source = cg.available_mib, f"cgroup limit {cg.where}"
    cpu = cpu_allowance(pid=cgroup_of)
    return HostFacts(round(vm.total / MIB, 1), round(available, 1), cpu.cores,
                     other_services(), httpd, source, task_limits().workers_allowed, cpu.source,
                     os.cpu_count() or 1, cpu.quota, cpu.period if cpu.quota is not None else None,
                     cpu.runs_on if cpu.quota is not None else None)
