"""How many idle keep-alive clients an httpd build's event MPM holds before a new one waits.

    tools/measure_event_limit.py VERSION FACTOR...   (VERSION: a build from tools/build_httpd.sh in
    /tmp/httpd-VERSION, or 2.4.71 for the installed apache2)

2 processes x 25 threads, clients arriving one at a time (each waits for its answer), on
127.0.0.1; prints VERSION FACTOR HELD. The results are facts in tests/test_keepalive_crowd.py.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from apachetune.validate.load import IdleClients  # noqa: E402
from apachetune.validate.mpmd_server import free_port  # noqa: E402
from apachetune.validate.processes import stop_group, wait_until_serving  # noqa: E402


def measure(prefix, factor, modules_dir=None):
    port = free_port()
    tmp = Path(tempfile.mkdtemp(prefix="kaf-"))
    (tmp / "htdocs").mkdir()
    (tmp / "htdocs" / "index.html").write_text("hi\n")
    os.chmod(tmp, 0o755)  # the children run as nobody
    os.chmod(tmp / "htdocs", 0o755)
    mods = modules_dir or f"{prefix}/modules"
    loads = "".join(f"LoadModule {m}_module {mods}/mod_{m}.so\n" for m in ("mpm_event", "authz_core", "unixd")
                    if Path(f"{mods}/mod_{m}.so").exists())
    conf = tmp/"httpd.conf"
    conf.write_text(f"""ServerRoot {tmp}
{loads}ServerName localhost
Listen 127.0.0.1:{port}
PidFile {tmp}/httpd.pid
ErrorLog {tmp}/error_log
DocumentRoot {tmp}/htdocs
User nobody
Group nogroup
StartServers 2
ServerLimit 2
ThreadsPerChild 25
ThreadLimit 25
MaxRequestWorkers 50
MinSpareThreads 1
MaxSpareThreads 50
AsyncRequestWorkerFactor {factor}
KeepAlive On
KeepAliveTimeout 30
MaxKeepAliveRequests 0
""")
    exe = f"{prefix}/bin/httpd" if prefix else "/usr/sbin/apache2"
    p = subprocess.Popen([exe, "-f", str(conf), "-D", "FOREGROUND"], start_new_session=True, stderr=subprocess.PIPE)
    try:
        wait_until_serving(p, f"http://127.0.0.1:{port}/index.html", 10)
        time.sleep(1.5)
        with IdleClients("127.0.0.1", port, 200, quiet=1.0) as c:
            return c.answered
    finally:
        stop_group(p)


for factor in sys.argv[2:]:
    v = sys.argv[1]
    if v == "2.4.71":
        print(v, factor, measure("", factor, "/usr/lib/apache2/modules"))
    else:
        print(v, factor, measure(f"/tmp/httpd-{v}", factor))
