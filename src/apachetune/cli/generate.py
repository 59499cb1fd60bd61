"""`apachetune generate`: write a tuned mpm.conf (-o FILE) or edit the config in place.

Nothing is written unless the result parses, passes our lint, and passes `apache2 -t` (when
installed); a real write is atomic and keeps a .bak; --diff and --check write nothing.
"""

from __future__ import annotations

from pathlib import Path

import click

from apachetune.cli.options import MPM_CHOICE, make_resolve_options, resolve_options
from apachetune.cli.sizing_options import sizing_options
from apachetune.console import err, out
from apachetune.errors import UsageError
from apachetune.generate.check import check_new_file, check_overlay
from apachetune.generate.inplace import plan_in_place
from apachetune.generate.render import Setting, render_mpm_conf
from apachetune.generate.safe_write import atomic_write, unified_diff
from apachetune.sizing.session import SizingRequest, run_sizing


@click.command("generate")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write a new mpm.conf here.")
@click.option("--in-place", is_flag=True, help="Edit the files of FILE's tree where the settings are defined.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the changes as a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="Exit 1 if changes are needed; write nothing.")
@click.option("--force", is_flag=True, help="With -o: replace an existing file (a .bak is kept).")
@click.option("--no-httpd-check", is_flag=True, help="Do not run apache2 -t before writing.")
@click.option("--target-mpm", type=MPM_CHOICE, help="Generate for this MPM (default: recommended).")
@sizing_options
@resolve_options
def command(file, output, in_place, show_diff, check, force, no_httpd_check, target_mpm, **kw):
    """Generate a tuned MPM section from `apachetune size`'s recommendation."""
    if bool(output) == bool(in_place):
        raise UsageError("give exactly one of -o FILE or --in-place")
    if in_place and not file:
        raise UsageError("--in-place needs the main configuration FILE")
    resolve_kw = {k: kw.pop(k) for k in ("server_root", "defines", "modules", "httpd_version", "mpm", "env_file")}
    resolve = make_resolve_options(**resolve_kw) if file else None
    if in_place and not target_mpm:
        from apachetune.config.resolver import resolve as do_resolve

        target_mpm = do_resolve(file, resolve).mpm  # edit the settings of the MPM that runs
        if target_mpm is None:
            raise UsageError(f"{file}: no MPM is loaded; pass --mpm or --target-mpm")
    session = run_sizing(SizingRequest.from_cli(file, resolve, target_mpm=target_mpm, **kw))
    rec = session.recommendation
    ctx = click.get_current_context()
    if output:
        settings = [Setting(s.directive, s.value, s.reason) for s in rec.settings]
        header = [f"{rec.verdict}.", "inputs: " + ", ".join(
            f"{k}={v.value} ({v.source})" for k, v in session.inputs.__dict__.items() if v.value is not None)]
        data = render_mpm_conf(rec.mpm, settings, header)
        target = Path(output)
        old = target.read_bytes() if target.exists() else b""
        if show_diff or check:
            if show_diff:
                click.echo(unified_diff(old, data, str(target)), nl=False)
            ctx.exit(1 if check and old != data else 0)
        if target.exists() and not force:
            raise UsageError(f"{target} exists; pass --force to replace it (a .bak is kept)")
        report = check_new_file(data, rec.mpm, run_httpd=not no_httpd_check)
        _refuse_if_bad(report)
        result = atomic_write(target, data, replace=force)
        out.print(f"wrote {result.path}" + (f" (backup {result.backup})" if result.backup else "")
                  + f"; apache2 -t: {report.httpd}")
        ctx.exit(0)
    plan = plan_in_place(session.eff, rec.mpm, rec.values())
    if plan.empty:
        out.print("The configuration already has these values; nothing to change.")
        ctx.exit(0)
    rendered = plan.rendered()
    if show_diff or check:
        if show_diff:
            for path, data in rendered.items():
                click.echo(unified_diff(plan.files[path].to_bytes(), data, path), nl=False)
        ctx.exit(1 if check else 0)
    report = check_overlay(session.eff.main_file, resolve, rendered, run_httpd=not no_httpd_check)
    _refuse_if_bad(report)
    for path, data in rendered.items():
        result = atomic_write(path, data, replace=True)
        out.print(f"updated {result.path} (backup {result.backup})")
    for change in plan.changes:
        out.print(f"  {change}")
    out.print(f"apache2 -t: {report.httpd}")
    ctx.exit(0)


def _refuse_if_bad(report) -> None:
    if report.ok:
        return
    for p in report.problems:
        err.print(f"refused: {p}")
    err.print("nothing was written")
    click.get_current_context().exit(1)
