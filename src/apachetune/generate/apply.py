"""Write a recommendation: a new mpm.conf, or in-place edits; shared by `generate` and `wizard`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from apachetune.config.effective import ResolvedDirective
from apachetune.config.resolver import ResolveOptions
from apachetune.errors import UsageError
from apachetune.generate.check import CheckReport, check_new_file, check_overlay
from apachetune.generate.inplace import EditPlan, plan_in_place
from apachetune.generate.render import Setting, render_mpm_conf
from apachetune.generate.switch import SwitchPlan, disable_foreign, plan_switch
from apachetune.generate.transaction import CommitResult, FileChange, LinkChange, Transaction
from apachetune.mpm.directives import setting_key
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


@dataclass
class Placement:
    """Where a new mpm.conf lands in FILE's tree."""

    read_by_tree: bool  # an Include of the tree reads the new file
    duplicates: list[ResolvedDirective]  # lines of the tree that set what the new file sets


def placement(session: SizingSession, resolve: ResolveOptions, target: Path, data: bytes) -> Placement | None:
    """None without a FILE (nothing to compare with)."""
    eff = session.eff
    if eff is None:
        return None
    from apachetune.config.resolver import resolve as do_resolve

    path = os.path.abspath(target)
    with_file = do_resolve(eff.main_file, replace(resolve, overlay={**resolve.overlay, path: data}))
    keys = {setting_key(name) for name in session.recommendation.values()}
    real = os.path.realpath(path)
    dups = [d for d in eff.directives if setting_key(d.name) in keys and os.path.realpath(d.node.file) != real]
    return Placement(path in with_file.files, dups)


def write_new_file(session: SizingSession, path: str | Path, force: bool, run_httpd: bool,
                   backup_root: Path | None = None, tree: ResolveOptions | None = None) -> ApplyResult:
    """A new mpm.conf. With `tree` (FILE's resolve options, when FILE's tree reads the new file),
    it is checked in place in that tree, by our lint and `apache2 -t`; else as a lone snippet."""
    target = Path(path)
    if (target.exists() or target.is_symlink()) and not force:
        what = "is a symbolic link" if target.is_symlink() else "exists"
        raise UsageError(f"{target} {what}; pass --force to replace it (a backup is kept)")
    data = new_file_bytes(session)
    if tree is not None and session.eff is not None:
        report = check_overlay(session.eff.main_file, tree, {os.path.abspath(target): data}, run_httpd=run_httpd)
    else:
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


def switched(session: SizingSession, resolve: ResolveOptions) -> tuple[SwitchPlan, EditPlan, ResolveOptions]:
    """--switch-mpm: the MPM switch, the settings edit planned on the switched tree, and how that
    tree reads."""
    from apachetune.config.resolver import resolve as do_resolve

    if session.eff is None:
        raise UsageError("--switch-mpm needs the main configuration file")
    mpm = session.recommendation.mpm
    switch = plan_switch(session.eff, mpm)
    opts = switch.resolve_options(resolve)
    eff = do_resolve(session.eff.main_file, opts)
    if eff.mpm != mpm:
        raise UsageError(f"--switch-mpm: once switched, the tree would load {eff.mpm or 'no MPM'}, not {mpm}")
    disabled = disable_foreign(eff, mpm)
    edit_plan = plan_in_place(eff, mpm, session.recommendation.values())
    for cf in eff.files.values():  # files with only commented-out lines are edits too
        if cf.edits:
            edit_plan.files.setdefault(cf.path, cf)
    edit_plan.changes[:0] = disabled
    return switch, edit_plan, opts


def switch_contents(switch: SwitchPlan, edit_plan: EditPlan) -> dict[str, bytes]:
    """Every file's new text, by the path httpd reads it from (a new link's path included)."""
    return {**switch.files, **edit_plan.rendered()}


def write_switch(session: SizingSession, resolve: ResolveOptions, run_httpd: bool,
                 backup_root: Path | None = None) -> ApplyResult:
    switch, edit_plan, opts = switched(session, resolve)
    contents = switch_contents(switch, edit_plan)
    report = check_overlay(session.eff.main_file, opts, contents, run_httpd=run_httpd)
    if not report.ok:
        return ApplyResult(report)
    changes: list[FileChange | LinkChange] = []
    for path, data in contents.items():
        real = Path(switch.link_target_of(path) or os.path.realpath(path))
        changes.append(FileChange(real, data, real.read_bytes()))
    commit = Transaction([*changes, *switch.links], backup_root=backup_root, label="switch-mpm").commit()
    return ApplyResult(report, commit, switch.changes + edit_plan.changes)


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
