"""`apachetune lint FILE`: lint a configuration for CI (exit 0 clean, 1 findings, 2 unreadable)."""

from __future__ import annotations

from pathlib import Path

import click

from apachetune import collector
from apachetune.cli.options import (
    httpd_version_or_installed,
    main_file,
    make_resolve_options,
    resolve_options,
)
from apachetune.cli.params import Finite
from apachetune.config import observed
from apachetune.errors import UsageError
from apachetune.paths import caches_enabled
from apachetune.report import FORMAT_NAMES


@click.command("lint")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default="text", show_default=True)
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Exit 1 when a finding is at or above this severity (default: error).")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Settings file (default: .apachetune.yaml in the current directory or above).")
@click.option("--rule", "rules", multiple=True, metavar="ID",
              help="Run only these rules (ids, names or groups; repeatable).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to a file instead of standard output.")
@click.option("--cpus", type=Finite(1, 65536, integer=True), default=None,
              help="CPU cores of the server, for ListenCoresBucketsRatio (default: this machine's).")
@click.option("--keepalive-clients", type=Finite(0, 1e7), default=None,
              help="Idle keep-alive clients expected at the peak: AT302 reports a section that cannot "
                   "hold them (sets AT302's idle_clients option).")
@click.option("--fix", "do_fix", is_flag=True,
              help="Apply the findings' fixes as minimal edits (checked by lint and apache2 -t, all or "
                   "nothing, backups kept), then report what remains.")
@click.option("--diff", "show_diff", is_flag=True, help="With --fix: print the edits as a diff; write nothing.")
@click.option("--no-httpd-check", is_flag=True, help="With --fix: write without apache2 -t's check.")
@click.option("--backup-dir", type=click.Path(file_okay=False), default=None,
              help="With --fix: where backups go (default: as generate).")
@click.option("--measure", is_flag=True,
              help="Lint against this host too (somaxconn, mounts, memory, the running httpd's limits).")
@click.option("--facts", "facts_path", type=click.Path(dir_okay=False), default=None,
              help="Lint against a host described by a facts file (apachetune size --save-facts).")
@click.option("--from-dump", "from_dump", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              metavar="FILE",
              help="Lint the output of `apachectl -t -D DUMP_CONFIG` (FILE, or - for standard input): "
                   "the live server's view, findings at the files and lines it names.")
@resolve_options
def command(file, fmt, fail_on, config_path, rules, output, cpus, keepalive_clients, do_fix, show_diff, no_httpd_check,
            backup_dir, measure, facts_path, from_dump, **resolve_kw):
    """Lint FILE (a main configuration, or a lone MPM snippet with --mpm; default: the main
    configuration found on this machine, from httpd -V or the distribution's usual place)."""
    if from_dump and (file or do_fix):
        raise UsageError("--from-dump reads the dump instead of FILE, and cannot --fix it")
    if show_diff and not do_fix:
        raise UsageError("--diff goes with --fix")
    # A plain lint of a named file is replayed from the result cache when nothing it read changed.
    cacheable = bool(file) and not (do_fix or measure or facts_path or from_dump) and caches_enabled()
    cache_key = None
    if cacheable:
        from apachetune.lint import result_cache

        params = click.get_current_context().params
        cache_key = result_cache.key("lint", params, " ".join(httpd_version_or_installed(resolve_kw["httpd_version"])))
        hit = result_cache.replay(cache_key)
        if hit is not None:
            _emit(hit.report, hit.output)
            click.get_current_context().exit(hit.exit_code)
    with observed.recording() as seen:
        report, code = _lint(file, fmt, fail_on, config_path, rules, cpus, keepalive_clients, do_fix, show_diff,
                             no_httpd_check, backup_dir, measure, facts_path, from_dump, resolve_kw)
    if report is None:  # --fix --diff: nothing written, nothing more to report
        return 0
    _emit(report, output)
    if cache_key is not None:
        result_cache.store(cache_key, seen, result_cache.Entry(report, output, code))
    click.get_current_context().exit(code)


