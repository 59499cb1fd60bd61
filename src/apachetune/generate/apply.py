"""Write a recommendation: a new mpm.conf, or in-place edits; shared by `generate` and `wizard`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from apachetune.config.resolver import ResolveOptions
from apachetune.errors import UsageError
from apachetune.generate.check import CheckReport, check_new_file, check_overlay
from apachetune.generate.inplace import EditPlan, plan_in_place
from apachetune.generate.render import Setting, render_mpm_conf
from apachetune.generate.transaction import CommitResult, FileChange, Transaction
from apachetune.sizing.session import SizingSession


@dataclass
class ApplyResult:
    report: CheckReport
    commit: CommitResult | None = None  # None: nothing written (refused, or nothing to change)
    changes: list[str] = field(default_factory=list)


def new_file_bytes(session: SizingSession) -> bytes:
    rec = session.recommendation
    settings = [Setting(s.directive, s.value, s.reason) for s in rec.settings]
    header = [f"{rec.verdict}.", "inputs: " + ", ".join(
        f"{k}={v.value} ({v.source})" for k, v in session.inputs.__dict__.items() if v.value is not None)]
    return render_mpm_conf(rec.mpm, settings, header)


def write_new_file(session: SizingSession, path: str | Path, force: bool, run_httpd: bool,
                   backup_root: Path | None = None) -> ApplyResult:
    target = Path(path)
    if (target.exists() or target.is_symlink()) and not force:
        what = "is a symbolic link" if target.is_symlink() else "exists"
        raise UsageError(f"{target} {what}; pass --force to replace it (a backup is kept)")
    data = new_file_bytes(session)
    report = check_new_file(data, session.recommendation.mpm, run_httpd=run_httpd)
    if not report.ok:
        return ApplyResult(report)
    old = target.read_bytes() if target.is_file() else None
    commit = Transaction([FileChange(target, data, old)], force=force, backup_root=backup_root,
                         label="generate").commit()
    return ApplyResult(report, commit)


def plan(session: SizingSession) -> EditPlan:
    if session.eff is None:
        raise UsageError("editing in place needs the main configuration file")
    return plan_in_place(session.eff, session.recommendation.mpm, session.recommendation.values())


def write_in_place(session: SizingSession, resolve: ResolveOptions | None, run_httpd: bool,
                   edit_plan: EditPlan | None = None, backup_root: Path | None = None) -> ApplyResult:
    edit_plan = edit_plan or plan(session)
    rendered = edit_plan.rendered()
    if not rendered:
        return ApplyResult(CheckReport(True, httpd="not needed"))
    report = check_overlay(session.eff.main_file, resolve or ResolveOptions(), rendered, run_httpd=run_httpd)
    if not report.ok:
        return ApplyResult(report)
    return ApplyResult(report, commit_edits(edit_plan.files, rendered, backup_root, "generate"),
                       edit_plan.changes)


def commit_edits(files, rendered: dict[str, bytes], backup_root: Path | None, label: str) -> CommitResult:
    """Edits of files read through the include path: written to the file httpd reads (a Debian
    mods-enabled/*.conf symlink is followed, and stays a link), all or nothing."""
    changes = [FileChange(Path(os.path.realpath(path)), data, files[path].to_bytes())
               for path, data in rendered.items()]
    return Transaction(changes, backup_root=backup_root, label=label).commit()


def restart_notes(session: SizingSession) -> list[str]:
    """What applying the recommendation takes beyond a graceful restart (ServerLimit and
    ThreadLimit are kept across one), judged against the configuration as httpd runs it now."""
    from apachetune.mpm import simulate_startup
    from apachetune.mpm.restart import needs_full_restart

    eff, rec = session.eff, session.recommendation
    if eff is None or eff.mpm != rec.mpm:
        return []  # a new MPM is loaded by a full restart anyway
    before = simulate_startup(eff.mpm, [(d.name, d.args) for d in eff.directives],
                              version=eff.httpd_version).effective
    return needs_full_restart(rec.mpm, before, rec.values())
