"""What mod_authnz_fcgi refuses while reading its two directives (AT510, in httpd's words):
AuthnzFcgiDefineProvider's type, name and fcgi:// backend, and AuthnzFcgiCheckAuthnProvider's
options. (A provider's Require line is authz_readers'.)

Facts: modules/aaa/mod_authnz_fcgi.c fcgi_define_provider and fcgi_check_authn_provider (httpd
2.4.x)."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable

from apachetune.mpm.numbers import atoi

# FCGI_BACKEND_REGEX_STR, m%^fcgi://(.*):(\d{1,5})/?$%
_BACKEND = re.compile(r"^fcgi://(.*):([0-9]{1,5})/?$", re.DOTALL)


def define_provider_error(argv: list[str]) -> str | None:
    """fcgi_define_provider's refusal of its words (TAKE_ARGV), or None. The backend's host is
    resolved by httpd at once: an address or localhost resolves, no host (or one with a ':'
    that is no IPv6 address) does not, and a name is not judged (this machine's resolver is not the server's), nor what follows it."""
    name = "AuthnzFcgiDefineProvider"
    if not argv:
        return f"{name}: No type given"
    if argv[0].lower() not in ("authn", "authz", "authnz"):
        return f"{name}: Invalid provider type {argv[0]}"
    if len(argv) < 2:
        return f"{name}: No provider name given"
    if len(argv) < 3:
        return f"{name}: No backend-address given"
    backend = argv[2]
    m = _BACKEND.match(backend)
    if not m:
        return f"{name}: backend-address '{backend}' has invalid form"
    if atoi(m[2]) > 65535:
        return f"{name}: backend-address '{backend}' has invalid port"
    host = m[1][1:-1] if len(m[1]) >= 2 and m[1][0] == "[" and m[1][-1] == "]" else m[1]
    numeric = _numeric(host)
    if not host or (":" in host and not numeric):  # nothing, or no address and no name either
        return f"{name}: Error resolving backend address"
    if host != "localhost" and not numeric:
        return None
    return f"{name}: Unexpected parameter {argv[3]}" if len(argv) > 3 else None


def _numeric(host: str) -> bool:
    try:
        socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError, ValueError):
        return False
    return True


def check_authn_error(argv: list[str], judge: Callable[[str], str | None]) -> str | None:
    """fcgi_check_authn_provider's refusal of its words, or None: a provider, then option and
    value pairs (Authoritative and RequireBasicAuth On or Off, DefaultUser, UserExpr a string
    expression parsed restricted, `judge`'s message), none after "None"."""
    name = "AuthnzFcgiCheckAuthnProvider"
    if not argv:
        return f"{name}: No provider given"
    if argv[0].lower() == "none" and len(argv) > 1:
        return 'Options aren\'t supported with "None"'
    words = argv[1:]
    for i in range(0, len(words), 2):
        var = words[i]
        if i + 1 >= len(words):
            return f"{name}: {var}needs an argument"  # (sic: no space)
        val = words[i + 1]
        option = var.lower()
        if option in ("authoritative", "requirebasicauth"):
            if val.lower() not in ("on", "off"):
                return f"{name}: Bad argument '{val}' to option '{var}'"
        elif option == "userexpr":
            if err := judge(val):
                return f"{name}: Error parsing '{val}': '{err}'"
        elif option != "defaultuser":
            return f"{name}: Unexpected option '{var}'"
    return None
