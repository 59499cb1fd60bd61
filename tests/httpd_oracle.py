"""Running the real httpd (Debian's apache2) as the oracle in tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from apachetune import httpd
from apachetune.validate.mpmd_server import free_port
from apachetune.validate.processes import stop_group

APACHE2 = httpd.binary()
MODULES_DIR = httpd.modules_dir()
ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

needs_httpd = pytest.mark.skipif(APACHE2 is None, reason="Apache httpd (apache2) is not installed")


run_httpd = httpd.run
startup_messages = httpd.ah_messages


def dump_config(main: Path, server_root: Path, env: dict[str, str] | None = None, defines: tuple[str, ...] = ()) -> str:
    """httpd -t -D DUMP_CONFIG (and -D each of `defines`) of a tree that must pass (asserted)."""
    result = httpd.dump_config(main, server_root, env=env, defines=defines)
    assert result.ok, result.output
    return result.stdout


UPSTREAM_MODULES = (
    # What the official httpd:2.4 image enables (Debian compiles log_config, version
    # and unixd in, so those are not loaded again).
    "mpm_event", "authn_file", "authn_core", "authz_host", "authz_groupfile", "authz_user",
    "authz_core", "access_compat", "auth_basic", "reqtimeout", "filter", "mime", "env",
    "headers", "setenvif", "status", "autoindex", "dir", "alias",
)


def render_upstream(dest: Path, *, with_mpm_conf: bool) -> Path:
    """Upstream's default httpd.conf (+ extra/httpd-mpm.conf) rendered from the shared corpus
    into `dest`, as `make install` (or the official image) lays it out. Returns the main file."""
    template = (CORPUS / "apache__httpd__docs_conf_httpd.conf.in.conf").read_text()
    mpm_template = (CORPUS / "apache__httpd__docs_conf_extra_httpd-mpm.conf.in.conf").read_text()
    (dest / "conf" / "extra").mkdir(parents=True)
    for d in ("htdocs", "cgi-bin", "logs"):
        (dest / d).mkdir()
    (dest / "modules").symlink_to(MODULES_DIR)
    loads = "\n".join(f"LoadModule {m}_module modules/mod_{m}.so" for m in UPSTREAM_MODULES)
    subst = {
        "@@ServerRoot@@": str(dest), "@@Port@@": "80", "@@LoadModule@@": loads,
        "@exp_htdocsdir@": str(dest / "htdocs"), "@exp_cgidir@": str(dest / "cgi-bin"),
        "@rel_logfiledir@": "logs", "@rel_runtimedir@": "logs", "@rel_sysconfdir@": "conf",
    }
    for key, value in subst.items():
        template = template.replace(key, value)
        mpm_template = mpm_template.replace(key, value)
    if with_mpm_conf:
        template = template.replace("#Include conf/extra/httpd-mpm.conf", "Include conf/extra/httpd-mpm.conf")
    (dest / "conf" / "mime.types").write_text("text/html html htm\n")
    (dest / "conf" / "extra" / "httpd-mpm.conf").write_text(mpm_template)
    main = dest / "conf" / "httpd.conf"
    main.write_text(template)
    return main


class RunningHttpd:
    """A real httpd on 127.0.0.1 from a temporary config; always stopped (SIGTERM, then KILL)."""

    def __init__(self, tmp: Path, mpm: str, mpm_section: str = ""):
        import tempfile

        self.tmp = tmp
        self.port = free_port()
        # httpd's children run as nobody: the document root must be readable by others
        # (pytest's own temporary directories are private to root).
        self.docroot = Path(tempfile.mkdtemp(prefix="apachetune-docroot-"))
        self.docroot.chmod(0o755)
        (self.docroot / "index.html").write_text("hello\n" * 100)
        (self.docroot / "index.html").chmod(0o644)
        self.conf = tmp / "httpd.conf"
        self.conf.write_text(
            f"ServerRoot {tmp}\nServerName localhost\nUser nobody\nGroup nogroup\n"
            f"Listen 127.0.0.1:{self.port}\nPidFile {tmp}/httpd.pid\nErrorLog {tmp}/error.log\n"
            f"DocumentRoot {self.docroot}\n"
            f"LoadModule mpm_{mpm}_module {MODULES_DIR}/mod_mpm_{mpm}.so\n"
            f"LoadModule authz_core_module {MODULES_DIR}/mod_authz_core.so\n"
            f"<Directory {self.docroot}>\n  Require all granted\n</Directory>\n{mpm_section}\n")
        self.proc = None

    def __enter__(self):
        import time
        import urllib.error

        self.proc = httpd.start_foreground(self.conf)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"httpd exited: {self.proc.stderr.read().decode()}")
            try:
                self.get("/index.html")
                return self
            except urllib.error.HTTPError:
                return self  # it answers
            except OSError:
                time.sleep(0.05)
        self.__exit__(None, None, None)
        raise RuntimeError("httpd did not answer within 10 s")

    def get(self, path: str) -> bytes:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
            return r.read()

    def __exit__(self, *exc):
        import shutil

        shutil.rmtree(self.docroot, ignore_errors=True)
        stop_group(self.proc, grace=10)
        return False
