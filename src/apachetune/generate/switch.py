"""Switching the MPM httpd loads, planned as data (generate --switch-mpm).

Two layouts, the two ways trees load their MPM:
- Debian's mods-enabled/ links (what `a2dismod mpm_event && a2enmod mpm_prefork` does): the old
  MPM's .load and .conf links go, links to mods-available/ for the new one come, written in the
  same style (relative or absolute) as the link they replace;
- a LoadModule line anywhere else (RHEL's conf.modules.d/00-mpm.conf, upstream's httpd.conf, a
  source build): that one line loads the new module from the same directory.
The plan says how the tree reads once switched (ResolveOptions with the new files overlaid and the
removed links hidden), so the MPM settings are planned, linted and checked by `apache2 -t` on the
switched tree before anything is written.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from apachetune.config.effective import EffectiveConfig
from apachetune.config.resolver import ResolveOptions
from apachetune.config.tree import Directive
from apachetune.errors import UsageError
from apachetune.generate.transaction import LinkChange


@dataclass
class SwitchPlan:
    to_mpm: str
    files: dict[str, bytes] = field(default_factory=dict)  # path as read -> new content
    links: list[LinkChange] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    planned: dict[str, bytes] = field(default_factory=dict)  # new links, read as their targets' text

    def resolve_options(self, base: ResolveOptions) -> ResolveOptions:
        """How the tree reads once switched."""
        hidden = {str(ch.path) for ch in self.links if ch.new is None}
        return replace(base, overlay={**base.overlay, **self.files, **self.planned},
                       hidden=base.hidden | frozenset(hidden))

    def link_target_of(self, path: str) -> str | None:
        """The file a planned link points to (an edit of a new link's file is written there)."""
        for ch in self.links:
            if str(ch.path) == path and ch.new is not None:
                return os.path.normpath(os.path.join(os.path.dirname(path), ch.new))
        return None


def read_as_switched(config: str, context: ResolveOptions | None, mpm: str,
                     version: str | None = None) -> ResolveOptions | None:
    """How to read `config` to run `mpm` (simulate --mpm/--compare, size's before and after): as
    `context` reads it when the tree loads `mpm` or no MPM; when it loads another, as switched
    the way an operator would switch it (this plan), so the loaded MPM's <IfModule> blocks are
    not read and Debian's section for `mpm` is (prefork simulated from a Debian event tree had
    run event's StartServers 2, not mpm_prefork.conf's 5). A layout the plan cannot switch (an
    MPM compiled in) is left to `context`."""
    from apachetune.config.resolver import resolve

    base = (context or ResolveOptions(use_env_file=False)).running(version=version)
    loaded = resolve(config, base)
    if loaded.mpm is None or loaded.mpm == mpm or f"mpm_{loaded.mpm}_module" not in loaded.module_positions:
        return context
    try:
        plan = plan_switch(loaded, mpm)
    except UsageError:
        return context
    return plan.resolve_options(base)


def switched_reader(session) -> Callable[[str], ResolveOptions | None]:
    """read_as_switched for a sizing session's file and options (size --curve, the wizard)."""
    file, context = session.request.file, session.request.resolve
    return lambda mpm: read_as_switched(file, context, mpm) if file else context


def plan_switch(eff: EffectiveConfig, to_mpm: str) -> SwitchPlan:
    plan = SwitchPlan(to_mpm)
    current = eff.mpm
    if current is None or current == to_mpm:
        return plan
    where = eff.module_positions.get(f"mpm_{current}_module")
    if where is None:
        raise UsageError(f"--switch-mpm: cannot find the LoadModule line of mpm_{current}_module")
    load = Path(where.file)
    available = load.parent.parent / "mods-available"
    if load.is_symlink() and load.parent.name == "mods-enabled" and available.is_dir():
        _switch_links(plan, load, current, to_mpm, available)
    else:
        _switch_line(plan, eff, where, current, to_mpm)
    return plan


def _switch_links(plan: SwitchPlan, load: Path, current: str, to_mpm: str, available: Path) -> None:
    enabled = load.parent
    new_load = available / f"mpm_{to_mpm}.load"
    if not new_load.is_file():
        raise UsageError(f"--switch-mpm: {new_load} does not exist (is httpd's {to_mpm} MPM installed?)")
    style = os.readlink(load)  # keep the tree's style: ../mods-available/x or an absolute path
    for suffix in (".load", ".conf"):
        old_link = enabled / f"mpm_{current}{suffix}"
        if old_link.is_symlink():
            plan.links.append(LinkChange(old_link, None, os.readlink(old_link)))
            plan.changes.append(f"{old_link}: link removed (a2dismod mpm_{current})")
        new_file = available / f"mpm_{to_mpm}{suffix}"
        if not new_file.is_file():
            continue
        new_link = enabled / f"mpm_{to_mpm}{suffix}"
        if os.path.lexists(new_link):
            raise UsageError(f"--switch-mpm: {new_link} already exists; two MPMs would be loaded")
        target = str(new_file) if os.path.isabs(style) else os.path.relpath(new_file, enabled)
        plan.links.append(LinkChange(new_link, target, None))
        plan.planned[str(new_link)] = new_file.read_bytes()
        plan.changes.append(f"{new_link} -> {target} (a2enmod mpm_{to_mpm})")


def _switch_line(plan: SwitchPlan, eff: EffectiveConfig, where, current: str, to_mpm: str) -> None:
    cf = eff.files[where.file]
    node = next((n for n in cf.walk() if isinstance(n, Directive) and n.line == where.line
                 and n.name.lower() == "loadmodule"), None)
    if node is None or len(node.args) < 2:
        raise UsageError(f"--switch-mpm: {where}: not a LoadModule line apachetune can edit")
    so = node.args[1]
    new_so = so.replace(f"mpm_{current}", f"mpm_{to_mpm}")
    if new_so == so:
        raise UsageError(f"--switch-mpm: {where}: cannot tell the {to_mpm} module's file from {so}")
    cf.set_args(node, [f"mpm_{to_mpm}_module", new_so])
    plan.files[cf.path] = cf.render()
    plan.changes.append(f"{where.file}:{where.line}: LoadModule mpm_{current}_module {so} -> "
                        f"mpm_{to_mpm}_module {new_so}")


def disable_foreign(eff: EffectiveConfig, to_mpm: str) -> list[str]:
    """In the switched tree, comment out the directives read unconditionally that only the old
    MPM knows (ThreadsPerChild on a bare line, with prefork loaded, is httpd's "Invalid command":
    it would not start). Returns what was changed."""
    from apachetune.mpm.directives import LEGACY_NAMES, MPM_DIRECTIVES, canonical

    known = {n.lower() for n in MPM_DIRECTIVES[to_mpm]} | set(LEGACY_NAMES)
    changes = []
    for d in eff.directives:
        name = canonical(d.name)
        if name is None or name.lower() in known:
            continue
        eff.files[d.node.file].comment_out(d.node)
        changes.append(f"{d.node.file}:{d.node.line}: {d.name} commented out ({to_mpm} does not know it)")
    return changes
