"""The configuration httpd would run: what the resolver produces.

Read-time directives (ServerRoot, Define, Include, LoadModule, the If*
sections...) have done their work and are gone from the tree, exactly as in
httpd's own config tree; everything else keeps its origin (the tree node,
hence file, line and column) and the Include lines that led to it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from apachetune.config.init_defines import InitDefines
from apachetune.config.tree import ConfigFile, Directive, Node, Section
from apachetune.errors import Position


class _Lowered(dict[str, str]):
    """A name -> its lower case, one string per name: looked up, not kept in every item (a slot
    an item was a seventh of the text at 200k lines)."""

    def __missing__(self, name: str) -> str:
        low = self[name] = sys.intern(name.lower())
        return low


_LOWER = _Lowered()


def lower_name(name: str) -> str:
    """`name`.lower(), one string per name (no new string per line)."""
    return _LOWER[name]


@dataclass(eq=False, slots=True)
class ResolvedDirective:
    name: str
    args: list[str]  # after ${VAR} substitution, split like httpd
    node: Directive
    include_chain: tuple[Position, ...] = ()
    conditions: tuple[str, ...] = ()  # enclosing conditional sections, e.g. "<IfModule mpm_event_module>"
    parents: tuple[ResolvedSection, ...] = field(default=(), init=False, repr=False)  # see in_order()

    # The argument text after ${VAR} substitution changed it; None: the line's own. Kept by
    # SubstitutedDirective only: a slot on every directive was a fifth of the text at 200k lines.
    substituted: ClassVar[str | None] = None

    @property
    def lname(self) -> str:
        """name.lower(), the one string for that name (the checks compare it on every item)."""
        return _LOWER[self.name]

    @property
    def args_text(self) -> str:
        """The argument text httpd keeps (after substitution), as DUMP_CONFIG prints it: the
        line's own when nothing was substituted (read back from the file, not kept twice)."""
        return self.node.raw_args if self.substituted is None else self.substituted

    @property
    def position(self) -> Position:
        return self.node.position

    @property
    def file(self) -> str:
        return self.node.file

    @property
    def line(self) -> int:
        return self.node.line


@dataclass(eq=False, slots=True)
class SubstitutedDirective(ResolvedDirective):
    """A directive whose arguments ${VAR} substitution changed: it keeps the new text."""

    substituted: str | None = None  # type: ignore[misc]  # the instance's value, not the class's


@dataclass(eq=False, slots=True)
class ResolvedSection:
    name: str
    args: list[str]
    args_text: str  # everything after the name on the start tag (httpd keeps the '>')
    node: Section
    children: list[ResolvedDirective | ResolvedSection] = field(default_factory=list)
    include_chain: tuple[Position, ...] = ()
    conditions: tuple[str, ...] = ()
    parents: tuple[ResolvedSection, ...] = field(default=(), init=False, repr=False)  # see in_order()

    @property
    def lname(self) -> str:
        return _LOWER[self.name]

    @property
    def position(self) -> Position:
        return self.node.position


@dataclass(frozen=True, slots=True)
class InactiveSection:
    """A conditional section whose condition was false: present in the files, not in force."""

    node: Section
    reason: str
    include_chain: tuple[Position, ...] = ()


@dataclass(frozen=True, slots=True)
class Inclusion:
    """One file read because of an Include (or the main file itself, with no `by`)."""

    path: str
    by: Position | None
    depth: int


def under_root(root: str | None, path: str) -> str:
    """`path` (absolute, as the configuration names it) in a tree copied under `root` (--root)."""
    if root is None or path == root or path.startswith(root + os.sep):
        return path
    return os.path.join(root, path.lstrip(os.sep))


