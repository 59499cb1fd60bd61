"""An MPM compiled into httpd instead of loaded: what a tree with no MPM LoadModule runs.

httpd refuses to start without an MPM (AH00534) unless one is linked into its binary. Two
setups do that on purpose:

- SUSE builds one binary per MPM (httpd-prefork, httpd-worker, httpd-event; APACHE_MPM in
  /etc/sysconfig/apache2 picks it) and keeps each one's modules in its own directory,
  /usr/lib64/apache2-<mpm>/: the LoadModule paths say which MPM the tree runs.
- A source build configured without --enable-mpms-shared links its MPM in (event on Linux);
  so may any installed httpd: its `-l` lists `prefork.c`, `worker.c` or `event.c`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cache

from apachetune import httpd

_SUSE_MODULE_DIR = re.compile(r"/usr/lib(?:64)?/apache2-(prefork|worker|event)/")
_LISTED = re.compile(r"^\s*(prefork|worker|event)\.c\s*$", re.M)


def compiled_in_mpm(modules: Mapping[str, str]) -> tuple[str, str] | None:
    """(MPM, why) for a tree that loads no MPM, or None when nothing says one is compiled in."""
    for path in modules.values():
        m = _SUSE_MODULE_DIR.search(path)
        if m:
            return m.group(1), (f"compiled into SUSE's httpd-{m.group(1)}: its modules are loaded from "
                                f"{os.path.dirname(path)}/")
    listed = installed_static_mpm()
    if listed:
        return listed, f"compiled into the installed {os.path.basename(httpd.binary() or 'httpd')} (its -l)"
    return None


@cache
def installed_static_mpm() -> str | None:
    """The MPM the installed httpd lists as compiled in (`-l`), if any: asked once a process
    (every tree without an MPM LoadModule asks, and the binary does not change meanwhile)."""
    m = _LISTED.search(httpd.query("-l") or "")
    return m.group(1) if m else None


@cache
def installed_static_modules() -> frozenset[str]:
    """The module files the installed httpd lists as compiled in (`-l`: "mod_so.c", "core.c"...),
    asked once a process; empty without httpd."""
    listed = httpd.query("-l") or ""
    return frozenset(line.strip() for line in listed.splitlines()[1:] if line.strip().endswith(".c"))


def refused_as_built_in(module_id: str, so: str) -> bool:
    """Whether the installed httpd refuses `LoadModule module_id so` as "built-in and can't be
    loaded" (mod_so.c's load_module: a compiled-in mod_X.c is X_module; core.c, http_core.c and
    an MPM's prefork.c are not named so). Judged only for a file in the installed httpd's own
    modules directory: a tree of another build (a source build under /usr/local, another
    distribution's copy) loads these modules on purpose."""
    if not module_id.endswith("_module") or len(module_id) <= len("_module"):
        return False
    if os.path.dirname(os.path.normpath(so)) != str(httpd.modules_dir()):
        return False
    return f"mod_{module_id[:-len('_module')]}.c" in installed_static_modules()
