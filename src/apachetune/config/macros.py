"""mod_macro as httpd 2.4 runs it: `<Macro name $arg ...>` bodies kept as lines, `Use name
value ...` expanded into a pseudo-file that is read in place of the `Use` line, `UndefMacro`.

Facts from modules/core/mod_macro.c (2.4.x): a body is the logical lines up to the matching
`</Macro>`, comment lines dropped (blank ones kept: they count in line numbers); arguments are
replaced textually, at each point the earliest occurring name (the longest when several start
there), `@name` values double-quoted with `\\` escapes; the expansion is named
`macro 'name' (defined on line N of "file") used on line M of "file"`, which is also how a
recursive use is detected. Macro names are case-insensitive.
"""

from __future__ import annotations

from dataclasses import dataclass

from apachetune.config.parser import _LOGICAL_LINE, _logical
from apachetune.config.words import split_words

ESCAPE_ARG = "@"


class MacroError(Exception):
    """httpd's own wording; the caller adds the position."""


@dataclass(frozen=True)
class Macro:
    name: str  # lower case
    arguments: tuple[str, ...]
    lines: tuple[str, ...]  # the body's logical lines, comments dropped
    location: str  # 'defined on line N of "file"'
    # The body as a str.format template, `{i}` where argument i goes, cut once: the scan never
    # looks into a value, so where the values go depends on the body alone (a tree of 1,250 Use
    # lines spent a third of its resolve scanning the same body again)
    template: str = ""


def define(header: str, body_text: str, line: int, filename: str) -> Macro:
    """A `<Macro ...>` section: `header` is the text between `<Macro` and the last `>`."""
    words = split_words(header)
    if not words or not words[0]:
        raise MacroError("<Macro macro definition: name not found")
    name, arguments = words[0].lower(), tuple(words[1:])
    location = f'defined on line {line} of "{filename}"'
    for i, arg in enumerate(arguments):
        if not arg:
            raise MacroError(f"macro '{name}' ({location}): empty argument #{i + 1} name")
        for j in range(i + 1, len(arguments)):
            if arg == arguments[j]:
                raise MacroError(f"argument name conflict in macro '{name}' ({location}): argument "
                                 f"'{arg}': #{i + 1} and #{j + 1}, change argument names!")
    lines = []
    for m in _LOGICAL_LINE(body_text):
        content = _logical(m.group())
        if not content.startswith("#"):
            lines.append(content)
    template = "".join(p.replace("{", "{{").replace("}", "}}") if isinstance(p, str) else f"{{{p}}}"
                       for content in lines for p in [*_pieces(content, arguments), "\n"])
    return Macro(name, arguments, tuple(lines), location, template)


def expand(macro: Macro, values: list[str], line: int, filename: str) -> tuple[str, str]:
    """A `Use` of `macro` with `values` on `line` of `filename`: (the pseudo-file's name, its
    text)."""
    if f"macro '{macro.name}'" in filename:
        raise MacroError(f"recursive use of macro '{macro.name}' is invalid")
    if len(values) != len(macro.arguments):
        raise MacroError(f"macro '{macro.name}' ({macro.location}) used with {len(values)} arguments "
                         f"instead of {len(macro.arguments)}")
    where = f'macro \'{macro.name}\' ({macro.location}) used on line {line} of "{filename}"'
    given = [_value(name, value) for name, value in zip(macro.arguments, values, strict=True)]
    return where, macro.template.format(*given)


def _value(name: str, value: str) -> str:
    """What an argument becomes: `@name` values double-quoted with backslash escapes."""
    if name.startswith(ESCAPE_ARG):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def _pieces(line: str, names: tuple[str, ...]) -> list[str | int]:
    """mod_macro's scan: left to right, the earliest name found (the longest of those starting at
    the same place) is an argument, and the scan continues after it."""
    out: list[str | int] = []
    pos = 0
    while True:
        chosen, which = -1, -1
        for i, name in enumerate(names):
            found = line.find(name, pos)
            if found >= 0 and (chosen < 0 or found < chosen or
                               (found == chosen and len(names[which]) < len(name))):
                chosen, which = found, i
        if chosen < 0:
            if pos < len(line):
                out.append(line[pos:])
            return out
        if chosen > pos:
            out.append(line[pos:chosen])
        out.append(which)
        pos = chosen + len(names[which])
