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

_ATOI = re.compile(r"[ \t\n\v\f\r]*([+-]?)(\d*)")
_LONG_MAX = 2**63 - 1
_LONG_MIN = -(2**63)


def atoi(text: str) -> int:
    m = _ATOI.match(text)
    sign, digits = m.group(1), m.group(2)
    if not digits:
        return 0
    value = int(digits)
    if sign == "-":
        value = -value
    value = max(_LONG_MIN, min(_LONG_MAX, value))  # strtol saturates
    value &= 0xFFFFFFFF  # (int) cast: low 32 bits, two's complement
    return value - 2**32 if value >= 2**31 else value


def is_plain_number(text: str) -> bool:
    """True when atoi reads the whole argument (no junk it would silently drop)."""
    return re.fullmatch(r"[+-]?\d+", text.strip(" \t")) is not None


_STRTOD = re.compile(
    r"[ \t\n\v\f\r]*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE)


def strtod_strict(text: str) -> float | None:
    """strtod with httpd's `*endptr` check: the number, or None if anything follows it."""
    m = _STRTOD.match(text)
    if not m or m.end() != len(text):
        return None
    return float(m.group().strip())
