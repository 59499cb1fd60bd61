"""Apply a recommendation to the files that define the MPM settings today, minimally.

Each recommended directive that is set in server context is changed where its winning
line is (Debian's mods-available/mpm_*.conf, RHEL's conf.modules.d or conf.d, upstream's
extra/httpd-mpm.conf, or the main file); the missing ones are inserted next to the other
MPM settings, in the same block; if there are none, a new <IfModule> block is appended to
the main file. Only those lines change: comments, alignment and newline style stay.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apachetune.config.effective import EffectiveConfig, ResolvedDirective
from apachetune.config.tree import ConfigFile, Section
from apachetune.generate.render import DIRECTIVE_ORDER, format_value
from apachetune.mpm.directives import canonical, setting_key


@dataclass
class EditPlan:
    files: dict[str, ConfigFile] = field(default_factory=dict)  # path -> file with pending edits
    changes: list[str] = field(default_factory=list)  # human-readable, one per directive changed

    def rendered(self) -> dict[str, bytes]:
        return {path: cf.render() for path, cf in self.files.items() if cf.edits}

    @property
    def empty(self) -> bool:
        return not any(cf.edits for cf in self.files.values())


def _winners(eff: EffectiveConfig) -> dict[str, ResolvedDirective]:
    found: dict[str, ResolvedDirective] = {}
    for d in eff.directives:
        found[setting_key(d.name)] = d
    return found


def plan_in_place(eff: EffectiveConfig, mpm: str, values: dict[str, int | float | str]) -> EditPlan:
    plan = EditPlan()
    winners = _winners(eff)
    ordered = sorted(values, key=lambda n: DIRECTIVE_ORDER.index(n) if n in DIRECTIVE_ORDER else 99)
    anchor: ResolvedDirective | None = None  # where the MPM settings live today
    for name in ordered:
        if canonical(name) and setting_key(name) in winners:
            anchor = winners[setting_key(name)]
    missing = []
    for name in ordered:
        text = format_value(values[name])
        current = winners.get(setting_key(name))
        if current is None:
            missing.append(name)
            continue
        if current.args == [text]:
            continue
        cf = eff.files[current.node.file]
        cf.set_args(current.node, [text])
        plan.files[cf.path] = cf
        plan.changes.append(f"{current.node.file}:{current.node.line}: {current.name} "
                            f"{current.args_text} -> {text}")
    if not missing:
        return plan
    if anchor is not None:
        cf = eff.files[anchor.node.file]
        parent = anchor.node.parent
        container = parent if isinstance(parent, Section) else cf
        index = container.children.index(anchor.node) + 1
        for name in missing:
            cf.insert(container, index, name, [format_value(values[name])])
            plan.changes.append(f"{cf.path}: + {name} {format_value(values[name])}")
        plan.files[cf.path] = cf
    else:
        cf = eff.files[eff.main_file]
        lines = ["", f"# MPM settings added by apachetune ({mpm})", f"<IfModule mpm_{mpm}_module>"]
        core = {"KeepAlive", "KeepAliveTimeout", "MaxKeepAliveRequests", "Timeout"}
        lines += [f"    {n} {format_value(values[n])}" for n in missing if n not in core]
        lines += ["</IfModule>"] + [f"{n} {format_value(values[n])}" for n in missing if n in core]
        cf.append_text("\n".join(lines) + "\n")
        plan.files[cf.path] = cf
        plan.changes += [f"{cf.path}: + {n} {format_value(values[n])}" for n in missing]
    return plan
