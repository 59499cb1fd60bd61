"""Regenerate rules/registry/directives.yaml (a developer tool; its output is committed).

Facts come from two places, both httpd's own:
- `apache2 -L` with every module of the installed httpd loaded, once per MPM:
  each directive's canonical name, module (source file), help text and where
  it is allowed;
- the AP_INIT_* command tables of httpd's 2.4.x source (a git checkout given
  with --source): each directive's argument kind (TAKE1, FLAG, RAW_ARGS...).

Usage: python tools/gen_registry.py --source /path/to/httpd.git [--ref heads/2.4.x]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from apachetune import httpd
from apachetune.config import module_table

MODULES = httpd.modules_dir()
OUT = Path(__file__).resolve().parents[1] / "rules" / "registry" / "directives.yaml"
MODULES_OUT = OUT.with_name("modules.yaml")


def run_L(mpm: str) -> str:
    lines = ["ServerName localhost", "ErrorLog /dev/null", "User nobody"]
    for so in sorted(MODULES.glob("mod_*.so")):
        name = so.stem[len("mod_"):]
        if name.startswith("mpm_"):
            continue
        lines.append(f"LoadModule {name}_module {so}")
    lines.append(f"LoadModule mpm_{mpm}_module {MODULES}/mod_mpm_{mpm}.so")
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as fh:
        fh.write("\n".join(lines) + "\n")
    return httpd.run("-L", "-f", fh.name).stdout


def parse_L(text: str) -> dict[str, dict]:
    entries: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if not line.startswith("\t"):
            m = re.match(r"^(\S+) \((\S+\.c)\)$", line)
            if not m:
                current = None
                continue
            current = {"name": m[1], "source": m[2], "help": "", "allowed": ""}
            entries[m[1].lower()] = current
        elif current is not None:
            body = line.strip()
            if body.startswith("Allowed in"):
                current["allowed"] = body
            elif body.startswith("when AllowOverride"):
                current["allowed"] += " " + body
            elif not current["help"]:
                current["help"] = body
    return entries


def arg_kinds(source: str, ref: str) -> dict[str, str]:
    """Each directive's AP_INIT_* kind from httpd's command tables, including those written
    through mod_ssl's SSL_CMD_* macros (SSL_CMD_DIR's kind is its third argument), tables that put
    a space before or after the parenthesis (mod_logio's, mod_rewrite's) and those in headers
    (include/ap_listen.h, include/mpm_common.h)."""
    text = subprocess.run(
        ["git", "-C", source, "grep", "-h", "-E", r'AP_INIT_[A-Z0-9_]+\s*\(\s*"|SSL_CMD_(SRV|DIR|ALL|PXY)\(', ref,
         "--", "*.c", "*.h"], capture_output=True, text=True).stdout
    kinds = {}
    for m in re.finditer(r'AP_INIT_([A-Z0-9_]+)\s*\(\s*"([^"]+)"', text):
        kinds.setdefault(m[2].lower(), m[1])
    for m in re.finditer(r"SSL_CMD_(?:SRV|ALL|PXY)\(\s*([A-Za-z0-9]+)\s*,\s*([A-Z0-9_]+)", text):
        kinds.setdefault(("ssl" + m[1]).lower(), m[2])
    for m in re.finditer(r"SSL_CMD_DIR\(\s*([A-Za-z0-9]+)\s*,\s*[A-Z0-9_]+\s*,\s*([A-Z0-9_]+)", text):
        kinds.setdefault(("ssl" + m[1]).lower(), m[2])
    return kinds


def contexts(allowed: str) -> list[str]:
    """httpd's `-L` wording -> the manual's context names."""
    return list(module_table.contexts(allowed))


def module_id(source: str) -> str:
    special = {"core.c": "core_module", "http_core.c": "http_module", "prefork.c": "mpm_prefork_module",
               "worker.c": "mpm_worker_module", "event.c": "mpm_event_module",
               "util_ldap.c": "ldap_module"}  # mod_ldap.so is built from util_ldap.c
    if source in special:
        return special[source]
    return source.removeprefix("mod_").removesuffix(".c") + "_module"


_COUNT_WORDS = {"takes one argument": "TAKE1", "takes two arguments": "TAKE2", "takes 1-2 arguments": "TAKE12",
                "takes three arguments": "TAKE3", "takes two or three arguments": "TAKE23",
                "takes one, two or three arguments": "TAKE123", "takes one or three arguments": "TAKE13",
                "requires at least one argument": "ITERATE", "requires at least two arguments": "ITERATE2",
                "must be On or Off": "FLAG"}


def probed_kind(name: str, allowed: str, mpm: str, word: str = "") -> str | None:
    """The kind httpd's own count check names when `name` is given no argument (for directives
    the source tables do not name: newer than the checkout, or named through a macro, as
    mod_macro's and mod_md's); None when httpd takes none (RAW_ARGS, TAKE_ARGV: not told apart)."""
    lines = ["ServerName localhost", "ErrorLog /dev/null"]
    for so in sorted(MODULES.glob("mod_*.so")):
        module = so.stem[len("mod_"):]
        if not module.startswith("mpm_") and module != "cgi":
            lines.append(f"LoadModule {module}_module {so}")
    lines.append(f"LoadModule mpm_{mpm}_module {MODULES}/mod_mpm_{mpm}.so")
    in_server = "server config" in contexts(allowed)
    line = f"{name} {word}".rstrip()
    lines += [line] if in_server else ["<Directory /srv>", line, "</Directory>"]
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as fh:
        fh.write("\n".join(lines) + "\n")
    said = httpd.run("-t", "-f", fh.name).stderr
    for words, kind in _COUNT_WORDS.items():
        if f"{name} {words}" in said:
            return kind
    if not word:  # none taken: one word is refused by NO_ARGS only
        return "NO_ARGS" if probed_kind(name, allowed, mpm, "x") == "NO_ARGS" else None
    return "NO_ARGS" if f"{name} takes no arguments" in said else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--ref", default="heads/2.4.x")
    opts = ap.parse_args()
    merged: dict[str, dict] = {}
    for mpm in ("event", "worker", "prefork"):
        for key, entry in parse_L(run_L(mpm)).items():
            if key in merged and merged[key]["source"] != entry["source"]:
                merged[key].setdefault("also", []).append(entry["source"])
                merged[key].setdefault("helps", {merged[key]["source"]: merged[key]["help"]})
                merged[key]["helps"][entry["source"]] = entry["help"]
                continue
            merged.setdefault(key, entry)
    kinds = arg_kinds(opts.source, opts.ref)
    out = []
    for key in sorted(merged):
        e = merged[key]
        sources = [e["source"], *e.get("also", [])]
        out.append({
            "name": e["name"],
            "modules": sorted({module_id(s) for s in sources}),
            "kind": kinds.get(key) or (None if key.startswith("<") else probed_kind(e["name"], e["allowed"], "event")),
            "contexts": contexts(e["allowed"]),
            "allowed": e["allowed"],
            "help": e["help"],
        })
        helps = e.get("helps", {})
        if len(set(helps.values())) > 1:  # the same name, worded differently per module
            out[-1]["help_by_module"] = {module_id(src): text for src, text in sorted(helps.items())}
    header = ("# Generated by tools/gen_registry.py from `apache2 -L` (httpd 2.4.71, every module\n"
              "# loaded, once per MPM) and the AP_INIT_* tables of httpd's 2.4.x source. Do not edit.\n")
    OUT.write_text(header + yaml.safe_dump(out, sort_keys=False, allow_unicode=True, width=200))
    print(f"{len(out)} directives -> {OUT}", file=sys.stderr)
    modules = all_modules()
    MODULES_OUT.write_text(
        "# Generated by tools/gen_registry.py from `apache2 -t -D DUMP_MODULES` with every module of\n"
        "# httpd 2.4.71 loaded (and each MPM): every module httpd ships, those that define no\n"
        "# directive included (authz_host, status, ...). Do not edit.\n"
        + yaml.safe_dump({"modules": modules}, sort_keys=False, width=200))
    print(f"{len(modules)} modules -> {MODULES_OUT}", file=sys.stderr)
    return 0


def all_modules() -> list[str]:
    """Every module identifier the installed httpd ships: compiled in, or a mod_*.so."""
    found: set[str] = set()
    for mpm in ("event", "worker", "prefork"):
        lines = ["ServerName localhost", "ErrorLog /dev/null"]
        for so in sorted(MODULES.glob("mod_*.so")):
            name = so.stem[len("mod_"):]
            if not name.startswith("mpm_") or name == f"mpm_{mpm}":
                lines.append(f"LoadModule {name}_module {so}")
        with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as fh:
            fh.write("\n".join(lines) + "\n")
        text = httpd.run("-t", "-D", "DUMP_MODULES", "-f", fh.name).stdout
        found |= {m.group(1) for m in re.finditer(r"^ (\w+_module) \((?:static|shared)\)$", text, re.M)}
    return sorted(found)


if __name__ == "__main__":
    sys.exit(main())
