"""`apachetune lint --from-dump`: lint what `httpd -t -D DUMP_CONFIG` printed, each finding
placed at the file and line httpd read the directive from (its `# In file:` / `# N:` lines)."""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

from apachetune.config.dump import Dump, read_dump
from apachetune.errors import Position
from apachetune.lint.engine import LintOptions, lint
from apachetune.lint.finding import LintResult

# What `apachectl -t -D DUMP_CONFIG 2>&1` adds around the dump.
_NOISE = re.compile(r"^(Syntax OK|AH\d{5}: .*|\[[^\]]*\] \[[^\]]*\] .*)$")
# Rules about lines httpd does not print in a dump (LoadModule).
_NOT_IN_A_DUMP = frozenset({"AT505"})


# What each layout calls its main file (a dump does not print the Include lines that lead away from it).
_MAIN_NAMES = ("httpd.conf", "apache2.conf")


def main_file_of(dump: Dump) -> str | None:
    """The file httpd began with: a dump shows files in the order their directives were read, so
    the first, unless the main file's first directive was an Include (SUSE's httpd.conf begins by
    including uid.conf): then the first file with a main file's name, if one is shown."""
    files = list(dict.fromkeys(f for f, _ in dump.origins.values()))
    named = [f for f in files if Path(f).name in _MAIN_NAMES]
    return named[0] if named else (files[0] if files else None)


def lint_dump(text: str, name: str, options: LintOptions) -> tuple[LintResult, Dump]:
    text = "\n".join("" if _NOISE.match(line) else line for line in text.splitlines()) + "\n"
    dump = read_dump(text)
    mpm = options.resolve.mpm or dump.mpm
    modules = [*options.resolve.modules, *dump.modules] + ([f"mpm_{mpm}_module"] if mpm else [])
    with tempfile.TemporaryDirectory(prefix="apachetune-dump-") as tmp:
        main = Path(tmp) / "dump.conf"
        main.write_bytes(dump.text.encode("utf-8", errors="surrogateescape"))
        resolve = dataclasses.replace(options.resolve, server_root=tmp, modules=modules, mpm=mpm,
                                      use_env_file=False, env={})
        result = lint(main, dataclasses.replace(options, resolve=resolve, snippet=False, from_dump=True))

    first_file = main_file_of(dump)

    def origin(loc: Position) -> Position:
        if loc.file != str(main):
            return loc
        if loc.line in dump.origins:
            file, line = dump.origins[loc.line]
            return Position(file, line, 1)  # httpd's dump keeps no column
        # A finding about the whole configuration (line 1 of the dump): the main file's.
        return Position(first_file, 1, 1) if loc.line == 1 and first_file else Position(name, loc.line, loc.column)

    # The dump has no LoadModule lines: "no MPM loaded" says nothing about the server.
    result.findings = [f for f in result.findings if f.rule not in _NOT_IN_A_DUMP]
    for finding in result.findings:
        finding.location = origin(finding.location)
        finding.related = tuple(origin(r) for r in finding.related)
    result.main_file = name
    result.files = {}
    return result, dump
