"""httpd's MPM start-up model: defaults, compile-time limits, and every check and
adjustment prefork, worker and event make when httpd starts."""

from apachetune.mpm.buckets import listen_buckets
from apachetune.mpm.directives import DEFAULTS, LIMITS, MPM_DIRECTIVES, MPMS
from apachetune.mpm.startup import (
    Adjustment,
    StartupMessage,
    StartupResult,
    is_fixed_point,
    simulate_startup,
)

__all__ = [
    "DEFAULTS", "LIMITS", "MPMS", "MPM_DIRECTIVES", "Adjustment", "StartupMessage", "StartupResult",
    "is_fixed_point", "listen_buckets", "simulate_startup",
]
