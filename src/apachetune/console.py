"""The one place that prints. Markup is off: Apache text like [L,R=301] is not rich markup."""

from __future__ import annotations

import sys

from rich.console import Console

out = Console(markup=False, emoji=False, highlight=False, soft_wrap=True)
err = Console(file=sys.stderr, markup=False, emoji=False, highlight=False, soft_wrap=True)


def error(message: str) -> None:
    err.print(f"error: {message}")


def warning(message: str) -> None:
    err.print(f"warning: {message}")
