"""`apachetune rules`: list every rule."""

from __future__ import annotations

import click

from apachetune.lint.metadata import all_rules


@click.command("rules")
def command():
    """List the lint rules (id, severity, name, title)."""
    for meta in all_rules().values():
        click.echo(f"{meta.id}  {meta.severity:<7}  {meta.name:<45}  {meta.title}")
    return 0
