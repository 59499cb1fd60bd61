"""Inline suppression comments.

httpd has no trailing comments, so a suppression is a comment line of its own:
- `# apachetune: disable=AT108[,AT302]` silences those rules on the next directive or section line;
- `# apachetune: disable-file=AT108[,...]` silences them for the whole file.
"""

from __future__ import annotations

import re

from apachetune.config.parser import _CONTINUATION
from apachetune.config.tree import Comment, ConfigFile, Directive, Section

_DIRECTIVE = re.compile(r"#\s*apachetune:\s*(disable|disable-file)\s*=\s*([A-Za-z0-9_,.\- ]+)")
_MARK = re.compile(r"#\s*apachetune:")


class Suppressions:
    def __init__(self) -> None:
        self.by_line: dict[tuple[str, int], set[str]] = {}
        self.by_file: dict[str, set[str]] = {}

    def add_file(self, cf: ConfigFile) -> None:
        # A file whose text has no mark has no suppression and is not walked. A comment's text
        # is its logical line (continuations joined, as httpd reads it), so they are joined here too.
        text = _CONTINUATION.sub("", cf.text) if "\\" in cf.text else cf.text
        if _MARK.search(text) is None:
            return
        pending: set[str] = set()
        for node in cf.walk():
            if isinstance(node, Comment):
                m = _DIRECTIVE.search(node.text)
                if not m:
                    continue
                ids = {x.strip() for x in m.group(2).split(",") if x.strip()}
                if m.group(1) == "disable-file":
                    self.by_file.setdefault(cf.path, set()).update(ids)
                else:
                    pending |= ids
            elif isinstance(node, (Directive, Section)) and pending:
                self.by_line.setdefault((cf.path, node.line), set()).update(pending)
                pending = set()

    def suppressed(self, rule: str, file: str, line: int) -> bool:
        if rule in self.by_file.get(file, ()):
            return True
        return rule in self.by_line.get((file, line), ())
