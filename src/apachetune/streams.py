"""Standard output and error never fail on what they print.

Python's error handler for them is "strict" under most locales (en_US.UTF-8): a finding that
quotes a line with a byte that is not UTF-8 (read as a lone surrogate, surrogateescape) ended
lint in a traceback there. Such bytes are written back as they are, as httpd prints them; a
character the terminal's encoding lacks (a report's "≈" under an ASCII locale) as a backslash
escape."""

from __future__ import annotations

import codecs
import sys

HANDLER = "apachetune-output"


def _stray_bytes(e: UnicodeError) -> tuple[str | bytes, int]:
    if not isinstance(e, UnicodeEncodeError):
        raise e
    try:
        return codecs.lookup_error("surrogateescape")(e)
    except UnicodeEncodeError:  # not only stray bytes in the range
        return codecs.lookup_error("backslashreplace")(e)


codecs.register_error(HANDLER, _stray_bytes)


def never_fail() -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors=HANDLER)
            except (ValueError, OSError):  # closed, or not a stream we may change
                pass
