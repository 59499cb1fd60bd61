"""Case study 4 across httpd releases: the seed's event section (StartServers 2,
MaxRequestWorkers 6, ThreadsPerChild 3, AsyncRequestWorkerFactor 50) under `ab -r -k` on a
17-byte file, on the installed httpd or on source builds of the tags.

    HTTPD_LUA=1 tools/build_httpd.sh 2.4.29 /tmp/httpd-2.4.29
    python benchmarks/keepalive_length_versions.py installed
    python benchmarks/keepalive_length_versions.py /tmp/httpd-2.4.29

A fresh httpd a run (1.5 s before the load), `-c 1000 -n 50000` and `-c 200 -n 5000`, on
loopback; prints ab's req/s, failures, Length and Exceptions a line (docs/case-studies.md, 4).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cli_spot_checks  # noqa: E402  (its --prefix: run a build instead of the installed httpd)

from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

LOADS = ((1000, 50000), (200, 5000))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} installed | PREFIX  (one httpd a run: the build's patching is process-wide)")
    which = sys.argv[1]
    if which != "installed":
        cli_spot_checks.use_build(Path(which).resolve())
    section = load_directives(None, "event", max_request_workers=6, threads_per_child=3)
    section.update(StartServers=2, AsyncRequestWorkerFactor=50)
    for clients, n in LOADS:
        with make_target("httpd", "event", dict(section)) as t:
            time.sleep(1.5)
            out = subprocess.run(["ab", "-r", "-k", "-c", str(clients), "-n", str(n),
                                  f"http://127.0.0.1:{t.port}/index.html"], capture_output=True, text=True,
                                 timeout=300).stdout
        rps = re.search(r"Requests per second:\s*([0-9.]+)", out)
        failed = re.search(r"Failed requests:\s*(\d+)", out)
        kinds = re.search(r"Length: (\d+), Exceptions: (\d+)\)", out)
        length, exceptions = kinds.groups() if kinds else ("0", "0")
        print(f"{which} -c {clients} -n {n}: {rps.group(1) if rps else '?'} req/s, "
              f"{failed.group(1) if failed else '?'} failed (Length {length}, Exceptions {exceptions})", flush=True)


if __name__ == "__main__":
    main()
