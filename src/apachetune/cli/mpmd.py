"""`apachetune mpmd`: the bundled server's calibration on this machine."""

from __future__ import annotations

import json

import click

from apachetune.cli.params import Finite
from apachetune.errors import UsageError

MPMS = ("prefork", "worker", "event")


@click.group("mpmd")
def command() -> None:
    """The bundled server (mpmd): its calibration on this machine."""


@command.command("calibrate")
@click.option("--mpm", "mpms", multiple=True, type=click.Choice(MPMS),
              help="Calibrate this MPM (repeatable) [default: all three].")
@click.option("--seconds", type=Finite(1, 30), default=1, show_default=True, help="Length of each measured run.")
@click.option("--rounds", type=Finite(1, 15, integer=True), default=3, show_default=True,
              help="Runs of each server and load; the median is kept.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def calibrate(mpms: tuple[str, ...], seconds: float, rounds: int, fmt: str) -> int:
    """Measure httpd and mpmd side by side here and keep mpmd's CPU stand-ins for validate."""
    from apachetune import httpd
    from apachetune.report.calibration import print_calibrations
    from apachetune.validate import calibration

    if httpd.binary() is None:
        raise UsageError("calibrating mpmd needs Apache httpd (apache2 or httpd) installed to measure against; "
                         "without it validate runs mpmd with its defaults and says so")
    results = []
    for mpm in mpms or MPMS:
        if fmt == "text":
            click.echo(f"calibrating {mpm}: {rounds} rounds of httpd, mpmd, a check and httpd unpinned (the "
                       f"simulation's figures), 4 loads of {seconds:g} s "
                       "each ...", err=True)
        results.append(calibration.measure(mpm, seconds=seconds, rounds=rounds))
        calibration.store(results[-1])
    if fmt == "json":
        click.echo(json.dumps({"machine": calibration.machine(), "mpms": [vars(c) for c in results]}, indent=2))
    else:
        print_calibrations(results, calibration.machine())
    return 0


@command.command("show")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def show(fmt: str) -> int:
    """Show the calibration kept for this machine (validate measures a missing one first)."""
    from apachetune.report.calibration import print_calibrations
    from apachetune.validate import calibration

    known = calibration.stored()
    if fmt == "json":
        click.echo(json.dumps({"machine": calibration.machine(), "mpms": [vars(c) for c in known.values()]},
                              indent=2))
    elif not known:
        click.echo("mpmd is not calibrated on this machine: run `apachetune mpmd calibrate` (validate does it "
                   "on first use when httpd is installed)")
    else:
        print_calibrations(list(known.values()), calibration.machine())
    return 0
