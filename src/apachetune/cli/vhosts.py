"""`apachetune vhosts FILE`: the virtual hosts as httpd maps them (like `httpd -S`)."""

from __future__ import annotations

import json

import click

from apachetune.cli.options import main_file, make_resolve_options, resolve_options
from apachetune.config.resolver import resolve
from apachetune.console import warning
from apachetune.report.jsontext import utf8


@click.command("vhosts")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: what `httpd -t -D DUMP_VHOSTS` prints; json: the map with each virtual host's findings.")
@resolve_options
def command(file, fmt, **resolve_kw):
    """Show which virtual host answers on each address:port, and its default server."""
    file = main_file(file, resolve_kw["sysroot"])
    from apachetune.config.vhosts import build

    options = make_resolve_options(**resolve_kw)
    eff = resolve(file, options)
    vmap = build(eff)
    for vh in vmap.vhosts:
        for word in vh.unresolved:
            warning(f"{vh.file}:{vh.line}: <VirtualHost {word}>: not in /etc/hosts, not resolved "
                    "(httpd resolves it with DNS at start-up)")
    if fmt == "text":
        click.echo(vmap.dump(), nl=False)
        return 0
    click.echo(utf8(json.dumps(_with_findings(file, options, vmap), indent=2, ensure_ascii=False)))
    return 0


def _with_findings(file, options, vmap) -> dict:
    """The map, plus each virtual host's lint findings (those inside its <VirtualHost> section)."""
    from apachetune.lint.engine import LintOptions, lint
    from apachetune.lint.settings import Settings

    findings = lint(file, LintOptions(options, Settings())).findings
    data = vmap.to_json()
    data["virtual_hosts"] = []
    for vh in vmap.vhosts:
        node = vh.section.node
        inside = [f.to_json() for f in findings if f.location.file == node.file
                  and node.line <= f.location.line <= (node.close_line or node.line)]
        data["virtual_hosts"].append({"name": vh.hostname, "file": vh.file, "line": vh.line,
                                      "addresses": [f"{a}:{p}" if p else f"{a}:*" for a, p in vh.addresses],
                                      "aliases": vh.aliases + vh.wild_aliases, "findings": inside})
    return data
