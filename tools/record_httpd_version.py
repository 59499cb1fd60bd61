"""Record what one httpd build prints, as facts for the version-aware model's tests.

    tools/build_httpd.sh 2.4.37 /tmp/httpd-2.4.37
    .venv/bin/python tools/record_httpd_version.py /tmp/httpd-2.4.37

writes fixtures/httpd-versions/2.4.37.json: the version, `-L`'s directives with every module the
build has loaded (once per MPM), and `-t -e info`'s stderr for a fixed, generated set of MPM
sections (the same cases for every version, so versions can be compared line by line). Paths
of the scratch directory are replaced by @ROOT@. Nothing of httpd's source is recorded.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "fixtures" / "httpd-versions"
sys.path.insert(0, str(ROOT / "tests"))
from mpm_cases import EDGE, NAMES  # noqa: E402  (the values the live oracle tries too)

# Cases every version must get: each check of each MPM fires in at least one.
FIXED = {
    "prefork": [[["ServerLimit", "200001"]], [["ServerLimit", "0"], ["MaxRequestWorkers", "0"],
                ["StartServers", "0"], ["MinSpareServers", "-1"]], [["ServerLimit", "100"]],
                [["MaxRequestWorkers", "300"], ["ServerLimit", "four"]], [["MaxClients", "500"]],
                [["MaxRequestsPerChild", "10"], ["MaxClients", "5"], ["ListenBacklog", "0"]],
                [["StartServers", "-1"]], [["MinSpareServers", "0"], ["MaxSpareServers", "0"]]],
    "worker": [[["ServerLimit", "20001"], ["ThreadLimit", "20001"], ["ThreadsPerChild", "20001"]],
               [["ServerLimit", "0"], ["ThreadLimit", "0"], ["ThreadsPerChild", "0"], ["StartServers", "0"],
                ["MinSpareThreads", "0"]], [["ThreadsPerChild", "30"], ["MaxRequestWorkers", "20"]],
               [["ThreadsPerChild", "30"], ["MaxRequestWorkers", "400"], ["ServerLimit", "10"]],
               [["MaxClients", "20"], ["maxclients", "300"], ["MaxRequestsPerChild", "0"]],
               [["ThreadsPerChild", "64"], ["ThreadLimit", "32"]], [["StartServers", "-1"]]],
    "event": [[["ServerLimit", "20001"], ["ThreadLimit", "100001"], ["ThreadsPerChild", "100001"]],
              [["ThreadLimit", "100000"], ["ThreadsPerChild", "99999"]], [["ThreadsPerChild", "30"]],
              [["ThreadsPerChild", "64"], ["ThreadLimit", "32"], ["MaxRequestWorkers", "12abc"]],
              [["AsyncRequestWorkerFactor", "0"]], [["AsyncRequestWorkerFactor", "1.5x"]],
              [["AsyncRequestWorkerFactor", "0.01"]], [["MaxClients", "60"]],
              [["ServerLimit", "0"], ["StartServers", "0"], ["MinSpareThreads", "-3"]],
              [["StartServers", "-1"]]],
}
RANDOM_CASES = 60  # per MPM


def cases() -> list[dict]:
    rng = random.Random(2024)
    out = []
    for mpm in ("prefork", "worker", "event"):
        for directives in FIXED[mpm]:
            out.append({"mpm": mpm, "directives": directives})
        for _ in range(RANDOM_CASES):
            n = rng.randint(0, 7)
            directives = [[rng.choice(NAMES[mpm]),
                           rng.choice(EDGE) if rng.random() < 0.6 else str(rng.randint(-10, 1000))]
                          for _ in range(n)]
            out.append({"mpm": mpm, "directives": directives})
    return out


def run(httpd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(httpd), *args], capture_output=True, text=True, timeout=60)


def record_case(httpd: Path, prefix: Path, case: dict) -> dict:
    body = "".join(f'{name} "{value}"\n' for name, value in case["directives"])
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "httpd.conf"
        conf.write_text(
            f"ServerRoot {prefix}\nServerName localhost\nErrorLog {tmp}/error.log\n"
            f"PidFile {tmp}/httpd.pid\nListen 127.0.0.1:1\n"
            f"LoadModule mpm_{case['mpm']}_module modules/mod_mpm_{case['mpm']}.so\n{body}")
        proc = run(httpd, "-t", "-e", "info", "-f", str(conf))
        stderr = proc.stderr.replace(tmp, "@ROOT@").replace(str(prefix), "@PREFIX@")
    # A logged line's time and pid change from run to run: kept as `[module:level] AHnnnnn: text`.
    lines = [_LOG_PREFIX.sub(r"\1 ", line) for line in stderr.splitlines()]
    return {**case, "returncode": proc.returncode, "stderr": lines}


_LOG_PREFIX = re.compile(r"^\[[^\]]*\] (\[[^\]]*\]) \[pid [^\]]*\] ")


_L_ENTRY = re.compile(r"^(\S+) \(([^)]+)\)$")


def directives(httpd: Path, prefix: Path) -> dict[str, str]:
    """Every directive `-L` lists with each module the build installed loaded (its own
    httpd.conf's LoadModule lines, in its order), once per MPM: name -> module source file."""
    lines = (prefix / "conf" / "httpd.conf").read_text().splitlines()
    loads = [re.sub(r"^#\s*", "", line) for line in lines if re.match(r"^#?\s*LoadModule\s", line)]
    loads = [line for line in loads if "mod_mpm_" not in line
             and (prefix / line.split()[2]).is_file()]  # not the commented example mod_foo
    found: dict[str, str] = {}
    for mpm in ("prefork", "worker", "event"):
        with tempfile.TemporaryDirectory() as tmp:
            conf = Path(tmp) / "httpd.conf"
            conf.write_text(f"ServerRoot {prefix}\nLoadModule mpm_{mpm}_module modules/mod_mpm_{mpm}.so\n"
                            + "\n".join(loads) + "\n")
            proc = run(httpd, "-L", "-f", str(conf))
            if proc.returncode != 0:
                raise SystemExit(f"httpd -L failed with {mpm}:\n{proc.stderr}")
        for line in proc.stdout.splitlines():
            m = _L_ENTRY.match(line)
            if m:
                found.setdefault(m.group(1), m.group(2))
    return dict(sorted(found.items(), key=lambda kv: kv[0].lower()))


def main() -> None:
    prefix = Path(sys.argv[1]).resolve()
    httpd = prefix / "bin" / "httpd"
    version = re.search(r"Apache/(\d+\.\d+\.\d+)", run(httpd, "-v").stdout).group(1)
    record = {
        "version": version,
        "how": "tools/build_httpd.sh + tools/record_httpd_version.py (Debian 12 APR 1.7, gcc)",
        "compiled_in": [m.strip() for m in run(httpd, "-l").stdout.splitlines()[1:]],
        "directives": directives(httpd, prefix),
        "startup": [record_case(httpd, prefix, case) for case in cases()],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{version}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{path}: {len(record['directives'])} directives, {len(record['startup'])} start-up cases")


if __name__ == "__main__":
    main()
