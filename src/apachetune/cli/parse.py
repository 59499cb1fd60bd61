"""`apachetune parse FILE`: the effective configuration, as a tree or as JSON."""

from __future__ import annotations

import json

import click

from apachetune.cli.options import main_file, make_resolve_options, resolve_options
from apachetune.config.effective import ResolvedSection
from apachetune.config.parser import parse_file
from apachetune.config.resolver import resolve
from apachetune.console import out, warning
from apachetune.report.jsontext import utf8
from apachetune.report.paths import display_path


@click.command("parse")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON with positions (crossplane-like).")
@click.option("--raw", is_flag=True, help="Parse FILE alone: no includes, no conditionals.")
@click.option("--dump", is_flag=True, help="Print what `httpd -t -D DUMP_CONFIG` would print.")
@resolve_options
def command(file, as_json, raw, dump, **resolve_kw):
    """Parse FILE (default: the main configuration found on this machine) and show the
    configuration httpd would run."""
    file = main_file(file, resolve_kw["sysroot"])
    if raw:
        cf = parse_file(file)
        if as_json:
            out.print_json(utf8(json.dumps({"file": cf.path, "parsed": _raw_json(cf.children)}, ensure_ascii=False)))
        else:
            _print_raw(cf.children, 0)
        return 0
    eff = resolve(file, make_resolve_options(**resolve_kw))
    for w in eff.warnings:
        warning(w)
    if as_json:
        click.echo(utf8(json.dumps(eff.to_json(), indent=2, ensure_ascii=False)))
    elif dump:
        click.echo(eff.dump_config(), nl=False)
    else:
        lines = [f"# {eff.main_file}: {len(eff.files)} file(s), MPM {eff.mpm or 'none loaded'}, "
                 f"{len(eff.modules)} module(s)"]
        _format_effective(eff.tree, 0, lines)
        # Plain buffered output: a large tree is tens of thousands of lines.
        click.echo("\n".join(lines))
    return 0


def _format_effective(items, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    for item in items:
        where = f"{display_path(item.node.file)}:{item.node.line}"
        if isinstance(item, ResolvedSection):
            lines.append(f"{pad}<{item.name} {' '.join(item.args)}>    # {where}")
            _format_effective(item.children, depth + 1, lines)
            lines.append(f"{pad}</{item.name}>")
        else:
            lines.append(f"{pad}{item.name} {item.args_text}    # {where}")


def _raw_json(nodes):
    from apachetune.config.tree import Directive, Section

    result = []
    for n in nodes:
        if isinstance(n, Section):
            result.append({"section": n.name, "args": n.args, "line": n.line, "column": n.column,
                           "block": _raw_json(n.children)})
        elif isinstance(n, Directive):
            result.append({"directive": n.name, "args": n.args, "line": n.line, "column": n.column})
    return result


def _print_raw(nodes, depth):
    from apachetune.config.tree import Directive, Section

    pad = "  " * depth
    for n in nodes:
        if isinstance(n, Section):
            out.print(f"{pad}<{n.name} {n.raw_args}>    # line {n.line}")
            _print_raw(n.children, depth + 1)
            out.print(f"{pad}</{n.name}>")
        elif isinstance(n, Directive):
            out.print(f"{pad}{n.name} {n.raw_args}    # line {n.line}")
