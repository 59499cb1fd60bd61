"""Numeric option types shared by every command: finite, bounded, with units where people use them.

click's FloatRange lets `nan` through (every comparison with NaN is false) and `inf` past a lower
bound; sizing with either gives silent nonsense or an OverflowError. Every numeric option goes
through these types instead, and a bad value is a usage error (exit 2, one line).
"""

from __future__ import annotations

import math
import re

import click

# A bound for "no upper bound": beyond any real machine, far below float overflow in the model.
HUGE = 1e12

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_UNIT_MIB = {"": 1.0, "k": 1 / 1024, "m": 1.0, "g": 1024.0, "t": 1024.0 * 1024}


class Finite(click.ParamType):
    """A finite number in [lo, hi] (int when `integer`)."""

    name = "number"

    def __init__(self, lo: float = 0.0, hi: float = HUGE, integer: bool = False):
        self.lo, self.hi, self.integer = lo, hi, integer
        self.name = "integer" if integer else "number"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        else:
            try:
                number = float(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not {'an' if self.integer else 'a'} {self.name}", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite {self.name}", param, ctx)
        if not self.lo <= number <= self.hi:
            self.fail(f"{value!r} is not between {self.lo:g} and {self.hi:g}", param, ctx)
        if self.integer:
            if not number.is_integer():
                self.fail(f"{value!r} is not a whole number", param, ctx)
            return int(number)
        return number


class MemorySize(Finite):
    """Mebibytes: `2048`, `512M`, `4G`, `4GiB`, `1.5T` (a bare number is MiB)."""

    name = "size"

    def __init__(self, lo: float = 0.0, hi: float = HUGE):
        super().__init__(lo, hi)
        self.name = "size"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return super().convert(value, param, ctx)
        m = _SIZE.match(str(value))
        if not m or (m.group(3) and not m.group(2)):
            self.fail(f"{value!r} is not a size (e.g. 2048, 512M, 4G, 4GiB)", param, ctx)
        mib = float(m.group(1)) * _UNIT_MIB[m.group(2).lower()]
        return super().convert(mib, param, ctx)


PID = Finite(1, 4_194_304, integer=True)  # PID_MAX_LIMIT on 64-bit Linux
