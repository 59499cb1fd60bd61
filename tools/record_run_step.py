"""Record what one httpd build's run step really sets, as facts for the version-aware model.

    tools/build_httpd.sh 2.4.29 /tmp/httpd-2.4.29
    .venv/bin/python tools/record_run_step.py /tmp/httpd-2.4.29 [...]

`httpd -t` stops before the MPM's run step (prefork_run, worker_run, event_run), where httpd
silently raises StartServers, the spare bounds and the process limit to the listener buckets'
floors. So each case is started for real on 127.0.0.1 (root, children as nobody), and once its
children are up gdb reads the MPM's own variables from the parent (`ap_daemons_to_start`,
`min_spare_threads`, ...: static symbols of mod_mpm_*.so, present in a `make install` build;
Debian's stripped apache2 has none, so 2.4.71 is not recorded this way). The server is then
stopped. Adds "run_step" to fixtures/httpd-versions/<version>.json: the CPU count (buckets are
online CPUs / ListenCoresBucketsRatio), each case's directives and the values read.
Needs root, gdb, a free loopback port; about 2 s a case.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "fixtures" / "httpd-versions"

# The MPM's variables the run step may change, by the directive each one holds.
VARIABLES = {
    "prefork": {"StartServers": "ap_daemons_to_start", "MinSpareServers": "ap_daemons_min_free",
                "MaxSpareServers": "ap_daemons_max_free", "ProcessLimit": "ap_daemons_limit",
                "ServerLimit": "server_limit"},
    "threaded": {"StartServers": "ap_daemons_to_start", "MinSpareThreads": "min_spare_threads",
                 "MaxSpareThreads": "max_spare_threads", "ProcessLimit": "ap_daemons_limit",
                 "MaxRequestWorkers": "max_workers", "ThreadsPerChild": "threads_per_child"},
}

# Sections that reach each floor of the run step (ratio 1: one bucket per online CPU).
CASES = {
    "prefork": [
        [],
        [["StartServers", "1"], ["MinSpareServers", "1"], ["MaxSpareServers", "1"]],
        [["StartServers", "1"], ["MinSpareServers", "1"], ["MaxSpareServers", "1"],
         ["ListenCoresBucketsRatio", "1"]],
        [["MaxRequestWorkers", "1"], ["StartServers", "5"], ["ListenCoresBucketsRatio", "1"]],
        [["MinSpareServers", "4"], ["MaxSpareServers", "3"]],
        [["StartServers", "20"], ["MaxRequestWorkers", "8"], ["MinSpareServers", "2"], ["MaxSpareServers", "4"]],
    ],
    "threaded": [
        [],
        [["MinSpareThreads", "1"], ["MaxSpareThreads", "1"]],
        [["MinSpareThreads", "1"], ["MaxSpareThreads", "1"], ["ListenCoresBucketsRatio", "1"]],
        [["MinSpareThreads", "25"], ["MaxSpareThreads", "30"], ["ListenCoresBucketsRatio", "1"]],
        [["MaxRequestWorkers", "25"], ["StartServers", "1"], ["ListenCoresBucketsRatio", "1"]],
        [["StartServers", "10"]],
        [["ThreadsPerChild", "10"], ["MinSpareThreads", "5"], ["MaxSpareThreads", "12"],
         ["ListenCoresBucketsRatio", "1"]],
        [["ThreadsPerChild", "10"], ["MaxRequestWorkers", "40"], ["MinSpareThreads", "35"],
         ["MaxSpareThreads", "36"]],
    ],
}


# Sections whose checks warn: after a graceful restart (SIGUSR1) httpd logs the second pass's
# version of each warning in its ErrorLog (-t and the first start print the first pass's).
RESTART_CASES = {
    "prefork": [[["MaxRequestWorkers", "300"]],
                [["StartServers", "0"], ["MinSpareServers", "0"], ["MaxSpareServers", "0"]]],
    "threaded": [[["ThreadsPerChild", "64"], ["ThreadLimit", "32"], ["MaxRequestWorkers", "401"],
                  ["MinSpareThreads", "0"]],
                 [["ThreadsPerChild", "30"], ["MaxRequestWorkers", "20"]],
                 [["MaxRequestWorkers", "600"]]],
}
_LOGGED = re.compile(r"^\[[^\]]*\] \[mpm_\w+:warn\] \[pid [^\]]*\] (AH\d{5}: .*)$")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_variables(pid: int, names: list[str]) -> dict[str, int]:
    names = [*names, "active_daemons_limit"] if "ap_daemons_limit" in names else names
    cmds = []
    for name in names:
        cmds += ["-ex", f"printf \"{name}=%d\\n\", *(int*)&{name}"]
    proc = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", *cmds], capture_output=True, text=True,
                          timeout=60)
    found = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)=(-?\d+)$", proc.stdout, re.M)}
    if "active_daemons_limit" in found:  # event's name for it from 2.4.26
        found.setdefault("ap_daemons_limit", found["active_daemons_limit"])
    missing = [n for n in names if n not in found and n != "active_daemons_limit"]
    if missing:
        raise SystemExit(f"gdb could not read {missing}:\n{proc.stdout}\n{proc.stderr}")
    return found


def children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def stop(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def second_pass(proc: subprocess.Popen, log: Path) -> list[str]:
    """The MPM's warnings a graceful restart writes to the ErrorLog."""
    os.kill(proc.pid, signal.SIGUSR1)
    deadline = time.monotonic() + 20
    while log.read_text(errors="replace").count("resuming normal operations") < 2:
        if time.monotonic() > deadline:
            raise SystemExit(f"no graceful restart within 20 s:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)
    # Only the restart's pass: in the foreground httpd also logs the start's second pass, before
    # its first "resuming normal operations".
    text = log.read_text(errors="replace")
    text = text[text.index("resuming normal operations"):]
    return [m.group(1) for line in text.splitlines() if (m := _LOGGED.match(line))]


def record_case(httpd: Path, prefix: Path, mpm: str, directives: list[list[str]],
                restart: bool = False) -> dict | None:
    """The case's values, or None when this version does not know one of its directives
    (ListenCoresBucketsRatio came with 2.4.17)."""
    kind = "prefork" if mpm == "prefork" else "threaded"
    body = "".join(f"{name} {value}\n" for name, value in directives)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        conf = Path(tmp) / "httpd.conf"
        conf.write_text(
            f"ServerRoot {prefix}\nServerName localhost\nErrorLog {tmp}/error.log\n"
            f"PidFile {tmp}/httpd.pid\nListen 127.0.0.1:{free_port()}\n"
            f"LoadModule mpm_{mpm}_module modules/mod_mpm_{mpm}.so\n"
            f"LoadModule unixd_module modules/mod_unixd.so\n"
            f"LoadModule authz_core_module modules/mod_authz_core.so\n"
            f"User nobody\nGroup nogroup\n{body}")
        proc = subprocess.Popen([str(httpd), "-D", "FOREGROUND", "-f", str(conf)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            deadline = time.monotonic() + 20
            while not children(proc.pid):  # the run step is done before the first fork
                if proc.poll() is not None and b"Invalid command" in proc.stderr.read():
                    return None
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{httpd} did not start:\n{proc.stderr.read().decode()}"
                                     f"{Path(tmp, 'error.log').read_text() if Path(tmp, 'error.log').exists() else ''}")
                time.sleep(0.05)
            values = read_variables(proc.pid, list(VARIABLES[kind].values()))
            logged = second_pass(proc, Path(tmp) / "error.log") if restart else None
        finally:
            stop(proc)
    case = {"mpm": mpm, "directives": directives,
            "values": {directive: values[var] for directive, var in VARIABLES[kind].items()}}
    if logged is not None:
        case["error_log"] = logged
    return case


def record(prefix: Path) -> Path:
    httpd = prefix / "bin" / "httpd"
    version = re.search(r"Apache/(\d+\.\d+\.\d+)",
                        subprocess.run([str(httpd), "-v"], capture_output=True, text=True).stdout).group(1)
    path = OUT / f"{version}.json"
    data = json.loads(path.read_text())
    cases = [record_case(httpd, prefix, mpm, d) for mpm in ("prefork", "worker", "event")
             for d in CASES["prefork" if mpm == "prefork" else "threaded"]]
    cases += [record_case(httpd, prefix, mpm, d, restart=True) for mpm in ("prefork", "worker", "event")
              for d in RESTART_CASES["prefork" if mpm == "prefork" else "threaded"]]
    cases = [c for c in cases if c is not None]
    data["run_step"] = {"how": "tools/record_run_step.py (the MPM's variables read with gdb once the "
                               "children are forked)", "online_cpus": os.cpu_count(), "cases": cases}
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def main() -> None:
    for arg in sys.argv[1:]:
        path = record(Path(arg).resolve())
        print(f"{path}: run step of {len(json.loads(path.read_text())['run_step']['cases'])} cases")


if __name__ == "__main__":
    main()
