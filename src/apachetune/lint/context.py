"""What a check sees: the effective configuration, the MPM start-up result, and helpers.

Checks are pure: they read the context and yield findings; they never print,
read files or choose their own severity (the engine stamps it from rules/*.yaml).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar, cast

from apachetune.config.conditions import LoadedModules
from apachetune.config.directives import ThirdParty, third_party
from apachetune.config.effective import EffectiveConfig, ResolvedDirective, ResolvedSection
from apachetune.config.tree import Node, Section
from apachetune.lint.finding import Finding, Fix, Location
from apachetune.lint.host import HostLimits
from apachetune.lint.settings import Settings
from apachetune.mpm import StartupResult
from apachetune.mpm.directives import canonical

T = TypeVar("T")
Scoped = tuple[ResolvedDirective | ResolvedSection, tuple[ResolvedSection, ...]]


def location_of(item: Location | Node | ResolvedDirective | ResolvedSection) -> Location:
    node = item.node if hasattr(item, "node") else item
    return Location(node.file, node.line, node.column)


@dataclass
class LintContext:
    eff: EffectiveConfig
    mpm: str | None
    startup: StartupResult | None
    snippet: bool = False  # linting a lone MPM snippet with --mpm
    listen_buckets: int = 1
    settings: Settings = field(default_factory=Settings)
    host: HostLimits | None = None  # lint --measure / --facts: the host the server runs on
    # lint --from-dump: httpd read this configuration on its own machine, and a dump shows no
    # LoadModule (modules without directives, such as authz_host, are not known to be loaded)
    from_dump: bool = False
    _mpm_items: list[ResolvedDirective] = field(default_factory=list)
    _named: dict[str, list[ResolvedDirective | ResolvedSection]] = field(default_factory=dict, repr=False)
    _loaded: LoadedModules = field(init=False, repr=False)
    _memo: dict[str, object] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._loaded = LoadedModules(self.eff.modules)
        self._mpm_items = [d for d in self.eff.directives if canonical(d.name) is not None]
        # One walk of the tree, indexed by name, shared by every check: a check asks for the
        # few directives it reads instead of walking 50,000 items itself. Items, not (item,
        # scopes) pairs: each item knows its scopes (`parents`), and a pair is made only while
        # a check looks at it.
        named: dict[str, list[ResolvedDirective | ResolvedSection]] = defaultdict(list)
        for item in self.eff.in_order():
            named[item.lname].append(item)
        self._named = dict(named)

    def module_loaded(self, name: str) -> bool:
        """httpd's find_module for `name` (an identifier or a source file name), remembered."""
        return self._loaded.has(name)

    def third_party_may_register(self, kind: str) -> bool:
        """Whether a loaded module httpd does not ship may register names of `kind` ("providers",
        "filters", "mutex types", ...: config/module_table.py REGISTRARS): then which names
        exist is not known, and the readers that look them up are silent. A module whose file
        is not here may register anything; one read from its file, only what it calls for."""
        return self.third_party().may_register(kind)

    def third_party(self) -> ThirdParty:
        """The loaded third-party modules' directives, read from their files where they can be."""
        def compute() -> ThirdParty:
            from apachetune import httpd
            # the running httpd's compiled-in modules too, when it is the release modelled
            binary = self.eff.running_binary if self.eff.httpd_version == httpd.version() else None
            return third_party(self.eff.modules, binary, self.by_name().keys())
        return self.memo("third-party", compute)

    def walk(self) -> Iterator[Scoped]:
        """Every resolved item with its enclosing sections, in document order."""
        return self.eff.walk()

    def named(self, name: str) -> list[Scoped]:
        """Every directive or section called `name` (any case), with its enclosing sections."""
        return [(item, item.parents) for item in self._named.get(name.lower(), ())]

    def items_named(self, lname: str) -> list[ResolvedDirective | ResolvedSection]:
        """Every item whose lower-case name is `lname`, in document order (`item.parents`
        are its enclosing sections)."""
        return self._named.get(lname, [])

    def by_name(self) -> dict[str, list[ResolvedDirective | ResolvedSection]]:
        """Every item grouped by lower-case name: a check whose verdict depends on the name
        decides once a name, not once a line (a 50,000-line tree has a few hundred names)."""
        return self._named

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """A value several checks derive from the tree (the document roots, ...), computed once."""
        if key not in self._memo:
            self._memo[key] = compute()
        return cast(T, self._memo[key])

    @property
    def mpm_items(self) -> list[ResolvedDirective]:
        """Server-context MPM directives (any MPM's), in order."""
        return self._mpm_items

    def winner(self, name: str) -> ResolvedDirective | None:
        """The server-context directive whose value httpd uses for `name` (legacy names too)."""
        found = None
        for d in self._mpm_items:
            if canonical(d.name) == name:
                found = d
        if found is None:
            found = self.eff.get(name)
        return found

    def option(self, rule: str, name: str) -> int | float:
        """A rule's threshold: .apachetune.yaml's value, else the default in rules/ID.yaml."""
        return self.settings.option(rule, name)

    def value(self, name: str) -> int | float | None:
        if self.startup and name in self.startup.effective:
            return self.startup.effective[name]
        return None

    def anchor(self, *names: str) -> Location:
        """Where to report something about `names`: the first one configured, else any MPM
        directive, else the loaded MPM's LoadModule, else the main file."""
        for name in names:
            d = self.winner(name)
            if d is not None:
                return location_of(d)
        if self._mpm_items:
            return location_of(self._mpm_items[-1])
        return Location(self.eff.main_file, 1, 1)

    def finding(self, rule: str, message: str, at: Location | Node | ResolvedDirective | ResolvedSection,
                related: Iterable[Location | Node | ResolvedDirective | ResolvedSection | None] = (),
                fix: Fix | None = None) -> Finding:
        loc = at if isinstance(at, Location) else location_of(at)
        node = getattr(at, "node", at)
        end_line = getattr(node, "end_line", 0)
        if rule.startswith("AT5") and end_line > loc.line and not isinstance(node, Section):
            # A directive continued over several lines: httpd -t names its last line.
            message += f" (httpd -t reports line {end_line}, the directive's last line)"
        rel = [r if isinstance(r, Location) else location_of(r) for r in related if r is not None]
        return Finding(rule, "", message, loc, tuple(r for r in rel if r != loc), fix)
