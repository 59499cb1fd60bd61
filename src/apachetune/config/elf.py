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

_SHT_RELA = 4
_SHT_DYNSYM = 11


def exported_symbols(path: str) -> frozenset[str] | None:
    """The names `path` defines in its dynamic symbol table, or None when it is not a
    readable ELF file (then nothing is judged)."""
    table = symbols(path)
    return table[0] if table is not None else None


def symbols(path: str) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """(the names `path` defines, the names it needs from elsewhere in the order the dynamic
    linker resolves them), or None."""
    observed.file_read(path)
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _read(path, (st.st_ino, st.st_size, st.st_mtime_ns))


def providers(directory: str) -> dict[str, str]:
    """symbol -> the shared object of `directory` (httpd's modules) that defines it."""
    found: dict[str, str] = {}
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".so"))
    except OSError:
        return found
    for name in names:
        table = symbols(os.path.join(directory, name))
        for symbol in table[0] if table else ():
            found.setdefault(symbol, os.path.join(directory, name))
    return found


@lru_cache(maxsize=512)
def _read(path: str, signature: tuple[int, ...]) -> tuple[frozenset[str], tuple[str, ...]] | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        return _dynsym(data)
    except (struct.error, IndexError, ValueError):
        return None


def _dynsym(data: bytes) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """(the defined names, the undefined ones in the order the dynamic linker resolves them:
    its relocation tables in order, where the first it cannot resolve is the one dlerror names)."""
    if data[:4] != b"\x7fELF":
        return None
    is64, order = data[4] == 2, "<" if data[5] == 1 else ">"
    if is64:
        shoff, shentsize, shnum = struct.unpack_from(order + "Q10xHH", data, 0x28)
        sh_fmt, sym_fmt, sym_size = order + "IIQQQQIIQQ", order + "IBBHQQ", 24
        rela_fmt, rela_size, sym_shift = order + "QQq", 24, 32
    else:
        shoff, shentsize, shnum = struct.unpack_from(order + "I10xHH", data, 0x20)
        sh_fmt, sym_fmt, sym_size = order + "IIIIIIIIII", order + "IIIBBH", 16
        rela_fmt, rela_size, sym_shift = order + "IIi", 12, 8
    sections = [struct.unpack_from(sh_fmt, data, shoff + i * shentsize) for i in range(shnum)]
    names: set[str] = set()
    table: list[str | None] = []  # dynsym index -> the name of an undefined symbol
    for sh in sections:
        if sh[1] != _SHT_DYNSYM:
            continue
        offset, size, link = sh[4], sh[5], sh[6]
        strtab = sections[link][4]
        for start in range(offset, offset + size, sym_size):
            fields = struct.unpack_from(sym_fmt, data, start)
            name_at, shndx = fields[0], fields[3] if is64 else fields[5]
            name = None
            if name_at:
                end = data.index(b"\0", strtab + name_at)
                name = data[strtab + name_at:end].decode("utf-8", "replace")
                if shndx != 0:
                    names.add(name)
            table.append(name if shndx == 0 else None)
    needed: dict[str, None] = {}
    for sh in sections:
        if sh[1] != _SHT_RELA:
            continue
        for start in range(sh[4], sh[4] + sh[5], rela_size):
            index = struct.unpack_from(rela_fmt, data, start)[1] >> sym_shift
            if 0 < index < len(table) and table[index]:
                needed.setdefault(table[index], None)
    for name in table:
        if name:
            needed.setdefault(name, None)
    return frozenset(names), tuple(needed)
