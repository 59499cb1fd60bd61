"""Evidence from the server's own error log: the MPM's messages that say the pool ran out.

httpd logs them once per episode (server/mpm/*/*.c, 2.4.x):
- MaxRequestWorkers reached: AH00161 (prefork), AH00286 (worker), AH00484 (event);
- within MinSpareThreads of MaxRequestWorkers: AH00287 (worker), AH10159 (event);
- the scoreboard full before MaxRequestWorkers (ServerLimit too low, or processes still
  finishing after a graceful restart): AH00288 (worker), AH03490 (event);
- prefork spawning fast to catch up (spares too few for the bursts): AH00162;
- fork failing (the kernel's task or memory limits): AH00159.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apachetune.config.effective import EffectiveConfig

import re
from dataclasses import dataclass, field

from apachetune.inputs import iter_lines

REACHED = {"AH00161", "AH00286", "AH00484"}
NEAR = {"AH00287", "AH10159"}
SCOREBOARD_FULL = {"AH00288", "AH03490"}
SPAWNING = {"AH00162"}
FORK_FAILED = {"AH00159"}
CODES = REACHED | NEAR | SCOREBOARD_FULL | SPAWNING | FORK_FAILED

MEANING = {
    **{c: "MaxRequestWorkers reached" for c in REACHED},
    **{c: "within MinSpareThreads of MaxRequestWorkers" for c in NEAR},
    **{c: "scoreboard full before MaxRequestWorkers" for c in SCOREBOARD_FULL},
    **{c: "spawning children fast to catch up (spares too few)" for c in SPAWNING},
    **{c: "fork failed" for c in FORK_FAILED},
}

_LINE = re.compile(r"^\[([^\]]*)\].*?\b(AH\d{5}):")
# Any line of an httpd error log: "[date] [module:level] ..." (ErrorLogFormat's default).
_LOG_LINE = re.compile(r"^\[[^\]]+\] \[[^\]]*\]")


@dataclass
class ErrorLogEvidence:
    path: str
    counts: dict[str, int] = field(default_factory=dict)
    first: dict[str, str] = field(default_factory=dict)  # code -> the log's date of its first line
    last: dict[str, str] = field(default_factory=dict)
    last_seen: str = ""  # the date of the last capacity message in the file (the log is in time order)
    lines_read: int = 0
    log_lines: int = 0  # lines shaped like httpd's error log ("[date] [module:level] ...")

    @property
    def is_error_log(self) -> bool:
        """Whether the file looks like an httpd error log at all (an empty one does: no error yet)."""
        return self.log_lines > 0 or self.lines_read == 0

    def summary(self) -> str:
        """What the file said, in a line."""
        if self.counts:
            return "; ".join(self.lines())
        if not self.is_error_log:
            return (f"not an httpd error log? none of its {self.lines_read:,} lines begins "
                    "\"[date] [module:level]\" (ErrorLogFormat's default), and none has a capacity message")
        return "no capacity message (the pool never ran out)"

    @property
    def reached(self) -> int:
        """Episodes of the pool at MaxRequestWorkers (or within MinSpareThreads of it)."""
        return sum(self.counts.get(c, 0) for c in REACHED | NEAR)

    def lines(self) -> list[str]:
        return [f"{code} x{n}: {MEANING[code]} (first {self.first[code]}, last {self.last[code]})"
                for code, n in sorted(self.counts.items())]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "counts": dict(self.counts), "first": dict(self.first),
                "last": dict(self.last), "last_seen": self.last_seen, "lines_read": self.lines_read,
                "is_error_log": self.is_error_log}


def read_error_log(path: str) -> ErrorLogEvidence:
    """Count the MPM's capacity messages in the error log at `path` (streamed, bounded lines)."""
    ev = ErrorLogEvidence(path)
    for line in iter_lines(path, "--error-log"):
        ev.lines_read += 1
        if line.startswith("[") and _LOG_LINE.match(line):
            ev.log_lines += 1
        if "AH" not in line:
            continue
        m = _LINE.match(line)
        if not m or m.group(2) not in CODES:
            continue
        date, code = m.group(1), m.group(2)
        ev.counts[code] = ev.counts.get(code, 0) + 1
        ev.first.setdefault(code, date)
        ev.last[code] = ev.last_seen = date
    return ev


def configured_error_log(eff: EffectiveConfig | None) -> str | None:
    """The main server's ErrorLog when it is a plain file (not a pipe or syslog)."""
    if eff is None:
        return None
    d = eff.get("ErrorLog")
    if d is None or not d.args:
        return None
    target: str = d.args[0]
    if target.startswith(("|", "syslog")):
        return None
    import os

    return target if os.path.isabs(target) else os.path.join(eff.server_root, target)
