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
@click.option("--curve", is_flag=True,
              help="Simulate the recommended section and the current one under the workload sized for, from "
                   "half the peak rate to three times it (apachetune simulate): throughput and p99, before "
                   "and after. Needs a rate (--rate, --access-log or --status-url).")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False),
              help="Write curve.png and processes.png of that before/after to this directory; implies "
                   "--curve; needs matplotlib (the plots extra).")
@sizing_options
@resolve_options
def command(file, fmt, all_mpms, target_mpm, curve, plot_dir, **kw):
    """Recommend MaxRequestWorkers and a full MPM section from measured (or given) figures."""
    from apachetune.report.plots import prepare_plot_dir

    prepare_plot_dir(plot_dir)
    req = SizingRequest.from_cli(file, pop_resolve_options(kw), target_mpm=target_mpm, **kw)
    session = run_sizing(req)
    _say_refusals(session)
    compared = _before_after(session, plot_dir) if curve or plot_dir else None
    if fmt == "json":
        payload = session.to_json()
        if all_mpms:
            payload["all_mpms"] = {m: session.for_mpm(m).to_json() for m in ("prefork", "worker", "event")}
        if compared is not None:
            payload["simulated"] = compared[0].to_json()
        click.echo(json.dumps(payload, indent=2))
        return
    print_sizing(session, all_mpms)
    if compared is not None:
        from apachetune.report.simulation import print_simulated_before_after

        print_simulated_before_after(compared[0])
        for path in compared[1]:
            click.echo(f"wrote {path}")


def _say_refusals(session) -> None:
    """A line httpd would refuse (a typo): the recommendation stands, but the current section read
    from the file is not what runs (httpd does not start) and generate will refuse to write."""
    if session.eff is None:
        return
    from apachetune.config.resolver import ResolveOptions
    from apachetune.console import warning
    from apachetune.lint.engine import refusal_message, unknown_commands

    said = refusal_message(unknown_commands(session.eff, session.request.resolve or ResolveOptions()))
    if said:
        warning(said)


def _before_after(session, plot_dir):
    """The simulated before/after and the PNGs written; refused without a rate."""
    from apachetune.errors import UsageError
    from apachetune.generate.switch import switched_reader
    from apachetune.simulate.before_after import before_after

    compared = before_after(session, read_as=switched_reader(session))
    if compared is None:
        raise UsageError("--curve and --plot simulate the load sized for: give its peak with --rate "
                         "(or --access-log / --status-url)")
    written = []
    if plot_dir:
        from apachetune.report.plots import write_simulation_plots

        written = write_simulation_plots(plot_dir, [(s.label, s.at_rate, s.points, s.knee) for s in compared.sides()])
    return compared, written
