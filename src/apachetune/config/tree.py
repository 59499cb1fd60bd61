"""The lossless concrete tree of one configuration file, and its edit API.

Every node covers a span [start, end) of the file's text, whole logical lines
(leading white space and the newline included), so the nodes of a file cover
all of its text with no gap: the file can always be written back byte for
byte. A file's bytes are decoded as UTF-8 with "surrogateescape", so bytes that
are not UTF-8 survive the round trip unchanged.

Edits never re-render the file: they are byte-range patches (`Edit`) on the
original text, applied in one pass by `ConfigFile.render()`, so every byte a
change does not touch stays as it was (comments, alignment, newline style).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from apachetune.config.words import WHITESPACE, join_words
from apachetune.errors import Position


@dataclass(eq=False, slots=True)
class Node:
    file: str
    line: int  # 1-based line of the node's first non-blank character
    column: int  # 1-based column of that character
    end_line: int  # last physical line (httpd numbers a directive by its last line)
    start: int  # offset of the node's first character (start of its first line)
    end: int  # offset after its last character (after the newline)
    parent: Section | ConfigFile | None = field(default=None, repr=False)

    @property
    def position(self) -> Position:
        return Position(self.file, self.line, self.column)

    def file_text(self) -> str:
        """The text of the file the node is in (its ConfigFile's)."""
        up = self.parent
        while isinstance(up, Section):
            up = up.parent
        if up is None:
            raise ValueError(f"{self.file}:{self.line}: a node outside any file has no text")
        return up.text


def _content_start(node: Node) -> int:
    # Derived, not kept (a slot a line is a seventh of the text at 200k lines): a logical line's
    # leading blanks never span a newline (a blank line is a Blank node; a backslash is a word),
    # so the first non-blank character is on the node's first line, at its column.
    return node.start + node.column - 1


@dataclass(eq=False, slots=True)
class Directive(Node):
    name: str = ""
    args: list[str] = field(default_factory=list)
    # The argument text when it is not the file's own text after the name (continuation lines
    # joined, a quoted or escaped name); None: raw_args reads it from the file when asked. Most
    # lines are plain, and a copy of each line's arguments was an eighth of a parsed tree.
    joined: str | None = None
    content_end: int = 0  # offset after the last non-blank character of the line(s)

    @property
    def content_start(self) -> int:
        """Offset of the name's first character."""
        return _content_start(self)

    @property
    def lname(self) -> str:
        return self.name.lower()

    @property
    def raw_args(self) -> str:
        """The logical line after the name: continuations joined, trimmed."""
        if self.joined is not None:
            return self.joined
        return self.file_text()[self.content_start + len(self.name):self.content_end].lstrip(WHITESPACE)


@dataclass(eq=False, slots=True)
class Section(Node):
    name: str = ""  # without "<"
    args: list[str] = field(default_factory=list)
    raw_args: str = ""  # text between the name and the last ">" of the start tag
    tag_args: str = ""  # everything after the name on the start tag's line (what httpd stores)
    children: list[Node] = field(default_factory=list)
    open_end_line: int = 0  # last physical line of the start tag (httpd's line number)
    open_end: int = 0  # offset after the start tag's line(s)
    close_start: int = 0  # offset of the end tag's line (== end when unclosed)
    close_line: int = 0
    close_column: int = 0
    closed: bool = True  # False: a conditional section left open at end of file

    @property
    def content_start(self) -> int:
        """Offset of the start tag's "<"."""
        return _content_start(self)

    @property
    def lname(self) -> str:
        return self.name.lower()


@dataclass(eq=False, slots=True)
class Comment(Node):
    text: str = ""


@dataclass(eq=False, slots=True)
class Blank(Node):
    pass


@dataclass(frozen=True, slots=True)
class Edit:
    start: int
    end: int  # exclusive; start == end inserts
    text: str
    seq: int = 0  # keeps several inserts at one offset in the order they were made


class ConfigFile:
    """One parsed file: its text, its top-level nodes, and pending edits."""

    def __init__(self, path: str, text: str, children: list[Node], newline: str = "\n"):
        self.path = path
        self.text = text
        self.children = children
        self.newline = newline
        self.edits: list[Edit] = []
        self._lines: list[str] | None = None  # physical lines, split once (reports ask per finding)

    # -- reading -------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The original bytes, exactly."""
        return self.text.encode("utf-8", "surrogateescape")

    def walk(self) -> Iterator[Node]:
        """Every node, depth first, in document order."""
        stack: list[Iterator[Node]] = [iter(self.children)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                continue
            yield node
            if isinstance(node, Section):
                stack.append(iter(node.children))

    def directives(self) -> Iterator[Directive]:
        return (n for n in self.walk() if isinstance(n, Directive))

    def sections(self) -> Iterator[Section]:
        return (n for n in self.walk() if isinstance(n, Section))

    def line_text(self, line: int) -> str:
        """Physical line `line` (1-based) without its newline, for reports."""
        if self._lines is None:
            self._lines = self.text.split("\n")
        lines = self._lines
        if 1 <= line <= len(lines):
            return lines[line - 1].rstrip("\r")
        return ""

    # -- editing -------------------------------------------------------------

    def _add(self, start: int, end: int, text: str) -> None:
        for e in self.edits:
            if start < e.end and e.start < end:
                raise ValueError(f"edit {start}-{end} overlaps an earlier edit {e.start}-{e.end}")
        self.edits.append(Edit(start, end, text, len(self.edits)))

    def set_args(self, directive: Directive, args: list[str]) -> None:
        """Replace a directive's arguments, keeping its name, indentation and spacing."""
        text = self.text
        region = text[directive.content_start : directive.content_end]
        name_end = directive.content_start + len(directive.name)
        if "\\\n" in region or "\\\r\n" in region or text[directive.content_start:name_end] != directive.name:
            # Continuation lines or an unusual name: rewrite the whole logical line's content.
            self._add(directive.content_start, directive.content_end,
                      directive.name + (" " + join_words(args) if args else ""))
            return
        sep_end = name_end
        while sep_end < directive.content_end and text[sep_end] in WHITESPACE:
            sep_end += 1
        if not args:
            self._add(name_end, directive.content_end, "")
        elif sep_end == name_end:  # no arguments before: add one space
            self._add(name_end, directive.content_end, " " + join_words(args))
        else:
            self._add(sep_end, directive.content_end, join_words(args))

    def _indent_unit(self) -> str:
        for node in self.walk():
            if isinstance(node, (Directive, Section)) and node.parent is not self:
                lead = self.text[node.start : node.content_start]
                if lead.startswith("\t"):
                    return "\t"
                if lead:
                    return lead[: len(lead) - len(lead.lstrip(" "))] or "    "
        return "    "

    def _indent_of(self, node: Node) -> str:
        return self.text[node.start : getattr(node, "content_start", node.start)]

    def insert(self, parent: Section | ConfigFile, index: int, name: str, args: list[str]) -> None:
        """Insert `name args` as child number `index` of `parent` (a Section or the file)."""
        siblings = parent.children
        if not 0 <= index <= len(siblings):
            raise IndexError(f"index {index} out of range for {len(siblings)} children")
        structural = [n for n in siblings if isinstance(n, (Directive, Section))]
        near = [n for n in siblings[:index] if isinstance(n, (Directive, Section))]
        model = near[-1] if near else (structural[0] if structural else None)
        if model is not None:
            indent = self._indent_of(model)
        elif isinstance(parent, Section):
            indent = self._indent_of(parent) + self._indent_unit()
        else:
            indent = ""
        line = indent + name + (self._separator_like(model, name) + join_words(args) if args else "") + self.newline
        if index < len(siblings):
            at = siblings[index].start
        elif isinstance(parent, Section):
            at = parent.close_start
        else:
            at = len(self.text)
        prefix = ""
        if at == len(self.text) and self.text and not self.text.endswith("\n"):
            prefix = self.newline  # the file's last line had no newline
        self._add(at, at, prefix + line)

    def _separator_like(self, model: Node | None, name: str) -> str:
        """Between a new directive's name and its arguments: one space, or, where the directive
        beside it aligns its arguments in a column with spaces (Debian's mpm_*.conf), enough to
        reach the same column."""
        if not isinstance(model, Directive) or not model.args:
            return " "
        name_end = model.content_start + len(model.name)
        if self.text[model.content_start:name_end] != model.name:
            return " "
        sep_end = name_end
        while sep_end < model.content_end and self.text[sep_end] == " ":
            sep_end += 1
        column = sep_end - model.content_start
        if sep_end - name_end < 2 or sep_end >= model.content_end or self.text[sep_end] in WHITESPACE:
            return " "
        return " " * max(1, column - len(name))

    def append_text(self, text: str) -> None:
        """Add whole lines at the end of the file (a new block), in the file's newline style."""
        prefix = self.newline if self.text and not self.text.endswith("\n") else ""
        self._add(len(self.text), len(self.text), prefix + text.replace("\n", self.newline))

    def comment_out(self, directive: Directive) -> None:
        """Turn a directive into a comment ("#" before its name; httpd joins a comment's
        continuation lines too, so the whole directive goes), keeping it to restore by hand."""
        self._add(directive.content_start, directive.content_start, "#")

    def remove(self, node: Node) -> None:
        """Delete a node's whole line(s) (a section with everything inside it)."""
        self._add(node.start, node.end, "")

    def render(self) -> bytes:
        """The file with every pending edit applied; untouched bytes are unchanged."""
        if not self.edits:
            return self.to_bytes()
        out = []
        pos = 0
        for e in sorted(self.edits, key=lambda e: (e.start, e.end, e.seq)):
            out.append(self.text[pos : e.start])
            out.append(e.text)
            pos = max(pos, e.end)
        out.append(self.text[pos:])
        return "".join(out).encode("utf-8", "surrogateescape")
