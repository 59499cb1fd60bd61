"""Sweep every directive of the registry against the installed httpd (a developer tool).

Each directive with each value is written, alone, into a conf-enabled file of a copy of a tree
(Debian's /etc/apache2 with every module enabled is the one used: it loads every reader), then
`apache2 -t` and lint read the tree. A disagreement is printed: httpd refuses and lint has no
AT5xx/AT116 error in its words (a miss), or httpd starts and lint refuses (a false refusal, the
worse one). Directives allowed only in a directory context are put in <Directory /srv>.

Usage: python tools/sweep_readers.py --tree /tmp/tree [--value bogus --value -1 ...] [--only NAME]
The tree must be a writable copy: the tool writes conf-enabled/zz-sweep.conf in it (and removes
it at the end). One sweep a tree at a time."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from apachetune.config.envvars import read_envvars  # noqa: E402
from apachetune.config.resolver import ResolveOptions  # noqa: E402
from apachetune.lint.engine import LintOptions, lint_file  # noqa: E402
from apachetune.lint.settings import Settings  # noqa: E402

# Not swept: the directives that read files, users or the server's layout, and the sections.
_SKIPPED = {"include", "includeoptional", "loadmodule", "loadfile", "define", "undefine", "serverroot", "user",
            "group", "pidfile", "errorlog", "defaultruntimedir", "listen", "mutex"}


def cases(values: list[str], only: str | None) -> list[str]:
    registry = yaml.safe_load((ROOT / "rules" / "registry" / "directives.yaml").read_text())
    out = []
    for spec in registry:
        name = spec["name"]
        if name.startswith("<") or name.lower() in _SKIPPED or (only and name.lower() != only.lower()):
            continue
        contexts = spec.get("contexts") or []
        for value in values:
            if "server config" in contexts:
                out.append(f"{name} {value}")
            elif "directory" in contexts:
                out.append(f"<Directory /srv>\n{name} {value}\n</Directory>")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tree", required=True, type=Path)
    ap.add_argument("--value", action="append", default=None)
    ap.add_argument("--only", default=None, help="one directive's name")
    opts = ap.parse_args()
    tree = opts.tree.resolve()
    env = read_envvars(tree / "envvars")
    probe = tree / "conf-enabled" / "zz-sweep.conf"
    found = {"miss": 0, "false refusal": 0}
    todo = cases(opts.value or ["bogus", "-1", "0"], opts.only)
    try:
        for case in todo:
            probe.write_text(case + "\n")
            proc = subprocess.run(["apache2", "-d", str(tree), "-f", str(tree / "apache2.conf"), "-t"],
                                  capture_output=True, text=True, env={**os.environ, **env})
            lines = proc.stderr.strip().splitlines()
            said = (lines[-1] if lines else f"(exit {proc.returncode}, no message)") if proc.returncode else None
            result = lint_file(tree / "apache2.conf", LintOptions(ResolveOptions(env=env), Settings()))
            errors = [f.message for f in result.findings
                      if f.severity == "error" and (f.rule.startswith("AT5") or f.rule == "AT116")]
            if said is None and errors:
                kind = "false refusal"
            elif said is not None and not any(said.split(": ", 1)[-1] in m or said in m for m in errors):
                kind = "miss"
            else:
                continue
            found[kind] += 1
            print(f"{kind}: {case!r}\n   httpd: {said!r}\n   lint:  {errors}", flush=True)
    finally:
        probe.unlink(missing_ok=True)
    print(f"{len(todo)} cases: {found['false refusal']} false refusals, {found['miss']} misses")


if __name__ == "__main__":
    main()
