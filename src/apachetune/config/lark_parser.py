"""The grammar-driven parser: grammars/httpd.lark with our line lexer, every rule of httpd's.

parser.parse_text uses it for every file the C module (fastlex.c) hands back, and for every file
when there is no C module: it is the reference the C module is tested against, and the one place
that reports syntax errors.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedInput
from lark.lexer import Lexer

from apachetune.config.parser import (
    _FIRST_WORD,
    _LOGICAL_LINE,
    CONDITIONAL_SECTIONS,
    MAX_LOGICAL_LINE,
    MAX_NESTING,
    _grammar,
    _logical,
)
from apachetune.config.tree import Blank, Comment, Directive, Node, Section
from apachetune.config.words import WHITESPACE, next_word, split_words
from apachetune.errors import ConfigSyntaxError, Position

_intern = sys.intern  # directive names repeat on every line: one string each, and faster lookups


class _LineToken(Token):
    __slots__ = ("node",)
    node: Any  # the line's Node, or a LEAVES run's list of nodes


class _LineLexer(Lexer):
    """Lark's lexer for grammars/httpd.lark: logical lines, typed as httpd types them."""

    filename = "<string>"  # the file being parsed (set by parse_text)

    def __init__(self, lexer_conf: object = None) -> None:
        pass

    def _error(self, message: str, node: Node) -> ConfigSyntaxError:
        return ConfigSyntaxError(message, Position(self.filename, node.line, node.column))

    @staticmethod
    def _leaves(nodes: list[Node]) -> _LineToken:
        first, last = nodes[0], nodes[-1]
        out = _LineToken("LEAVES", "", start_pos=first.start, line=first.line, column=first.column,
                         end_line=last.end_line, end_column=1, end_pos=last.end)
        out.node = nodes
        return out

    # Lark calls a custom lexer without __future_interface__ with the whole text (its interface 0),
    # not with the lexer state its base class declares.
    # One loop on purpose (the one function over ruff's complexity limit): it is the cold
    # parse's hottest path, a pass per logical line of every file (docs/benchmarks.md), where a
    # function call per step per line would show.
    def lex(self, text: str) -> Iterator[_LineToken]:  # type: ignore[override]  # noqa: C901
        """LEAVES, SECTION_OPEN and SECTION_CLOSE tokens for the parser, one logical line at a time.

        A section with no section inside is complete when its end tag is read, and goes to the
        parser as one of the leaves around it: the common <Directory>, <Location> and <IfModule>
        blocks then cost the parser nothing, and its work follows the nesting, not the lines."""
        filename = _LineLexer.filename
        stack: list[Section] = []
        leaves: list[Node] = []  # nodes of the innermost open level not yet handed to the parser
        pending: _LineToken | None = None  # the innermost start tag, while no section opened inside
        eof = 0
        line_no = 1
        for m in _LOGICAL_LINE(text):
            raw = m.group()
            start = m.start()
            first_line = line_no
            line_no += raw.count("\n")
            last_line = line_no - (raw[-1] == "\n")
            end = eof = start + len(raw)
            content = _logical(raw)
            if not content:
                leaves.append(Blank(filename, first_line, 1, last_line, start, end))
                continue
            if len(content) >= MAX_LOGICAL_LINE:
                # httpd reads a logical line into a buffer of 16 MiB (VARBUF_MAX_LEN)
                raise ConfigSyntaxError(f"Error reading {filename} at line {last_line}: Line too long",
                                        Position(filename, last_line, 1))
            lead = len(raw) - len(raw.lstrip(WHITESPACE))
            if lead:
                line = first_line + raw.count("\n", 0, lead)
                column = lead - (raw.rfind("\n", 0, lead) + 1) + 1
            else:
                line, column = first_line, 1
            if content[0] == "#":
                leaves.append(Comment(filename, line, column, last_line, start, end, text=content))
                continue
            first = _FIRST_WORD(content)
            assert first is not None  # every part of the pattern is optional: it always matches
            word, rest = first.group(1), first.end()
            if "\\" in word or word[:1] in "\"'":  # quoting or escapes: httpd's full rules
                word, rest = next_word(content)
            if word.startswith("</"):
                here = Blank(filename, line, column, last_line, start, end)
                top = self._close(stack, word, here)
                if pending is not None and pending.node is top:
                    leaves = [self._complete(top, leaves)]
                    pending = None
                else:
                    if leaves:
                        yield self._leaves(leaves)
                    leaves = []
                    yield self._token("SECTION_CLOSE", raw, start, first_line, last_line, here)
            elif word.startswith("<"):
                if pending is not None:
                    yield pending
                if leaves:
                    yield self._leaves(leaves)
                leaves = []
                section = self._open(stack, word, content, rest, line, column, last_line, start, end)
                pending = self._token("SECTION_OPEN", raw, start, first_line, last_line, section)
            else:
                raw_args = content[rest:]
                args = split_words(raw_args)
                if len(args) == 1 and args[0] == raw_args:
                    args = [raw_args]  # one plain word: share the string (memory per line)
                # the file's own text after the name (no continuation joined, the name as
                # written): read back from the file when asked (Directive.raw_args)
                content_end = start + len(raw.rstrip(WHITESPACE))
                plain = (content_end - start - lead == len(content) and text.startswith(content, start + lead)
                         and content.startswith(word))
                leaves.append(Directive(
                    filename, line, column, last_line, start, end,
                    name=_intern(word), args=args, joined=None if plain else raw_args,
                    content_end=content_end,
                ))
        # End of file: conditional sections may stay open; others may not.
        for section in reversed(stack):
            if section.lname not in CONDITIONAL_SECTIONS:
                raise self._error(
                    f"<{section.name}> was not closed (expected </{section.name}> before the end of the file)",
                    section,
                )
        while stack:
            section = stack.pop()
            section.closed = False
            section.close_start = section.end = eof
            section.close_line, section.close_column = section.end_line, 1
            if pending is not None and pending.node is section:
                leaves = [self._complete(section, leaves)]
                pending = None
                continue
            if leaves:
                yield self._leaves(leaves)
            leaves = []
            yield self._token("SECTION_CLOSE", "", eof, section.end_line, section.end_line,
                              Blank(filename, section.end_line, 1, section.end_line, eof, eof))
        if leaves:
            yield self._leaves(leaves)

    @staticmethod
    def _token(kind: str, raw: str, start: int, first_line: int, last_line: int, node: Node) -> _LineToken:
        out = _LineToken(kind, raw, start_pos=start, line=first_line, column=1, end_line=last_line,
                         end_column=1, end_pos=start + len(raw))
        out.node = node
        return out

    def _open(self, stack: list[Section], word: str, content: str, rest: int, line: int, column: int,
              last_line: int, start: int, end: int) -> Section:
        """A start tag: its section, pushed on `stack` (httpd's checks of the tag on the way)."""
        filename = _LineLexer.filename
        cmd = word[:-1] if word.endswith(">") and len(word) > 1 else word
        args_text = content[rest:]
        here = Node(filename, line, column, last_line, start, end)
        if not args_text and cmd is not word:
            raw_args = ""
        else:
            gt = args_text.rfind(">")
            if gt < 0:
                raise self._error(f"{cmd}> directive missing closing '>'", here)
            raw_args = args_text[:gt].strip(WHITESPACE)
        if len(stack) >= MAX_NESTING:
            raise self._error(f"{cmd}> is nested more than {MAX_NESTING} sections deep; refusing to read "
                              "further", here)
        section = Section(filename, line, column, last_line, start, end, name=_intern(cmd[1:]),
                          args=split_words(raw_args), raw_args=raw_args, tag_args=args_text,
                          open_end_line=last_line, open_end=end)
        stack.append(section)
        return section

    def _close(self, stack: list[Section], word: str, here: Blank) -> Section:
        """An end tag: the section it closes, popped from `stack` (httpd's checks of the tag)."""
        if not word.endswith(">"):
            raise self._error(f"{word}> directive missing closing '>'", here)
        name = word[2:-1]
        if not stack:
            raise self._error(f"{word} without matching <{name}> section", here)
        top = stack[-1]
        if name.lower() != top.lname:
            raise self._error(f"Expected </{top.name}> but saw {word}", here)
        stack.pop()
        top.close_start, top.close_line, top.close_column = here.start, here.line, here.column
        top.end, top.end_line = here.end, here.end_line
        return top

    @staticmethod
    def _complete(section: Section, children: list[Node]) -> Section:
        """A section with no section inside, finished here rather than by the parser."""
        section.children = children
        for child in children:
            child.parent = section
        if not section.closed and children:
            section.end_line = max(section.end_line, children[-1].end_line)
        return section


