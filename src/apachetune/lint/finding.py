"""The result model every reporter reads: findings with positions and fixes as data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from apachetune.errors import Position

if TYPE_CHECKING:
    from apachetune.config.init_defines import InitDefines

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


# A finding's location is the same thing as an error's position: one type for both.
Location = Position


@dataclass(frozen=True, slots=True)
class Fix:
    """A fix as data (sqlfluff's LintFix): what `apachetune lint --fix` changes.

    `set` gives directives new values: the directive at the finding's position when it is one of
    them, else the one in force in server context, else a new line next to the finding (or at the
    end of the main file). `delete` removes the directive at the finding's position, `rename`
    renames it (keeping its arguments), `strip_bom` removes a file's byte-order mark.
    """

    set: dict[str, str]  # directive -> new value
    description: str = ""
    delete: bool = False
    rename: str | None = None
    strip_bom: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"set": dict(self.set), "description": self.description}
        if self.delete:
            out["delete"] = True
        if self.rename:
            out["rename"] = self.rename
        if self.strip_bom:
            out["strip_bom"] = True
        return out


@dataclass(slots=True)
class Finding:
    rule: str
    severity: str
    message: str
    location: Location
    related: tuple[Location, ...] = ()  # a tuple: most findings have none (one shared empty tuple)
    fix: Fix | None = None
    title: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule, "severity": self.severity, "message": self.message,
            "file": self.location.file, "line": self.location.line, "column": self.location.column,
        }
        if self.related:
            out["related"] = [r.to_json() for r in self.related]
        if self.fix:
            out["fix"] = self.fix.to_json()
        return out


@dataclass
class LintResult:
    main_file: str
    findings: list[Finding]
    mpm: dict[str, Any] | None  # the contract's "mpm" object (StartupResult.to_json())
    fatal: bool = False  # the configuration could not be read (syntax / include error): exit 2
    files: dict[str, Any] = field(default_factory=dict)  # path -> ConfigFile, for showing lines
    httpd_version: str | None = None  # the httpd version the checks modelled, and why that one
    httpd_version_source: str = ""
    init_defines: InitDefines | None = None  # the -D names the start-up script gives

    def summary(self) -> dict[str, int]:
        counts = {s: 0 for s in SEVERITIES}
        for f in self.findings:
            counts[f.severity] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "main_file": self.main_file,
            "mpm": self.mpm,
            "findings": [f.to_json() for f in self.findings],
            "summary": self.summary(),
            **({"init_defines": self.init_defines.to_json()} if self.init_defines else {}),
        }
