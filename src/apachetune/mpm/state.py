"""The MPM variables while httpd checks them: each change is recorded as a message, an
ErrorLog line of the second pass, and an adjustment."""

from __future__ import annotations

from apachetune.mpm.directives import DEFAULTS, MPM_DIRECTIVES
from apachetune.mpm.numbers import atoi
from apachetune.mpm.result import Adjustment, StartupMessage
from apachetune.mpm.versions import StartupRules, joined_text, printed_lines, rules_for

# What httpd adds when a spare minimum is below 1.
SPARE_WARNING = " to avoid almost certain server failure. Please read the documentation"


class StartupState:
    def __init__(self, mpm: str, configured: dict[str, str], rules: StartupRules | None = None):
        self.mpm = mpm
        self.rules = rules or rules_for(None)
        self.configured = configured
        self.v: dict[str, int | float] = dict(DEFAULTS[mpm])
        for name in MPM_DIRECTIVES[mpm]:
            if name in configured and name != "AsyncRequestWorkerFactor":
                self.v[name] = atoi(configured[name])
        self.read = dict(self.v)  # what httpd read, before any check
        self.messages: list[StartupMessage] = []
        self.fatal: list[StartupMessage] = []
        self.adjustments: list[Adjustment] = []
        self.error_log: list[StartupMessage] = []

    def set(self, name: str, value: int | float, code: str | None = None, text: str | None = None,
            log: str | None = None) -> None:
        """Apply one check: `text` is the start-up message (-t, first pass), `log` the
        second pass's ErrorLog line, whose code is always the next one."""
        before = self.v[name]
        if code is not None and text is not None:
            lines = printed_lines(code, text, self.rules)
            self.messages.append(StartupMessage(code, "warning", joined_text(lines), name, lines))
        if code is not None and log is not None:
            self.error_log.append(StartupMessage(f"AH{int(code[2:]) + 1:05d}", "warning", log, name))
        if before != value:
            self.adjustments.append(Adjustment(
                name, before if name in self.configured else None, value, code, code is None))
        self.v[name] = value

    # The two checks every MPM repeats for several directives, in httpd's words.
    def cap_at_compile_limit(self, name: str, limit: int, unit: str, code: str) -> None:
        """'exceeds compile-time limit of N <unit>, decreasing to N' (AH00175, AH00215, ...)."""
        n = self.v[name]
        self.set(name, limit, code,
                 f"WARNING: {name} of {n} exceeds compile-time limit of {limit} {unit}, decreasing to {limit}.",
                 f"{name} of {n} exceeds compile-time limit of {limit}, decreasing to match")

    def raise_to_one(self, name: str, code: str, why: str = "") -> None:
        """'not allowed, increasing to 1' (the spare minimums add why: httpd's own warning)."""
        n = self.v[name]
        self.set(name, 1, code, f"WARNING: {name} of {n} not allowed, increasing to 1{why}.",
                 f"{name} of {n} not allowed, increasing to 1")

