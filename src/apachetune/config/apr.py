"""How APR reads addresses, for the readers that use it: apr_parse_addr_port (Listen,
<VirtualHost>), APR's own inet_pton (not the C library's: it takes a group of five digits such as
"00000") and apr_ipsubnet_create (Require ip). Pure functions of the text; no resolver is asked.

Facts: APR 1.7 network_io/unix/sockaddr.c (apr_parse_addr_port, apr_ipsubnet_create, parse_ip,
parse_network, looks_like_ip) and network_io/unix/inet_pton.c."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable

from apachetune.mpm.numbers import strtol


class AddressError(ValueError):
    pass


def parse_addr_port(text: str) -> tuple[str | None, str | None, int]:
    """apr_parse_addr_port: (host or None, scope id or None, port or 0); AddressError where
    APR returns EINVAL."""
    end = len(text)
    i = end - 1
    while i >= 0 and text[i].isascii() and text[i].isdigit():
        i -= 1
    if i < 0:  # only digits: the port alone
        port = int(text) if text else 0
        if not 1 <= port <= 65535:
            raise AddressError(text)
        return None, None, port
    port = 0
    last = end - 1
    if text[i] == ":" and i < last:
        if i == 0:
            raise AddressError(text)
        port = int(text[i + 1:])
        if not 1 <= port <= 65535:
            raise AddressError(text)
        last = i - 1
    host = text[:last + 1]
    if not host.startswith("["):
        return host, None, port
    close = host.find("]")
    if close != len(host) - 1:
        raise AddressError(text)
    inner, scope = host[1:close], None
    if "%" in inner:
        inner, scope = inner.split("%", 1)
        if not scope:
            raise AddressError(text)
    if not apr_inet_pton6(inner):
        raise AddressError(text)
    return inner, scope, port


def libc_ipv6(text: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET6, text)
    except OSError:
        return False
    return True


def dotted_quad(text: str) -> bool:
    """APR's inet_pton4: four decimal numbers up to 255 (leading zeros allowed)."""
    parts = text.split(".")
    return len(parts) == 4 and all(p.isascii() and p.isdigit() and int(p) <= 255 for p in parts)


def apr_inet_pton6(text: str) -> bool:
    """APR's own inet_pton for IPv6 (not the C library's): a group is any run of hex digits
    whose value fits 16 bits ("00000" passes, which Python's ipaddress refuses), at most one
    "::", and an IPv4 tail."""
    if text.startswith(":") and not text.startswith("::"):
        return False
    body = text[1:] if text.startswith("::") else text  # the second ':' opens the "::"
    words, compressed, group = 0, False, ""
    i = 0
    while i < len(body):
        c = body[i]
        if c in "0123456789abcdefABCDEF":
            group += c
            if int(group, 16) > 0xFFFF:
                return False
        elif c == ":":
            if not group:
                if compressed:
                    return False
                compressed = True
            else:
                words += 1
                if words > 8:
                    return False
                group = ""
        elif c == "." and words <= 6:
            start = body.rfind(":", 0, i) + 1
            if not dotted_quad(body[start:]):
                return False
            words, group = words + 2, ""
            break
        else:
            return False
        i += 1
    if group:
        words += 1
    return words == 8 or (compressed and words < 8)



_BAD_IP = "The specified IP address is invalid."
_BAD_MASK = "The specified network mask is invalid."


def ipv4_network(text: str) -> bool:
    """APR's parse_network: one to four dotted decimal octets ("10", "192.168.")."""
    if len(text) >= len("255.255.255.255") + 1:
        return False
    parts = text.split(".")
    if parts and parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]  # a trailing dot ends the last octet
    return 1 <= len(parts) <= 4 and all(p.isascii() and p.isdigit() and int(p) <= 255 for p in parts)


def ip_subnet_error(ip: str, mask: str | None) -> str | None:
    """apr_ipsubnet_create: None, "" (does not look like an address: EINVAL) or APR's error."""
    if not ip or (":" not in ip and ip.strip("0123456789.")):
        return ""
    if ":" in ip:
        if not apr_inet_pton6(ip):
            return _BAD_IP
        family = 6
        if ipv4_mapped(ip):
            return _BAD_IP
    elif dotted_quad(ip):
        family = 4
    elif mask is None and ipv4_network(ip):
        return None
    else:
        return _BAD_IP
    if mask is None:
        return None
    bits = strtol(mask)  # all of the mask, and within the family's bits
    if bits.value is not None and not bits.rest and 0 < bits.value <= (128 if family == 6 else 32):
        return None
    if family == 4 and dotted_quad(mask):
        return None
    return _BAD_MASK


def ipv4_mapped(text: str) -> bool:
    try:
        return ipaddress.IPv6Address(text).ipv4_mapped is not None
    except ValueError:
        return False  # a form only APR's parser takes ("00000::..."): not an IPv4-mapped one


def filepath_merge(root: str, path: str) -> str:
    """apr_filepath_merge as ap_server_root_relative calls it (Unix): `path` under `root` unless
    absolute, with runs of '/' made one, '.' dropped and '..' taking the segment before it back
    (never above '/'); a trailing '/' is kept. "http://" under /srv is "/srv/http:/"."""
    segments: list[str] = []
    for part in ((path if path.startswith("/") else f"{root}/{path}").split("/")):
        if part in ("", "."):
            continue
        if part == "..":
            if segments:
                segments.pop()
            continue
        segments.append(part)
    merged = "/" + "/".join(segments)
    return merged + "/" if path.endswith("/") and merged != "/" else merged


# Where the APR-util library may be (multi-arch Debian/Ubuntu, RHEL's lib64, a source build);
# its DSO drivers are in its apr-util-1/ directory (APU_DSO_LIBDIR)
_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
             "/lib/aarch64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/usr/local/lib", "/usr/local/apr/lib")


def dbd_driver_dirs(local: Callable[[str], str] = lambda p: p) -> list[str]:
    """The directories apr_dbd_get_driver looks for apr_dbd_NAME-1.so in (apu_dso_load: each
    LD_LIBRARY_PATH entry and its apr-util-1/, then APU_DSO_LIBDIR), as far as they can be known
    here: the apr-util-1/ beside each libaprutil-1 found (`local` maps a path into --root).
    Empty when no APR-util with DSO drivers is found (a build with the drivers linked in, or
    none): nothing can be said."""
    found = []
    for d in _LIB_DIRS:
        here = local(d)
        try:
            names = os.listdir(here)
        except OSError:
            continue
        if any(n.startswith("libaprutil-1.so") for n in names) and os.path.isdir(os.path.join(here, "apr-util-1")):
            found.append(os.path.join(here, "apr-util-1"))
    if not found:
        return []
    for d in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        found += [d, os.path.join(d, "apr-util-1")]
    return found
