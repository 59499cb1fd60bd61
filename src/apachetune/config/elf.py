"""The symbols a shared object exports, read from its ELF dynamic symbol table.

httpd's LoadModule looks the module's identifier up with dlsym: `LoadModule rewrite_modul
mod_rewrite.so` stops httpd with "Can't locate API module structure". Reading the table (not
dlopen-ing a module built against httpd into Python) answers the same question safely.
"""

from __future__ import annotations

import glob
import itertools
import os
import struct
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import NamedTuple

from apachetune.config import observed

_SHT_RELA = 4
_SHT_DYNAMIC = 6
_SHT_DYNSYM = 11
_STB_WEAK = 2
_DT_NEEDED, _DT_RPATH, _DT_RUNPATH = 1, 15, 29


class Linkage(NamedTuple):
    """What the dynamic linker reads of a shared object."""

    defined: frozenset[str]  # the names it defines
    needed: tuple[str, ...]  # the names it needs (not weak ones) in the order they are resolved
    libraries: tuple[str, ...]  # its DT_NEEDED entries
    search: tuple[str, ...]  # DT_RUNPATH (or DT_RPATH), $ORIGIN as written
    runpath: bool  # `search` is a DT_RUNPATH (looked at after LD_LIBRARY_PATH, not before)


def exported_symbols(path: str) -> frozenset[str] | None:
    """The names `path` defines in its dynamic symbol table, or None when it is not a
    readable ELF file (then nothing is judged)."""
    table = symbols(path)
    return table[0] if table is not None else None


def symbols(path: str) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """(the names `path` defines, the names it needs from elsewhere in the order the dynamic
    linker resolves them; weak ones left out, as a missing one is no error), or None."""
    linkage = linkage_of(path)
    return (linkage.defined, linkage.needed) if linkage is not None else None


class Closure(NamedTuple):
    """Objects and the libraries they need, as the dynamic linker maps them."""

    found: tuple[str, ...]  # the objects found, breadth first (DT_NEEDED, transitively)
    missing: str | None  # the first library not found; "" for one found but not read; None

    @property
    def complete(self) -> bool:
        """Every object found and read: what a symbol can bind to is known."""
        return self.missing is None


def signature(path: str) -> tuple[int, ...] | None:
    """A key that changes when file `path` does (inode, size, mtime), the read noted for the
    result cache; None when it is not there. Readers cache a file's table under it."""
    observed.file_read(path)
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def linkage_of(path: str) -> Linkage | None:
    """`path` as the dynamic linker reads it, or None when it is not a readable ELF file."""
    key = signature(path)
    return _read(path, key) if key is not None else None


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
def _read(path: str, signature: tuple[int, ...]) -> Linkage | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        return _dynsym(data)
    except (struct.error, IndexError, ValueError):
        return None


class Section(NamedTuple):
    """A section header (Elf32_Shdr / Elf64_Shdr), the fields in their order."""

    name: int
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int


class Symbol(NamedTuple):
    """A dynamic symbol: its name ("" for none), value (an address), binding and type
    (st_info) and section index (0: undefined, needed from another object)."""

    name: str
    value: int
    info: int
    shndx: int


