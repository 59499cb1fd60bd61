"""What is put under load: the bundled mpmd, or a real httpd, started from an MPM section in a
temporary directory on a free loopback port, and always stopped (Ctrl-C included)."""

from __future__ import annotations

import shutil
import tempfile
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import psutil

from apachetune import httpd
from apachetune.errors import ApachetuneError
from apachetune.validate.mpmd_server import MpmdServer, free_port
from apachetune.validate.mpmd_server import binary as mpmd_binary
from apachetune.validate.processes import (
    TOKEN_HEADER,
    await_start,
    new_token,
    stop_group,
)
from apachetune.validate.section import directive_line

# /app/sleep?ms=N&kb=K as in mpmd: allocate K KiB in one block, as an application builds a
# page or a result, and hold it for the N ms of service time (whatever signal arrives meanwhile). Lua builds a long string in a
# buffer and copies it, so a request holds about 2 x K while it sleeps: validate does not assume
# K, it measures what a busy worker holds (plans.busy_worker_mib).
SLEEP_LUA = """function handle(r)
  local args = r:parseargs()
  local ms = tonumber(args["ms"]) or 0
  local kb = math.floor(tonumber(args["kb"]) or 0)
  local held = kb > 0 and string.rep("x", kb * 1024) or ""
  -- a signal ends usleep early (prefork's children take apachectl graceful's SIGUSR1 in the
  -- thread that sleeps): sleep again until the request's time is up
  local deadline = r:clock() + ms * 1000
  while ms > 0 do
    local left = deadline - r:clock()
    if left <= 0 then break end
    r.usleep(left)
  end
  r.content_type = "text/plain"
  r:puts(#held >= 0 and "ok\\n" or "")
  return apache2.OK
end
"""


class TargetError(ApachetuneError):
    pass


class Target:
    host = "127.0.0.1"
    port: int
    name: str
    # What a graceful restart's re-read of the configuration takes before the parent looks at its
    # children again (a child that ended its request meanwhile is replaced at once); None: not
    # known (httpd's depends on its modules and the machine)
    reread_s: float | None = None

    def status(self) -> dict[str, str]:
        try:
            text = urllib.request.urlopen(f"http://{self.host}:{self.port}/server-status?auto", timeout=5).read()
        except OSError:
            return {}
        return dict(line.split(": ", 1) for line in text.decode().splitlines() if ": " in line)

    def parent(self) -> psutil.Process:
        """The server's parent process (mpmd's or httpd's), whose children are the workers."""
        return psutil.Process(self.proc.pid)

    def pids(self) -> list[int]:
        """The parent's pid and its descendants'. Read from /proc/PID/task/PID/children where the
        kernel has it (the servers here fork from their main thread): a validation run asks ten
        times a second, and psutil's way reads every process's stat on the machine."""
        pid = self.proc.pid
        if Path(f"/proc/{pid}/task/{pid}/children").exists():
            return _descendants(pid)
        try:
            parent = psutil.Process(pid)
            return [parent.pid] + [c.pid for c in parent.children(recursive=True)]
        except psutil.Error:
            return []


def _descendants(pid: int) -> list[int]:
    """`pid` and the processes its main thread forked, and theirs ([] once `pid` is gone)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            if p == pid:
                return []
            continue  # a child that exited since its parent's list was read
        out.append(p)
        todo += kids
    return out


class MpmdTarget(Target):
    reread_s = 0.010  # RESTART_MS in maintain.c

    def __init__(self, mpm: str, directives: dict, wrapper: Sequence[str] = ()):
        self.name = f"mpmd {mpm}"
        self.server = MpmdServer(mpm, directives, command=[*wrapper, str(mpmd_binary())] if wrapper else None)
        self.port = self.server.port
        self.docroot = self.server.docroot

    @property
    def proc(self):
        return self.server.proc

    def __enter__(self):
        self.server.__enter__()
        return self

    def __exit__(self, *exc):
        self.server.stop()
        return False


class HttpdTarget(Target):
    def __init__(self, mpm: str, directives: dict, wrapper: Sequence[str] = ()):
        self.wrapper = tuple(wrapper)
        if httpd.binary() is None:
            raise TargetError("--target httpd needs Apache httpd (apache2 or httpd) installed")
        self.name = f"httpd {mpm}"
        self.port = free_port()
        self.tmp = Path(tempfile.mkdtemp(prefix="apachetune-httpd-"))
        self.docroot = Path(tempfile.mkdtemp(prefix="apachetune-docs-"))
        self.docroot.chmod(0o755)
        (self.docroot / "index.html").write_text("hello from httpd\n")
        (self.docroot / "index.html").chmod(0o644)
        (self.tmp / "sleep.lua").write_text(SLEEP_LUA)
        (self.tmp / "sleep.lua").chmod(0o644)
        self.tmp.chmod(0o755)
        body = "\n".join(directive_line(k, v) for k, v in directives.items())
        self.token = new_token()
        (self.tmp / "httpd.conf").write_text(
            f"ServerRoot {self.tmp}\nServerName localhost\nUser nobody\nGroup nogroup\n"
            f"Listen 127.0.0.1:{self.port}\nPidFile {self.tmp}/httpd.pid\nErrorLog {self.tmp}/error.log\n"
            + "".join(httpd.load_module_line(m) + "\n" for m in (f"mpm_{mpm}", "authz_core", "status", "lua", "headers")) +
            f"Header always set {TOKEN_HEADER} {self.token}\n" +
            f"DocumentRoot {self.docroot}\n<Directory {self.docroot}>\n  Require all granted\n</Directory>\n"
            "ExtendedStatus On\n<Location /server-status>\n  SetHandler server-status\n</Location>\n"
            f"LuaMapHandler ^/app/sleep$ {self.tmp}/sleep.lua handle\n{body}\n")
        self.proc = None

    def __enter__(self):
        self.proc = httpd.start_foreground(self.tmp / "httpd.conf", wrapper=self.wrapper)
        # any status will do: httpd is up once it answers
        await_start(self.proc, f"http://127.0.0.1:{self.port}/index.html", 15, name="httpd", error=TargetError,
                    cleanup=self._cleanup, stop=self.__exit__, any_status=True, token=self.token)
        return self

    def __exit__(self, *exc):
        stop_group(self.proc, grace=20)
        self._cleanup()
        return False

    def _cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.docroot, ignore_errors=True)


def model_release(kind: str) -> str | None:
    """The httpd release a target behaves as, for its start-up checks and the simulation: the
    installed httpd's (an older one's event closes and counts otherwise: docs/simulate.md); mpmd
    follows the default, 2.4.71 (None)."""
    return httpd.version() if kind == "httpd" else None


def make_target(kind: str, mpm: str, directives: dict, wrapper: Sequence[str] = ()) -> Target:
    """`wrapper` runs the server under another command (e.g. `taskset -c 0`)."""
    if kind == "mpmd":
        return MpmdTarget(mpm, directives, wrapper)
    if kind == "httpd":
        return HttpdTarget(mpm, directives, wrapper)
    raise TargetError(f"unknown target {kind!r} (mpmd or httpd)")
