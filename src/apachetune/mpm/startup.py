"""What httpd 2.4 does with the MPM directives when it starts.

`simulate_startup` replays, in httpd's own order, every check of the MPM's
`*_check_config` hook (each one that prints an AH message gives the same
message with the same numbers) and then the silent adjustments the MPM's run
function makes before it forks (spare bounds and StartServers against the
listener buckets and the process limit). Facts: server/mpm/prefork/prefork.c
(prefork_check_config, prefork_run), server/mpm/worker/worker.c
(worker_check_config, worker_run), server/mpm/event/event.c
(event_check_config, event_run), server/mpm_common.c, server/listen.c (2.4.x).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from apachetune.config.conditions import Version
from apachetune.mpm.directives import MPM_DIRECTIVES, MPMS
from apachetune.mpm.prefork import check_prefork
from apachetune.mpm.reading import read_lines
from apachetune.mpm.result import Adjustment, StartupMessage, StartupResult
from apachetune.mpm.state import StartupState
from apachetune.mpm.threaded import check_threaded, read_worker_factor
from apachetune.mpm.versions import rules_for

__all__ = ["Adjustment", "StartupMessage", "StartupResult", "is_fixed_point", "simulate_startup"]


def simulate_startup(mpm: str, directives: Iterable[tuple[str, list[str]]] | Mapping[str, str], *,
                     listen_buckets: int = 1, version: Version | str | None = None) -> StartupResult:
    """Replay httpd's start-up handling of the MPM directives; see the module docstring.

    `version`: the httpd 2.4.x whose checks and wording to replay (default 2.4.71); what
    changed between releases is in mpm/versions.py."""
    if mpm not in MPMS:
        raise ValueError(f"unknown MPM {mpm!r}; expected one of {', '.join(MPMS)}")
    configured, legacy, arg_errors, notices = read_lines(mpm, directives)
    rules = rules_for(version)
    if not rules.buckets:
        listen_buckets = 1  # ListenCoresBucketsRatio came with 2.4.17
    run = StartupState(mpm, configured, rules)
    run.fatal.extend(arg_errors)
    if mpm == "event":
        read_worker_factor(run)
    if mpm == "prefork":
        check_prefork(run, listen_buckets)
    else:
        check_threaded(run, listen_buckets)
    effective = {name: run.v[name] for name in MPM_DIRECTIVES[mpm]}
    return StartupResult(mpm, configured, effective, run.messages, run.adjustments, run.fatal, legacy,
                         notices, run.error_log)


def is_fixed_point(mpm: str, values: Mapping[str, int | float], *, listen_buckets: int = 1,
                   version: Version | str | None = None) -> bool:
    """True when httpd would run `values` exactly as given: no message, no silent change."""
    result = simulate_startup(mpm, {k: str(v) for k, v in values.items()}, listen_buckets=listen_buckets,
                              version=version)
    return not result.messages and not result.fatal and all(
        result.effective[k] == v for k, v in values.items() if k in result.effective)
