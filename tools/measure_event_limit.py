"""How many idle keep-alive clients an httpd build's event MPM holds before a new one waits.

    tools/measure_event_limit.py VERSION FACTOR...   (VERSION: a build from tools/build_httpd.sh in
    /tmp/httpd-VERSION, or 2.4.71 for the installed apache2)

2 processes x 25 threads, clients arriving one at a time (each waits for its answer), on
127.0.0.1; prints VERSION FACTOR HELD. The results are facts in tests/test_keepalive_crowd.py.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import event_build  # noqa: E402

from apachetune.validate.load import IdleClients  # noqa: E402
from apachetune.validate.processes import stop_group  # noqa: E402

SECTION = {"StartServers": 2, "ServerLimit": 2, "ThreadsPerChild": 25, "ThreadLimit": 25, "MaxRequestWorkers": 50,
           "MinSpareThreads": 1, "MaxSpareThreads": 50, "KeepAlive": "On", "KeepAliveTimeout": 30,
           "MaxKeepAliveRequests": 0}


def measure(version: str, factor: str) -> int:
    p, port = event_build.start(version, {**SECTION, "AsyncRequestWorkerFactor": factor})
    try:
        with IdleClients("127.0.0.1", port, 200, quiet=1.0) as c:
            return c.answered
    finally:
        stop_group(p)


for factor in sys.argv[2:]:
    print(sys.argv[1], factor, measure(sys.argv[1], factor))
