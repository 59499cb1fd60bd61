"""One sizing run: read the config (optional), measure or replay facts, build inputs, recommend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apachetune.config.effective import EffectiveConfig
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.sizing.facts import HostFacts
from apachetune.sizing.plan import Given, build_inputs
from apachetune.sizing.recommend import Recommendation, SizingInputs, recommend


@dataclass
class SizingRequest:
    file: str | None
    resolve: ResolveOptions | None
    given: Given
    facts_path: str | None = None
    save_facts: str | None = None
    pid: int | None = None
    pidfile: str | None = None
    sample_seconds: int = 1
    no_measure: bool = False
    target_mpm: str | None = None
    access_log: str | None = None
    log_format: str = "combined"
    status_url: str | None = None

    @classmethod
    def from_cli(cls, file, resolve_options, *, facts_path=None, save_facts=None, pid=None, pidfile=None,
                 sample_seconds=1, no_measure=False, target_mpm=None, access_log=None,
                 log_format="combined", status_url=None, **given) -> SizingRequest:
        if target_mpm:
            given["mpm"] = target_mpm
        return cls(file, resolve_options, Given(**given), facts_path, save_facts, pid, pidfile,
                   sample_seconds, no_measure, target_mpm, access_log, log_format, status_url)


@dataclass
class SizingSession:
    request: SizingRequest
    eff: EffectiveConfig | None
    host: HostFacts | None
    inputs: SizingInputs
    recommendation: Recommendation
    load: object = None  # a LoadSample from an access log or mod_status

    def for_mpm(self, mpm: str) -> Recommendation:
        inputs, _ = build_inputs(Given(**{**self.request.given.__dict__, "mpm": mpm}), self.host, self.eff,
                                 self.load)
        return recommend(inputs, mpm)

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.request.file,
            "inputs": self.inputs.to_json(),
            "host": self.host.to_json() if self.host else None,
            "recommendation": self.recommendation.to_json(),
        }


def run_sizing(req: SizingRequest) -> SizingSession:
    eff = resolve(req.file, req.resolve or ResolveOptions()) if req.file else None
    host = None
    if req.facts_path:
        host = HostFacts.load(req.facts_path)
    elif not req.no_measure:
        from apachetune.sizing.facts import gather

        host = gather(req.pid, req.pidfile, samples=req.sample_seconds, interval=1.0)
    if host is not None and req.save_facts:
        host.save(req.save_facts)
    load = None
    if req.access_log or req.status_url:
        from apachetune.sizing.workload import from_access_log, from_status

        load = from_access_log(req.access_log, req.log_format) if req.access_log else \
            from_status(req.status_url, seconds=max(2, req.sample_seconds))
    inputs, reasons = build_inputs(req.given, host, eff, load)
    rec = recommend(inputs)
    rec.mpm_reasons = reasons
    return SizingSession(req, eff, host, inputs, rec, load)
