"""`apachetune rules`: list every rule, or the groups they belong to."""

from __future__ import annotations

from collections import defaultdict

import click

from apachetune.lint.metadata import all_rules


@click.command("rules")
@click.option("--groups", "show_groups", is_flag=True, help="List the groups (usable as selectors) and their rules.")
@click.option("--group", "group", metavar="NAME", help="Only the rules of this group (e.g. security, performance).")
def command(show_groups: bool, group: str | None):
    """List the lint rules (id, severity, name, title)."""
    rules = all_rules()
    if show_groups:
        members: dict[str, list[str]] = defaultdict(list)
        for meta in rules.values():
            for g in meta.groups:
                members[g].append(meta.id)
        for g in sorted(members):
            click.echo(f"{g:<12}  {len(members[g]):>2} rules  {' '.join(members[g])}")
        return 0
    if group is not None and not any(group in m.groups for m in rules.values()):
        raise click.BadParameter(f"no rule is in group {group!r} (see --groups)", param_hint="--group")
    for meta in rules.values():
        if group is None or group in meta.groups:
            click.echo(f"{meta.id}  {meta.severity:<7}  {meta.name:<45}  {meta.title}")
    return 0
