"""How fast httpd grows its pool: the spawn ramp of perform_idle_server_maintenance.

Once a second, when fewer than MinSpareServers (MinSpareThreads) are idle, prefork forks
children and worker/event start processes at the current spawn rate, which starts at 1 and
doubles each second the shortage lasts, up to 32 (MAX_SPAWN_RATE); it falls back to 1 when
nothing is missing. Children beyond StartServers therefore arrive 1, 2, 4, 8, 16, 32, 32 ... a
second: a burst larger than the pool already running waits for them.
"""

from __future__ import annotations

MAX_SPAWN_RATE = 32


def spawn_ramp(start: int, target: int) -> list[int]:
    """Processes running after each second of a sustained shortage, from `start` to `target`."""
    running, rate, steps = max(0, start), 1, []
    while running < target:
        running = min(target, running + rate)
        steps.append(running)
        rate = min(MAX_SPAWN_RATE, rate * 2)
    return steps


def ramp_seconds(start: int, target: int) -> int:
    """Seconds of shortage before `target` processes run (0 when `start` already reaches it)."""
    return len(spawn_ramp(start, target))
