"""A rendered configuration: the output of `httpd -t -D DUMP_CONFIG` (mod_info), the live
server's own view, like `nginx -T | gixy -`.

httpd prints every directive it kept after Include, Define/${VAR}, <IfModule>, <IfDefine> and
<IfVersion>, each under a `# N:` comment giving its line and `# In file: F` comments giving the
file. LoadModule lines are not printed, so the modules are taken from the directives shown
(httpd accepted each one, so a module defining it was loaded) and the MPM from its directives
(or --mpm).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from apachetune.config.directives import lookup
from apachetune.mpm.directives import canonical

_IN_FILE = re.compile(r"^\s*# In file: (.+?)\s*$")
_AT_LINE = re.compile(r"^\s*#\s*(\d+):\s*$")
_FIRST_WORD = re.compile(r"^\s*<?/?([^\s>]+)")

# Directives only one MPM reads (ThreadsPerChild & co. are worker's and event's alike).
_ONLY = {"AsyncRequestWorkerFactor": "event", "MinSpareServers": "prefork", "MaxSpareServers": "prefork"}
_THREADED = {"ThreadsPerChild", "ThreadLimit", "MinSpareThreads", "MaxSpareThreads"}


@dataclass
class Dump:
    text: str
    origins: dict[int, tuple[str, int]]  # dump line -> (file, line) httpd read it from
    modules: list[str]  # modules whose directives appear
    mpm: str | None  # the MPM its directives imply (event when none is shown), None when they conflict
    mpm_reason: str


def close_empty_sections(text: str) -> str:
    """mod_info prints an empty section's opening tag and no closing one (`<Location /x>` with
    nothing in it); the dump's indentation (two spaces a level) says where each section ends."""
    out: list[str] = []
    held: list[str] = []  # comments (`# N:`) belong to the line after them, after any closing tag
    open_sections: list[tuple[int, str]] = []  # (indent, name)
    for line in text.splitlines():
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            held.append(line)
            continue
        indent = len(line) - len(stripped)
        closing = stripped.startswith("</")
        while open_sections and indent < open_sections[-1][0] + 2 and not (
                closing and indent == open_sections[-1][0]):
            at, name = open_sections.pop()
            out.append(" " * at + f"</{name}>")
        if closing and open_sections:
            open_sections.pop()
        elif stripped.startswith("<") and not closing:
            first = _FIRST_WORD.match(stripped)
            open_sections.append((indent, first.group(1) if first else stripped))
        out.extend(held)
        held = []
        out.append(line)
    out.extend(" " * at + f"</{name}>" for at, name in reversed(open_sections))
    out.extend(held)
    return "\n".join(out) + "\n"


def read_dump(text: str) -> Dump:
    text = close_empty_sections(text)
    origins: dict[int, tuple[str, int]] = {}
    modules: set[str] = set()
    mpms: set[str] = set()
    threaded = False
    current_file: str | None = None
    pending: int | None = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _IN_FILE.match(line)
        if m:
            current_file = m.group(1)
            continue
        m = _AT_LINE.match(line)
        if m:
            pending = int(m.group(1))
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if pending is not None and current_file is not None:
            origins[number] = (current_file, pending)
        pending = None
        word = _FIRST_WORD.match(line)
        if word is None or line.lstrip().startswith("</"):
            continue
        name = ("<" if line.lstrip().startswith("<") else "") + word.group(1)
        spec = lookup(name)
        if spec is not None and not any(m.startswith("mpm_") for m in spec.modules):
            modules.update(spec.modules)
        canon = canonical(name)
        if canon in _ONLY:
            mpms.add(_ONLY[canon])
        threaded |= canon in _THREADED
    if len(mpms) == 1:
        mpm = mpms.pop()
        reason = f"its {mpm}-only directives"
    elif threaded and not mpms:
        mpm, reason = "event", "thread directives (worker's and event's alike): event assumed, --mpm worker if not"
    elif not mpms:
        # Every running httpd has an MPM; with none of its settings shown, its defaults are all
        # that matter, and Listen & co. are every MPM's.
        mpm, reason = "event", "no MPM directive in the dump: event (httpd's default) assumed, --mpm to choose"
    else:
        mpm, reason = None, f"directives of several MPMs ({', '.join(sorted(mpms))}): --mpm to choose"
    return Dump(text, origins, sorted(modules), mpm, reason)
