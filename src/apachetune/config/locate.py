"""Finding the main configuration file when none is given: what the installed httpd says
(`-V`: HTTPD_ROOT and SERVER_CONFIG_FILE), else where each distribution puts it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from apachetune import httpd

# Where each layout keeps its main file, the most common first.
KNOWN_MAIN_FILES = (
    ("/etc/apache2/apache2.conf", "Debian and Ubuntu"),
    ("/etc/httpd/conf/httpd.conf", "RHEL, Fedora, CentOS, Rocky, Alma, Arch"),
    ("/etc/apache2/httpd.conf", "Alpine, SUSE and Gentoo"),
    ("/usr/local/apache2/conf/httpd.conf", "the official httpd image and source builds"),
    ("/usr/local/etc/apache24/httpd.conf", "FreeBSD"),
    ("/opt/homebrew/etc/httpd/httpd.conf", "Homebrew (Apple silicon)"),
    ("/usr/local/etc/httpd/httpd.conf", "Homebrew (Intel)"),
)

_DEFINE = re.compile(r'^\s*-D\s+(\w+)="([^"]*)"', re.M)


def from_httpd_v() -> str | None:
    """HTTPD_ROOT/SERVER_CONFIG_FILE of the installed httpd's -V, when that file exists."""
    text = httpd.query("-V")
    if text is None:
        return None
    defines = dict(_DEFINE.findall(text))
    conf = defines.get("SERVER_CONFIG_FILE")
    if not conf:
        return None
    path = conf if os.path.isabs(conf) else os.path.join(defines.get("HTTPD_ROOT", "/"), conf)
    return path if os.path.isfile(path) else None


def find_main_file(root: str = "/") -> tuple[str, str] | None:
    """(path, how it was found), or None. `root` prefixes the known locations (tests)."""
    if root == "/":
        found = from_httpd_v()
        if found:
            return found, f"from `{os.path.basename(httpd.binary() or 'httpd')} -V`"
    for path, layout in KNOWN_MAIN_FILES:
        candidate = Path(root) / path.lstrip("/")
        if candidate.is_file():
            return str(candidate), f"the usual place on {layout}"
    return None
