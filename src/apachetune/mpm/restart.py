"""What a graceful restart keeps, and the ServerLimit headroom it needs.

httpd sizes the scoreboard once, at the first start: a graceful restart (apachectl graceful,
SIGUSR1) keeps ServerLimit and ThreadLimit and logs that the new value is not allowed during a
restart (AH00179 prefork; AH00304/AH00309 worker; AH00501/AH00506 event). Only a full restart
applies them. During a graceful restart the old generation's processes keep their slots while
they finish. event starts the new generation in the slots left below ServerLimit (since
2.4.24), so a ServerLimit of exactly MaxRequestWorkers / ThreadsPerChild starts it short of
processes. worker never uses a slot beyond MaxRequestWorkers / ThreadsPerChild, whatever
ServerLimit says: its maintenance forks a new child into a finishing child's slot once that
child's idle threads have exited (measured on httpd 2.4.71: ServerLimit 2 and 4 restarted
alike), so spare slots give it nothing but scoreboard memory.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

RESTART_KEPT = {
    "prefork": {"ServerLimit": "AH00179"},
    "worker": {"ServerLimit": "AH00304", "ThreadLimit": "AH00309"},
    "event": {"ServerLimit": "AH00501", "ThreadLimit": "AH00506"},
}


def restart_headroom(mpm: str, processes: int) -> int:
    """Spare ServerLimit slots for processes finishing during a graceful restart: a quarter of
    the processes (at least one) for event; none for prefork (its children are the workers and
    MaxRequestWorkers caps them) nor worker (it uses no slot beyond MaxRequestWorkers /
    ThreadsPerChild). Stays under lint's AT201 threshold (2x)."""
    if mpm != "event" or processes < 1:
        return 0
    return max(1, math.ceil(processes / 4))


def needs_full_restart(mpm: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The changes a graceful restart would not apply, as sentences (empty: graceful is enough)."""
    out = []
    for name, code in RESTART_KEPT.get(mpm, {}).items():
        old, new = before.get(name), after.get(name)
        if old is not None and new is not None and int(old) != int(new):
            out.append(f"{name} {old} -> {new} takes a full restart (apachectl restart); a graceful "
                       f"restart keeps {old} and logs {code} (\"changing {name} to {new} from original "
                       f"value of {old} not allowed during restart\")")
    return out
