"""Which regular expressions PCRE surely refuses, judged with Python's re: only the errors both
make (a quantifier with nothing before it, an unclosed group or set, a stray ')', {n,m} with n > m,
a backslash at the end).
Python's re refuses some patterns PCRE takes (named groups written (?<name>...), \\h ...) and
takes a few PCRE refuses; those are not judged either way."""

from __future__ import annotations

import re

_SURE_ERRORS = ("nothing to repeat", "missing ), unterminated subpattern", "unbalanced parenthesis",
                "unterminated character set", "min repeat greater than max repeat", "bad escape (end of pattern)")


def regex_surely_invalid(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error as e:
        return any(str(e).startswith(kind) for kind in _SURE_ERRORS)
    except (RecursionError, OverflowError, ValueError):
        return False
    return False
