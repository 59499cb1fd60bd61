"""Reading Debian's `envvars`, the shell file apache2ctl sources before starting httpd.

It is a small POSIX shell script: assignments (`export NAME=value`,
`NAME=${NAME:-default}`), `unset`, comments, and an `if` that derives SUFFIX
from APACHE_CONFDIR. We evaluate exactly that subset, with no shell: every line
we do not understand is skipped, never executed.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from apachetune.config import observed
from apachetune.errors import ResolveError

_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_PARAM = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _expand(value: str, env: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        if name in env and env[name] != "":
            return env[name]
        default = m.group(2)
        return _expand(default, env) if default is not None else env.get(name, "")

    return _PARAM.sub(sub, value)


def read_envvars(path: str | os.PathLike[str], base: dict[str, str] | None = None,
                 confdir: str | None = None) -> dict[str, str]:
    """The environment apache2ctl would give httpd after sourcing `path`.

    `base` is the starting environment (default: empty, so results do not depend
    on the caller's shell); APACHE_CONFDIR defaults to the file's directory, which
    is what Debian's derivation of SUFFIX (apache2-NAME -> -NAME) keys on.
    """
    env = dict(base or {})
    directory = Path(path).resolve().parent
    env.setdefault("APACHE_CONFDIR", confdir or str(directory))
    # Debian's `if` block: SUFFIX is "-NAME" for a multi-instance /etc/apache2-NAME, else "".
    # We compute it here and skip the shell's if/fi, which we do not evaluate.
    if "SUFFIX" not in env:
        base_name = Path(env["APACHE_CONFDIR"]).name
        env["SUFFIX"] = "-" + base_name[len("apache2-"):] if base_name.startswith("apache2-") else ""
    depth = 0
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:  # a path given by hand (--env-file) that is not there, a directory, unreadable
        raise ResolveError(f"envvars file {os.fspath(path)}: {e.strerror or e}") from None
    observed.file_read(os.fspath(path))
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word = line.split()[0].rstrip(";")
        if word in ("if", "case", "while", "for"):
            depth += 1
            continue
        if word in ("fi", "esac", "done"):
            depth = max(0, depth - 1)
            continue
        if depth:
            continue
        if line.startswith("unset "):
            for name in line.split()[1:]:
                env.pop(name, None)
            continue
        m = _ASSIGN.match(line)
        if not m:
            continue  # if/fi/case and anything else: not evaluated
        name, rhs = m.groups()
        try:
            parts = shlex.split(rhs, comments=True, posix=True)
        except ValueError:
            continue
        value = parts[0] if parts else ""
        # Single-quoted text is literal in sh; everything else is expanded.
        if not rhs.lstrip().startswith("'"):
            value = _expand(value, env)
        env[name] = value
    return env
