"""A module's directives, read from its shared object: the command table httpd registers.

httpd learns a module's directives from the `cmds` member of its `module` structure (the
AP_INIT_* table, http_config.h) when LoadModule links it in. For a module httpd does not ship
(mod_fcgid, mod_security2, cPanel's mod_ruid2 and mod_lsapi, Passenger...) apachetune has no
registry entry, so the same table is read from the file LoadModule names: the exported
`<name>_module` symbol, its `cmds` pointer, then each command_rec (name, argument kind, where
it is allowed, help text) until the NULL name that ends it. Nothing is loaded or run: the
pointers are followed through the file's relocations, as the dynamic linker would set them.

Only 64-bit little-endian objects on x86-64 and AArch64 are read (what distributions ship);
anything else is None, and a module without a table stays "may define any name".
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from functools import lru_cache

from apachetune.config import elf

MODULE_MAGIC_COOKIE = 0x41503234  # "AP24": every httpd 2.4 module
MODULE_MAGIC_NUMBER_MAJOR = 20120211  # httpd 2.4's module API
_CMDS_AT = 88  # offsetof(module, cmds) on LP64
_COMMAND_REC = 40  # sizeof(command_rec) on LP64: name, func, cmd_data, req_override, args_how, errmsg
_MAX_COMMANDS = 4096  # a table longer than this is not one (a misread pointer)
# e_machine -> (R_*_RELATIVE, R_*_64): the two relocations a pointer in data carries
_RELOCATIONS = {62: (8, 1), 183: (1027, 257)}  # x86-64, AArch64
_SHT_NOBITS = 8  # a section with no bytes in the file (.bss)

# What else a module may register at start-up, by kind, and the functions it calls to do so: a
# module whose file names none of a kind's registers none of that kind, so lint's readers that
# look such names up (Require's providers, filters, Mutex types, ...) can still judge them while it
# is loaded. The names are matched as strings in the file: imported symbols, and the optional
# functions a module retrieves by name (mod_log_config's ap_register_log_handler).
REGISTRARS: dict[str, tuple[str, ...]] = {
    "providers": ("ap_register_provider", "ap_register_auth_provider", "dav_register_provider"),
    "mutex types": ("ap_mutex_register",),
    "filters": ("ap_register_output_filter", "ap_register_output_filter_protocol", "ap_register_input_filter"),
    "expression functions": ("ap_hook_expr_lookup",),
    "error log items": ("ap_register_errorlog_handler",),
    "log handlers": ("ap_register_log_handler",),
    # a module that adds modules of its own at run time may define any directive (mod_perl's
    # PerlLoadModule: a Perl package's directives)
    "directives": ("ap_add_loaded_module", "ap_add_module"),
}

# enum cmd_how, in http_config.h's order
ARGS_HOW = ("RAW_ARGS", "TAKE1", "TAKE2", "ITERATE", "ITERATE2", "FLAG", "NO_ARGS", "TAKE12",
            "TAKE3", "TAKE23", "TAKE123", "TAKE13", "TAKE_ARGV")
# req_override bits (http_config.h)
OR_LIMIT, OR_OPTIONS, OR_FILEINFO, OR_AUTHCFG, OR_INDEXES = 1, 2, 4, 8, 16
OR_ALL = OR_LIMIT | OR_OPTIONS | OR_FILEINFO | OR_AUTHCFG | OR_INDEXES
ACCESS_CONF, RSRC_CONF = 64, 128


@dataclass(frozen=True, slots=True)
class Command:
    """One command_rec: a directive as its module registers it."""

    name: str
    kind: str | None  # ARGS_HOW's name (None: a value httpd does not define)
    req_override: int
    help: str
    per_dir_config: bool = True  # its module creates per-directory configurations

    @property
    def allowed(self) -> str:
        """Where httpd allows it, worded as `httpd -L` prints it (config.c show_overrides)."""
        r = self.req_override
        if r & (OR_OPTIONS | OR_FILEINFO | OR_INDEXES) or (r & RSRC_CONF and r & (ACCESS_CONF | OR_AUTHCFG | OR_LIMIT)):
            text = "Allowed in *.conf anywhere"
        elif r & RSRC_CONF:
            text = "Allowed in *.conf only outside <Directory>, <Files>, <Location>, or <If>"
        else:
            text = "Allowed in *.conf only inside <Directory>, <Files>, <Location>, or <If>"
        if r & (OR_ALL | ACCESS_CONF) and not self.per_dir_config:
            text += " [no per-dir config]"
        if r & OR_ALL:
            text += " and in .htaccess when AllowOverride"
            if r & OR_ALL == OR_ALL:
                text += " isn't None"
            else:
                words = [w for bit, w in ((OR_AUTHCFG, "AuthConfig"), (OR_LIMIT, "Limit"),
                                          (OR_OPTIONS, "Options"), (OR_FILEINFO, "FileInfo"),
                                          (OR_INDEXES, "Indexes")) if r & bit]
                text += " includes " + " or ".join(words)
        return text

    @property
    def contexts(self) -> tuple[str, ...]:
        """The manual's context names for `allowed`, as the registry words them."""
        return contexts(self.allowed)


def contexts(allowed: str) -> tuple[str, ...]:
    """`httpd -L`'s "Allowed in ..." wording -> the manual's context names."""
    found = []
    if "only outside <Directory>" in allowed or "anywhere" in allowed:
        found += ["server config", "virtual host"]
    if "only inside <Directory>" in allowed or "anywhere" in allowed:
        found.append("directory")
    if "in .htaccess" in allowed:
        found.append(".htaccess")
    return tuple(found)


