"""What a validation run is given (ValidationSetup) and what it finds (ValidationReport: load
points and Verdicts, predicted against measured)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apachetune.validate.load import LoadResult


@dataclass
class Verdict:
    name: str
    predicted: float | str | None
    measured: float | str | None
    unit: str
    passed: bool | None  # None: measured, nothing to judge
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ValidationSetup:
    target: str  # mpmd or httpd
    mpm: str
    directives: dict[str, Any]
    max_request_workers: int
    service_ms: float
    duration: float
    per_worker_mib: float | None = None  # the sizing model's figure; default: measured idle
    use_wrk: bool | None = None  # closed-loop sweep with wrk: None = when installed
    app_kb: int = 0  # application memory each /app/sleep request holds (KiB)
    keepalive_clients: int | None = None  # the keepalive plan's crowd; default MaxRequestWorkers
    access_log: str | None = None  # the simulate plan also replays this log's first seconds
    log_format: str = "combined"

    @property
    def threads_per_child(self) -> int:
        return 1 if self.mpm == "prefork" else int(self.directives.get("ThreadsPerChild", 1))

    @property
    def app_path(self) -> str:
        return f"/app/sleep?ms={self.service_ms:g}&kb={self.app_kb}"


@dataclass
class ValidationReport:
    setup: ValidationSetup
    points: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # how it was measured (the warm-up, ...)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.setup.target, "mpm": self.setup.mpm, "directives": self.setup.directives,
                "service_ms": self.setup.service_ms, "points": self.points,
                "verdicts": [v.to_json() for v in self.verdicts], "samples": self.samples, "notes": self.notes}

    @property
    def passed(self) -> bool:
        return all(v.passed is not False for v in self.verdicts)


def point(kind: str, x: float, r: LoadResult) -> dict[str, Any]:
    return {"plan": kind, "x": x, **r.to_json()}
