"""How httpd reads the MPM directive lines (the set_* handlers and config.c's argument check):
last one wins, refused values stop the reading, legacy names log an INFO note."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from apachetune.mpm.directives import DEPRECATION_CODES, LEGACY_NAMES, canonical
from apachetune.mpm.numbers import atoi, strtod_strict
from apachetune.mpm.result import StartupMessage


def read_lines(mpm: str, directives: Iterable[tuple[str, list[str]]] | Mapping[str, str]
               ) -> tuple[dict[str, str], list[str], list[StartupMessage], list[StartupMessage]]:
    """Canonical name -> the argument httpd reads (the last one set wins), legacy names seen,
    the first error httpd stops at while reading them (each occurrence is checked as it is
    read, so an invalid value is fatal even when a later line sets a valid one), and the INFO
    deprecation notes httpd logs before it stops."""
    items = directives.items() if isinstance(directives, Mapping) else directives
    configured: dict[str, str] = {}
    legacy: list[str] = []
    errors: list[StartupMessage] = []
    notices: list[StartupMessage] = []
    for name, args in items:
        canon = canonical(name)
        if canon is None:
            continue
        words = [args] if isinstance(args, str) else list(args)
        error: str | None
        if len(words) != 1 or words[0] == "":
            error = _takes_one(name, mpm)  # config.c refuses it before the handler runs
        else:
            error = _read_error(mpm, canon, words[0])
        if name.lower() in LEGACY_NAMES:
            legacy.append(name)
            notice = _deprecation_notice(mpm, name)
            if notice and not errors and error is None:
                notices.append(notice)
        if error and not errors:
            errors.append(StartupMessage("AH00526", "error", error, canon))
        if not error:
            configured[canon] = words[0]
    return configured, legacy, errors, notices


def _deprecation_notice(mpm: str, name: str) -> StartupMessage | None:
    """The INFO note the handler logs for a legacy name: prefork.c set_max_clients (AH00188),
    worker.c / event.c set_max_workers (AH00324 / AH00521), mpm_common.c
    ap_mpm_set_max_requests (AH00545)."""
    lname = name.lower()
    code = DEPRECATION_CODES.get((mpm, lname)) or DEPRECATION_CODES.get(("*", lname))
    if code is None:
        return None
    new = LEGACY_NAMES[lname]
    # The handler compares with strcasecmp but prints the canonical spelling.
    old = "MaxClients" if lname == "maxclients" else "MaxRequestsPerChild"
    return StartupMessage(code, "info", f"{old} is deprecated, use {new} instead.", new)


def _read_error(mpm: str, canon: str, value: str) -> str | None:
    """The handlers that refuse a value outright (event.c set_worker_factor, listen.c)."""
    if canon == "AsyncRequestWorkerFactor" and mpm == "event":
        number = strtod_strict(value)
        if number is None:
            return "error parsing value"
        if number <= 0:  # as C compares: NaN is not <= 0, so httpd takes it (and floors it to 1)
            return "AsyncRequestWorkerFactor argument must be a positive number"
    if canon == "ListenBacklog" and atoi(value) < 1:
        return "ListenBacklog must be > 0"
    return None


def _takes_one(name: str, mpm: str) -> str:
    """httpd's wording for a TAKE1 directive given no argument or several (config.c invoke_cmd)."""
    from apachetune.config.directives import lookup

    spec = lookup(name)
    spelled = spec.name if spec else name
    text = spec.help_for(f"mpm_{mpm}_module") if spec else ""
    return f"{spelled} takes one argument" + (f", {text}" if text else "")
