"""The checks, registered explicitly by rule id (one small module per family)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from apachetune.lint.checks import (
    capacity,
    dead,
    host,
    httpd_rejects,
    keepalive,
    performance,
    security,
    startup,
    values,
)
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding

Check = Callable[[LintContext], Iterator[Finding]]

CHECKS: dict[str, Check] = {}
for _module in (startup, capacity, keepalive, dead, httpd_rejects, values, performance, security, host):
    CHECKS.update(_module.RULES)
CHECKS = dict(sorted(CHECKS.items()))
