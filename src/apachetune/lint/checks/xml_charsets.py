"""The charset names libxml2 knows (xmlParseCharEncoding), for mod_xml2enc's xml2EncDefault.

The list is the library's, and it changed: libxml2 2.9 knows 25 names, 2.14 about 150
(windows-1252, latin1, us-ascii ...). On a machine with libxml2 the library itself is asked,
as httpd asks it; elsewhere a name is judged unknown only when neither list has it.

Facts: libxml2's encoding.c, xmlParseCharEncoding (2.9.14; 2.14's xmlEncTable)."""

from __future__ import annotations

import ctypes
from functools import cache

# libxml2 2.9: compared after upper-casing
_NAMES_2_9 = frozenset({
    "UTF-8", "UTF8", "UTF-16", "UTF16", "ISO-10646-UCS-2", "UCS-2", "UCS2", "ISO-10646-UCS-4", "UCS-4", "UCS4",
    "ISO-8859-1", "ISO-LATIN-1", "ISO LATIN 1", "ISO-LATIN-2", "ISO LATIN 2", "ISO-8859-2", "ISO-8859-3",
    "ISO-8859-4", "ISO-8859-5", "ISO-8859-6", "ISO-8859-7", "ISO-8859-8", "ISO-8859-9", "ISO-2022-JP", "SHIFT_JIS",
    "EUC-JP"})
# libxml2 2.14's table (compared without case), beyond the names above
_NAMES_2_14 = frozenset(n.upper() for n in (
    "ansi_x3.4-1968 arabic ascii asmo-708 cp1252 cp819 cseucpkdfmtjapanese csiso2022jp csiso88596e csiso88596i "
    "csiso88598e csiso88598i csisolatin1 csisolatin2 csisolatin3 csisolatin4 csisolatin5 csisolatin6 csisolatin9 "
    "csisolatinarabic csisolatincyrillic csisolatingreek csisolatinhebrew csshiftjis csunicode cyrillic ecma-114 "
    "ecma-118 elot_928 greek greek8 html ibm819 iso-ir-100 iso-ir-101 iso-ir-109 iso-ir-110 iso-ir-126 "
    "iso-ir-127 iso-ir-138 iso-ir-144 iso-ir-148 iso-ir-157 iso-8859-10 iso-8859-11 iso-8859-13 iso-8859-14 "
    "iso-8859-15 iso-8859-16 iso-8859-6-e iso-8859-6-i iso-8859-8-i iso8859-1 iso8859-10 iso8859-13 iso8859-14 "
    "iso8859-15 iso8859-2 iso8859-3 iso8859-4 iso8859-5 iso8859-6 iso8859-7 iso8859-8 iso8859-9 iso88591 "
    "iso885910 iso885913 iso885914 iso885915 iso88592 iso88593 iso88594 iso88595 iso88596 iso88597 iso88598 "
    "iso88599 iso_8859-1 iso_8859-1:1987 iso_8859-2 iso_8859-2:1987 iso_8859-3 iso_8859-3:1988 iso_8859-4 "
    "iso_8859-4:1988 iso_8859-5 iso_8859-5:1988 iso_8859-6 iso_8859-6:1987 iso_8859-7 iso_8859-7:1987 "
    "iso_8859-8 iso_8859-8:1988 iso_8859-9 iso_8859-9:1989 l1 l2 l3 l4 l5 l6 l9 latin1 latin2 latin3 latin4 "
    "latin5 latin6 logical ms932 ms_kanji shift-jis sjis sun_eu_greek unicode unicode-1-1-utf-8 unicode11utf8 "
    "unicode20utf8 unicodefffe unicodefeff us-ascii utf-16be utf-16le visual windows-1252 windows-31j x-cp1252 "
    "x-euc-jp x-sjis x-unicode20utf8").split()) | _NAMES_2_9

# xmlCharEncoding's NONE and ERROR
NONE, ERROR = 0, -1


@cache
def _library() -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL("libxml2.so.2")
        parse = lib.xmlParseCharEncoding
    except (OSError, AttributeError):
        return None
    parse.argtypes = [ctypes.c_char_p]
    parse.restype = ctypes.c_int
    return lib


def parse_char_encoding(name: str) -> int:
    """xmlParseCharEncoding(name): NONE for "", ERROR for a name the library does not know, else
    a positive code (1 when only the lists above could be consulted)."""
    if name == "":
        return NONE
    lib = _library()
    if lib is not None:
        return int(lib.xmlParseCharEncoding(name.encode("utf-8", "surrogateescape")))
    return 1 if name.upper() in _NAMES_2_14 else ERROR
