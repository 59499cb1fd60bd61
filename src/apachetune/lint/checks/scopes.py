"""Where a directive applies: shared helpers for checks that look beyond the server context.

httpd merges per-directory configuration from <Directory> sections whose path is a prefix of the
file being served, so a setting on `<Directory />` or on a directory above a DocumentRoot applies to
every request under it. These helpers find those sections and the document roots they cover.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from apachetune.config.effective import ResolvedDirective, ResolvedSection
from apachetune.lint.context import LintContext

DIRECTORY_SECTIONS = ("directory",)  # <DirectoryMatch> paths are regexes: not compared as paths


def unquote(word: str) -> str:
    return word[1:-1] if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'" else word


@lru_cache(maxsize=8192)  # several checks normalise the same DocumentRoot and <Directory> paths
def norm_dir(path: str) -> str:
    """A directory path as httpd compares it: no trailing slash (but "/" stays "/")."""
    path = unquote(path.rstrip(">").strip())
    return path.rstrip("/") or "/"


def directives_named(ctx: LintContext, name: str) -> Iterator[tuple[ResolvedDirective, tuple[ResolvedSection, ...]]]:
    """Every directive called `name`, in any context, with its enclosing sections."""
    for item, parents in ctx.named(name):
        if isinstance(item, ResolvedDirective):
            yield item, parents


def server_and_vhost(ctx: LintContext, name: str) -> list[ResolvedDirective]:
    """`name` as set in server context (the winner) and directly inside each <VirtualHost>."""
    found = []
    last = ctx.eff.get(name)
    if last is not None:
        found.append(last)
    for d, parents in directives_named(ctx, name):
        if parents and len(parents) == 1 and parents[0].lname == "virtualhost":
            found.append(d)
    return found


def document_roots(ctx: LintContext) -> frozenset[str]:
    """Every DocumentRoot in force (server context and virtual hosts), normalised."""
    return ctx.memo("document_roots", lambda: frozenset(
        norm_dir(d.args[0]) for d in server_and_vhost(ctx, "DocumentRoot") if d.args))


def covering(roots: frozenset[str], strictly_above: bool) -> frozenset[str]:
    """Every directory path that is a document root (unless `strictly_above`) or above one:
    `path in covering(...)` answers "does <Directory path> apply to a whole document tree?"
    in one lookup, however many virtual hosts there are."""
    out = {"/"}
    for root in roots:
        if not strictly_above:
            out.add(root)
        cut = root.rfind("/")
        while cut > 0:
            out.add(root[:cut])
            cut = root.rfind("/", 0, cut)
    return frozenset(out)


def directory_sections(ctx: LintContext) -> list[tuple[ResolvedSection, str]]:
    """Every <Directory> section with its normalised path."""
    return ctx.memo("directory_sections", lambda: [
        (item, norm_dir(item.args[0])) for name in DIRECTORY_SECTIONS for item in ctx.items_named(name)
        if isinstance(item, ResolvedSection) and item.args])


def child_directives(section: ResolvedSection, name: str) -> list[ResolvedDirective]:
    lname = name.lower()
    return [c for c in section.children if isinstance(c, ResolvedDirective) and c.lname == lname]


def option_words(d: ResolvedDirective) -> tuple[tuple[str, str], ...]:
    """`Options` arguments as (sign, lower-case name): sign is '+', '-' or '' (absolute)."""
    return _option_words(tuple(d.args))


@lru_cache(maxsize=1024)  # a tree repeats a few Options lines a thousand times
def _option_words(args: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    out = []
    for word in args:
        sign = word[0] if word[:1] in ("+", "-") else ""
        out.append((sign, word[len(sign):].lower()))
    return tuple(out)