class Image:
    """An ELF object's section headers, dynamic symbols and RELA relocations, read from its
    bytes (32 or 64 bits, either byte order). Raises struct.error, IndexError or ValueError on
    what does not read as one."""

    def __init__(self, data: bytes) -> None:
        if data[:4] != b"\x7fELF":
            raise ValueError("not an ELF object")
        self.data = data
        self.is64, self.order = data[4] == 2, "<" if data[5] == 1 else ">"
        order = self.order
        self.machine = struct.unpack_from(order + "H", data, 0x12)[0]
        if self.is64:
            shoff, shentsize, shnum = struct.unpack_from(order + "Q10xHH", data, 0x28)
            sh_fmt, sym_size = order + "IIQQQQIIQQ", 24
            self._rela_fmt, self._rela_size, self.symbol_shift = order + "QQq", 24, 32
        else:
            shoff, shentsize, shnum = struct.unpack_from(order + "I10xHH", data, 0x20)
            sh_fmt, sym_size = order + "IIIIIIIIII", 16
            self._rela_fmt, self._rela_size, self.symbol_shift = order + "IIi", 12, 8
        self.sections = [Section(*struct.unpack_from(sh_fmt, data, shoff + i * shentsize)) for i in range(shnum)]
        self.symbols: list[Symbol] = []  # the dynamic symbol table, by index
        for sh in self.sections:
            if sh.type != _SHT_DYNSYM:
                continue
            strings = StringTable(data, self.sections[sh.link].offset, self.sections[sh.link].size)
            raw = data[sh.offset:sh.offset + sh.size - sh.size % sym_size]
            # a library's thousands of symbols: each built as a tuple (no Python-level __new__ a
            # symbol) with its name looked up in the split table first
            new, get, at = tuple.__new__, strings.strings.get, strings.at
            if self.is64:  # name, info, other, shndx, value, size
                self.symbols += [new(Symbol, (get(name_at) or at(name_at), value, info, shndx))
                                 for name_at, info, shndx, value in struct.iter_unpack(order + "IBxHQ8x", raw)]
            else:  # name, value, size, info, other, shndx
                self.symbols += [new(Symbol, (get(name_at) or at(name_at), value, info, shndx))
                                 for name_at, value, info, shndx in struct.iter_unpack(order + "II4xBxH", raw)]

    def relocations(self) -> Iterator[tuple[int, int, int]]:
        """(where, r_info, addend) of every RELA entry, section by section in file order: a
        relocation's symbol is r_info >> symbol_shift, its type the low bits."""
        size = self._rela_size
        return itertools.chain.from_iterable(  # C iterators end to end: a library has 10^4 entries
            struct.iter_unpack(self._rela_fmt, self.data[sh.offset:sh.offset + sh.size - sh.size % size])
            for sh in self.sections if sh.type == _SHT_RELA)


def _dynsym(data: bytes) -> Linkage | None:
    """The defined names, the undefined ones in the order the dynamic linker resolves them (its
    relocation tables in order, where the first it cannot resolve is the one dlerror names),
    and the dynamic section's libraries and search path."""
    if data[:4] != b"\x7fELF":
        return None
    image = Image(data)
    names = {sym.name for sym in image.symbols if sym.name and sym.shndx}
    # dynsym index -> the name of an undefined, not weak symbol ("" for any other)
    table = [sym.name if not sym.shndx and sym.info >> 4 != _STB_WEAK else "" for sym in image.symbols]
    needed: dict[str, None] = {}
    count = len(table)
    for _where, info, _addend in image.relocations():
        index = info >> image.symbol_shift
        if 0 < index < count and table[index]:
            needed.setdefault(table[index], None)
    for name in table:
        if name:
            needed.setdefault(name, None)
    libraries, search, runpath = _dynamic(image)
    return Linkage(frozenset(names), tuple(needed), libraries, search, runpath)


class StringTable:
    """An ELF string table, split at once: a library's thousands of names decoded together
    rather than one search each."""

    def __init__(self, data: bytes, offset: int, size: int) -> None:
        self.data, self.offset = data, offset
        self.strings: dict[int, str] = {}
        at = 0
        for raw in data[offset:offset + size].split(b"\0"):
            self.strings[at] = raw.decode("utf-8", "replace")
            at += len(raw) + 1

    def at(self, index: int) -> str:
        """The string at `index`, also one that is the tail of another (a shared suffix)."""
        found = self.strings.get(index)
        if found is None:
            start = self.offset + index
            found = self.data[start:self.data.index(b"\0", start)].decode("utf-8", "replace")
        return found