@dataclass(frozen=True, slots=True)
class ModuleTable:
    """What a module's structure says: its source file's name (as `httpd -L` prints it) and the
    directives it registers, in its table's order."""

    source: str
    commands: tuple[Command, ...]
    registers: frozenset[str] = frozenset()  # REGISTRARS' kinds it may register


def read(path: str, module_id: str) -> ModuleTable | None:
    """Module `module_id` of shared object `path`, or None when it cannot be read (not a 64-bit
    ELF object of a known machine, no such symbol, not an httpd 2.4 module, a table that does
    not read as one)."""
    key = elf.signature(path)
    return _read(path, module_id, key) if key is not None else None


def compiled_in(binary: str) -> dict[str, ModuleTable]:
    """The modules compiled into httpd's `binary` (every `*_module` structure it exports that
    reads as one: core, http, so, unixd... as this build has them), by identifier."""
    key = elf.signature(binary)
    return _compiled_in(binary, key) if key is not None else {}


@lru_cache(maxsize=4)
def _compiled_in(binary: str, signature: tuple[int, ...]) -> dict[str, ModuleTable]:
    try:
        with open(binary, "rb") as f:
            image = _Image(f.read())
    except (OSError, struct.error, IndexError, ValueError):
        return {}
    found = {}
    for sym in image.symbols:
        if sym.name.endswith("_module") and sym.shndx:
            try:
                table = image.module(sym.name)
            except (struct.error, IndexError, ValueError, UnicodeDecodeError):
                continue
            if table is not None:
                found[sym.name] = table
    return found


@lru_cache(maxsize=256)
def _read(path: str, module_id: str, signature: tuple[int, ...]) -> ModuleTable | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
        table = _Image(data).module(module_id)
        if table is None:
            return None
        # the name and its terminating NUL, not the NUL before it: a string in .rodata may
        # follow other data directly (a longer name ending the same way only errs towards silence)
        kinds = frozenset(kind for kind, names in REGISTRARS.items()
                          if any(name.encode() + b"\0" in data for name in names))
        return ModuleTable(table.source, table.commands, kinds)
    except (OSError, struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None


class _Image:
    """A 64-bit little-endian ELF object as the dynamic linker maps it: addresses to file
    offsets, and the pointer each relocated word holds once loaded."""

    def __init__(self, data: bytes) -> None:
        image = elf.Image(data)
        if not image.is64 or image.order != "<":
            raise ValueError("not a 64-bit little-endian ELF object")
        if image.machine not in _RELOCATIONS:
            raise ValueError(f"machine {image.machine}")
        self.data = data
        self.relative, self.absolute = _RELOCATIONS[image.machine]
        self.symbols = image.symbols
        self.defined = {sym.name: sym.value for sym in self.symbols if sym.shndx}
        # (start address, end address, file offset) of each section the loader maps from the file
        self.mapped = sorted((sh.addr, sh.addr + sh.size, sh.offset) for sh in image.sections
                             if sh.type != _SHT_NOBITS and sh.addr)
        # address -> (r_info, addend): a relocation's type is r_info's low half, its symbol the high
        self.relocations = {where: (info, addend) for where, info, addend in image.relocations()}

    def module(self, module_id: str) -> ModuleTable | None:
        module = self.defined.get(module_id)
        if module is None:
            return None
        version, _minor = struct.unpack_from("<ii", self.data, self._offset(module))
        magic = struct.unpack_from("<Q", self.data, self._offset(module + 40))[0]
        if magic != MODULE_MAGIC_COOKIE or version != MODULE_MAGIC_NUMBER_MAJOR:
            return None  # not a 2.4 module: httpd refuses to load it before reading its table
        source_at = self._pointer(module + 16)
        per_dir = self._pointer(module + 56) != 0  # create_dir_config
        table = self._pointer(module + _CMDS_AT)
        found: list[Command] = []
        while table:
            name_at = self._pointer(table)
            if not name_at:
                break
            if len(found) >= _MAX_COMMANDS:
                return None
            req_override, how = struct.unpack_from("<iI", self.data, self._offset(table + 24))
            help_at = self._pointer(table + 32)
            found.append(Command(self._string(name_at), ARGS_HOW[how] if how < len(ARGS_HOW) else None,
                                 req_override, self._string(help_at) if help_at else "", per_dir))
            table += _COMMAND_REC
        return ModuleTable(os.path.basename(self._string(source_at)) if source_at else "", tuple(found))

    def _offset(self, address: int) -> int:
        for start, end, offset in self.mapped:
            if start <= address < end:
                return offset + address - start
        raise ValueError(f"address {address:#x} is not in the file")

    def _pointer(self, address: int) -> int:
        """The pointer at `address` once relocated: a relative relocation's addend, a symbol's
        address plus the addend, or (no relocation: a fixed address, or RELR's addend in place)
        the word in the file."""
        relocation = self.relocations.get(address)
        if relocation is not None:
            info, addend = relocation
            kind, symbol = info & 0xFFFFFFFF, info >> 32
            if kind == self.relative:
                return addend
            if kind == self.absolute and 0 < symbol < len(self.symbols) and self.symbols[symbol].shndx:
                return self.symbols[symbol].value + addend
            raise ValueError(f"relocation {kind} at {address:#x}")  # a pointer into another object
        return int(struct.unpack_from("<Q", self.data, self._offset(address))[0])

    def _string(self, address: int) -> str:
        return self._c_string_at(self._offset(address))

    def _c_string_at(self, offset: int) -> str:
        return self.data[offset:self.data.index(b"\0", offset)].decode("utf-8")
