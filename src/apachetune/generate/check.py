"""Before anything is written: the result must parse, pass our lint, and pass `apache2 -t`.

Our lint runs on the resolved configuration with the new contents overlaid (nothing is
written yet). httpd, when installed, checks a temporary copy of the server root with the new
contents in place: real directories where httpd reads configuration or we write, links to the
originals everywhere else, so a server root of any size (even /tmp, which holds the copy) costs
only its configuration directories (for a new mpm.conf: a minimal config that loads the MPM
and includes it).
Blocking: any error, and any start-up change (AT1xx) or start-up message from httpd.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from apachetune import httpd
from apachetune.config.parser import parse_text
from apachetune.config.resolver import ResolveOptions
from apachetune.errors import ConfigSyntaxError
from apachetune.lint.engine import LintOptions, lint
from apachetune.lint.settings import Settings


@dataclass
class CheckReport:
    ok: bool
    problems: list[str] = field(default_factory=list)
    httpd: str = "not run"  # "passed", "failed", or why it was not run


def blocking(findings) -> list[str]:
    return [f"{f.location.file}:{f.location.line}: {f.rule} {f.message}" for f in findings
            if f.severity == "error" or f.rule.startswith("AT1")]


def check_overlay(main: str, resolve: ResolveOptions, overlay: dict[str, bytes], snippet: bool = False,
                  run_httpd: bool = True) -> CheckReport:
    problems = []
    for path, data in overlay.items():
        try:
            parse_text(data, path)
        except ConfigSyntaxError as e:
            problems.append(str(e))
    if problems:
        return CheckReport(False, problems)
    opts = ResolveOptions(**{**resolve.__dict__, "overlay": {**resolve.overlay, **overlay}})
    result = lint(main, LintOptions(opts, Settings(), snippet=snippet))
    problems = blocking(result.findings)
    if result.fatal:
        problems = problems or ["the configuration cannot be read"]
    report = CheckReport(not problems, problems)
    if not run_httpd:
        report.httpd = "skipped (--no-httpd-check)"
    elif report.ok:
        report = _httpd_tree(main, opts, report)
    return report


def httpd_check(main: str, opts: ResolveOptions, overlay: dict[str, bytes]) -> CheckReport:
    """`apache2 -t` on a temporary copy of the tree with `overlay` in place (no MPM message allowed)."""
    return _httpd_tree(main, ResolveOptions(**{**opts.__dict__, "overlay": {**opts.overlay, **overlay}}),
                       CheckReport(True))


def _httpd_tree(main: str, opts: ResolveOptions, report: CheckReport) -> CheckReport:
    """apache2 -t on a copy of the tree with every overlaid file (and planned link) in place and
    every hidden path gone. The copy is of ServerRoot when every change lies in it (Debian, RHEL,
    the official image); else of the configuration's directory (Alpine's /etc/apache2 beside
    ServerRoot /var/www, Gentoo's beside /usr/lib64/apache2), whose files, naming each other by
    absolute path, are copied with those paths pointing into the copy, ServerRoot left as it is."""
    overlay = opts.overlay
    if httpd.binary() is None:
        return _unchecked(report, "apache2 -t could not check it: no apache2/httpd on PATH")
    from apachetune.config.resolver import resolve

    eff = resolve(main, opts)
    root = Path(eff.server_root)
    real_root = root.resolve()
    main_path = Path(main).resolve()
    written = [Path(p).resolve() for p in overlay]  # a planned link is checked as the file it will show
    changes = [p.parent for p in written] + [Path(h).parent.resolve() for h in opts.hidden]
    base, rewrite = real_root, not all(d.is_relative_to(real_root) for d in changes)
    if rewrite:
        base = Path(os.path.commonpath([main_path.parent, *changes]))
        if base == Path(base.anchor):
            outside = next(p for p in written if not p.is_relative_to(real_root))
            return _unchecked(report, f"apache2 -t cannot check {outside}: it lies outside ServerRoot "
                              f"{root} and shares no directory with {main}, so a copy of the tree would "
                              "still read the old file")
    hidden = [(Path(h).parent.resolve(), Path(h).name) for h in opts.hidden
              if Path(h).parent.resolve().is_relative_to(base)]
    with tempfile.TemporaryDirectory(prefix="apachetune-check-") as tmp:
        copy = Path(tmp) / "root"
        try:
            # Real directories wherever httpd reads or we write: a directory linked whole would
            # take mods-enabled/x.load -> ../mods-available/x.load to the original, not the copy.
            read = [q for f in eff.files for q in (Path(f).parent.resolve(), Path(f).resolve().parent)]
            changed = [d for d, _ in hidden] + [p.parent for p in [*written, main_path]] + read
            shadow_tree(base, copy, [d for d in changed if d.is_relative_to(base)])

            def inside_copy(path: Path) -> Path:
                # the copy's path of `path`, refused if a link would take a write to the original
                mirror = copy / path.relative_to(base)
                if not mirror.parent.resolve().is_relative_to(copy.resolve()):
                    raise OSError(f"{mirror.parent} leads out of the copy")
                return mirror

            into_copy = _repointer(base, copy, eff.sysroot) if rewrite else (lambda text: text)
            if not rewrite:
                logs = copy / "logs"  # httpd's default ErrorLog directory, needed to run -t
                if logs.is_symlink() and not logs.exists():
                    logs.unlink()
                logs.mkdir(exist_ok=True)
            for parent, name in hidden:  # links a switch of MPM removes
                inside_copy(parent / name).unlink(missing_ok=True)
            for path, data in _contents(eff, dict(zip(written, overlay.values(), strict=True)), base, rewrite):
                target = inside_copy(path)
                target.unlink(missing_ok=True)
                target.write_bytes(into_copy(data.decode(errors="surrogateescape")).encode(errors="surrogateescape")
                                   if rewrite else data)
            copied_main = inside_copy(main_path)
            if not rewrite:  # ServerRoot: the copy
                text = copied_main.read_text(errors="surrogateescape")
                copied_main.unlink()
                copied_main.write_text(re.sub(r"(?mi)^\s*ServerRoot\s.*$", f'ServerRoot "{copy}"', text),
                                       errors="surrogateescape")
        except OSError as e:
            return _unchecked(report, f"apache2 -t could not check it: a copy of {base} failed ({e})")
        env = {}
        envvars = copy / "envvars"
        if envvars.exists():
            from apachetune.config.envvars import read_envvars

            env = read_envvars(envvars)
        # the -D names the tree was linted with: the command's and the start-up script's
        defines = [*opts.defines, *(eff.init_defines.names if eff.init_defines else ())]
        run = httpd.config_test(copied_main, root if rewrite else copy, defines=list(dict.fromkeys(defines)), env=env)
    return _verdict(report, run, run.mpm_messages)


def _contents(eff, written: dict[Path, bytes], base: Path, rewrite: bool) -> list[tuple[Path, bytes]]:
    """The files the copy holds as real files: those written and, when the copy's paths are
    rewritten, every file read inside `base` (the main one too) with its text as read, each once."""
    contents = dict(written)
    if rewrite:
        for name, cf in eff.files.items():
            path = Path(name).resolve()
            if name not in eff.generated_files and path not in contents and path.is_relative_to(base):
                contents[path] = cf.to_bytes()
    return list(contents.items())


def _repointer(base: Path, copy: Path, sysroot: str | None) -> Callable[[str], str]:
    """A file's text with the absolute paths into `base` (as the configuration names them: without
    --root's prefix) pointing into `copy` instead."""
    named = {str(base)}
    if sysroot and base.is_relative_to(Path(sysroot).resolve()):
        named.add("/" + str(base.relative_to(Path(sysroot).resolve())))
    pattern = re.compile("|".join(re.escape(n) for n in sorted(named, key=len, reverse=True)) + r"(?=[/\"'\s]|$)",
                         re.M)
    return lambda text: pattern.sub(lambda _: str(copy), text)