def _dynamic(image: Image) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """The dynamic section's DT_NEEDED libraries, its search path (DT_RUNPATH, else DT_RPATH)
    and whether that is a DT_RUNPATH."""
    found: dict[int, list[str]] = {_DT_NEEDED: [], _DT_RPATH: [], _DT_RUNPATH: []}
    data = image.data
    dyn_fmt, dyn_size = (image.order + "qQ", 16) if image.is64 else (image.order + "iI", 8)
    for sh in image.sections:
        if sh.type != _SHT_DYNAMIC:
            continue
        strtab = image.sections[sh.link].offset
        for start in range(sh.offset, sh.offset + sh.size, dyn_size):
            tag, value = struct.unpack_from(dyn_fmt, data, start)
            if tag in found:
                found[tag].append(data[strtab + value:data.index(b"\0", strtab + value)].decode("utf-8", "replace"))
    runpath = found[_DT_RUNPATH]
    search = tuple(d for entry in (runpath or found[_DT_RPATH]) for d in entry.split(":") if d)
    return tuple(found[_DT_NEEDED]), search, bool(runpath)


def closure(objects: tuple[str, ...], library_path: str = "") -> Closure:
    """`objects` and the libraries they need (DT_NEEDED, transitively), in the dynamic linker's
    breadth-first order: what a symbol can bind to once they are loaded (each one's
    `linkage_of(path).defined`). Its `missing` is the first library dlopen would not find
    (dlerror's "NAME: cannot open shared object file"). `library_path`: LD_LIBRARY_PATH."""
    found: dict[str, None] = {}
    queue = list(objects)
    while queue:
        path = queue.pop(0)
        if path in found:
            continue
        linkage = linkage_of(path)
        if linkage is None:
            return Closure(tuple(found), "")
        found[path] = None
        for library in linkage.libraries:
            where = find_library(library, linkage, os.path.dirname(path), library_path)
            if where is None:
                return Closure(tuple(found), library)
            queue.append(where)
    return Closure(tuple(found), None)


def find_library(name: str, by: Linkage, origin: str, library_path: str = "") -> str | None:
    """Where the dynamic linker finds DT_NEEDED `name` of an object (ld.so(8)): a path as is;
    else DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, the directories of /etc/ld.so.conf, then the
    default ones."""
    if "/" in name:
        return name if os.path.isfile(name) else None
    own = [d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for d in by.search]
    for d in [*([] if by.runpath else own), *[d for d in library_path.split(":") if d], *(own if by.runpath else [])]:
        if os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    cached = _ld_cache().get(name)
    if cached is not None and os.path.isfile(cached):
        return cached
    for d in _system_library_dirs():
        if os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


@cache
def _ld_cache() -> dict[str, str]:
    """/etc/ld.so.cache (the format glibc writes since 2.32, "glibc-ld.so.cache1.1"): library
    name -> path, as ldconfig found them; empty when absent or in another format."""
    try:
        with open("/etc/ld.so.cache", "rb") as f:
            data = f.read()
        if not data.startswith(b"glibc-ld.so.cache1.1"):
            return {}
        count = struct.unpack_from("<I", data, 20)[0]
        found: dict[str, str] = {}
        for _flags, key, value, _os, _hwcap in struct.iter_unpack("<iIIIQ", data[48:48 + 24 * count]):
            name = data[key:data.index(b"\0", key)].decode("utf-8", "replace")
            found.setdefault(name, data[value:data.index(b"\0", value)].decode("utf-8", "replace"))
        return found
    except (OSError, struct.error, ValueError):
        return {}


@cache
def _system_library_dirs() -> tuple[str, ...]:
    """/etc/ld.so.conf's directories (its `include` globs followed), then the default ones."""
    found: list[str] = []

    def read(conf: str, depth: int = 0) -> None:
        try:
            with open(conf, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if line.startswith("include") and depth < 8:
                pattern = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
                pattern = pattern if os.path.isabs(pattern) else os.path.join(os.path.dirname(conf), pattern)
                for included in sorted(glob.glob(pattern)):
                    read(included, depth + 1)
            elif line:
                found.append(line)

    read("/etc/ld.so.conf")
    return tuple(dict.fromkeys([*found, "/lib64", "/usr/lib64", "/lib", "/usr/lib"]))
