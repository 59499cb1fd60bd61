"""Run the checks: resolve the configuration, replay httpd's start-up, dispatch every
enabled rule, apply suppressions and severities, sort. One place decides the exit code."""

from __future__ import annotations

import os
from dataclasses import dataclass

from apachetune import collector
from apachetune.config.effective import EffectiveConfig
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.errors import ConfigSyntaxError, ResolveError
from apachetune.lint.checks import CHECKS
from apachetune.lint.context import LintContext
from apachetune.lint.finding import SEVERITY_RANK, Finding, LintResult, Location
from apachetune.lint.host import HostLimits
from apachetune.lint.metadata import all_rules
from apachetune.lint.settings import Settings
from apachetune.lint.suppress import Suppressions
from apachetune.mpm import listen_buckets, simulate_startup


@dataclass
class LintOptions:
    resolve: ResolveOptions
    settings: Settings
    snippet: bool = False  # --mpm given: FILE is a lone MPM snippet
    only: set[str] | None = None  # --rule selectors
    cpus: int | None = None  # the server's CPU cores (ListenCoresBucketsRatio); default: this machine's
    host: HostLimits | None = None  # facts about the server's host (lint --measure / --facts)
    from_dump: bool = False  # lint --from-dump: the modules are only those whose directives show


def _buckets(eff: EffectiveConfig, cpus: int | None) -> int:
    """The listener buckets of this configuration on a server with `cpus` cores (default: here)."""
    ratio = eff.get("ListenCoresBucketsRatio")
    return listen_buckets(ratio.args[0] if ratio is not None and ratio.args else None, cpus or None)


# Rules the engine itself reports: the configuration cannot be read, so no check runs.
ENGINE_RULES = {"AT508": "syntax error", "AT509": "include or condition error"}


def _fatal(main: str, rule: str, err: ConfigSyntaxError | ResolveError) -> LintResult:
    pos = err.position
    loc = Location(pos.file, pos.line, pos.column) if pos else Location(main, 1, 1)
    meta = all_rules()[rule]
    return LintResult(main, [Finding(rule, meta.severity, err.message, loc, title=meta.title)],
                      mpm=None, fatal=True)


def lint_file(main_file: str | os.PathLike[str], options: LintOptions) -> LintResult:
    """Resolve `main_file` as httpd would, then lint it (syntax and include errors are findings)."""
    main = os.path.abspath(main_file)
    try:
        eff = resolve(main, options.resolve)
    except ConfigSyntaxError as e:
        return _fatal(main, "AT508", e)
    except ResolveError as e:
        return _fatal(main, "AT509", e)
    return lint(eff, options)


def lint(target: EffectiveConfig | str | os.PathLike[str], options: LintOptions) -> LintResult:
    """Lint an already resolved configuration (generate, sizing and --fix resolve once), or, given
    a path, resolve it first (lint_file)."""
    if not isinstance(target, EffectiveConfig):
        return lint_file(target, options)
    with collector.paused():  # lint walks the whole tree into lists: see apachetune/collector.py
        return _lint(target, options)


def _lint(eff: EffectiveConfig, options: LintOptions) -> LintResult:
    mpm = eff.mpm
    startup = None
    buckets = _buckets(eff, options.cpus)
    if mpm:
        ctx_items = [(d.name, d.args) for d in eff.directives]
        startup = simulate_startup(mpm, ctx_items, listen_buckets=buckets, version=eff.httpd_version)
    # --mpm on a file that loads modules is a whole configuration whose httpd has that MPM compiled
    # in (a source build, SUSE): every check runs. On a file that loads none, a lone MPM snippet.
    snippet = options.snippet and not eff.module_positions
    ctx = LintContext(eff, mpm, startup, snippet=snippet, listen_buckets=buckets,
                      settings=options.settings, host=options.host, from_dump=options.from_dump)
    rules = all_rules()
    suppress = Suppressions()
    for cf in eff.files.values():
        suppress.add_file(cf)
    enabled = {r for r in CHECKS if r not in options.settings.disabled
               and (options.only is None or r in options.only)}
    findings: list[Finding] = []
    seen_checks = set()
    for rule_id, check in CHECKS.items():
        # One function may serve several ids (it names each finding's rule itself): call it once.
        if rule_id not in enabled or check in seen_checks:
            continue
        seen_checks.add(check)
        for f in check(ctx):
            if f.rule not in enabled:
                continue
            meta = rules[f.rule]
            # A check may lower a finding's severity (AT501 when a module we have no table
            # for is loaded); the user's settings still decide.
            f.severity = options.settings.severity.get(f.rule, f.severity or meta.severity)
            f.title = meta.title
            if not suppress.suppressed(f.rule, f.location.file, f.location.line):
                findings.append(f)
    findings.sort(key=lambda f: (f.location.file, f.location.line, f.location.column, f.rule))
    mpm_json = startup.to_json() if startup else None
    if mpm_json is not None and eff.mpm_source:
        mpm_json["compiled_in"] = eff.mpm_source  # no LoadModule: why this MPM is taken as linked in
    return LintResult(eff.main_file, findings, mpm_json, files=eff.files,
                      httpd_version=eff.httpd_version, httpd_version_source=eff.httpd_version_source,
                      init_defines=eff.init_defines)


def unknown_commands(eff: EffectiveConfig, resolve_options: ResolveOptions) -> list[Finding]:
    """The lines httpd would refuse as "Invalid command" that no loaded module could define (AT501
    as an error: most often a typo), for the commands that read a tree without linting it
    (simulate, validate --config, size)."""
    result = lint(eff, LintOptions(resolve=resolve_options, settings=Settings(), only={"AT501"}))
    return [f for f in result.findings if f.severity == "error"]


def refusal_message(found: list[Finding], verdict: str = "httpd would not start with this configuration: ") -> str:
    """The first of `found` (unknown_commands) at its file:line:column after `verdict`, and how
    many more; "" when none."""
    if not found:
        return ""
    more = f" ({len(found) - 1} more such line(s): `apachetune lint` lists them)" if len(found) > 1 else ""
    return f"{found[0].location}: {verdict}{found[0].message}{more}"


def exit_code(result: LintResult, fail_on: str) -> int:
    """0 clean, 1 a finding at or above `fail_on`, 2 the configuration could not be read."""
    if result.fatal:
        return 2
    threshold = SEVERITY_RANK[fail_on]
    return 1 if any(SEVERITY_RANK[f.severity] >= threshold for f in result.findings) else 0
