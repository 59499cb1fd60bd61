"""The one place that knows the real Apache httpd: where its binary and modules live on each
distribution, how to run it (`-t`, `-M`, `-L`, `-S`, `-V`, `-D DUMP_CONFIG`, in the foreground),
and how to read the `AHnnnnn:` messages it prints.

Everything else (generate's check, validate's httpd target, the tools and the tests' oracle)
calls this module; no other module starts httpd.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

# subprocess and shutil (7 ms of imports) are imported where httpd is run, not at import: a lint
# asks only for the installed version, which is remembered in the cache directory.

# Debian and Ubuntu call it apache2; upstream, RHEL, Fedora, Alpine and the official image httpd.
BINARY_NAMES = ("apache2", "httpd")
_SBIN = ("/usr/sbin", "/usr/local/apache2/bin", "/usr/local/sbin")

# Where each distribution installs mod_*.so (the first that holds an MPM module wins).
MODULE_DIRS = (
    "/usr/lib/apache2/modules",  # Debian, Ubuntu
    "/usr/lib64/httpd/modules",  # RHEL, Fedora, CentOS
    "/usr/lib/httpd/modules",  # Arch, 32-bit RHEL
    "/usr/lib64/apache2",  # SUSE
    "/usr/lib/apache2",  # SUSE 32-bit, Alpine
    "/usr/local/apache2/modules",  # upstream `make install`, the official image
)

# The start-up checks of the three MPMs and of the listeners: a change httpd makes silently.
MPM_CODES = frozenset(f"AH{n:05d}" for n in [*range(175, 189), *range(300, 325), *range(497, 522)])

_AH_LINE = re.compile(r"^(?:\[[^\]]*\] )*(?:\S+: )?(AH\d{5}): (.*)$")


def _which(name: str) -> str | None:
    """shutil.which(name) for a plain name on PATH (without importing shutil)."""
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(d or ".", name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None


@cache
def binary() -> str | None:
    """The installed httpd binary, or None."""
    for name in BINARY_NAMES:
        found = _which(name)
        if found:
            return found
        for d in _SBIN:
            if os.access(f"{d}/{name}", os.X_OK):
                return f"{d}/{name}"
    return None


@cache
def modules_dir() -> Path:
    """Where this machine's httpd keeps its modules (Debian's place when none is found)."""
    for d in MODULE_DIRS:
        if any(Path(d, f"mod_mpm_{m}.so").exists() for m in ("event", "worker", "prefork")):
            return Path(d)
    return Path(MODULE_DIRS[0])


def module_path(name: str) -> Path:
    """`event` → …/mod_mpm_event.so is `module_path('mpm_event')`."""
    return modules_dir() / f"mod_{name}.so"


def load_module_line(name: str) -> str:
    """The LoadModule directive for module `name` (e.g. 'mpm_event', 'lua')."""
    return f"LoadModule {name}_module {module_path(name)}"


@cache
def version() -> str | None:
    """The installed httpd's version (`-v`: "Server version: Apache/2.4.71 (Debian)"), or None.
    Every command that reads a configuration asks, so the answer is kept in the cache directory
    for as long as the binary is the same file (path, size, mtime): no httpd run per command."""
    exe = binary()
    if exe is None:
        return None
    try:
        st = os.stat(exe)
    except OSError:
        return None
    import zlib

    from apachetune.paths import cache_dir

    # The file names the binary by a checksum and holds its identity too: a match is exact.
    identity = f"{os.path.realpath(exe)}:{st.st_size}:{st.st_mtime_ns}"
    kept = cache_dir() / f"httpd-version-{zlib.crc32(identity.encode('utf-8', 'surrogateescape')):08x}"
    try:
        said, _, found = kept.read_text().partition("\n")
        if said == identity and found.strip():
            return found.strip()
    except (OSError, UnicodeError):
        pass
    import subprocess

    try:
        out = run("-v", timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Apache/(\d+\.\d+\.\d+)", out)
    if m:
        try:
            tmp = kept.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(f"{identity}\n{m.group(1)}\n")
            os.replace(tmp, kept)
        except OSError:
            pass  # a read-only cache costs one httpd run a command, nothing more
    return m.group(1) if m else None


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """httpd's environment: PATH and the C locale (messages in English), plus `extra`."""
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/bin"), "LANG": "C"}
    env.update(extra or {})
    return env


