"""mpm/numbers.py's strtol against the C library's own (ctypes), the one reading of a decimal
long every reader shares (atoi, MaxMemFree, KeepAliveTimeout, LimitRequestBody, subnet masks,
mod_reqtimeout)."""

from __future__ import annotations

import ctypes
import ctypes.util

from hypothesis import given, settings
from hypothesis import strategies as st

from apachetune.mpm.numbers import atof, atoi, strtol

_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_LIBC.strtol.restype = ctypes.c_long
_LIBC.strtol.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
_LIBC.atof.restype = ctypes.c_double
_LIBC.atof.argtypes = [ctypes.c_char_p]


def _c_strtol(text: str) -> tuple[int, int, bool]:
    raw = text.encode()
    buf = ctypes.create_string_buffer(raw)
    end = ctypes.c_char_p()
    ctypes.set_errno(0)
    value = _LIBC.strtol(buf, ctypes.byref(end), 10)
    consumed = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buf)  # type: ignore[operator]
    return value, consumed, ctypes.get_errno() != 0


_TEXT = st.one_of(
    st.text(alphabet=" \t\n\v\f\r+-0123456789xe.", max_size=30),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.tuples(st.sampled_from(["", " ", "\t+", "-", "+"]), st.integers(0, 2**66), st.sampled_from(["", "k", " 1", "ms"]))
    .map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
)


@settings(max_examples=500, deadline=None)
@given(_TEXT)
def test_strtol_reads_what_the_c_library_reads(text):
    value, consumed, erange = _c_strtol(text)
    read = strtol(text)
    if consumed == 0:  # nothing read: end is the text itself
        assert (read.value, read.rest) == (None, text)
    else:
        assert (read.value, read.rest, read.overflow) == (value, text[consumed:], erange)
        assert atoi(text) == ctypes.c_int(value).value  # atoi: the long cast to int


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" \t+-0123456789.eExXpPa", max_size=20))
def test_atof_reads_what_the_c_library_reads(text):
    expected = _LIBC.atof(text.encode())
    assert atof(text) == expected or (expected != expected and atof(text) != atof(text))
