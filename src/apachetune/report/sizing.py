"""A sizing run (apachetune size, the wizard) rendered for a terminal."""

from __future__ import annotations

from rich.table import Table

from apachetune.console import out
from apachetune.mpm import simulate_startup
from apachetune.sizing.machine import cpus_text
from apachetune.sizing.model import EVENT_CONNECTION_MIB

QUOTA_ONLY = ("cpu_runs_on", "cpu_period")


def _inputs_table(inputs) -> Table:
    """The sizing inputs (SizingInputs), each with its value and where it came from."""
    table = Table(title="Inputs", show_lines=False)
    for col in ("input", "value", "source"):
        table.add_column(col)
    for name, fig in inputs.__dict__.items():
        if name in QUOTA_ONLY and fig.value is None:
            continue  # a quota's shape: shown only where one was read
        table.add_row(name, str(fig.value), fig.source)
    return table


def print_sizing(session, all_mpms: bool = False) -> None:
    """`apachetune size` on a terminal: inputs, the section, its bounds, verdict and notes."""
    out.print(_inputs_table(session.inputs))
    if session.host and session.host.services:
        out.print("Other services on this host (MiB, PSS): " +
                  ", ".join(f"{k} {v}" for k, v in session.host.services.items()))
    if session.evidence is not None:
        ev = session.evidence
        out.print(f"Error log {ev.path}: {ev.summary()}")
    rec = session.recommendation
    out.print(f"MPM: {rec.mpm} — " + "; ".join(rec.mpm_reasons))
    table = Table(title=f"Recommended {rec.mpm} section")
    for col in ("directive", "value", "why"):
        table.add_column(col)
    for s in rec.settings:
        table.add_row(s.directive, str(s.value), s.reason)
    out.print(table)
    held = (f", less {rec.connections_mib:.1f} MiB for the {rec.keepalive_clients:.0f} idle keep-alive "
            f"connections event holds itself") if rec.connections_mib else ""
    kept = _kept_pools(rec.mpm, int(session.inputs.max_mem_free.num))
    bounds = [f"memory {rec.memory_bound} ({rec.usable_mib:.0f} MiB usable{held}{kept})"]
    if rec.cpu_bound is not None:
        bounds.append(f"CPU {rec.cpu_bound}")
    if rec.task_bound is not None:
        bounds.append(f"kernel task limits {rec.task_bound}")
    out.print(f"Bounds on MaxRequestWorkers: {', '.join(bounds)}; set by the {rec.bound_by} bound. "
              f"Capacity ≈ {rec.predicted_capacity_rps:.0f} req/s at the assumed service time"
              + (f" (set by the CPUs: {cpus_text(session.inputs.cpus.value, 'core')} at "
                 f"{min(session.inputs.cpu_seconds.num, session.inputs.service_time.num) * 1000:g} ms of CPU a "
                 "request, every worker busy and waiting its turn for a core)." if rec.capacity_by == "CPUs" else "."))
    if rec.predicted_wait_ms is not None:
        out.print(f"Predicted mean queueing delay at the given peak: {rec.predicted_wait_ms:.2f} ms (Erlang C).")
    out.print(f"Verdict: {rec.verdict}")
    for note in rec.notes:
        out.print(f"Note: {note}")
    if all_mpms:
        side = Table(title="All three MPMs")
        side.add_column("directive")
        recs = {m: session.for_mpm(m) for m in ("prefork", "worker", "event")}
        for m in recs:
            side.add_column(m)
        names = []
        for r in recs.values():
            names += [s.directive for s in r.settings if s.directive not in names]
        for n in names:
            side.add_row(n, *(str(recs[m].values().get(n, "–")) for m in recs))
        side.add_row("capacity req/s", *(f"{recs[m].predicted_capacity_rps:.0f}" for m in recs))
        out.print(side)


def print_before_after(session) -> None:
    """The wizard's table: each directive now and recommended, with why."""
    rec = session.recommendation
    now: dict[str, object] = {}
    if session.eff is not None and session.eff.mpm == rec.mpm:
        now.update(simulate_startup(rec.mpm, [(d.name, d.args) for d in session.eff.directives],
                                    version=session.eff.httpd_version).effective)
    if session.eff is not None:
        for name in ("KeepAlive", "KeepAliveTimeout", "MaxKeepAliveRequests", "Timeout"):
            d = session.eff.get(name)
            now[name] = d.args_text if d else "(default)"
    table = Table(title=f"{rec.mpm}: now and recommended")
    for col in ("directive", "now", "recommended", "why"):
        table.add_column(col)
    for s in rec.settings:
        before = now.get(s.directive, "–")
        mark = "" if _same(before, s.value) else " *"
        table.add_row(s.directive, str(before), f"{s.value}{mark}", s.reason)
    out.print(table)
    out.print(f"Capacity ≈ {rec.predicted_capacity_rps:.0f} req/s; {rec.verdict}.")


def _same(a, b) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a).lower() == str(b).lower()


def _kept_pools(mpm: str, max_mem_free_kib: int) -> str:
    """What the memory bound counts for event's pools of closed connections (recommend._process_mib)."""
    if mpm != "event":
        return ""
    if max_mem_free_kib == 0:
        return "; each process with a pool for each of its threads, which MaxMemFree 0 never gives back"
    capped = max_mem_free_kib < EVENT_CONNECTION_MIB * 1024
    return ("; each process with the pools of closed connections event keeps, 3/4 of ThreadsPerChild"
            + (f", {max_mem_free_kib} KiB each at most (MaxMemFree)" if capped else ""))
