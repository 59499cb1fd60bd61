"""`apachetune lint --fix`: plan the fixes, show them, check them, write them all or nothing."""

from __future__ import annotations

from pathlib import Path

import click

from apachetune.console import err
from apachetune.errors import ApachetuneError
from apachetune.generate.diff import unified_diff
from apachetune.lint.engine import LintOptions
from apachetune.lint.finding import LintResult


class FixRefused(ApachetuneError):
    exit_code = 1


def run_fix(file: str, options: LintOptions, show_diff: bool, run_httpd: bool,
            backup_dir: str | None) -> LintResult | None:
    """Returns the lint result after fixing (what the report shows), or None after --diff."""
    from apachetune.config.parser import parse_text
    from apachetune.generate.check import httpd_check
    from apachetune.generate.transaction import FileChange, Transaction
    from apachetune.lint.fix import plan_fixes

    outcome = plan_fixes(file, options)
    if outcome.before.fatal:
        return outcome.before
    if not outcome.new:
        err.print("lint --fix: nothing to fix")
        return outcome.before
    if show_diff:
        for path, data in outcome.new.items():
            click.echo(unified_diff(outcome.original[path], data, path), nl=False)
        return None
    if outcome.introduced:
        raise FixRefused("lint --fix: refused, the fixes would bring new findings ("
                         + ", ".join(sorted(outcome.introduced)) + "); nothing was written")
    for path, data in outcome.new.items():
        parse_text(data, path)  # a fix that breaks the syntax is a bug: never write it
    if run_httpd and options.snippet:
        from apachetune.generate.check import check_new_file

        (data,) = outcome.new.values()  # a lone snippet: checked inside a minimal server that loads its MPM
        report = check_new_file(data, options.resolve.mpm or "event")
        if not report.ok:
            raise FixRefused("lint --fix: refused, " + "; ".join(report.problems) + "; nothing was written")
        httpd = report.httpd
    elif run_httpd:
        report = httpd_check(outcome.before.main_file, options.resolve, outcome.new)
        if not report.ok:
            raise FixRefused("lint --fix: refused, " + "; ".join(report.problems) + "; nothing was written")
        httpd = report.httpd
    else:
        httpd = "skipped (--no-httpd-check)"
    changes = [FileChange(Path(path).resolve(), data, outcome.original[path]) for path, data in outcome.new.items()]
    commit = Transaction(changes, backup_root=Path(backup_dir) if backup_dir else None, label="fix").commit()
    for line in outcome.changes:
        err.print(f"fixed {line}")
    err.print(f"lint --fix: {len(outcome.applied)} fix(es) in {len(outcome.new)} file(s); apache2 -t: {httpd}; "
              f"backups in {commit.run_dir} (undo: apachetune restore {commit.run_dir})")
    return outcome.after
