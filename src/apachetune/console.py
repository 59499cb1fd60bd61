"""The one place that prints. Markup is off: Apache text like [L,R=301] is not rich markup."""

from __future__ import annotations

from rich.console import Console

# No file= given: rich looks up sys.stdout / sys.stderr on each write, so output follows
# redirections made after import (click's test runner, pytest's capture).
out = Console(markup=False, emoji=False, highlight=False, soft_wrap=True)
err = Console(stderr=True, markup=False, emoji=False, highlight=False, soft_wrap=True)


def error(message: str) -> None:
    err.print(f"error: {message}")


def warning(message: str) -> None:
    err.print(f"warning: {message}")
