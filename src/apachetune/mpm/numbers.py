"""How httpd turns MPM directive arguments into numbers.

The MPM handlers use C's atoi (glibc: (int) strtol(s, NULL, 10)): leading white
space and one sign are accepted, digits are read up to the first non-digit,
anything else is silently ignored, and no digits at all give 0 — so
`ServerLimit four` is ServerLimit 0. strtol saturates at the range of a 64-bit
long and the cast to int keeps the low 32 bits. AsyncRequestWorkerFactor uses
strtod and rejects trailing junk.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# ASCII digits only: C's isdigit, not Unicode's (`MaxRequestWorkers ١٥٠` is 0 to httpd).
_ATOI = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]*)")
_LONG_MAX = 2**63 - 1
_LONG_MIN = -(2**63)


class Strtol(NamedTuple):
    """What C's strtol(text, &end, 10) (or strtoll, apr_strtoi64, apr_strtoff: a 64-bit long
    here) makes of a text."""

    value: int | None  # saturated at a long's range; None when no digit was read (end == text)
    rest: str  # the text from *end on: all of it when nothing was read
    overflow: bool  # errno ERANGE


def strtol(text: str) -> Strtol:
    m = _ATOI.match(text)
    assert m is not None  # the pattern matches any text (every part is optional)
    sign, digits = m.group(1), m.group(2)
    if not digits:
        return Strtol(None, text, False)
    value = -int(digits) if sign == "-" else int(digits)
    return Strtol(max(_LONG_MIN, min(_LONG_MAX, value)), text[m.end():], not _LONG_MIN <= value <= _LONG_MAX)


def atol(text: str) -> int:
    """C's atol: strtol's value, 0 when no digit was read (saturated at a long's range)."""
    return strtol(text).value or 0


def atoi(text: str) -> int:
    value = strtol(text).value or 0
    value &= 0xFFFFFFFF  # (int) cast: low 32 bits, two's complement
    return value - 2**32 if value >= 2**31 else value


def is_plain_number(text: str) -> bool:
    """True when atoi reads the whole argument (no junk it would silently drop)."""
    return re.fullmatch(r"[+-]?[0-9]+", text.strip(" \t")) is not None


# C's strtod: decimal, hexadecimal (0x1p4), inf/infinity and nan/nan(chars), ASCII digits only.
_STRTOD = re.compile(
    r"[ \t\n\v\f\r]*(?P<sign>[+-]?)(?:(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
    r"(?:[pP][+-]?[0-9]+)?)|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<inf>inf(?:inity)?)|(?P<nan>nan(?:\([0-9A-Za-z_]*\))?))", re.IGNORECASE)


def strtod_strict(text: str) -> float | None:
    """strtod with httpd's `*endptr` check: the number, or None if anything follows it."""
    m = _STRTOD.match(text)
    if not m or m.end() != len(text):
        return None
    sign = -1.0 if m.group("sign") == "-" else 1.0
    if m.group("hex"):
        h = m.group("hex")
        return sign * float.fromhex(h if "p" in h.lower() else h + "p0")
    if m.group("inf"):
        return sign * float("inf")
    if m.group("nan"):
        return float("nan")
    return sign * float(m.group("dec"))


def keepalive_seconds(arg: str) -> float:
    """KeepAliveTimeout's value in seconds (a trailing `ms` means milliseconds)."""
    return atoi(arg) / 1000 if arg.strip().lower().endswith("ms") else atoi(arg)



def max_mem_free(arg: str) -> int | None:
    """MaxMemFree as httpd keeps it, in KiB an allocator may hold free (0: unlimited), or None
    when httpd refuses the value ("Invalid MaxMemFree value": negative, or beyond a long).
    No digits read as 0 (unlimited), junk after the digits is dropped, and the byte count is
    taken modulo 2^32: 4194304 (4 GiB) is 0, unlimited, and 4194305 is 1 KiB (mpm_common.c
    ap_mpm_set_max_mem_free: strtol, then `(apr_uint32_t)value * 1024` in 32 bits)."""
    read = strtol(arg)
    value = read.value or 0
    if value < 0 or read.overflow:  # httpd's check: negative, or ERANGE
        return None
    return (value & 0xFFFFFFFF) * 1024 % 2**32 // 1024


# The largest count each unit takes before its microseconds would overflow (CHECK_OVERFLOW).
_UNIT_LIMIT = {"s": _LONG_MAX // 10**6, "h": _LONG_MAX // 3600 // 10**6, "ms": _LONG_MAX // 1000,
               "mi": _LONG_MAX // 60 // 10**6}
_UNIT_US = {"s": 10**6, "h": 3600 * 10**6, "ms": 1000, "mi": 60 * 10**6}


def timeout_parameter(text: str, default_unit: str) -> int | None:
    """ap_timeout_parameter_parse: the time in microseconds, or None where httpd refuses it.
    apr_strtoi64 reads the digits (none read is 0: "s" and "ms" are zero); the unit is what
    follows, or `default_unit` when nothing does; only its first letters count: s(econds),
    h(ours), ms, mi(nutes)."""
    read = strtol(text)
    if read.overflow:
        return None  # errno ERANGE
    value = read.value or 0
    rest = read.rest or default_unit
    if value < 0:
        return None
    unit = rest[:2] if rest[:1] == "m" else rest[:1]
    if unit not in _UNIT_LIMIT or value > _UNIT_LIMIT[unit]:
        return None
    return value * _UNIT_US[unit]


def starts_with_float(text: str) -> bool:
    """Whether sscanf("%lg") reads a number at the start of `text` (white space skipped)."""
    m = _STRTOD.match(text)
    return bool(m and m.group(0).strip(" \t\n\v\f\r+-"))


def atof(text: str) -> float:
    """C's atof: strtod of the longest prefix that reads as a number, 0.0 when none does."""
    m = _STRTOD.match(text)
    if not m or not m.group(0).strip(" \t\n\v\f\r+-"):
        return 0.0
    value = strtod_strict(m.group(0))
    return 0.0 if value is None else value
