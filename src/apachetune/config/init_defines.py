"""The `-D` names a distribution's start-up script gives httpd, read from its settings file.

Some distributions switch parts of the tree on from outside it. Debian's apache2ctl (which its
systemd unit runs) starts `apache2 ${APACHE_ARGUMENTS}`, exported from envvars (empty unless the
operator sets it: "-D SSL"). Gentoo's OpenRC script runs
`apache2 ${APACHE2_OPTS} -d SERVERROOT -f /etc/apache2/httpd.conf`, APACHE2_OPTS coming from
/etc/conf.d/apache2 (installed as "-D DEFAULT_VHOST -D INFO", with "-D SSL -D SSL_DEFAULT_VHOST"
and "-D LANGUAGE" when built with those); its httpd.conf loads modules inside `<IfDefine INFO>`,
`<IfDefine SSL>`, ..., and its modules.d and vhosts.d files sit in such blocks. SUSE's
start_apache2 gives `-D` for each word of APACHE_SERVER_FLAGS in /etc/sysconfig/apache2. Without
them a reading of the tree is not the server's: its default vhost, mod_info, SSL are missing.

Debian's are read wherever envvars is (beside the main file, or --env-file). Gentoo's and SUSE's
only for the file those scripts start, /etc/apache2/httpd.conf (under --root), so a copy of a
tree elsewhere is never read with this machine's settings. Each file is read as envvars is,
without a shell (config/envvars.py).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from apachetune.config import observed
from apachetune.config.envvars import read_envvars
from apachetune.errors import ResolveError

MAIN_FILE = "etc/apache2/httpd.conf"
# (settings file, its variable, whether the variable holds httpd options or bare define names)
SETTINGS = (("etc/conf.d/apache2", "APACHE2_OPTS", True),  # Gentoo (OpenRC)
            ("etc/sysconfig/apache2", "APACHE_SERVER_FLAGS", False))  # SUSE


@dataclass(frozen=True)
class InitDefines:
    names: tuple[str, ...]
    file: str  # the settings file they were read from
    variable: str

    def to_json(self) -> dict[str, object]:
        return {"names": list(self.names), "file": self.file, "variable": self.variable}

    def describe(self) -> str:
        return f"{' '.join(f'-D {n}' for n in self.names)}, as {self.variable} in {self.file} gives them"


def init_defines(main_file: str, sysroot: str | None = None) -> InitDefines | None:
    """The defines the start-up script would pass when `main_file` is the one it starts; None
    when it is another file, or no settings file is there, or it gives none."""
    root = os.path.abspath(sysroot) if sysroot else "/"
    if os.path.realpath(main_file) != os.path.realpath(os.path.join(root, MAIN_FILE)):
        return None
    for relative, variable, options in SETTINGS:
        path = os.path.join(root, relative)
        if not observed.isfile(path):
            continue
        try:
            value = read_envvars(path, base={}).get(variable, "")
        except ResolveError:  # unreadable: the tree is read without them
            continue
        names = tuple(_names(value, options))
        return InitDefines(names, path, variable) if names else None
    return None


def arguments_defines(exported: dict[str, str], envvars: str) -> InitDefines | None:
    """The -D names of APACHE_ARGUMENTS in Debian's envvars (already read: `exported`); None
    when it gives none."""
    names = tuple(_names(exported.get("APACHE_ARGUMENTS", ""), options=True))
    return InitDefines(names, os.fspath(envvars), "APACHE_ARGUMENTS") if names else None


def _names(value: str, options: bool) -> list[str]:
    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    names: list[str] = []
    if options:  # httpd's own options: "-D NAME" or "-DNAME"; others (-e, -E FILE) pass by
        for i, word in enumerate(words):
            if word == "-D" and i + 1 < len(words):
                names.append(words[i + 1])
            elif word.startswith("-D") and len(word) > 2:
                names.append(word[2:])
    else:  # SUSE: each word a name, a leading -D allowed
        names = [w[2:] if w.startswith("-D") else w for w in words if w != "-D"]
    return list(dict.fromkeys(n for n in names if n))
