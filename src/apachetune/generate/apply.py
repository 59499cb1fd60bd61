"""Write a recommendation: a new mpm.conf, or in-place edits; shared by `generate` and `wizard`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from apachetune.config.resolver import ResolveOptions
from apachetune.errors import UsageError
from apachetune.generate.check import CheckReport, check_new_file, check_overlay
from apachetune.generate.inplace import EditPlan, plan_in_place
from apachetune.generate.render import Setting, render_mpm_conf
from apachetune.generate.safe_write import WriteResult, atomic_write
from apachetune.sizing.session import SizingSession


@dataclass
class ApplyResult:
    report: CheckReport
    written: list[WriteResult] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)


def new_file_bytes(session: SizingSession) -> bytes:
    rec = session.recommendation
    settings = [Setting(s.directive, s.value, s.reason) for s in rec.settings]
    header = [f"{rec.verdict}.", "inputs: " + ", ".join(
        f"{k}={v.value} ({v.source})" for k, v in session.inputs.__dict__.items() if v.value is not None)]
    return render_mpm_conf(rec.mpm, settings, header)


def write_new_file(session: SizingSession, path: str | Path, force: bool, run_httpd: bool) -> ApplyResult:
    target = Path(path)
    if target.exists() and not force:
        raise UsageError(f"{target} exists; pass --force to replace it (a .bak is kept)")
    data = new_file_bytes(session)
    report = check_new_file(data, session.recommendation.mpm, run_httpd=run_httpd)
    if not report.ok:
        return ApplyResult(report)
    return ApplyResult(report, [atomic_write(target, data, replace=force)])


def plan(session: SizingSession) -> EditPlan:
    if session.eff is None:
        raise UsageError("editing in place needs the main configuration file")
    return plan_in_place(session.eff, session.recommendation.mpm, session.recommendation.values())


def write_in_place(session: SizingSession, resolve: ResolveOptions | None, run_httpd: bool,
                   edit_plan: EditPlan | None = None) -> ApplyResult:
    edit_plan = edit_plan or plan(session)
    rendered = edit_plan.rendered()
    if not rendered:
        return ApplyResult(CheckReport(True, httpd="not needed"))
    report = check_overlay(session.eff.main_file, resolve or ResolveOptions(), rendered, run_httpd=run_httpd)
    if not report.ok:
        return ApplyResult(report)
    written = [atomic_write(path, data, replace=True) for path, data in rendered.items()]
    return ApplyResult(report, written, edit_plan.changes)
