"""Error types. Every user-facing error carries a position (file, line, column)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Position:
    file: str
    line: int  # 1-based
    column: int  # 1-based

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def to_json(self) -> dict[str, str | int]:
        return {"file": self.file, "line": self.line, "column": self.column}


class ApachetuneError(Exception):
    """Base of all errors the CLI reports without a traceback (exit code 2)."""

    exit_code = 2

    def __init__(self, message: str, position: Position | None = None):
        super().__init__(message)
        self.message = message
        self.position = position

    def __str__(self) -> str:
        if self.position is not None:
            return f"{self.position}: {self.message}"
        return self.message


class ConfigSyntaxError(ApachetuneError):
    """The text is not a configuration httpd would read (unclosed section, bad quote...)."""


class ResolveError(ApachetuneError):
    """Includes, defines or conditionals cannot be resolved (cycle, missing file...)."""


class UsageError(ApachetuneError):
    """Bad command-line input."""
