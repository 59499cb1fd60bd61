"""Gather the inputs of a sizing: given > measured > profile > default, each with its source."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from apachetune.config.conditions import module_loaded
from apachetune.config.effective import EffectiveConfig
from apachetune.errors import UsageError
from apachetune.mpm.buckets import listen_buckets
from apachetune.mpm.numbers import atoi, keepalive_seconds, max_mem_free
from apachetune.sizing.errorlog import ErrorLogEvidence
from apachetune.sizing.facts import HostFacts, HttpdFacts
from apachetune.sizing.machine import cpus_text
from apachetune.sizing.profiles import PROFILES, Profile
from apachetune.sizing.recommend import Figure, SizingInputs, choose_mpm
from apachetune.sizing.workload import LoadSample

FigureValue = float | int | str | bool | None


@dataclass
class Given:
    memory_mib: float | None = None
    reserve_mib: float | None = None
    headroom: float | None = None
    per_worker_mib: float | None = None
    per_process_mib: float | None = None
    profile: str | None = None
    rate: float | None = None
    service_time_ms: float | None = None
    requests_per_connection: float | None = None
    mpm: str | None = None
    threads_per_child: int | None = None
    cpus: float | None = None  # cores, or a quota's CPU time (0.5)
    keepalive_clients: float | None = None  # idle keep-alive clients expected at the peak
    burst: int | None = None  # requests arriving together that the pool must be ready for
    cpu_ms: float | None = None  # CPU time one request uses
    cpu_period_ms: float | None = None  # a quota's CFS period (the simulated curves wait out its rest)
    tune_keepalive: bool = False  # also re-tune KeepAlive*/Timeout that lint finds safe
    # where a given value came from when not from the user (input name -> source): the wizard
    # passes on a default its user accepted, which keeps its first source
    sources: tuple[tuple[str, str], ...] = ()


def _pick(given: FigureValue, measured: FigureValue, profile_value: FigureValue, default: FigureValue,
          profile_name: str | None) -> Figure:
    if given is not None:
        return Figure(given, "given")
    if measured is not None:
        return Figure(measured, "measured")
    if profile_value is not None and profile_name:
        return Figure(profile_value, f"profile {profile_name}")
    return Figure(default, "default")


def _assumed_cpu(profile: Profile, service_time: float) -> Figure:
    """CPU a request uses, assumed from the profile: a shorter request than the profile's uses
    proportionally less; a longer one is taken as waiting (backend, disk, client), not as CPU."""
    share = profile.cpu_seconds / profile.service_time
    cpu = min(profile.cpu_seconds, share * service_time)
    return Figure(round(cpu, 6), f"assumed: the {profile.name} profile's {share:.0%} of a request's time, "
                  f"at most {profile.cpu_seconds * 1000:g} ms")


def _cpu_figure(given: Given, load: LoadSample | None, profile: Profile, service_time: float) -> Figure:
    """CPU a request uses: given, else measured with the load (mod_status and the server's CPU
    over the same seconds), else assumed from the profile (saying why nothing was measured)."""
    if given.cpu_ms is not None:
        return Figure(given.cpu_ms / 1000, "given")
    if load is not None and load.cpu_per_request is not None:
        return Figure(round(load.cpu_per_request, 6), load.cpu_note)
    assumed = _assumed_cpu(profile, service_time)
    if load is not None and load.cpu_note:
        return Figure(assumed.value, f"{assumed.source}; {load.cpu_note}")
    return assumed


# Figures a profile supplies (the requested one, else the MPM's default: php for prefork, static
# for the threaded MPMs), each overridden by what is given and, where there is one, measured.
_PROFILE_FIGURES = ("per_worker_mib", "per_process_mib", "requests_per_connection", "gap")

# Figures read from the configuration, else httpd's default: (directive, how httpd reads it, default).
_CONFIG_FIGURES: dict[str, tuple[str, Callable[[str], FigureValue], FigureValue]] = {
    "keepalive_timeout": ("KeepAliveTimeout", keepalive_seconds, 5),
    "max_keepalive_requests": ("MaxKeepAliveRequests", atoi, 100),
    "timeout": ("Timeout", atoi, 60),
    "keepalive": ("KeepAlive", lambda v: "Off" if v.lower() == "off" else "On", "On"),
    # KiB an allocator keeps free, as httpd reads it (0: no limit); a value httpd refuses is lint's AT510
    "max_mem_free": ("MaxMemFree", lambda v: 2048 if (kib := max_mem_free(v)) is None else kib, 2048),
}


def _cpu_period(given: Given, quota_of: HostFacts | None) -> Figure:
    """--cpu-period-ms, else the period read with this machine's quota. Given, it needs a quota
    for it to be the period of: --cpus below a whole CPU count, or one read here."""
    if given.cpu_period_ms is not None:
        fractional = given.cpus is not None and not float(given.cpus).is_integer()
        if not fractional and quota_of is None:
            raise UsageError("--cpu-period-ms is a CPU quota's period: give the quota as --cpus (0.5, 1.5), "
                             "or run where the server's cgroup has one")
        return Figure(given.cpu_period_ms / 1000, "given")
    if quota_of is not None:
        return Figure(quota_of.cpu_period, "measured")
    return Figure(None, "no quota read")


def build_inputs(given: Given, host: HostFacts | None, eff: EffectiveConfig | None,
                 load: LoadSample | None = None,
                 evidence: ErrorLogEvidence | None = None) -> tuple[SizingInputs, list[str]]:
    """The inputs and the reasons behind the MPM choice."""
    profile = PROFILES.get(given.profile) if given.profile else None
    httpd = host.httpd if host else None
    mpm_fig, reasons = _choose_mpm(given, profile, eff, httpd)
    mpm = str(mpm_fig.value)
    chosen = profile or PROFILES["php" if mpm == "prefork" else "static"]
    default_profile = PROFILES["php" if mpm == "prefork" else "static"]
    per_worker, per_process, idle_note = _measured_worker(httpd, mpm, given)
    measured = {"per_worker_mib": per_worker, "per_process_mib": per_process}
    figures = {name: _pick(getattr(given, name, None), measured.get(name), getattr(chosen, name),
                           getattr(default_profile, name), chosen.name) for name in _PROFILE_FIGURES}
    figures |= {name: _from_config(eff, *spec) for name, spec in _CONFIG_FIGURES.items()}
    service_time = _pick(given.service_time_ms / 1000 if given.service_time_ms else None,
                         load.service_time if load else None, chosen.service_time, default_profile.service_time,
                         chosen.name)
    # the machine's quota shapes the simulated curves only where its CPU time is the one used
    quota_of = host if host is not None and given.cpus is None and host.cpu_quota is not None else None
    inputs = SizingInputs(
        mpm=mpm_fig,
        available_mib=_pick(given.memory_mib, _available_to_httpd(host) if host else None, None, 2048, None),
        reserved_mib=_pick(given.reserve_mib, host.reserved_mib if host else None, None, 0, None),
        headroom=_pick(given.headroom, None, None, 0.10, None),
        rate=_pick(given.rate, load.peak_rate if load else None, None, None, None),
        service_time=service_time,
        threads_per_child=_threads_per_child(given, eff, mpm),
        reqtimeout_loaded=Figure(module_loaded("reqtimeout_module", frozenset(eff.modules)), "config")
        if eff else Figure(True, "default"),
        cpus=_pick(given.cpus, host.cpu_time if host else None, None, os.cpu_count() or 1, None)
        if given.cpus or host else Figure(os.cpu_count() or 1, "this machine (assumed)"),
        cpu_runs_on=Figure(quota_of.cpu_runs_on, "measured") if quota_of else Figure(None, "no quota read"),
        cpu_period=_cpu_period(given, quota_of),
        cpu_seconds=_cpu_figure(given, load, chosen, service_time.num),
        cpu_under_way=Figure(round(load.under_way, 2), "mod_status: requests being served while the CPU was measured")
        if given.cpu_ms is None and load is not None and load.cpu_per_request is not None and load.under_way
        else Figure(None, "not measured"),
        task_limit=Figure(host.task_limit, "measured") if host and host.task_limit else Figure(None, "unknown"),
        keepalive_clients=Figure(given.keepalive_clients, "given") if given.keepalive_clients is not None
        else Figure(None, "estimated from the rate when one is known"),
        burst=Figure(given.burst, "given") if given.burst is not None else Figure(None, "none given (--burst N)"),
        burst_rate=Figure(load.busiest_second, f"busiest second of the {load.source}")
        if load is not None and load.busiest_second else Figure(None, "none measured"),
        tune_keepalive=Figure(given.tune_keepalive, "given" if given.tune_keepalive else "default"),
        listen_buckets=_listen_buckets(eff, given, host),
        httpd_version=Figure(eff.httpd_version, eff.httpd_version_source) if eff else Figure(None, "default"),
        **figures,
    )
    _say_where_from(inputs, host, load, idle_note)
    for name, source in given.sources:
        figure = getattr(inputs, name)
        if figure.source == "given":
            setattr(inputs, name, Figure(figure.value, source))
    if load is not None and inputs.service_time.source.startswith("measured") \
            and inputs.cpu_seconds.source.startswith("measured") and inputs.cpu_seconds.num > inputs.service_time.num:
        # Little's law on a few status samples can come out below the CPU the requests were seen
        # to use; a request takes at least its CPU time.
        inputs.service_time = Figure(inputs.cpu_seconds.value, f"{inputs.service_time.source}; raised to the "
                                     f"CPU a request was measured to use ({inputs.service_time.num * 1000:.2f} ms "
                                     "by Little's law)")
    if evidence is not None and evidence.reached and eff is not None and eff.mpm:
        inputs.saturated_at = _saturated_at(eff, evidence)
    elif evidence is not None:
        inputs.saturated_at = Figure(None, f"error log {evidence.path}: {evidence.summary()}")
    return inputs, reasons


def _choose_mpm(given: Given, profile: Profile | None, eff: EffectiveConfig | None,
                httpd: HttpdFacts | None) -> tuple[Figure, list[str]]:
    if given.mpm:
        return Figure(given.mpm, "given"), ["chosen on the command line"]
    if profile and not eff:
        return Figure(profile.mpm, f"profile {profile.name}"), [f"the {profile.name} profile runs {profile.mpm}"]
    loaded = frozenset(eff.modules) if eff else frozenset()
    current = (eff.mpm if eff else None) or (httpd.mpm if httpd else None)
    mpm, reasons = choose_mpm(loaded, current)
    return Figure(mpm, "recommended"), reasons


def _measured_worker(httpd: HttpdFacts | None, mpm: str, given: Given) -> tuple[float | None, float | None, str | None]:
    """The running httpd's per-worker and per-process figures, when it runs `mpm` (they describe
    only the MPM measured); a note instead of the per-worker figure when the server was idle."""
    if httpd is None or httpd.mpm != mpm:
        return None, None, None
    per_worker = httpd.per_worker_mib if httpd.per_worker_mib > 0 else None
    if per_worker is not None and httpd.idle and given.per_worker_mib is None:
        # An idle or just-started server's workers are as small as a fresh fork: sizing from
        # them overcommits memory (measured: 2.4x the budget under load). Not used.
        return None, httpd.per_process_mib, (
            f"the running httpd (pid {httpd.parent_pid}) was idle: {httpd.idle}; its {per_worker:.2f} MiB a "
            "worker is not used. Measure it under load (--sample N while it serves) or give --per-worker-mb")
    return per_worker, httpd.per_process_mib, None


def _from_config(eff: EffectiveConfig | None, directive: str, read: Callable[[str], FigureValue],
                 default: FigureValue) -> Figure:
    d = eff.get(directive) if eff is not None else None
    if d is None or not d.args:
        return Figure(default, "default")
    return Figure(read(d.args[0]), "config")


def _available_to_httpd(host: HostFacts) -> float:
    """The memory the pool being sized may have: what is free (MemAvailable, or the cgroup's
    limit less its use) plus what the measured httpd holds now, which the new pool replaces
    (without it, a server measured under load, as it should be, shrank its own budget)."""
    held = host.httpd.total_pss_mib if host.httpd is not None else 0.0
    return round(host.available_mib + held, 1)


def _listen_buckets(eff: EffectiveConfig | None, given: Given, host: HostFacts | None) -> Figure:
    """ListenCoresBucketsRatio's listener buckets on the server's CPUs (given, measured, or here)."""
    d = eff.get("ListenCoresBucketsRatio") if eff is not None else None
    if d is None or not d.args:
        return Figure(1, "default")
    # httpd counts the CPUs online (sysconf), whatever a cgroup's quota or cpuset allows
    cpus = given.cpus or (host.cpus_online or host.cpus if host else None) or os.cpu_count() or 1
    return Figure(listen_buckets(d.args[0], int(cpus)), f"ListenCoresBucketsRatio {d.args[0]} on {cpus_text(cpus)}")


def _threads_per_child(given: Given, eff: EffectiveConfig | None, mpm: str) -> Figure:
    if given.threads_per_child:
        return Figure(given.threads_per_child, "given")
    t = eff.get("ThreadsPerChild") if eff is not None and mpm != "prefork" else None
    tpc = atoi(t.args[0]) if t is not None and t.args else None
    return Figure(tpc, "config") if tpc else Figure(25, "default")


def _say_where_from(inputs: SizingInputs, host: HostFacts | None, load: LoadSample | None,
                    idle_note: str | None) -> None:
    """Sources that need more than a word: the idle server not used, the memory figure read,
    the sample the load came from."""
    if idle_note is not None:
        inputs.per_worker_mib = Figure(inputs.per_worker_mib.value, f"{inputs.per_worker_mib.source}; {idle_note}")
    if host is not None and inputs.available_mib.source == "measured":
        said = [] if host.memory_source == "MemAvailable" else [host.memory_source]
        if host.httpd is not None and host.httpd.total_pss_mib > 0:
            said.append(f"{host.available_mib:g} free plus the {host.httpd.total_pss_mib:.1f} MiB httpd holds now")
        if said:
            inputs.available_mib = Figure(inputs.available_mib.value, f"measured ({'; '.join(said)})")
    if host is not None and host.cpu_source != "CPUs online" and inputs.cpus.source == "measured":
        inputs.cpus = Figure(inputs.cpus.value, f"measured ({host.cpu_source})")
    if load is not None:
        for name in ("rate", "service_time"):
            fig = getattr(inputs, name)
            if fig.source == "measured":
                setattr(inputs, name, Figure(fig.value, f"measured ({load.source})"))


def _saturated_at(eff: EffectiveConfig, evidence: ErrorLogEvidence) -> Figure:
    """The MaxRequestWorkers the error log says was reached (as httpd ran it)."""
    from apachetune.mpm import simulate_startup

    assert eff.mpm is not None  # the caller checks: evidence is read against the MPM that runs
    current = simulate_startup(eff.mpm, [(d.name, d.args) for d in eff.directives],
                               version=eff.httpd_version).effective
    codes = ", ".join(f"{c} x{n}" for c, n in sorted(evidence.counts.items()))
    return Figure(current["MaxRequestWorkers"], f"error log {evidence.path}: {codes}, last {evidence.last_seen}")