@dataclass(eq=False)
class EffectiveConfig:
    main_file: str
    server_root: str
    files: dict[str, ConfigFile]
    tree: list[ResolvedDirective | ResolvedSection]
    modules: dict[str, str]  # module identifier -> shared object ("(built-in)" for compiled-in)
    defines: dict[str, str | None]
    mpm: str | None
    mpms_loaded: list[str]
    inactive: list[InactiveSection]
    inclusions: list[Inclusion]
    warnings: list[str]
    httpd_version: str
    module_positions: dict[str, Position] = field(default_factory=dict)  # LoadModule lines
    generated_files: set[str] = field(default_factory=set)  # macro expansions: in files, not on disk
    missing_modules: list[tuple[str, str, Position]] = field(default_factory=list)  # LoadModule of a missing .so
    # LoadModule of a file whose directory is not on this machine either: a tree copied from
    # another server, or (for a tree installed here) a mistyped path
    modules_elsewhere: list[tuple[str, str, Position]] = field(default_factory=list)
    # LoadModule whose identifier the shared object does not export (LoadModule rewrite_modul ...)
    wrong_identifiers: list[tuple[str, str, Position]] = field(default_factory=list)
    # LoadModule of a module needing another's symbols before that one is loaded:
    # (module, file, position, a symbol it lacks, the module file defining it)
    unresolved_modules: list[tuple[str, str, Position, str, str]] = field(default_factory=list)
    # LoadModule of a module needing a shared library the dynamic linker does not find (its name)
    missing_libraries: list[tuple[str, str, Position, str]] = field(default_factory=list)
    # LoadModule of a module the resolver takes as compiled in: (module, file, position)
    built_in_loads: list[tuple[str, str, Position]] = field(default_factory=list)
    httpd_version_source: str = "default"  # where httpd_version came from (--httpd-version, installed)
    running_binary: str | None = None  # this machine's httpd, when it is the one that runs the tree
    mpm_source: str = ""  # why the MPM is taken as compiled in (no LoadModule); "" when loaded or assumed
    sysroot: str | None = None  # lint --root: where the tree's absolute paths are on this machine
    init_defines: InitDefines | None = None  # the -D names the distribution's start-up script gives

    def local(self, path: str) -> str:
        """Where an absolute path the configuration names is on this machine (under --root)."""
        return under_root(self.sysroot, path)

    @property
    def directives(self) -> list[ResolvedDirective]:
        """Server-context directives, in order (not those inside <VirtualHost>, <Directory>...)."""
        return [d for d in self.tree if isinstance(d, ResolvedDirective)]

    @property
    def sections(self) -> list[ResolvedSection]:
        return [s for s in self.tree if isinstance(s, ResolvedSection)]

    def in_order(self) -> Iterator[ResolvedDirective | ResolvedSection]:
        """Every resolved item in document order, each with `parents` (its enclosing sections, the
        outermost first) set on the way: a section's children exist before the section does, so
        the scopes are filled in here. Items, not (item, scopes) pairs, and no list of them kept:
        on a 200,000-line tree the pairs alone were twice the configuration's text, a list a
        tenth of it."""
        stack: list[tuple[Iterator[ResolvedDirective | ResolvedSection], tuple[ResolvedSection, ...]]] = [
            (iter(self.tree), ())]
        while stack:
            items, parents = stack[-1]
            item = next(items, None)
            if item is None:
                stack.pop()
                continue
            item.parents = parents
            yield item
            if isinstance(item, ResolvedSection) and item.children:
                stack.append((iter(item.children), (*parents, item)))

    def walk(self) -> Iterator[tuple[ResolvedDirective | ResolvedSection, tuple[ResolvedSection, ...]]]:
        """Every resolved item with its enclosing scoped sections, in document order."""
        return ((item, item.parents) for item in self.in_order())

    def all(self, name: str) -> list[ResolvedDirective]:
        """Every server-context directive called `name` (case-insensitive), in order."""
        lname = name.lower()
        return [d for d in self.directives if d.lname == lname]

    def get(self, name: str) -> ResolvedDirective | None:
        """The one that wins: the last server-context `name`."""
        found = self.all(name)
        return found[-1] if found else None

    # -- output ----------------------------------------------------------------

    def dump_config(self) -> str:
        """What `httpd -t -D DUMP_CONFIG` prints for this configuration (mod_info's format)."""
        out: list[str] = []
        state: dict[str, str | None] = {"file": None}

        def indent(nest: int, filename: str, linenum: int) -> None:
            if state["file"] != filename:
                out.append(f"# In file: {filename}\n")
                state["file"] = filename
            pad = "  " * nest
            if linenum > 0:
                out.append(f"{pad}#{linenum:4d}:\n")
            out.append(pad)

        def show_open(item: ResolvedSection, nest: int) -> None:
            indent(nest, item.node.file, item.node.open_end_line)
            out.append(f"<{item.name} {item.args_text}\n")

        def show_parents(chain: list[ResolvedSection], shown: int, level: int) -> None:
            # mod_info_show_parents: open every enclosing section not yet shown.
            for depth in range(shown, level):
                show_open(chain[depth], depth)

        def rec(items: list[ResolvedDirective | ResolvedSection], level: int, shown: int,
                chain: list[ResolvedSection]) -> int:
            for item in items:
                if isinstance(item, ResolvedSection) and item.children:
                    if level < rec(item.children, level + 1, shown, [*chain, item]):
                        shown = level
                        indent(level, item.node.file, 0)
                        out.append(f"</{item.name}>\n")
                else:
                    if shown < level:
                        show_parents(chain, shown, level)
                        shown = level
                    if isinstance(item, ResolvedSection):  # an empty section prints like a directive
                        indent(level, item.node.file, item.node.open_end_line)
                        out.append(f"<{item.name} {item.args_text}\n")
                    else:
                        indent(level, item.node.file, item.node.end_line)
                        out.append(f"{item.name} {item.args_text}\n")
            return shown

        rec(self.tree, 0, 0, [])
        return "".join(out)

    def to_json(self) -> dict[str, Any]:
        """A crossplane-like payload: every file with its parsed nodes, plus the effective tree."""
        file_index = {path: i for i, path in enumerate(self.files)}

        def node_json(node: Node) -> dict[str, Any]:
            if isinstance(node, Section):
                return {"section": node.name, "args": node.args, "line": node.line,
                        "column": node.column, "closed": node.closed,
                        "block": [node_json(c) for c in node.children if isinstance(c, (Directive, Section))]}
            assert isinstance(node, Directive)  # only directives and sections are passed
            return {"directive": node.name, "args": node.args, "line": node.line, "column": node.column}

        def item_json(item: ResolvedDirective | ResolvedSection) -> dict[str, Any]:
            base = {"file": file_index.get(item.node.file, item.node.file), "line": item.node.line,
                    "column": item.node.column, "args": item.args}
            if item.include_chain:
                base["included_from"] = [str(p) for p in item.include_chain]
            if item.conditions:
                base["conditions"] = list(item.conditions)
            if isinstance(item, ResolvedSection):
                return {"section": item.name, **base, "block": [item_json(c) for c in item.children]}
            return {"directive": item.name, **base}

        return {
            "main_file": self.main_file,
            "server_root": self.server_root,
            "httpd_version": self.httpd_version,
            "mpm": self.mpm,
            "modules": self.modules,
            "defines": self.defines,
            "files": [
                {"file": path, "parsed": [node_json(n) for n in cf.children
                                          if isinstance(n, (Directive, Section))]}
                for path, cf in self.files.items()
            ],
            "includes": [{"file": inc.path, "by": str(inc.by) if inc.by else None, "depth": inc.depth}
                         for inc in self.inclusions],
            "effective": [item_json(item) for item in self.tree],
            "inactive": [{"section": s.node.name, "args": s.node.args, "file": s.node.file,
                          "line": s.node.line, "reason": s.reason} for s in self.inactive],
            "warnings": self.warnings,
        }


def server_flag(eff: EffectiveConfig, name: str, default: bool) -> bool:
    """An On/Off directive at the server's level (EnableMMAP, EnableSendfile, ...): its last
    setting, or httpd's `default` when it is not set (or set to what httpd refuses)."""
    d = eff.get(name)
    value = d.args[0].lower() if d is not None and d.args else ""
    return value == "on" if value in ("on", "off") else default
