"""What simulate_startup reports: httpd's messages, the adjustments and the effective values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class StartupMessage:
    code: str
    level: str  # "warning" (printed by -t), "info" (only with -e info) or "error" (httpd stops)
    text: str  # exactly what httpd prints after "AHnnnnn: "
    directive: str | None = None  # the directive it is about
    # The stderr lines as the modelled httpd version prints them ("AHnnnnn: text" from 2.4.20;
    # older versions split the long warnings over several lines). Empty: one line, as 2.4.20+.
    lines: tuple[str, ...] = ()

    def printed(self) -> tuple[str, ...]:
        return self.lines or (f"{self.code}: {self.text}",)

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "text": self.text}


@dataclass(frozen=True, slots=True)
class Adjustment:
    directive: str
    configured: int | float | None  # None: not set, the default was adjusted
    effective: int | float
    code: str | None  # the AH message, or None for a silent change
    silent: bool


@dataclass
class StartupResult:
    mpm: str
    configured: dict[str, str]
    effective: dict[str, int | float]
    messages: list[StartupMessage] = field(default_factory=list)
    adjustments: list[Adjustment] = field(default_factory=list)
    fatal: list[StartupMessage] = field(default_factory=list)
    legacy_names: list[str] = field(default_factory=list)
    # INFO deprecation notes, one per legacy-named line read, in reading order. httpd logs them
    # while reading the config (before any check), so `-t` shows them only with `-e info`.
    notices: list[StartupMessage] = field(default_factory=list)
    # A real start reads the config twice; the second check_config logs the same checks with
    # the next AH code and shorter texts to the ErrorLog (seen with -D FOREGROUND; a daemonized
    # start loses them, its stderr is gone by then).
    error_log: list[StartupMessage] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.mpm,
            "configured": dict(self.configured),
            "effective": dict(self.effective),
            "startup_messages": [m.to_json() for m in self.messages],
        }
