"""Gather the inputs of a sizing: given > measured > profile > default, each with its source."""

from __future__ import annotations

import os
from dataclasses import dataclass

from apachetune.config.conditions import module_loaded
from apachetune.config.effective import EffectiveConfig
from apachetune.mpm.numbers import atoi, keepalive_seconds
from apachetune.sizing.facts import HostFacts
from apachetune.sizing.profiles import PROFILES
from apachetune.sizing.recommend import Figure, SizingInputs, choose_mpm


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
    cpus: int | None = None
    keepalive_clients: float | None = None  # idle keep-alive clients expected at the peak
    burst: int | None = None  # requests arriving together that the pool must be ready for
    cpu_ms: float | None = None  # CPU time one request uses
    tune_keepalive: bool = False  # also re-tune KeepAlive*/Timeout that lint finds safe


def _pick(given, measured, profile_value, default, profile_name: str | None) -> Figure:
    if given is not None:
        return Figure(given, "given")
    if measured is not None:
        return Figure(measured, "measured")
    if profile_value is not None and profile_name:
        return Figure(profile_value, f"profile {profile_name}")
    return Figure(default, "default")


def _assumed_cpu(profile, service_time: float) -> Figure:
    """CPU a request uses, assumed from the profile: a shorter request than the profile's uses
    proportionally less; a longer one is taken as waiting (backend, disk, client), not as CPU."""
    share = profile.cpu_seconds / profile.service_time
    cpu = min(profile.cpu_seconds, share * service_time)
    return Figure(round(cpu, 6), f"assumed: the {profile.name} profile's {share:.0%} of a request's time, "
                  f"at most {profile.cpu_seconds * 1000:g} ms")