def run(*args: str, env: Mapping[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run httpd with `args` and capture its output. It gets its own session, so nothing it
    does signals us. Raises FileNotFoundError when httpd is not installed."""
    import subprocess

    exe = binary()
    if exe is None:
        raise FileNotFoundError("Apache httpd (apache2 or httpd) is not installed")
    with _runtime_dir(env) as (env, stand_in, real):
        proc = subprocess.run([exe, *args], capture_output=True, text=True, env=clean_env(env),
                              timeout=timeout, start_new_session=True, stdin=subprocess.DEVNULL)
    if stand_in:  # what httpd prints with the real directory there
        proc.stdout, proc.stderr = proc.stdout.replace(stand_in, real), proc.stderr.replace(stand_in, real)
    return proc


def query(*args: str, timeout: float = 20) -> str | None:
    """The installed httpd's standard output for `args` (`-V`, `-l`), or None when there is no
    httpd or it cannot answer: what it says is a hint, and a broken httpd must not break lint.
    Asked once a process for a binary (its path, size and time: another binary asks again)."""
    exe = binary()
    if exe is None:
        return None
    try:
        st = os.stat(exe)
    except OSError:
        return None
    return _asked(f"{os.path.realpath(exe)}:{st.st_size}:{st.st_mtime_ns}", args, timeout)


@cache
def _asked(identity: str, args: tuple[str, ...], timeout: float) -> str | None:
    import subprocess

    try:
        return run(*args, timeout=timeout).stdout
    except (OSError, subprocess.SubprocessError):
        return None


@dataclass
class ConfigTestRun:
    """What `httpd -t` said about a configuration."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def messages(self) -> list[tuple[str, str]]:
        return ah_messages(self.stderr)

    @property
    def mpm_messages(self) -> list[tuple[str, str]]:
        return [m for m in self.messages if m[0] in MPM_CODES]

    @property
    def output(self) -> str:
        return (self.stdout + self.stderr).strip()


def config_test(main: str | Path, server_root: str | Path | None = None, *, defines: Iterable[str] = (),
                directives: Iterable[str] = (), late_directives: Iterable[str] = (),
                env: Mapping[str, str] | None = None, timeout: float = 60) -> ConfigTestRun:
    """`httpd -t` on `main` (with `-d server_root`, `-D` defines, `-C` directives read before the
    configuration and `-c` ones after it)."""
    args = ["-t"]
    for d in defines:
        args += ["-D", d]
    if server_root is not None:
        args += ["-d", str(server_root)]
    args += ["-f", str(main)]
    for c in directives:
        args += ["-C", c]
    for c in late_directives:
        args += ["-c", c]
    proc = run(*args, env=env, timeout=timeout)
    return ConfigTestRun(proc.returncode, proc.stdout, proc.stderr)


@contextmanager
def _runtime_dir(env: Mapping[str, str] | None) -> Iterator[tuple[Mapping[str, str] | None, str, str]]:
    """Debian's envvars names a runtime directory (APACHE_RUN_DIR, /run/apache2) that apache2ctl
    creates before it starts httpd, and httpd -t refuses a DefaultRuntimeDir that does not
    exist. On a machine where the service never ran (a fresh container) it is missing, which
    says nothing about the configuration: the check runs with an empty temporary directory in
    its place (we create nothing on the system), and its path is put back in what httpd says.
    Yields (env, stand-in path or "", the real path)."""
    real = (env or {}).get("APACHE_RUN_DIR", "")
    if not real or os.path.isdir(real):
        yield env, "", real
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="apachetune-run-") as tmp:
        yield {**(env or {}), "APACHE_RUN_DIR": tmp}, tmp, real


def dump_config(main: str | Path, server_root: str | Path | None = None,
                env: Mapping[str, str] | None = None, defines: Iterable[str] = ()) -> ConfigTestRun:
    """`httpd -t -D DUMP_CONFIG` (and `-D` each of `defines`), with mod_info loaded from the
    command line (the tree is untouched).
    It is loaded after the configuration (`-c`), so the tree's `<IfModule mod_info.c>` sees only
    the modules the tree loads itself. `stdout` is the dump without its trailing "Syntax OK"."""
    result = config_test(main, server_root, defines=["DUMP_CONFIG", *defines], env=env,
                         late_directives=[f"LoadModule info_module {module_path('info')}"])
    result.stdout = result.stdout.replace("Syntax OK\n", "")
    return result


def start_foreground(conf: str | Path, *, stderr: int | None = -1, wrapper: Iterable[str] = ()) -> subprocess.Popen:
    """httpd in the foreground (`-D FOREGROUND`), in its own session so that its whole
    process group can be stopped (see `validate.processes.stop_group`). `wrapper` runs it under
    another command (e.g. `taskset -c 0`). `stderr`: as Popen's (-1 is subprocess.PIPE)."""
    import subprocess

    exe = binary()
    if exe is None:
        raise FileNotFoundError("Apache httpd (apache2 or httpd) is not installed")
    return subprocess.Popen([*wrapper, exe, "-f", str(conf), "-D", "FOREGROUND"], start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                            env=clean_env())


def ah_messages(stderr: str) -> list[tuple[str, str]]:
    """(code, text) of every `AHnnnnn: text` line httpd printed, with or without its log prefix."""
    out = []
    for line in stderr.splitlines():
        m = _AH_LINE.match(line.strip())
        if m:
            out.append((m.group(1), m.group(2)))
    return out
