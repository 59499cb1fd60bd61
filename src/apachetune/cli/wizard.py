"""`apachetune wizard`: interactive sizing with defaults read from the machine.

Plain prompts (works over SSH in any terminal), a before/after table with the reason for
each value, and an offer to write the result at the end. `--yes` accepts every default
(and the default for writing is "no" unless -o or --in-place says where).
"""

from __future__ import annotations

from pathlib import Path

import click

from apachetune.cli.generate import report_and_exit, tell_placement
from apachetune.cli.options import pop_resolve_options, resolve_options
from apachetune.cli.params import Finite, MemorySize
from apachetune.cli.sizing_options import sizing_options
from apachetune.console import err, out
from apachetune.generate import apply
from apachetune.report.sizing import print_before_after
from apachetune.sizing.session import SizingRequest, run_sizing


@click.command("wizard")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--yes", "-y", is_flag=True, help="Accept every default without asking (and write to -o or "
              "--in-place without confirming).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Where to write a new mpm.conf.")
@click.option("--in-place", is_flag=True, help="Write by editing FILE's tree in place.")
@click.option("--force", is_flag=True, help="With -o: replace an existing file (a backup is kept).")
@click.option("--no-httpd-check", is_flag=True, help="Do not run apache2 -t before writing.")
@sizing_options
@resolve_options
def command(file, yes, output, in_place, force, no_httpd_check, **kw):
    """Size httpd interactively and write the tuned MPM settings."""
    ask = (lambda text, default, **o: default) if yes else (lambda text, default, **o: click.prompt(
        text, default=default, **o))
    resolve = pop_resolve_options(kw)
    if file is None:
        from apachetune.config.locate import find_main_file

        located = find_main_file()
        found = located[0] if located else ""
        file = ask("Main configuration file (empty for none)", found, show_default=True) or None
        if file and not Path(file).is_file():
            raise click.BadParameter(f"{file} does not exist", param_hint="FILE")
    if in_place and not file:
        raise click.UsageError("--in-place needs the main configuration FILE")
    # Before any question: can the tree take a write at all?
    blockers = _tree_blockers(file, resolve) if file else []
    if blockers:
        out.print("The configuration already has problems that block writing to it:")
        for line in blockers:
            out.print(f"  {line}")
        if in_place:
            err.print("refused: fix these first (nothing was asked, nothing written)")
            click.get_current_context().exit(1)
        out.print("The wizard still sizes it; the result can go to a new file.")
    out.print("Reading the machine..." if not (kw.get("no_measure") or kw.get("facts_path")) else "")
    first = run_sizing(SizingRequest.from_cli(file, resolve, **kw))
    if first.host and first.host.httpd:
        h = first.host.httpd
        out.print(f"Found httpd (pid {h.parent_pid}, {h.mpm or 'unknown'} MPM, {len(h.children)} children): "
                  f"{h.per_worker_mib:.2f} MiB a worker (PSS/USS).")
    if first.host and first.host.services:
        out.print("Other services: " + ", ".join(f"{k} {v} MiB" for k, v in first.host.services.items()))
    running = first.eff.mpm if first.eff is not None else None
    mpm = ask("MPM", str(first.inputs.mpm.value), type=click.Choice(["prefork", "worker", "event"]))
    switch = False
    if in_place and running and mpm != running:
        switch = yes or click.confirm(f"The server runs {running}. Switch it to {mpm} (its LoadModule line, or "
                                      "the mods-enabled links)?", default=False)
        if not switch:
            raise click.UsageError(f"--in-place edits the running MPM ({running}); choose it, or switch")
    answers, accepted = _ask_figures(ask, first.inputs_for(mpm))
    given = dict(kw, target_mpm=mpm, sources=accepted, **answers)
    session = run_sizing(SizingRequest.from_cli(file, resolve, **{**given, "facts_path": kw.get("facts_path"),
                                                                  "no_measure": True}))
    session.host = first.host
    print_before_after(session)
    _simulated(session)
    target = _where(yes, file, "in-place" if in_place else output, can_edit=bool(file) and not blockers
                    and mpm == running)
    if target is None:
        return
    run_httpd = not no_httpd_check
    if switch:
        report_and_exit(apply.write_switch(session, resolve, run_httpd))
    if target == "in-place":
        report_and_exit(apply.write_in_place(session, resolve, run_httpd))
    data = apply.new_file_bytes(session)
    place = apply.placement(session, resolve, Path(target), data)
    if tell_placement(place, Path(target), file):
        err.print("nothing was written")
        click.get_current_context().exit(1)
    report_and_exit(apply.write_new_file(session, target, force, run_httpd,
                                         tree=resolve if place is not None and place.read_by_tree else None))