def _emit(report: str, output: str | None) -> None:
    if output:
        Path(output).write_text(report)
    else:
        click.echo(report, nl=False)


def _lint(file, fmt, fail_on, config_path, rules, cpus, keepalive_clients, do_fix, show_diff, no_httpd_check,
          backup_dir, measure, facts_path, from_dump, resolve_kw) -> tuple[str | None, int]:
    """The report and the exit code (None for the report of --fix --diff, which prints the diff)."""
    from apachetune.lint.engine import LintOptions, exit_code, lint
    from apachetune.lint.metadata import resolve_selector
    from apachetune.lint.settings import find_config, load_settings
    from apachetune.report import FORMATS

    file = file if from_dump else main_file(file, resolve_kw["sysroot"])
    settings = load_settings(Path(config_path) if config_path else find_config(Path.cwd()))
    if keepalive_clients is not None:
        settings.options.setdefault("AT302", {})["idle_clients"] = keepalive_clients
    only = None
    if rules:
        only = set()
        for selector in rules:
            try:
                only |= resolve_selector(selector)
            except KeyError:
                raise UsageError(f"--rule: unknown rule, name or group {selector!r}") from None
    resolve = make_resolve_options(**resolve_kw)
    snippet = resolve.mpm is not None and not from_dump
    host = _host(measure, facts_path)
    for note in host.notes if host is not None else ():
        click.echo(f"note: {note}", err=True)  # standard output stays the report (JSON, SARIF)
    options = LintOptions(resolve, settings, snippet=snippet, only=only, cpus=cpus, host=host)
    if from_dump:
        result = _lint_dump(from_dump, options)
    elif do_fix:
        from apachetune.cli.fix import run_fix

        result = run_fix(file, options, show_diff, not no_httpd_check, backup_dir)
        if result is None:
            return None, 0
    else:
        result = lint(file, options)
    collector.keep(result)  # freed by the kernel at exit, not object by object (cli._leave)
    return FORMATS[fmt](result), exit_code(result, fail_on or settings.fail_on or "error")


def _lint_dump(source: str, options):
    from apachetune.console import err
    from apachetune.lint.dump import lint_dump

    # Bytes that are not UTF-8 are kept as they are (surrogateescape), as for any configuration.
    if source == "-":
        data, name = click.get_binary_stream("stdin").read(), "<stdin>"
    else:
        try:
            data, name = Path(source).read_bytes(), source
        except OSError as e:
            raise UsageError(f"--from-dump: cannot read {source}: {e.strerror}") from None
    text = data.decode("utf-8", errors="surrogateescape")
    result, dump = lint_dump(text, name, options)
    if not dump.origins:
        err.print(f"{name}: no '# In file:' / '# N:' lines: is this `httpd -t -D DUMP_CONFIG` output "
                  "(mod_info must be loaded)? Findings point into the dump itself.")
    if options.resolve.mpm is None:
        err.print(f"MPM: {dump.mpm or 'none'} ({dump.mpm_reason})")
    return result


def _host(measure: bool, facts_path: str | None):
    from apachetune.lint.host import load_facts, read_host

    if measure and facts_path:
        raise UsageError("give --measure or --facts, not both")
    if facts_path:
        return load_facts(facts_path)
    if not measure:
        return None
    from dataclasses import replace

    from apachetune.sizing.facts import SeveralHttpd, find_httpd, measure_httpd

    try:
        proc = find_httpd()
    except SeveralHttpd as e:
        # the host's limits still hold; which server is this configuration's is not known, so
        # none is measured rather than one picked by name
        return replace(read_host(), notes=[f"several httpd servers run ({e.listed}): memory per worker not "
                                           "measured (lint --facts FILE from `apachetune size --pid N --save-facts FILE`)"])
    host = read_host(httpd_pid=proc.pid if proc is not None else None)
    if proc is None:
        return replace(host, notes=["no running httpd: memory per worker not measured"])
    httpd = measure_httpd(proc)
    return replace(host, per_worker_mib=httpd.per_worker_mib, per_process_mib=httpd.per_process_mib,
                   parent_mib=httpd.parent_pss_mib)
