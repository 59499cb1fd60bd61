"""A small httpd event server of a given version on 127.0.0.1, for the scripts that measure
version differences (tools/measure_event_limit.py, benchmarks/crowd_versions.py).

VERSION is 2.4.71 for the installed apache2 (Debian's), else a build of that tag made by
tools/build_httpd.sh in /tmp/httpd-VERSION. The server has a static index.html and the MPM
directives given, nothing else: no mod_status or mod_lua, which older builds may lack."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from apachetune.validate.mpmd_server import free_port  # noqa: E402
from apachetune.validate.processes import wait_until_serving  # noqa: E402

INSTALLED = "2.4.71"


def paths(version: str) -> tuple[str, str]:
    """The httpd binary and its modules directory."""
    if version == INSTALLED:
        return "/usr/sbin/apache2", "/usr/lib/apache2/modules"
    return f"/tmp/httpd-{version}/bin/httpd", f"/tmp/httpd-{version}/modules"


def start(version: str, directives: dict) -> tuple[subprocess.Popen, int]:
    """Start it in the foreground (its own process group: stop it with stop_group) and return
    once it serves and its children's workers have started."""
    exe, mods = paths(version)
    port = free_port()
    tmp = Path(tempfile.mkdtemp(prefix="event-build-"))
    (tmp / "htdocs").mkdir()
    (tmp / "htdocs" / "index.html").write_text("hi\n")
    os.chmod(tmp, 0o755)  # the children run as nobody
    os.chmod(tmp / "htdocs", 0o755)
    loads = "".join(f"LoadModule {m}_module {mods}/mod_{m}.so\n" for m in ("mpm_event", "authz_core", "unixd")
                    if Path(f"{mods}/mod_{m}.so").exists())  # (a build may have some compiled in)
    section = "".join(f"{k} {v}\n" for k, v in directives.items())
    (tmp / "httpd.conf").write_text(f"ServerRoot {tmp}\n{loads}ServerName localhost\nListen 127.0.0.1:{port}\n"
                                    f"PidFile {tmp}/httpd.pid\nErrorLog {tmp}/error_log\nDocumentRoot {tmp}/htdocs\n"
                                    f"User nobody\nGroup nogroup\n{section}")
    p = subprocess.Popen([exe, "-f", str(tmp / "httpd.conf"), "-D", "FOREGROUND"], start_new_session=True,
                         stderr=subprocess.DEVNULL)
    wait_until_serving(p, f"http://127.0.0.1:{port}/index.html", 10)
    time.sleep(1.5)  # the children's workers all started
    return p, port