def build_inputs(given: Given, host: HostFacts | None, eff: EffectiveConfig | None,
                 load=None, evidence=None) -> tuple[SizingInputs, list[str]]:
    """The inputs and the reasons behind the MPM choice."""
    profile = PROFILES.get(given.profile) if given.profile else None
    httpd = host.httpd if host else None
    loaded = frozenset(eff.modules) if eff else frozenset()
    current = (eff.mpm if eff else None) or (httpd.mpm if httpd else None)
    if given.mpm:
        mpm, reasons = given.mpm, ["chosen on the command line"]
        mpm_fig = Figure(mpm, "given")
    elif profile and not eff:
        mpm, reasons = profile.mpm, [f"the {profile.name} profile runs {profile.mpm}"]
        mpm_fig = Figure(mpm, f"profile {profile.name}")
    else:
        mpm, reasons = choose_mpm(loaded, current)
        mpm_fig = Figure(mpm, "recommended")
    # Measured per-worker figures only describe the MPM that was measured.
    measured_same = httpd is not None and httpd.mpm == mpm
    per_worker = httpd.per_worker_mib if measured_same and httpd.per_worker_mib > 0 else None
    idle_note = None
    if per_worker is not None and httpd.idle and given.per_worker_mib is None:
        # An idle or just-started server's workers are as small as a fresh fork: sizing from
        # them overcommits memory (measured: 2.4x the budget under load). Not used.
        idle_note = (f"the running httpd (pid {httpd.parent_pid}) was idle: {httpd.idle}; its "
                     f"{per_worker:.2f} MiB a worker is not used. Measure it under load (--sample N "
                     "while it serves) or give --per-worker-mb")
        per_worker = None
    per_process = httpd.per_process_mib if measured_same else None
    default_profile = PROFILES["php" if mpm == "prefork" else "static"]
    kat = None
    tpc = None
    core: dict[str, str] = {}
    if eff is not None:
        d = eff.get("KeepAliveTimeout")
        kat = keepalive_seconds(d.args[0]) if d and d.args else None
        for name in ("KeepAlive", "MaxKeepAliveRequests", "Timeout"):
            c = eff.get(name)
            if c is not None and c.args:
                core[name] = c.args[0]
        t = eff.get("ThreadsPerChild")
        tpc = atoi(t.args[0]) if t and t.args and mpm != "prefork" else None
    service_time = _pick(given.service_time_ms / 1000 if given.service_time_ms else None,
                         load.service_time if load else None,
                         (profile or default_profile).service_time, default_profile.service_time,
                         (profile or default_profile).name)
    inputs = SizingInputs(
        mpm=mpm_fig,
        available_mib=_pick(given.memory_mib, host.available_mib if host else None, None, 2048, None),
        reserved_mib=_pick(given.reserve_mib, host.reserved_mib if host else None, None, 0, None),
        headroom=_pick(given.headroom, None, None, 0.10, None),
        per_worker_mib=_pick(given.per_worker_mib, per_worker,
                             (profile or default_profile).per_worker_mib, default_profile.per_worker_mib,
                             (profile or default_profile).name),
        per_process_mib=_pick(given.per_process_mib, per_process, (profile or default_profile).per_process_mib,
                              default_profile.per_process_mib, (profile or default_profile).name),
        rate=_pick(given.rate, load.peak_rate if load else None, None, None, None),
        service_time=service_time,
        requests_per_connection=_pick(given.requests_per_connection, None,
                                      (profile or default_profile).requests_per_connection,
                                      default_profile.requests_per_connection,
                                      (profile or default_profile).name),
        gap=_pick(None, None, (profile or default_profile).gap, default_profile.gap,
                  (profile or default_profile).name),
        keepalive_timeout=Figure(kat, "config") if kat is not None else Figure(5, "default"),
        threads_per_child=Figure(given.threads_per_child, "given") if given.threads_per_child
        else (Figure(tpc, "config") if tpc else Figure(25, "default")),
        reqtimeout_loaded=Figure(module_loaded("reqtimeout_module", loaded) if eff else True,
                                 "config" if eff else "default"),
        cpus=_pick(given.cpus, host.cpus if host else None, None, os.cpu_count() or 1, None)
        if given.cpus or host else Figure(os.cpu_count() or 1, "this machine (assumed)"),
        cpu_seconds=Figure(given.cpu_ms / 1000, "given") if given.cpu_ms is not None
        else _assumed_cpu(profile or default_profile, float(service_time.value)),
        task_limit=Figure(host.task_limit, "measured") if host and host.task_limit else Figure(None, "unknown"),
        keepalive=Figure("Off" if core.get("KeepAlive", "On").lower() == "off" else "On",
                         "config" if "KeepAlive" in core else "default"),
        max_keepalive_requests=Figure(atoi(core["MaxKeepAliveRequests"]), "config")
        if "MaxKeepAliveRequests" in core else Figure(100, "default"),
        timeout=Figure(atoi(core["Timeout"]), "config") if "Timeout" in core else Figure(60, "default"),
        keepalive_clients=Figure(given.keepalive_clients, "given") if given.keepalive_clients is not None
        else Figure(None, "estimated from the rate when one is known"),
        burst=Figure(given.burst, "given") if given.burst is not None else Figure(None, "none given (--burst N)"),
        burst_rate=Figure(load.busiest_second, f"busiest second of the {load.source}")
        if load is not None and load.busiest_second else Figure(None, "none measured"),
        tune_keepalive=Figure(given.tune_keepalive, "given" if given.tune_keepalive else "default"),
    )
    if idle_note is not None:
        inputs.per_worker_mib = Figure(inputs.per_worker_mib.value, f"{inputs.per_worker_mib.source}; {idle_note}")
    if evidence is not None and evidence.reached and eff is not None and eff.mpm:
        from apachetune.mpm import simulate_startup

        current = simulate_startup(eff.mpm, [(d.name, d.args) for d in eff.directives],
                                   version=eff.httpd_version).effective
        codes = ", ".join(f"{c} x{n}" for c, n in sorted(evidence.counts.items()))
        inputs.saturated_at = Figure(current["MaxRequestWorkers"],
                                     f"error log {evidence.path}: {codes}, last {evidence.last_seen}")
    if host is not None and host.memory_source != "MemAvailable" and inputs.available_mib.source == "measured":
        inputs.available_mib = Figure(inputs.available_mib.value, f"measured ({host.memory_source})")
    if load is not None:  # say which sample the load figures came from
        for name in ("rate", "service_time"):
            fig = getattr(inputs, name)
            if fig.source == "measured":
                setattr(inputs, name, Figure(fig.value, f"measured ({load.source})"))
    return inputs, reasons