def _simulated(session) -> None:
    """The recommended section and the current one simulated under the load just given (a rate
    is asked for, so there is one unless it was left at 0)."""
    from apachetune.generate.switch import switched_reader
    from apachetune.report.simulation import print_simulated_before_after
    from apachetune.simulate.before_after import before_after

    compared = before_after(session, read_as=switched_reader(session))
    if compared is not None:
        print_simulated_before_after(compared)
    else:  # said, so that the missing curve is not taken for a fault
        click.echo("No simulated before and after: it runs the peak load, and none was given (peak requests "
                   "per second 0); `apachetune size FILE --rate R --curve` shows it for a rate.")


def _ask_figures(ask, inp) -> tuple[dict, tuple[tuple[str, str], ...]]:
    """The sizing figures, each asked with the chosen MPM's default (as `size --target-mpm`),
    and the sources of the defaults accepted as offered: such a figure keeps its source
    (measured, profile, default), marked as accepted, instead of reading as given; one given
    on the command line stays given."""
    # In this order on the terminal: (option, the input it sets, question, default, type)
    questions = [
        ("memory_mib", "available_mib", "Memory available (MiB)", inp.available_mib.num, MemorySize(lo=1)),
        ("reserve_mib", "reserved_mib", "Memory to leave to other services (MiB)", inp.reserved_mib.num,
         MemorySize(lo=0)),
        ("per_worker_mib", "per_worker_mib", "Memory per worker (MiB)", inp.per_worker_mib.num,
         Finite(0.01, 1024 * 1024)),
        ("rate", "rate", "Peak requests per second (0 if unknown)", float(inp.rate.value or 0), Finite(0, 1e9)),
        ("service_time_ms", "service_time", "Mean response time (ms)", round(inp.service_time.num * 1000, 3),
         Finite(0.01, 3.6e6)),
    ]
    answers, accepted = {}, []
    for option, name, question, default, kind in questions:
        answers[option] = ask(question, default, type=kind)
        source = getattr(inp, name).source
        if answers[option] == default and source != "given":
            accepted.append((name, f"{source}; accepted in the wizard"))
    answers["rate"] = answers["rate"] or None
    return answers, tuple(accepted)


def _where(yes: bool, file: str | None, target: str | None, can_edit: bool) -> str | None:
    """Where to write ("in-place" or a new file's path), confirmed; None: nothing to write."""
    if not target:
        if yes or not click.confirm("Write the tuned configuration?", default=False):
            out.print("Nothing written. `apachetune generate` writes the same values.")
            return None
        target = click.prompt("Where (a new file's path" + (", or 'in-place')" if can_edit else ")"),
                              default="mpm-tuned.conf")
        if target == "in-place" and not can_edit:
            raise click.UsageError("in-place is not possible here (no FILE, problems above, or another MPM)")
        return target
    if not yes and not click.confirm(f"Write to {'the files of ' + str(file) if target == 'in-place' else target}?",
                                     default=False):
        out.print("Nothing written.")
        return None
    return target


def _tree_blockers(file: str, resolve) -> list[str]:
    """What in the tree as it is would still refuse a write of new MPM settings: its errors (a
    start-up change, AT1xx, is not one: the write replaces the MPM section it comes from)."""
    from apachetune.generate.check import blocking
    from apachetune.lint.engine import LintOptions, lint
    from apachetune.lint.settings import Settings

    result = lint(file, LintOptions(resolve, Settings()))
    found = blocking([f for f in result.findings if not f.rule.startswith("AT1")])
    return found or (["the configuration cannot be read"] if result.fatal else [])
