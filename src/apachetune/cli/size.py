"""`apachetune size [FILE]`: a measured, explained MPM recommendation (text or JSON)."""

from __future__ import annotations

import json

import click

from apachetune.cli.options import MPM_CHOICE, pop_resolve_options, resolve_options
from apachetune.cli.sizing_options import sizing_options
from apachetune.report.sizing import print_sizing
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
    print_sizing(session, all_mpms)
