"""`apachetune lint --fix`: apply findings' fixes as minimal edits through the lossless tree.

Each round resolves the configuration with the edits so far overlaid (nothing is written), lints
it, and applies the fixes of what it finds; fixing one thing can reveal another (a fixed
MaxRequestWorkers can need a larger ServerLimit), so up to MAX_ROUNDS rounds run, and a fix that
would touch text another fix already edits waits for the next round. Afterwards the result is
linted once more: a fix that brought a rule the configuration did not have before is reported and
the whole fix is refused. Writing is the caller's job (the transactional writer), after
`apache2 -t` has checked the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apachetune.config.effective import EffectiveConfig, ResolvedDirective
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.config.tree import ConfigFile, Directive, Node, Section
from apachetune.config.words import split_words
from apachetune.lint.engine import LintOptions, lint, lint_file
from apachetune.lint.finding import Finding, LintResult
from apachetune.mpm.directives import setting_key
from apachetune.report.paths import display_path

MAX_ROUNDS = 4


@dataclass
class FixOutcome:
    before: LintResult
    after: LintResult
    original: dict[str, bytes] = field(default_factory=dict)  # path -> bytes as read
    new: dict[str, bytes] = field(default_factory=dict)  # path -> bytes with every fix applied
    applied: list[Finding] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)  # one line per edit, for the terminal
    skipped: list[tuple[Finding, str]] = field(default_factory=list)

    @property
    def introduced(self) -> set[str]:
        """Rules the fixed configuration reports that the original did not."""
        return {f.rule for f in self.after.findings} - {f.rule for f in self.before.findings}


def _node_at(eff: EffectiveConfig, finding: Finding) -> Directive | None:
    cf = eff.files.get(finding.location.file)
    if cf is None:
        return None
    for node in cf.directives():
        if node.line == finding.location.line and node.column == finding.location.column:
            return node
    return None


def _winner(eff: EffectiveConfig, name: str) -> ResolvedDirective | None:
    found = None
    for d in eff.directives:
        if setting_key(d.name) == setting_key(name):
            found = d
    return found


class _Round:
    """One round of edits on one resolved configuration."""

    def __init__(self, eff: EffectiveConfig, outcome: FixOutcome):
        self.eff = eff
        self.outcome = outcome
        self.touched: set[int] = set()  # id() of nodes edited this round

    def _file(self, node: Node) -> ConfigFile:
        return self.eff.files[node.file]

    def apply(self, f: Finding) -> bool:
        fix = f.fix
        assert fix is not None
        node = _node_at(self.eff, f)
        try:
            if fix.strip_bom:
                cf = self.eff.files[f.location.file]
                if not cf.text.startswith("\ufeff"):
                    return False
                cf._add(0, 1, "")
                self._say(f, f"{display_path(cf.path)}:1: removed the byte-order mark")
                return True
            if fix.delete or fix.rename:
                if node is None or id(node) in self.touched:
                    return False
                cf = self._file(node)
                if fix.delete:
                    cf.remove(node)
                    self._say(f, f"{display_path(cf.path)}:{node.line}: deleted {node.name} {node.raw_args}")
                elif fix.rename is not None:
                    cf._add(node.content_start, node.content_start + len(node.name), fix.rename)
                    self._say(f, f"{display_path(cf.path)}:{node.line}: renamed {node.name} to {fix.rename}")
                self.touched.add(id(node))
                return True
            for name, value in fix.set.items():
                self._set(f, node, name, value)
            return bool(fix.set)
        except ValueError:  # overlaps an edit of this round: try again next round
            return False

    def _set(self, f: Finding, node: Directive | None, name: str, value: str) -> None:
        target = node if node is not None and setting_key(node.name) == setting_key(name) else None
        if target is None:
            winner = _winner(self.eff, name)
            target = winner.node if winner is not None else None
        if target is not None:
            if id(target) in self.touched:
                raise ValueError("already edited this round")
            if split_words(target.raw_args) == split_words(value):
                return
            cf = self._file(target)
            cf.set_args(target, split_words(value))
            self.touched.add(id(target))
            self._say(f, f"{display_path(cf.path)}:{target.line}: {target.name} {target.raw_args} -> {value}")
            return
        # Not set anywhere: a new line beside the directive the finding is about (in its block),
        # else at the end of the main file.
        if node is not None and isinstance(node.parent, (Section, ConfigFile)):
            cf = self._file(node)
            container = node.parent
            cf.insert(container, container.children.index(node) + 1, name, split_words(value))
            self._say(f, f"{display_path(cf.path)}:{node.line}: + {name} {value}")
        else:
            cf = self.eff.files[self.eff.main_file]
            cf.append_text(f"{name} {value}\n")
            self._say(f, f"{display_path(cf.path)}: + {name} {value}")

    def _say(self, f: Finding, text: str) -> None:
        self.outcome.changes.append(f"{text}  ({f.rule})")


def plan_fixes(main: str, options: LintOptions) -> FixOutcome:
    """Every fix lint can make, applied in memory; `new` holds the files that change."""
    before = lint_file(main, options)
    outcome = FixOutcome(before, before)
    if before.fatal:
        return outcome
    overlay: dict[str, bytes] = {}
    fixed_keys: set[tuple[str, str, int, int]] = set()
    for _round in range(MAX_ROUNDS):
        eff = resolve(main, _with_overlay(options.resolve, overlay))
        result = lint(eff, options)
        # A finding inside a macro's expansion has no line of its own to edit (the macro's body
        # serves every Use): it is reported, not fixed.
        todo = [f for f in result.findings if f.fix is not None and f.location.file not in eff.generated_files
                and (f.rule, f.location.file, f.location.line, f.location.column) not in fixed_keys]
        if not todo:
            break
        edits = _Round(eff, outcome)
        for f in todo:
            if edits.apply(f):
                fixed_keys.add((f.rule, f.location.file, f.location.line, f.location.column))
                outcome.applied.append(f)
        rendered = {path: cf.render() for path, cf in eff.files.items() if cf.edits}
        if not rendered:
            break
        for path in rendered:
            if path not in outcome.original:  # first edit of this file: what it holds on disk
                outcome.original[path] = eff.files[path].to_bytes()
        overlay.update(rendered)
    outcome.new = {p: data for p, data in overlay.items() if data != outcome.original.get(p)}
    outcome.after = lint(resolve(main, _with_overlay(options.resolve, overlay)), options)
    return outcome


def _with_overlay(opts: ResolveOptions, overlay: dict[str, bytes]) -> ResolveOptions:
    return ResolveOptions(**{**opts.__dict__, "overlay": {**opts.overlay, **overlay}})