class _Run:
    """Stand-in for Lark's Tree on its internal repetition rules, which it inlines at once."""

    __slots__ = ("children",)

    def __init__(self, children: list[Any]) -> None:
        self.children = children


class _Build(Transformer[Token, Any]):
    """Lark callbacks: turn the parse into nodes as it is reduced (no second tree)."""

    def __default__(self, data: str, children: list[Any], meta: Any) -> _Run:
        return _Run(children)

    @staticmethod
    def _nodes(items: list[Any]) -> list[Node]:
        nodes: list[Node] = []
        for item in items:
            if isinstance(item, _LineToken):
                nodes.extend(item.node)  # a LEAVES run
            else:
                nodes.append(item)  # a Section
        return nodes

    def start(self, items: list[Any]) -> list[Node]:
        return self._nodes(items)

    def section(self, items: list[Any]) -> Section:
        section: Section = items[0].node
        children = self._nodes(items[1:-1])
        section.children = children
        for child in children:
            child.parent = section
        if section.closed:
            last_node = items[-1].node
            section.end, section.end_line = last_node.end, last_node.end_line
        elif children:
            section.end_line = max(section.end_line, children[-1].end_line)
        return section


@lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(_grammar(), parser="lalr", lexer=_LineLexer, transformer=_Build(), maybe_placeholders=False)


def parse_children(text: str, filename: str) -> list[Node]:
    """The top-level nodes of a file's (non-empty) text; ConfigSyntaxError at the position at fault."""
    _LineLexer.filename = filename
    try:
        return _lark().parse(text)  # type: ignore[return-value]  # _Build returns nodes
    except ConfigSyntaxError:
        raise
    except UnexpectedInput as e:  # should not happen: the typer balances sections
        raise ConfigSyntaxError("unexpected text", Position(filename, e.line, e.column)) from None
    except LarkError as e:  # pragma: no cover - defensive
        raise ConfigSyntaxError(f"cannot parse: {e}", Position(filename, 1, 1)) from None
