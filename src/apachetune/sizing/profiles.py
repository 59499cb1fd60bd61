"""Named workload profiles: default figures when nothing can be measured.

Each figure says where it comes from. They are starting points: `apachetune size` on a
machine running httpd measures instead, and every figure can be given on the command line.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    mpm: str
    per_worker_mib: float  # memory of one worker (prefork: a child's PSS; threaded: per thread)
    per_process_mib: float  # threaded: a child's fixed base, shared by its threads
    service_time: float  # mean seconds a worker spends on one request
    requests_per_connection: float
    gap: float  # seconds between requests on one keep-alive connection
    source: str
    # Assumed: CPU seconds a request uses. A longer service time than the profile's is taken as
    # waiting (backend, disk, client), not as more CPU.
    cpu_seconds: float = 0.0025


PROFILES = {
    "static": Profile(
        "static", "static files and small pages", "event", 0.25, 4.0, 0.005, 8, 0.3,
        "measured here: httpd 2.4.71 event child with 27 threads, PSS 1.5 MB idle, ~4 MB under "
        "load; 45-byte to 100 KB files served in 1-5 ms (docs/benchmarking.md figures)"),
    "php": Profile(
        "php", "mod_php application (forces prefork)", "prefork", 40.0, 0.0, 0.150, 4, 1.0,
        "typical mod_php child with a framework loaded: 30-60 MB PSS; 100-200 ms pages",
        cpu_seconds=0.075),
    "proxy": Profile(
        "proxy", "reverse proxy / php-fpm in front of an application", "event", 0.5, 6.0, 0.080, 6,
        0.5, "event child with mod_proxy loaded; service time is the backend's response time",
        cpu_seconds=0.004),
}
