"""The symbols a shared object exports, read from its ELF dynamic symbol table.

httpd's LoadModule looks the module's identifier up with dlsym: `LoadModule rewrite_modul
mod_rewrite.so` stops httpd with "Can't locate API module structure". Reading the table (not
dlopen-ing a module built against httpd into Python) answers the same question safely.
"""

from __future__ import annotations

import os
import struct
from functools import lru_cache

from apachetune.config import observed

_SHT_DYNSYM = 11


def exported_symbols(path: str) -> frozenset[str] | None:
    """The names `path` defines in its dynamic symbol table, or None when it is not a
    readable ELF file (then nothing is judged)."""
    observed.file_read(path)
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _read(path, (st.st_ino, st.st_size, st.st_mtime_ns))


@lru_cache(maxsize=256)
def _read(path: str, signature: tuple[int, ...]) -> frozenset[str] | None:  # signature: the cache key
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        return _dynsym(data)
    except (struct.error, IndexError, ValueError):
        return None


def _dynsym(data: bytes) -> frozenset[str] | None:
    if data[:4] != b"\x7fELF":
        return None
    is64, order = data[4] == 2, "<" if data[5] == 1 else ">"
    if is64:
        shoff, shentsize, shnum = struct.unpack_from(order + "Q10xHH", data, 0x28)
        sh_fmt, sym_fmt, sym_size = order + "IIQQQQIIQQ", order + "IBBHQQ", 24
    else:
        shoff, shentsize, shnum = struct.unpack_from(order + "I10xHH", data, 0x20)
        sh_fmt, sym_fmt, sym_size = order + "IIIIIIIIII", order + "IIIBBH", 16
    sections = [struct.unpack_from(sh_fmt, data, shoff + i * shentsize) for i in range(shnum)]
    names: set[str] = set()
    for sh in sections:
        if sh[1] != _SHT_DYNSYM:
            continue
        offset, size, link = sh[4], sh[5], sh[6]
        strtab = sections[link][4]
        for start in range(offset, offset + size, sym_size):
            fields = struct.unpack_from(sym_fmt, data, start)
            name_at, shndx = fields[0], fields[3] if is64 else fields[5]
            if shndx == 0 or name_at == 0:
                continue  # undefined (imported) or unnamed
            end = data.index(b"\0", strtab + name_at)
            names.add(data[strtab + name_at:end].decode("utf-8", "replace"))
    return frozenset(names)
