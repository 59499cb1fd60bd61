"""The `apachetune` executable's first module: it decides about the garbage collector before the
CLI's imports run (click and the command's modules create some 100,000 objects, and the collector
rescanned them some 40 times: ~10 ms of a 0.4 s lint), then hands over to apachetune.cli.main."""

from __future__ import annotations

import gc
import sys

# Commands that read a configuration, report and exit: the cyclic collector stays off for the
# whole run (resolve and lint already pause it, apachetune/collector.py; this covers the imports
# and the rest of the command). Commands that run for minutes (validate, compare, the wizard,
# size's sampling) keep it.
SHORT_LIVED = frozenset({"lint", "parse", "vhosts", "rules", "explain"})


def short_lived(argv: list[str]) -> bool:
    return len(argv) > 1 and argv[1] in SHORT_LIVED


def main() -> None:
    if short_lived(sys.argv):
        gc.disable()
    from apachetune.cli import main as cli_main

    cli_main()
