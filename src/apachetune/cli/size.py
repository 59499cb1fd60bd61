"""`apachetune size [FILE]`: a measured, explained MPM recommendation (text or JSON)."""

from __future__ import annotations

import json

import click
from rich.table import Table

from apachetune.cli.options import MPM_CHOICE, pop_resolve_options, resolve_options
from apachetune.cli.sizing_options import sizing_options
from apachetune.console import out
from apachetune.sizing.session import SizingRequest, run_sizing


@click.command("size")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--all-mpms", is_flag=True, help="Show prefork, worker and event side by side.")
@click.option("--target-mpm", type=MPM_CHOICE, help="Size for this MPM (default: recommended).")
@sizing_options
@resolve_options
def command(file, fmt, all_mpms, target_mpm, **kw):
    """Recommend MaxRequestWorkers and a full MPM section from measured (or given) figures."""
    req = SizingRequest.from_cli(file, pop_resolve_options(kw), target_mpm=target_mpm, **kw)
    session = run_sizing(req)
    if fmt == "json":
        payload = session.to_json()
        if all_mpms:
            payload["all_mpms"] = {m: session.for_mpm(m).to_json() for m in ("prefork", "worker", "event")}
        click.echo(json.dumps(payload, indent=2))
        return
    render_text(session, all_mpms)


def render_text(session, all_mpms: bool = False) -> None:
    inputs = Table(title="Inputs", show_lines=False)
    for col in ("input", "value", "source"):
        inputs.add_column(col)
    for name, fig in session.inputs.__dict__.items():
        inputs.add_row(name, str(fig.value), fig.source)
    out.print(inputs)
    if session.host and session.host.services:
        out.print("Other services on this host (MiB, PSS): " +
                  ", ".join(f"{k} {v}" for k, v in session.host.services.items()))
    if session.evidence is not None:
        ev = session.evidence
        out.print(f"Error log {ev.path}: " + ("; ".join(ev.lines()) if ev.counts else
                                              "no capacity message (the pool never ran out)"))
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
    bounds = [f"memory {rec.memory_bound} ({rec.usable_mib:.0f} MiB usable{held})"]
    if rec.cpu_bound is not None:
        bounds.append(f"CPU {rec.cpu_bound}")
    if rec.task_bound is not None:
        bounds.append(f"kernel task limits {rec.task_bound}")
    out.print(f"Bounds on MaxRequestWorkers: {', '.join(bounds)}; set by the {rec.bound_by} bound. "
              f"Capacity ≈ {rec.predicted_capacity_rps:.0f} req/s at the assumed service time.")
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
