"""`apachetune explain ID`: print a rule's page."""

from __future__ import annotations

import click

from apachetune.errors import UsageError
from apachetune.lint.docs import rule_page
from apachetune.lint.metadata import all_rules, resolve_selector


@click.command("explain")
@click.argument("rule")
def command(rule):
    """Explain RULE (an id such as AT108, or a rule name)."""
    try:
        ids = resolve_selector(rule)
    except KeyError:
        raise UsageError(f"unknown rule {rule!r}; `apachetune rules` lists them") from None
    for rid in sorted(ids):
        click.echo(rule_page(all_rules()[rid]))
    return 0
