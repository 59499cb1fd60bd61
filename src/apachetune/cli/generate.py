"""`apachetune generate`: write a tuned mpm.conf (-o FILE) or edit the config in place.

Nothing is written unless the result parses, passes our lint, and passes `apache2 -t`
(--no-httpd-check to write without it); a write is all or nothing, with backups in a directory
httpd never reads (`apachetune restore` puts them back); --diff and --check write nothing.
"""

from __future__ import annotations

from pathlib import Path

import click

from apachetune.cli.options import MPM_CHOICE, pop_resolve_options, resolve_options
from apachetune.cli.sizing_options import sizing_options
from apachetune.console import err, out
from apachetune.errors import UsageError
from apachetune.generate import apply
from apachetune.generate.diff import unified_diff
from apachetune.sizing.session import SizingRequest, run_sizing


@click.command("generate")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write a new mpm.conf here.")
@click.option("--in-place", is_flag=True, help="Edit the files of FILE's tree where the settings are defined.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the changes as a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="Exit 1 if changes are needed; write nothing.")
@click.option("--force", is_flag=True, help="Replace an existing, read-only or symlinked -o target (a backup is kept).")
@click.option("--no-httpd-check", is_flag=True, help="Write without apache2 -t's check (our lint still checks).")
@click.option("--backup-dir", type=click.Path(file_okay=False), default=None,
              help="Where backups go (default: /var/backups/apachetune as root, else "
                   "~/.local/state/apachetune/backups; never where httpd reads).")
@click.option("--target-mpm", type=MPM_CHOICE, help="Generate for this MPM (default: recommended).")
@click.option("--switch-mpm", is_flag=True,
              help="With --in-place and --target-mpm: load that MPM instead of the running one (the "
                   "LoadModule line, or Debian's mods-enabled links as a2enmod does), checked by lint "
                   "and apache2 -t before anything is written.")
@click.option("--allow-short", is_flag=True,
              help="Write even when memory cannot carry the load (default: refuse, exit 1).")
@sizing_options
@resolve_options
def command(file, output, in_place, show_diff, check, force, no_httpd_check, backup_dir, target_mpm,
            switch_mpm, allow_short, **kw):
    """Generate a tuned MPM section from `apachetune size`'s recommendation."""
    if output and in_place:
        raise UsageError("give one of -o FILE or --in-place, not both")
    if not output and not in_place:
        if not (show_diff or check):
            raise UsageError("give -o FILE (a new mpm.conf) or --in-place (edit FILE's tree); "
                             "--diff or --check alone show what --in-place would change")
        in_place = True  # --diff / --check on FILE: what an in-place edit would change, nothing written
    if in_place and not file:
        raise UsageError("--in-place needs the main configuration FILE")
    resolve = pop_resolve_options(kw)
    target_mpm = _target_mpm(file, resolve, output, in_place, target_mpm, switch_mpm)
    session = run_sizing(SizingRequest.from_cli(file, resolve, target_mpm=target_mpm, **kw))
    _say_verdict(session.recommendation, allow_short, refuse=not (show_diff or check))
    backups = Path(backup_dir) if backup_dir else None
    if output:
        _new_file(session, resolve, file, Path(output), show_diff, check, force, no_httpd_check, backups)
    if switch_mpm:
        _switch(session, resolve, show_diff, check, no_httpd_check, backups)
    _in_place(session, resolve, show_diff, check, no_httpd_check, backups)


def _target_mpm(file, resolve, output, in_place: bool, target_mpm: str | None, switch_mpm: bool) -> str | None:
    """The MPM to size for: --target-mpm, else (in place) the one the tree runs; a target the
    tree does not run is refused in place unless --switch-mpm loads it."""
    running = running_mpm(file, resolve) if in_place else None
    if switch_mpm and (output or not in_place or not target_mpm or target_mpm == running):
        raise UsageError("--switch-mpm goes with --in-place (or --diff/--check) and a --target-mpm other "
                         f"than the running one ({running or 'none'})")
    if in_place and not switch_mpm and target_mpm and target_mpm != running:
        raise UsageError(f"--target-mpm {target_mpm}: the tree runs {running}; its settings would never be "
                         f"read. Add --switch-mpm to load {target_mpm} instead")
    return target_mpm or running


def _say_verdict(rec, allow_short: bool, refuse: bool) -> None:
    """The verdict and notes on the terminal; a section memory cannot carry refused (exit 1)
    unless --allow-short, when something would be written."""
    err.print(f"{rec.mpm}: {rec.verdict}")
    for note in rec.notes:
        err.print(f"note: {note}")
    if rec.memory_short_mib > 0 and refuse:
        err.print(f"{'warning' if allow_short else 'refused'}: memory cannot carry the load: "
                  f"{rec.load_workers} workers needed, {rec.memory_bound} fit in {rec.usable_mib:.0f} MiB "
                  f"(short by ~{rec.memory_short_mib:.0f} MiB)")
        if not allow_short:
            err.print("nothing was written (--allow-short writes the section anyway: the server will "
                      "queue, not swap)")
            click.get_current_context().exit(1)


def _new_file(session, resolve, file, target: Path, show_diff: bool, check: bool, force: bool,
              no_httpd_check: bool, backups: Path | None) -> None:
    """-o: a new mpm.conf, placed in FILE's tree when there is one (see tell_placement)."""
    ctx = click.get_current_context()
    rec = session.recommendation
    old = target.read_bytes() if target.exists() else b""
    data = apply.new_file_bytes(session)
    place = apply.placement(session, resolve, target, data)
    refused = tell_placement(place, target, file)
    running = session.eff.mpm if session.eff is not None else None
    if running and running != rec.mpm:
        err.print(f"note: {file} runs {running}: this {rec.mpm} section is read only once the server loads "
                  f"{rec.mpm} (generate {file} --in-place --target-mpm {rec.mpm} --switch-mpm does both)")
    if show_diff or check:
        if show_diff:
            click.echo(unified_diff(old, data, str(target)), nl=False)
        ctx.exit(1 if check and (old != data or refused) else 0)
    if refused:
        err.print("nothing was written")
        ctx.exit(1)
    report_and_exit(apply.write_new_file(session, target, force, not no_httpd_check, backups,
                                         tree=resolve if place is not None and place.read_by_tree else None))


def _in_place(session, resolve, show_diff: bool, check: bool, no_httpd_check: bool, backups: Path | None) -> None:
    """--in-place (and --diff/--check on FILE alone): minimal edits where the settings are."""
    ctx = click.get_current_context()
    edit_plan = apply.plan(session)
    if edit_plan.empty:
        out.print("The configuration already has these values; nothing to change.")
        ctx.exit(0)
    for note in apply.restart_notes(session):
        err.print(f"note: {note}")
    if show_diff or check:
        _preview([(edit_plan.files[path].to_bytes(), data, path) for path, data in edit_plan.rendered().items()],
                 edit_plan.changes, show_diff, check)
    report_and_exit(apply.write_in_place(session, resolve, not no_httpd_check, edit_plan, backups))


def _preview(diffs: list[tuple[bytes, bytes, str]], changes: list[str], show_diff: bool, check: bool,
             headers: list[str] | None = None) -> None:
    """--diff prints the edits (after `headers`, as `# ` lines); --check lists the changes and
    exits 1. Nothing is written either way."""
    if show_diff:
        for line in headers or []:
            click.echo(f"# {line}")
        for old, new, path in diffs:
            click.echo(unified_diff(old, new, path), nl=False)
    if check:
        err.print(f"{len(changes)} change(s) needed:")
        for change in changes:
            err.print(f"  {change}")
    click.get_current_context().exit(1 if check else 0)


def tell_placement(place: apply.Placement | None, target: Path, file: str | None) -> bool:
    """Say how the new file sits in FILE's tree; True when writing it would duplicate settings
    the tree reads (refused: the file's values and the old lines would both be read, and every
    old one reported by lint as overridden)."""
    if place is None:
        return False
    if place.duplicates:
        verb = "would set again" if place.read_by_tree else "sets too"
        err.print(f"{file}'s tree already sets what {target} {verb}:")
        for d in place.duplicates:
            err.print(f"  {d.node.file}:{d.node.line}: {d.name} {d.args_text}")
    if place.read_by_tree and place.duplicates:
        err.print(f"refused: remove those lines first, or use --in-place (it changes them where they are, "
                  f"with a backup) instead of -o {target}")
        return True
    if not place.read_by_tree:
        err.print(f"note: {file} does not include {target}: add `Include {target.resolve()}` to it"
                  + (" and remove the lines above" if place.duplicates else ""))
    return False


def _switch(session, resolve, show_diff: bool, check: bool, no_httpd_check: bool, backups: Path | None) -> None:
    """--switch-mpm: the MPM loaded, and its settings edited, in one transaction."""
    if show_diff or check:
        switch, edit_plan, _ = apply.switched(session, resolve)
        diffs = [(Path(switch.link_target_of(path) or path).read_bytes(), data, path)
                 for path, data in apply.switch_contents(switch, edit_plan).items()]
        _preview(diffs, switch.changes + edit_plan.changes, show_diff, check, headers=switch.changes)
    report_and_exit(apply.write_switch(session, resolve, not no_httpd_check, backups))


def running_mpm(file, resolve) -> str:
    from apachetune.config.resolver import resolve as do_resolve

    mpm = do_resolve(file, resolve).mpm  # edit the settings of the MPM that runs
    if mpm is None:
        raise UsageError(f"{file}: no MPM is loaded; pass --mpm or --target-mpm")
    return mpm


def report_and_exit(result: apply.ApplyResult) -> None:
    ctx = click.get_current_context()
    if not result.report.ok:
        for p in result.report.problems:
            err.print(f"refused: {p}")
        err.print("nothing was written")
        ctx.exit(1)
    commit = result.commit
    if commit is not None:
        for path in commit.created:
            out.print(f"wrote {path}")
        for path in commit.written:
            out.print(f"updated {path}")
        for link in commit.links:
            out.print(f"link {link}")
        if commit.backups:
            out.print(f"backups in {commit.run_dir} (undo: apachetune restore {commit.run_dir})")
    for change in result.changes:
        out.print(f"  {change}")
    out.print(f"apache2 -t: {result.report.httpd}")
    ctx.exit(0)