def shadow_tree(root: Path, copy: Path, changed: list[Path]) -> None:
    """A copy of `root` in which only the `changed` directories (resolved, inside `root`) and
    those leading to them are real: every other entry is a link to the original (a link of the
    tree is kept as it is, so a relative one still points inside the copy). httpd -t reads the
    copy as the tree itself, and nothing else of the server root is copied, however big it is
    or wherever the temporary directory lies (a root of /tmp holds the copy itself)."""
    inside = {root}
    for parent in changed:
        while parent.is_relative_to(root) and parent not in inside:
            inside.add(parent)
            parent = parent.parent
    for directory in sorted(inside):
        mirror = copy / directory.relative_to(root)
        mirror.mkdir(parents=True, exist_ok=True)
        for entry in directory.iterdir():
            if entry in inside:
                continue
            target = entry
            if entry.is_symlink():
                target = entry.readlink()
                if not target.is_absolute() and not (directory / target).resolve().is_relative_to(root):
                    target = directory / target  # RHEL's logs -> ../../var/log/httpd, seen from the original
            (mirror / entry.name).symlink_to(target)


def _verdict(report: CheckReport, run: httpd.ConfigTestRun, blocking_messages: list) -> CheckReport:
    if not run.ok or blocking_messages:
        report.ok = False
        report.httpd = "failed"
        report.problems.append(f"{httpd.binary()} -t: " + (run.stderr.strip() or "failed"))
    else:
        report.httpd = "passed"
    return report


def _unchecked(report: CheckReport, why: str) -> CheckReport:
    """Never write what httpd has not checked, unless the user said so (--no-httpd-check)."""
    report.ok = False
    report.httpd = "not run"
    report.problems.append(f"{why}; pass --no-httpd-check to write with our lint's check only")
    return report


def check_new_file(data: bytes, mpm: str, run_httpd: bool = True) -> CheckReport:
    """A new mpm.conf: our lint as a snippet, then httpd -t on a minimal config including it."""
    with tempfile.TemporaryDirectory(prefix="apachetune-check-") as tmp:
        path = Path(tmp) / "mpm.conf"
        path.write_bytes(data)
        report = check_overlay(str(path), ResolveOptions(env={}, mpm=mpm, modules=[f"mpm_{mpm}_module",
                                                                                    "reqtimeout_module"]),
                               {}, snippet=True, run_httpd=False)
        if not report.ok or not run_httpd:
            return report
        if httpd.binary() is None:
            return _unchecked(report, "apache2 -t could not check it: no apache2/httpd on PATH")
        wrapper = Path(tmp) / "httpd.conf"
        wrapper.write_text(
            "ServerName localhost\nUser nobody\nGroup nogroup\nListen 127.0.0.1:1\n"
            f"ErrorLog {tmp}/error.log\nPidFile {tmp}/httpd.pid\n"
            f"{httpd.load_module_line('mpm_' + mpm)}\n{httpd.load_module_line('reqtimeout')}\nInclude {path}\n")
        run = httpd.config_test(wrapper)
    return _verdict(report, run, run.messages)  # a new file: any message at all blocks it
