"""Differential fuzz of lint against the installed httpd (a developer tool).

Each round copies a tree (Debian's /etc/apache2 by default, or a copy with every module
enabled), makes one realistic mistake in one line of one file the tree reads (a character
dropped or swapped, a word doubled, dropped or its case changed, a quote or '>' lost, a word
added, a digit changed), then asks `apache2 -t` and lint. A disagreement is printed: httpd
refuses and lint has no error, or the reverse. tests/test_typos_on_real_trees.py keeps what
it found as cases.

Usage: python tools/mutate_tree.py --seed 1 [--rounds 80] [--tree /etc/apache2] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from apachetune.config.envvars import read_envvars  # noqa: E402
from apachetune.config.resolver import ResolveOptions  # noqa: E402
from apachetune.lint.engine import LintOptions, lint_file  # noqa: E402
from apachetune.lint.settings import Settings  # noqa: E402

_ADDED = ("On", "Off", "0", "-1", "x", "/nonexistent", '"', "%{x}", "*:80")


def read_files(tree: Path) -> list[Path]:
    """The files Debian's layout reads: apache2.conf, ports.conf and the enabled links."""
    files = [tree / "apache2.conf", tree / "ports.conf"]
    for d in ("mods-enabled", "conf-enabled", "sites-enabled"):
        files += sorted(p for p in (tree / d).iterdir() if p.suffix in (".conf", ".load"))
    return [Path(os.path.realpath(f)) for f in files if f.exists()]


def mutate(rng: random.Random, line: str) -> tuple[str | None, str]:
    words = line.split()
    op = rng.choice(("delchar", "swap", "dupword", "dropquote", "case", "dropgt", "delword", "addword", "digit"))
    if op == "delchar" and len(line.strip()) > 1:
        i = rng.randrange(len(line))
        return line[:i] + line[i + 1:], op
    if op == "swap" and len(line) > 2:
        i = rng.randrange(len(line) - 1)
        return line[:i] + line[i + 1] + line[i] + line[i + 2:], op
    if op == "dupword" and words:
        return line.rstrip("\n") + " " + rng.choice(words) + "\n", op
    if op == "dropquote" and '"' in line:
        i = rng.choice([m.start() for m in re.finditer('"', line)])
        return line[:i] + line[i + 1:], op
    if op == "case" and words:
        w = rng.choice(words)
        return line.replace(w, w.swapcase(), 1), op
    if op == "dropgt" and ">" in line:
        i = line.rindex(">")
        return line[:i] + line[i + 1:], op
    if op == "delword" and len(words) > 1:
        return line.replace(" " + rng.choice(words[1:]), "", 1), op
    if op == "addword":
        return line.rstrip("\n") + " " + rng.choice(_ADDED) + "\n", op
    if op == "digit" and re.search(r"\d", line):
        i = rng.choice([m.start() for m in re.finditer(r"\d", line)])
        return line[:i] + rng.choice("0123456789x-") + line[i + 1:], op
    return None, op


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=80)
    ap.add_argument("--tree", type=Path, default=Path("/etc/apache2"))
    ap.add_argument("--work", type=Path, default=None, help="where the copies go (default: a temporary directory)")
    opts = ap.parse_args()
    rng = random.Random(opts.seed)
    source = opts.tree.resolve()
    env = read_envvars(source / "envvars")
    files = [f.relative_to(source) if f.is_relative_to(source) else f for f in read_files(source)]
    files = [f for f in files if not f.is_absolute()]
    work = opts.work or Path(tempfile.mkdtemp(prefix="apachetune-mutate-"))
    tree = work / "tree"
    found = tried = 0
    for n in range(opts.rounds):
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(source, tree, symlinks=True)
        rel = rng.choice(files)
        lines = (tree / rel).read_text().splitlines(keepends=True)
        candidates = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]
        if not candidates:
            continue
        i = rng.choice(candidates)
        new, op = mutate(rng, lines[i])
        if new is None or new == lines[i]:
            continue
        lines[i] = new
        (tree / rel).write_text("".join(lines))
        tried += 1
        proc = subprocess.run(["apache2", "-d", str(tree), "-f", str(tree / "apache2.conf"), "-t"],
                              capture_output=True, text=True, env={**os.environ, **env})
        result = lint_file(tree / "apache2.conf", LintOptions(ResolveOptions(env=env), Settings()))
        errors = [f"{f.rule} {f.message}" for f in result.findings  # AT1xx: changes httpd makes and goes on
                  if f.severity == "error" and (f.rule.startswith("AT5") or f.rule in ("AT116", "AT403"))]
        if (proc.returncode != 0) != bool(errors):
            found += 1
            said = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
            print(f"disagreement: round {n}, {rel}:{i + 1} ({op})\n   line:  {new.rstrip()!r}\n"
                  f"   httpd: exit {proc.returncode} {said[-240:]!r}\n   lint:  {errors[:2]}", flush=True)
    shutil.rmtree(tree, ignore_errors=True)
    print(f"{tried} mutations: {found} disagreements")


if __name__ == "__main__":
    main()
