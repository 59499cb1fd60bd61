"""Text -> lossless tree, reading lines the way httpd does.

Each file goes first to the C module (config/fastlex.c, built on first use; config/native.py),
which builds the tree for the common lines and hands anything unusual back; the Lark path
(config/lark_parser.py) then parses that file. Both build the same tree.

In the Lark path, the grammar (grammars/httpd.lark) is LALR over three kinds of token: a run of
lines that neither open nor close a section, a section's start tag, its end tag. Our lexer (`_LineLexer`) cuts the
text into logical lines with the grammar's LINE pattern and decides what each line is with
httpd's own rules (server/config.c ap_build_config_sub), checking start/end tag names, so every
syntax error is reported at the line httpd would blame, with a message in httpd's words.

Sections left open at the end of a file are an error ("<X> was not closed."),
except conditional sections (<IfModule>, <IfDefine>, ...): httpd reads the body
of a true one to the end of the file without complaint, and only the resolver
knows whether it is true, so those are kept with `closed=False`.
"""

from __future__ import annotations

import os
import re
import stat

from apachetune.config import native
from apachetune.config.tree import ConfigFile, Node
from apachetune.config.words import WHITESPACE
from apachetune.errors import ConfigSyntaxError, Position
from apachetune.paths import grammars_dir

# Sections httpd evaluates while reading (EXEC_ON_READ) and may leave open at EOF.
CONDITIONAL_SECTIONS = frozenset(
    {"ifmodule", "ifdefine", "ifversion", "iffile", "ifdirective", "ifsection"}
)

_CONTINUATION = re.compile(r"\\\r?\n")
_FIRST_WORD = re.compile(r"([^ \t\n\v\f\r]*)[ \t\n\v\f\r]*").match

MAX_LOGICAL_LINE = 16 * 1024 * 1024 - 1  # httpd's VARBUF_MAX_LEN, less the terminating NUL


def _logical(raw: str) -> str:
    """A logical line's content: continuations joined verbatim, then trimmed (cfg_trim_line)."""
    if "\\" in raw:
        raw = _CONTINUATION.sub("", raw)
    return raw.strip(WHITESPACE)


# Sections nested deeper than this are refused with a positioned error (httpd has no limit; real
# configurations nest a handful deep). The CLI runs in a thread whose stack carries this depth.
MAX_NESTING = 10_000


def _grammar() -> str:
    return (grammars_dir() / "httpd.lark").read_text()


def _line_pattern() -> str:
    """LINE's pattern in the grammar: the one definition of a logical line."""
    m = re.search(r"^LINE: /(.*)/$", _grammar(), re.M)
    if m is None:  # pragma: no cover - the grammar ships with the package
        raise RuntimeError("grammars/httpd.lark defines no LINE terminal")
    return m.group(1)


_LOGICAL_LINE = re.compile(_line_pattern()).finditer


def _decode(data: str | bytes) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "surrogateescape")
    return data


class SharedWords:
    """What the files of one tree share: one string per distinct word, and one argument list per
    distinct argument text (a node's args are read-only). A 1,000-vhost tree repeats its lines."""

    __slots__ = ("words", "arglists")

    # Entries kept at most: the tables hold every distinct word and argument text seen, and most
    # of a large tree's are unique (names, paths): at 200,000 lines the argument texts kept as keys
    # were 0.8x the configuration's size at the end of a resolve, for nothing. Emptied when
    # larger, the repeated lines are shared again from the next file on.
    LIMIT = 8192

    def __init__(self) -> None:
        self.words: dict[str, str] = {}
        self.arglists: dict[str, list[str]] = {}

    def trim(self) -> None:
        for table in (self.words, self.arglists):
            if len(table) > self.LIMIT:
                table.clear()


def parse_text(data: str | bytes, filename: str = "<string>", shared: SharedWords | None = None) -> ConfigFile:
    """Parse a whole file's content. Raises ConfigSyntaxError with the position at fault."""
    text = _decode(data)
    newline = "\r\n" if "\r\n" in text[: text.find("\n") + 1] else "\n"
    if not text:
        return ConfigFile(filename, text, [], newline)
    lexed = _cut_at_nul(text) if "\0" in text else text
    fast = native.fastlex()
    children: list[Node] | None = fast.parse(lexed, filename, *_tables(shared)) if fast is not None else None
    if children is None:  # no C module, or a file with something only the Lark path handles
        from apachetune.config.lark_parser import parse_children

        children = parse_children(lexed, filename)
    if shared is not None:
        shared.trim()
    cf = ConfigFile(filename, text, children, newline)
    for node in children:
        node.parent = cf
    return cf


_FROM_NUL = re.compile("\0[^\n]*")


def _cut_at_nul(text: str) -> str:
    """What httpd reads of lines with a NUL byte: ap_cfg_getline takes a line's strlen, so it
    ends at the NUL (the rest of that physical line, its backslash-newline included, is never
    read). The rest is blanked with spaces of the same length, so that positions stay those of the
    file and the file itself (ConfigFile.text) keeps every byte."""
    return _FROM_NUL.sub(lambda m: " " * len(m.group()), text)


def _tables(shared: SharedWords | None) -> tuple[dict[str, str], dict[str, list[str]]]:
    return (shared.words, shared.arglists) if shared is not None else ({}, {})


MAX_FILE_BYTES = 256 * 1024 * 1024  # far above any real configuration; bounds memory on a hostile one


class ConfigReadError(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def read_config_bytes(path: str) -> bytes:
    """A configuration file's bytes, read as httpd reads one: only a regular file (AH00554 for
    /dev/zero, a FIFO or /dev/stdin), opened without blocking, never more than MAX_FILE_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise ConfigReadError(f"Could not open configuration file {path}: {e.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigReadError(f"AH00554: Access to file {path} denied by server: not a regular file")
        chunks = []
        total = 0
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError as e:
                raise ConfigReadError(f"Error reading {path} at line 1: {e.strerror}") from None
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise ConfigReadError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB; not a configuration file")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_file(path: str | os.PathLike[str]) -> ConfigFile:
    path = os.fspath(path)
    try:
        data = read_config_bytes(path)
    except ConfigReadError as e:
        raise ConfigSyntaxError(e.message, Position(path, 1, 1)) from None
    return parse_text(data, path)
