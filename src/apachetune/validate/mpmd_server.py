"""The bundled C server (src/mpmd): built on first use, started on loopback, always stopped.

`binary()` returns a built mpmd, compiling it with the system `cc` into the cache directory
when the sources are newer than any build there. `MpmdServer(mpm, directives)` writes a
directive file, starts mpmd on a free 127.0.0.1 port in its own session, waits until it
answers, and stops it (SIGTERM, then SIGKILL) on exit, Ctrl-C included.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import urllib.request
from pathlib import Path

from apachetune.errors import ApachetuneError
from apachetune.paths import cache_dir, mpmd_src_dir
from apachetune.validate.processes import (
    await_start,
    new_token,
    stop_group,
)
from apachetune.validate.section import directive_line


def _makefile() -> dict[str, list[str]]:
    """SRCS, HDRS and CFLAGS from src/mpmd/Makefile: the one list of sources and flags, so the
    build on first use is the build `make` does (-Werror included)."""
    found: dict[str, list[str]] = {}
    for line in (mpmd_src_dir() / "Makefile").read_text().splitlines():
        name, op, value = line.partition("+=") if "+=" in line else line.partition("=")
        name = name.strip().rstrip("?").strip()
        if op and name in ("SRCS", "HDRS", "CFLAGS") and not line.startswith("\t"):
            found[name] = (found.get(name, []) if op == "+=" else []) + value.split()
    return found


def sources() -> list[str]:
    make = _makefile()
    return make["SRCS"] + make["HDRS"]


class MpmdError(ApachetuneError):
    pass


def source_digest() -> str:
    """A short hash of mpmd's sources: names its build in the cache, and what its calibration
    (validate/calibration.py) was measured with."""
    h = hashlib.sha1()
    src = mpmd_src_dir()
    for name in sources():
        h.update((src / name).read_bytes())
    return h.hexdigest()[:12]


def binary() -> Path:
    src = mpmd_src_dir()
    local = src / "mpmd"
    if local.exists() and all(local.stat().st_mtime >= (src / n).stat().st_mtime for n in sources()):
        return local  # built by `make`
    out = cache_dir() / f"mpmd-{source_digest()}"
    if out.exists():
        return out
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise MpmdError("building mpmd needs a C compiler (cc); install gcc or clang")
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    make = _makefile()
    cmd = [cc, *make["CFLAGS"], "-o", str(tmp), *[str(src / n) for n in make["SRCS"]]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise MpmdError(f"building mpmd failed:\n{proc.stderr}")
    os.replace(tmp, out)
    return out


def free_port() -> int:
    """A loopback port free to listen on, below the kernel's ephemeral range: a port from that
    range (what binding port 0 gives) can be handed to some client's connect between this check
    and the server's bind, and load generators open thousands of connections (a suite beside
    wrk lost mpmd's start to "Address already in use" so); one below it is never handed out."""
    low = _ephemeral_low()
    draw = random.SystemRandom()
    for _ in range(64):
        port = draw.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use, or TIME_WAIT of an earlier server's connections
            return port
    with socket.socket() as s:  # a range crowded below: the kernel's choice
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ephemeral_low() -> int:
    """The first port of net.ipv4.ip_local_port_range (32768 by default)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return max(2048, int(f.read().split()[0]))
    except (OSError, ValueError, IndexError):
        return 32768


class MpmdServer:
    def __init__(self, mpm: str, directives: dict[str, object] | None = None, docroot: str | None = None,
                 command: list[str] | None = None):
        self.mpm = mpm
        self.command = command  # e.g. [valgrind, ..., mpmd-asan]; default: the built binary
        self.directives = dict(directives or {})
        self.port = free_port()
        self._tmp = tempfile.mkdtemp(prefix="apachetune-mpmd-")
        self.docroot = Path(docroot) if docroot else Path(self._tmp) / "docs"
        if not docroot:
            self.docroot.mkdir()
            (self.docroot / "index.html").write_text("hello from mpmd\n")
        self.conf = Path(self._tmp) / "mpmd.conf"
        self.proc: subprocess.Popen | None = None
        self.token = new_token()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _write_conf(self) -> None:
        lines = [f"Listen 127.0.0.1:{self.port}", f"DocumentRoot {self.docroot}", f"RunToken {self.token}"]
        lines += [directive_line(k, v) for k, v in self.directives.items()]
        self.conf.write_text("\n".join(lines) + "\n")

    def reload(self, directives: dict[str, object]) -> None:
        """Graceful restart (SIGHUP) with new directives, as `apachectl graceful`."""
        self.directives = dict(directives)
        self._write_conf()
        os.kill(self.proc.pid, signal.SIGHUP)

    def __enter__(self) -> MpmdServer:
        self._write_conf()
        cmd = self.command or [str(binary())]
        ready_r, ready_w = os.pipe()  # mpmd -r: told, not polled, when it listens
        try:
            self.proc = subprocess.Popen([*cmd, "-f", str(self.conf), "-m", self.mpm, "-r", str(ready_w)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                                         pass_fds=(ready_w,))
        finally:
            os.close(ready_w)
        try:
            await_start(self.proc, self.url + "/server-status?auto", 10, name="mpmd", error=MpmdError,
                        cleanup=self._cleanup, stop=self.stop, token=self.token, ready_fd=ready_r)
        finally:
            os.close(ready_r)
        return self

    def status(self) -> dict[str, str]:
        text = urllib.request.urlopen(self.url + "/server-status?auto", timeout=5).read().decode()
        return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)

    def stop(self) -> int | None:
        code = stop_group(self.proc)
        self._cleanup()
        return code

    def _cleanup(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __exit__(self, *exc) -> bool:
        self.stop()
        return False
