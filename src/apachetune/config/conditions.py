"""The tests behind httpd's conditional sections, as httpd evaluates them.

Facts: server/core.c (start_cond_section, find_module, test_*_section) and
modules/metadata/mod_version.c (start_ifversion, compare_version).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from apachetune.config.words import next_word, split_words


class ConditionError(ValueError):
    """The section's arguments are malformed (httpd refuses to start)."""


# Modules whose source file is not "mod_<id>.c": what <IfModule x.c> compares with.
_SOURCE_EXCEPTIONS = {
    "core_module": "core.c",
    "http_module": "http_core.c",
    "mpm_prefork_module": "prefork.c",
    "mpm_worker_module": "worker.c",
    "mpm_event_module": "event.c",
    "mpm_winnt_module": "mpm_winnt.c",
    "mpm_netware_module": "mpm_netware.c",
    "mpm_mpmt_os2_module": "mpmt_os2.c",
}


def source_file_for(module_id: str) -> str:
    """The C file name httpd reports for a module identifier (ssl_module -> mod_ssl.c)."""
    if module_id in _SOURCE_EXCEPTIONS:
        return _SOURCE_EXCEPTIONS[module_id]
    stem = module_id[: -len("_module")] if module_id.endswith("_module") else module_id
    return f"mod_{stem}.c"


def module_loaded(name: str, loaded_ids: set[str] | frozenset[str]) -> bool:
    """find_module(): by source file name (mod_ssl.c) or identifier (ssl_module), case-sensitive."""
    if name in loaded_ids:
        return True
    return any(source_file_for(m) == name for m in loaded_ids)


class LoadedModules:
    """module_loaded over one set of loaded modules, each answer remembered: <IfModule> and the
    checks ask about the same few modules thousands of times."""

    def __init__(self, ids: Iterable[str]) -> None:
        self.ids = frozenset(ids)
        self._answers: dict[str, bool] = {}

    def has(self, name: str) -> bool:
        found = self._answers.get(name)
        if found is None:
            found = self._answers[name] = module_loaded(name, self.ids)
        return found


def split_negation(raw_args: str) -> tuple[bool, str]:
    """start_cond_section: a leading '!' (even followed by space) negates; the first word is tested."""
    negate = raw_args.startswith("!")
    rest = raw_args[1:] if negate else raw_args
    word, _ = next_word(rest)
    return negate, word


@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    add: str = ""

    @classmethod
    def parse(cls, text: str) -> Version:
        m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(.*)", text.strip())
        if not m:
            raise ValueError(f"not an httpd version (X.Y.Z): {text!r}")
        return cls(int(m[1]), int(m[2]), int(m[3]), m[4])

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}{self.add}"


# The httpd apachetune's tables were taken from (`apache2 -L`, the live start-up oracle).
DEFAULT_VERSION = Version(2, 4, 71)


def at_least(version: Version, text: str) -> bool:
    """`version` is `text` (X.Y.Z) or later."""
    v = Version.parse(text)
    return (version.major, version.minor, version.patch) >= (v.major, v.minor, v.patch)


_BAD_VERSION = ("Version appears to be invalid. It must have the format "
                "major[.minor[.patch]] where major, minor and patch are numbers.")


def _compare(version: Version, text: str) -> int:
    """compare_version(): -1, 0, 1 of the running version against `text` (missing parts are 0)."""
    if not re.fullmatch(r"\d+(?:\.\d*){0,2}", text) or not text:
        raise ConditionError(_BAD_VERSION)
    parts = [int(p) if p else 0 for p in text.split(".")] + [0, 0]
    mine = (version.major, version.minor, version.patch)
    want = tuple(parts[:3])
    return (mine > want) - (mine < want)


def ifversion(raw_args: str, version: Version) -> bool:
    """<IfVersion [[!]op] version>: op is =, ==, <, <=, >, >=, ~ (regex) or /regex/."""
    words = split_words(raw_args + ">")  # httpd's handler sees the '>' too (TAKE123)
    if not 1 <= len(words) <= 3:
        raise ConditionError("<IfVersion takes one, two or three arguments")
    arg1 = words[0]
    arg2 = words[1] if len(words) > 1 else None
    arg3 = words[2] if len(words) > 2 else None
    if arg2 is None:
        arg1, arg2 = "=", arg1
    if arg3 is None and arg2 == ">":
        arg1, arg2, arg3 = "=", arg1, ">"
    if arg2 == "" or (arg3 != ">" and not arg2.endswith(">")):
        raise ConditionError("<IfVersion> directive missing closing '>'")
    value = arg2 if arg3 == ">" else arg2[:-1]
    op = arg1
    reverse = False
    if op.startswith("!"):
        reverse = True
        if len(op) > 1:
            op = op[1:]
    c, rest = op[:1], op[1:]
    if not (rest == "" or (rest == "=" and c != "~")):
        raise ConditionError(f"unrecognized operator '{arg1}'")
    running = str(version)
    if c == "=" and not value.startswith("/"):
        match = _compare(version, value) == 0
    elif c in ("=", "~"):
        pattern = value
        if c == "=":
            if len(value) < 2 or not value.endswith("/"):
                raise ConditionError("Missing delimiting / of regular expression.")
            pattern = value[1:-1]
        try:
            match = re.search(pattern, running) is not None
        except re.error:
            raise ConditionError("Unable to compile regular expression") from None
    elif c == "<":
        cmp = _compare(version, value)
        match = cmp == -1 or (rest == "=" and cmp == 0)
    elif c == ">":
        cmp = _compare(version, value)
        match = cmp == 1 or (rest == "=" and cmp == 0)
    else:
        raise ConditionError(f"unrecognized operator '{arg1}'")
    return match != reverse
