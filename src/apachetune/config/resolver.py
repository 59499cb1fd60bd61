"""Main file -> the configuration httpd would run (EffectiveConfig).

This mirrors how httpd reads its configuration (server/config.c
ap_build_config, server/core.c): files are read in order and the read-time
directives act as they are met: ServerRoot, Define/UnDefine, ${VAR}
substitution (Define table first, then the environment), Include /
IncludeOptional (wildcards in any path segment, matches sorted by strcmp,
directories read recursively), LoadModule, and the conditional sections
<IfModule>, <IfDefine>, <IfVersion>, <IfFile>, <IfDirective>, <IfSection>.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from apachetune import collector, httpd
from apachetune.config import cache, elf, observed
from apachetune.config.builtin_mpm import compiled_in_mpm
from apachetune.config.conditions import (
    DEFAULT_VERSION,
    ConditionError,
    LoadedModules,
    Version,
    at_least,
    ifversion,
    split_negation,
)
from apachetune.config.directives import (
    canonical_name,
    directive_modules,
    lookup,
    third_party,
    too_many_arguments,
)
from apachetune.config.effective import (
    EffectiveConfig,
    InactiveSection,
    Inclusion,
    ResolvedDirective,
    ResolvedSection,
    SubstitutedDirective,
    lower_name,
    under_root,
)
from apachetune.config.envvars import read_envvars
from apachetune.config.includes import MAX_INCLUDE_DEPTH, expand_include
from apachetune.config.init_defines import arguments_defines, init_defines
from apachetune.config.macros import Macro, MacroError, define, expand
from apachetune.config.parser import (
    CONDITIONAL_SECTIONS,
    ConfigReadError,
    SharedWords,
    parse_text,
    read_config_bytes,
)
from apachetune.config.tree import ConfigFile, Directive, Node, Section
from apachetune.config.words import split_words
from apachetune.errors import Position, ResolveError

# Compiled into Debian's apache2 (`apache2 -l`): present with no LoadModule.
DEBIAN_BUILTIN_MODULES = (
    "core_module", "so_module", "watchdog_module", "http_module",
    "log_config_module", "logio_module", "version_module", "unixd_module",
)
MPM_MODULES = {"mpm_prefork_module": "prefork", "mpm_worker_module": "worker",
               "mpm_event_module": "event"}

_VAR = re.compile(r"\$\{([^}]*)\}")


@dataclass
class ResolveOptions:
    server_root: str | None = None  # like httpd -d
    defines: list[str] = field(default_factory=list)  # like httpd -D NAME
    env: dict[str, str] | None = None  # default: os.environ
    env_file: str | None = None  # a Debian-style envvars; default: `envvars` beside the main file
    use_env_file: bool = True
    httpd_version: str = str(DEFAULT_VERSION)
    version_source: str = "default"  # where httpd_version came from, for the report
    modules: list[str] = field(default_factory=list)  # extra modules taken as loaded (--module)
    mpm: str | None = None  # the MPM to assume when none is loaded (a lone snippet)
    builtin_modules: tuple[str, ...] = DEBIAN_BUILTIN_MODULES  # an MPM among them is compiled in
    # why an MPM is taken as compiled in (builtin_mpm.py), for the report; "" when none is
    compiled_mpm_reason: str = ""
    # path -> content to read instead of the file; a path not on disk yet is read where an Include
    # would find it if it existed (a new file generate is about to write)
    overlay: dict[str, bytes] = field(default_factory=dict)
    hidden: frozenset[str] = frozenset()  # paths read as absent (links a switch of MPM removes)
    # a copy of another machine's files: the absolute paths the configuration names (ServerRoot,
    # Include, LoadModule) are read under this directory, as in a chroot (--root)
    sysroot: str | None = None

    def running(self, mpm: str | None = None, version: str | None = None) -> ResolveOptions:
        """A copy that reads the tree as httpd `version` runs it with `mpm` loaded: its <IfModule>
        blocks read, and not those of another MPM this one only assumed."""
        opts = replace(self)
        if version:
            opts.httpd_version = version
        if mpm:
            opts.mpm = mpm
            opts.modules = [m for m in opts.modules if not m.startswith("mpm_")] + [f"mpm_{mpm}_module"]
        return opts


Item = ResolvedDirective | ResolvedSection
Chain = tuple[Position, ...]  # the Include lines that led to a file
Conds = tuple[str, ...]  # the conditional sections an item sits in

# Directives the resolver itself acts on (they never reach lint's checks).
_CONSUMED = frozenset({"include", "includeoptional", "define", "undefine", "serverroot", "loadmodule"})


class _State:
    def __init__(self, opts: ResolveOptions, main: str):
        self.opts = opts
        self.version = Version.parse(opts.httpd_version)
        self.files: dict[str, ConfigFile] = {}
        self._spelling: dict[str, str] = {}
        self.shared = SharedWords()  # one copy of each word and argument list of the tree
        self.defines: dict[str, str | None] = {name: None for name in opts.defines}
        self.modules: dict[str, str] = {m: "(built-in)" for m in opts.builtin_modules}
        for m in opts.modules:
            self.modules.setdefault(_module_id(m), "(assumed)")
        self.env = dict(os.environ if opts.env is None else opts.env)
        env_file = opts.env_file
        if env_file is None and opts.use_env_file:
            candidate = Path(main).resolve().parent / "envvars"
            env_file = str(candidate) if observed.isfile(str(candidate)) else None
        exported = read_envvars(env_file, base={}) if env_file else {}
        self.env.update(exported)
        # The -D names the start-up script adds: Debian's APACHE_ARGUMENTS (envvars), Gentoo's
        # APACHE2_OPTS, SUSE's APACHE_SERVER_FLAGS (read where envvars would be)
        self.init_defines = (arguments_defines(exported, env_file) if env_file else None) or (
            init_defines(main, opts.sysroot) if opts.use_env_file else None)
        for name in self.init_defines.names if self.init_defines else ():
            self.defines.setdefault(name, None)
        self.sysroot = os.path.abspath(opts.sysroot) if opts.sysroot else None
        self.server_root = self.local(os.path.abspath(opts.server_root)) if opts.server_root else str(
            Path(main).resolve().parent)
        self.inactive: list[InactiveSection] = []
        self.inclusions: list[Inclusion] = []
        self.warnings: list[str] = []
        self.mpms: list[str] = [m for m in opts.builtin_modules if m in MPM_MODULES]
        self.module_positions: dict[str, Position] = {}
        self.macros: dict[str, Macro] = {}  # mod_macro's definitions, by lower-case name
        self.macros_defined = False
        self.missing_modules: list[tuple[str, str, Position]] = []  # LoadModule of a missing file
        self.modules_elsewhere: list[tuple[str, str, Position]] = []  # ... in a directory not here either
        self.wrong_identifiers: list[tuple[str, str, Position]] = []  # LoadModule naming what the file lacks
        self.built_in_loads: list[tuple[str, str, Position]] = []  # LoadModule of a module taken as compiled in
        self.unresolved_modules: list[tuple[str, str, Position, str, str]] = []  # needs a module not loaded yet
        self.missing_libraries: list[tuple[str, str, Position, str]] = []  # needs a library not here
        self.symbol_providers: dict[str, dict[str, str]] = {}  # modules directory -> symbol -> file
        # The modules loaded so far and LoadFile's libraries, with the libraries they need
        # (httpd dlopens each RTLD_GLOBAL): with httpd's own, what a module's symbols can bind
        # to. None: not judged (a LoadFile or a library not read).
        self.global_scope: dict[str, None] | None = {}
        self.generated: set[str] = set()  # pseudo-files of macro expansions (not on disk)
        self.stack: list[str] = []  # files being read (cycle detection)
        self.real_dirs: dict[str, str] = {}  # directory -> its realpath, resolved once
        self.planned = frozenset(opts.overlay)  # files read from the overlay (some not on disk yet)
        self._loaded: LoadedModules | None = None  # the modules loaded so far, asked (None: one was added)

    def loaded(self, name: str) -> bool:
        """httpd's find_module for `name` with the modules loaded so far."""
        if self._loaded is None:
            self._loaded = LoadedModules(self.modules)
        return self._loaded.has(name)

    def module_added(self, module_id: str, path: str) -> None:
        self.modules[module_id] = path
        self._loaded = None
        self._spelling.clear()

    def spelling(self, name: str) -> str:
        """httpd's spelling of directive `name` with the modules loaded so far (canonical_name),
        remembered until the next LoadModule: a tree says each name hundreds of times."""
        found = self._spelling.get(name)
        if found is None:
            found = self._spelling[name] = canonical_name(name, self.modules.keys())
        return found

    # ${VAR}: the Define table, then the environment; unknown names stay as written.
    def substitute(self, text: str, node: Node) -> str:
        if "${" not in text:
            return text

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            value = self.defines.get(name)
            if value is None:
                value = self.env.get(name)
                if self.opts.env is None:
                    observed.environ(name)  # a cached result depends on it
            if value is None:
                if ":" not in name:
                    self.warnings.append(
                        f"{node.position}: Config variable ${{{name}}} is not defined (AH00111)")
                return m.group(0)
            return value

        return _VAR.sub(sub, text)

    def root_relative(self, path: str) -> str:
        return self.local(path) if os.path.isabs(path) else os.path.join(self.server_root, path)

    def local(self, path: str) -> str:
        """Where an absolute path the configuration names is on this machine (under --root)."""
        return under_root(self.sysroot, path)


def _real_path(path: str, real_dirs: dict[str, str]) -> str:
    """os.path.realpath(path), its directory's resolved once: a thousand vhost files in one
    directory cost one lstat each instead of one per path component (a tenth of a resolve)."""
    head, tail = os.path.split(path)
    try:
        if not tail or tail in (".", "..") or stat.S_ISLNK(os.lstat(path).st_mode):
            return os.path.realpath(path)
    except OSError:
        return os.path.realpath(path)
    real_dir = real_dirs.get(head)
    if real_dir is None:
        real_dir = real_dirs[head] = os.path.realpath(head)
    return os.path.join(real_dir, tail)


def _module_id(name: str) -> str:
    return name if name.endswith("_module") or name.endswith(".c") else f"{name}_module"


class Resolver:
    def __init__(self, main_file: str, opts: ResolveOptions):
        self.main = os.path.abspath(main_file)
        self.st = _State(opts, self.main)
        self.text = ""  # the text of the file whose lines are being read (a node's, without a walk up)

    def run(self) -> EffectiveConfig:
        st = self.st
        tree = self.read_file(self.main, (), None)
        mpm = None
        if st.mpms:
            mpm = MPM_MODULES[st.mpms[-1]]
        elif st.opts.mpm:
            mpm = st.opts.mpm
        return EffectiveConfig(
            main_file=self.main, server_root=st.server_root, files=st.files, tree=tree,
            modules=dict(st.modules), defines=dict(st.defines), mpm=mpm,
            mpms_loaded=[MPM_MODULES[m] for m in st.mpms], inactive=st.inactive,
            generated_files=set(st.generated), missing_modules=list(st.missing_modules),
            wrong_identifiers=list(st.wrong_identifiers), unresolved_modules=list(st.unresolved_modules),
            missing_libraries=list(st.missing_libraries),
            built_in_loads=list(st.built_in_loads), modules_elsewhere=list(st.modules_elsewhere),
            inclusions=st.inclusions, warnings=st.warnings, httpd_version=st.opts.httpd_version,
            module_positions=st.module_positions, httpd_version_source=st.opts.version_source,
            mpm_source=st.opts.compiled_mpm_reason, sysroot=st.sysroot, init_defines=st.init_defines,
            running_binary=running_httpd(st.modules, st.sysroot),
        )

    def read_file(self, path: str, chain: Chain, by: Position | None) -> list[Item]:
        st = self.st
        real = _real_path(path, st.real_dirs)
        if real in st.stack:
            cycle = " -> ".join([*st.stack[st.stack.index(real):], real])
            raise ResolveError(f"Include cycle: {cycle}", by)
        if len(st.stack) >= MAX_INCLUDE_DEPTH:
            raise ResolveError(f"Exceeded the maximum include directory nesting level of "
                               f"{MAX_INCLUDE_DEPTH}. You have probably a recursion somewhere.", by)
        if path not in st.files:
            if path in st.opts.overlay:
                st.files[path] = parse_text(st.opts.overlay[path], path)
            else:
                st.files[path] = _parse_cached(path, by, st.shared)
        st.inclusions.append(Inclusion(path, by, len(st.stack)))
        st.stack.append(real)
        outer, self.text = self.text, st.files[path].text
        try:
            return self.items(st.files[path].children, chain, (), True)
        finally:
            st.stack.pop()
            self.text = outer

    def items(self, nodes: list[Node], chain: Chain, conds: Conds, top: bool) -> list[Item]:
        out: list[Item] = []
        for node in nodes:
            if isinstance(node, Directive):
                self.directive(node, chain, conds, top, out)
            elif isinstance(node, Section):
                self.section(node, chain, conds, top, out)
        return out

    def directive(self, node: Directive, chain: Chain, conds: Conds, top: bool, out: list[Item]) -> None:
        st = self.st
        # (node.start + node.column - 1: its content_start, without the property call)
        if node.joined is None and self.text.find("$", node.start + node.column - 1, node.content_end) < 0:
            # nothing to substitute (most lines): the parser's name and words, no copy of the text
            name, args_text, args, substituted = node.name, "", node.args, False
        else:
            name = st.substitute(node.name, node)
            raw = node.raw_args
            args_text = st.substitute(raw, node)
            substituted = args_text is not raw
            args = split_words(args_text) if substituted else node.args
        lname = lower_name(name)
        if lname in _CONSUMED and args:
            self.check_consumed(name, lname, args, node)
        if lname in ("include", "includeoptional") and args:
            self.include(args[0], lname == "includeoptional", node, chain, out)
            return
        if lname in ("use", "undefmacro") and st.loaded("macro_module"):
            self.macro_directive(lname, args_text if substituted else node.raw_args, node, chain, conds, top, out)
            return
        read_now = _READ_TIME.get(lname)
        if read_now is not None and read_now(self, node, args):
            return
        # httpd keeps the name as its module spells it when the module is loaded.
        name = st.spelling(name)
        if substituted:
            out.append(SubstitutedDirective(name, args, node, chain, conds, args_text))
        else:
            out.append(ResolvedDirective(name, args, node, chain, conds))

    def check_consumed(self, name: str, lname: str, args: list[str], node: Directive) -> None:
        # Read here, never seen by lint's checks: their argument errors are httpd's, here.
        err = too_many_arguments(name, args)
        if err is None and lname in ("define", "undefine") and ":" in args[0]:
            err = "Variable name must not contain ':'"
        if err is not None:
            raise ResolveError(err, node.position)

    def include(self, arg: str, optional: bool, node: Directive, chain: Chain, out: list[Item]) -> None:
        st = self.st
        files = expand_include(st.root_relative(arg), optional, st.planned, st.opts.hidden)
        while True:
            try:
                f = next(files)
            except StopIteration:
                break
            except ResolveError as e:
                raise ResolveError(e.message, node.position) from None
            out.extend(self.read_file(f, (*chain, node.position), node.position))

    # Read-time directives that change the resolver's state: each returns whether it consumed
    # the line (with too few arguments it stays, for lint to report as httpd would).
    def server_root(self, node: Directive, args: list[str]) -> bool:
        # httpd refuses a ServerRoot that is not a directory. With --server-root the user has
        # said where the tree is (a copy of /etc/httpd in a repository, linted in CI), so the
        # directive's own path is not judged.
        if not args:
            return False
        if self.st.opts.server_root is None:
            path = self.st.local(os.path.abspath(args[0]))
            if not observed.isdir(path):
                # httpd's words, then how to read a tree copied from the machine it runs on
                raise ResolveError(f"ServerRoot must be a valid directory ({args[0]} is not one on this machine;"
                                   " for a tree from another, -d DIR says where its ServerRoot is here,"
                                   " --root DIR reads a copy of that machine's /)", node.position)
            self.st.server_root = path
        return True

    def define(self, node: Directive, args: list[str]) -> bool:
        # set_define: the name is added; a value is set only when given, so `Define X`
        # after `Define X 1` keeps 1 (and `${X}` still expands).
        if not args:
            return False
        if len(args) > 1:
            self.st.defines[args[0]] = args[1]
        else:
            self.st.defines.setdefault(args[0], None)
        return True

    def undefine(self, node: Directive, args: list[str]) -> bool:
        if not args:
            return False
        self.st.defines.pop(args[0], None)
        return True

    def load_module(self, node: Directive, args: list[str]) -> bool:
        if len(args) < 2:
            return False
        st, module_id = self.st, args[0]
        # A module only assumed (--module, or the MPM a simulation is asked for) is loaded by
        # this line: its position is kept as any other's.
        if module_id in st.modules and st.modules[module_id] != "(assumed)":
            if st.modules[module_id] == "(built-in)":
                st.built_in_loads.append((module_id, st.root_relative(args[1]), node.position))
            st.warnings.append(f"{node.position}: module {module_id} is already loaded, skipping")
            return True
        st.module_added(module_id, st.root_relative(args[1]))
        st.module_positions[module_id] = node.position
        so = st.modules[module_id]
        # httpd loads it at once; a missing file is only judged when its directory is on
        # this machine (a tree copied from a server without its modules is not wrong).
        if observed.isdir(os.path.dirname(so)) and not observed.exists(so):
            st.missing_modules.append((module_id, so, node.position))
        elif not observed.isdir(os.path.dirname(so)):
            st.modules_elsewhere.append((module_id, so, node.position))
        elif observed.isfile(so) and (table := elf.symbols(so)) is not None:
            # httpd's dlopen maps the module's libraries, then binds every symbol; then dlsym
            # looks its identifier up
            if library := self.missing_library(so):
                st.missing_libraries.append((module_id, so, node.position, library))
            elif missing := self.unresolved(so, table[1]):
                st.unresolved_modules.append((module_id, so, node.position, *missing))
            elif module_id not in table[0]:
                st.wrong_identifiers.append((module_id, so, node.position))  # httpd's dlsym fails
            self.add_to_scope(so)
        if module_id in MPM_MODULES:
            st.mpms.append(module_id)
        return True

    def unresolved(self, so: str, needed: tuple[str, ...]) -> tuple[str, str] | None:
        """(the first symbol `so` needs that nothing loaded defines, the module file defining it
        or "" when none does) or None. httpd dlopens each module RTLD_NOW, every symbol bound
        at once: "undefined symbol". A symbol only another of httpd's modules defines, that
        module not loaded before, is always judged; one nothing defines only where this
        machine's httpd runs the tree (its binary, the libraries both need and the modules
        loaded before are read: httpd's global scope), as Debian's libapache2-mod-qos on
        bookworm needing pcre_free from a PCRE httpd no longer links."""
        directory = os.path.dirname(so)
        defined_by = self.st.symbol_providers.get(directory)
        if defined_by is None:  # once a directory a run: every module file of it read once
            defined_by = self.st.symbol_providers[directory] = elf.providers(directory)
        loaded = set(self.st.modules.values())
        closure = self.closure(so)
        scope = self.load_scope() if closure.complete else None
        tables = [linkage.defined for p in scope or () if (linkage := elf.linkage_of(p)) is not None]
        # the module's own libraries (its DT_NEEDED, found as ld.so finds them) bind its symbols
        # first, wherever they lie: a library beside the modules is not a module to load before
        own = [linkage.defined for p in closure.found if p != so and (linkage := elf.linkage_of(p)) is not None]
        for symbol in needed:
            if any(symbol in names for names in own):
                continue
            if symbol in defined_by and defined_by[symbol] != so and defined_by[symbol] not in loaded:
                return symbol, defined_by[symbol]
            if scope is not None and not any(symbol in names for names in tables):
                return symbol, ""
        return None

    def load_scope(self) -> tuple[str, ...] | None:
        """The objects whose names a module's symbols can bind to when it loads, besides its
        own libraries: httpd's binary and its libraries, and what was loaded before (RTLD_GLOBAL);
        None when not known (an object not found or not read)."""
        binary = self.judging_binary
        if binary is None or self.st.global_scope is None:
            return None
        base = self.closure(os.path.realpath(binary))
        return tuple(dict.fromkeys((*base.found, *self.st.global_scope))) if base.complete else None

    def missing_library(self, so: str) -> str | None:
        """The library module `so` needs that the dynamic linker does not find, where this
        machine's httpd runs the tree (elsewhere the library may be on that machine)."""
        return (self.closure(so).missing or None) if self.judging_binary else None

    @property
    def judging_binary(self) -> str | None:
        """This machine's httpd binary when linking is judged: the tree loads a module from that
        httpd's modules directory (then that httpd runs it: a module is built for its httpd), is
        not read under --root, and no LD_PRELOAD changes what binds."""
        st = self.st
        return None if "LD_PRELOAD" in st.env else running_httpd(st.modules, st.sysroot)

    def closure(self, path: str) -> elf.Closure:
        """`path` and the libraries it needs, as the dynamic linker finds them for this tree."""
        return _closure(path, self.st.env.get("LD_LIBRARY_PATH", ""))

    def add_to_scope(self, path: str) -> None:
        """A module or LoadFile library loaded: its names (and its libraries') bind later ones."""
        if self.st.global_scope is not None:
            closure = self.closure(path)
            if closure.complete:
                self.st.global_scope.update(dict.fromkeys(closure.found))
            else:
                self.st.global_scope = None

    def load_file(self, node: Directive, args: list[str]) -> bool:
        # LoadFile: httpd dlopens each library at once (RTLD_GLOBAL), for the modules after it
        for arg in args:
            self.add_to_scope(self.st.root_relative(arg))
        return True

    def ignored(self, node: Directive, args: list[str]) -> bool:
        return True  # DefaultRuntimeDir: read by httpd at once, nothing for us to model

    def section(self, node: Section, chain: Chain, conds: Conds, top: bool, out: list[Item]) -> None:
        st = self.st
        lname = node.lname
        raw = st.substitute(node.raw_args, node)
        known_conditional = lname in CONDITIONAL_SECTIONS and (
            lname != "ifversion" or st.loaded("version_module")) and (
            _in_version("<" + node.name, st))  # <IfFile>, <IfDirective>, <IfSection>: 2.4.34
        if known_conditional:
            try:
                result, reason = self.condition(lname, raw)
            except ConditionError as e:
                raise ResolveError(str(e), node.position) from None
            label = f"<{node.name} {raw}>"
            if result:
                out.extend(self.items(node.children, chain, (*conds, label), top))
            else:
                if not node.closed:
                    raise ResolveError(
                        f"Expected </{node.name}> before end of configuration", node.position)
                st.inactive.append(InactiveSection(node, reason, chain))
            return
        if not node.closed:
            raise ResolveError(f"<{node.name}> was not closed.", node.position)
        if lname == "macro" and st.loaded("macro_module"):
            cf = st.files[node.file]
            try:  # httpd keeps the body as lines: nothing in it is read until a Use
                macro = define(raw, cf.text[node.open_end:node.close_start], node.open_end_line, node.file)
            except MacroError as e:
                raise ResolveError(str(e), node.position) from None
            st.macros[macro.name] = macro
            st.macros_defined = True
            return
        tag_args = st.substitute(node.tag_args, node)
        args = split_words(raw) if raw is not node.raw_args else node.args  # the parser split it
        children = self.items(node.children, chain, conds, False)
        name = sys.intern(st.spelling("<" + node.name)[1:])  # one string per name
        out.append(ResolvedSection(name, args, tag_args, node, children, chain, conds))

    def macro_directive(self, lname: str, args_text: str, node: Directive, chain: Chain, conds: Conds, top: bool,
                        out: list[Item]) -> None:
        """`Use name values...` reads the expansion in place of the line; `UndefMacro name`."""
        st = self.st
        words = split_words(args_text)
        name = words[0].lower() if words and words[0] else ""
        try:
            # httpd's table of macros exists from the first definition on (lazily created)
            if not st.macros_defined:
                raise MacroError(f"no macro defined before {'UndefMacro' if lname == 'undefmacro' else 'Use'}")
            if lname == "undefmacro":
                if not name:
                    raise MacroError("no macro name specified with UndefMacro")
                if st.macros.pop(name, None) is None:
                    raise MacroError(f"cannot remove undefined macro '{name}'")
                return
            if not name:
                raise MacroError("no macro name specified with Use")
            macro = st.macros.get(name)
            if macro is None:
                raise MacroError(f"macro '{name}' undefined")
            where, text = expand(macro, words[1:], node.line, node.file)
        except MacroError as e:
            raise ResolveError(str(e), node.position) from None
        st.files[where] = parse_text(text, where)
        st.generated.add(where)
        outer, self.text = self.text, st.files[where].text
        try:
            out.extend(self.items(st.files[where].children, (*chain, node.position), conds, top))
        finally:
            self.text = outer

    def condition(self, lname: str, raw: str) -> tuple[bool, str]:
        st = self.st
        if lname == "ifversion":
            ok = ifversion(raw, st.version)
            return ok, f"httpd version {st.version} does not satisfy <IfVersion {raw}>"
        negate, word = split_negation(raw)
        if not word:
            # httpd names the section as it registered it (<IfModule>), whatever the file's case
            raise ConditionError(f"<{_CONDITION_NAMES[lname]}> directive requires additional arguments")
        if lname == "ifmodule":
            found = st.loaded(word)
            what = f"module {word} is {'loaded' if found else 'not loaded'}"
        elif lname == "ifdefine":
            found = word in st.defines
            what = f"{word} is {'defined' if found else 'not defined'}"
        elif lname == "iffile":
            found = observed.exists(st.root_relative(word))
            what = f"file {word} {'exists' if found else 'does not exist'}"
        elif lname == "ifdirective":
            found = _directive_known(word, st)
            what = f"directive {word} is {'known' if found else 'not known'}"
        else:  # ifsection
            found = _directive_known("<" + word, st)
            what = f"section <{word}> is {'known' if found else 'not known'}"
        return found != negate, what


_CONDITION_NAMES = {"ifmodule": "IfModule", "ifdefine": "IfDefine", "iffile": "IfFile",
                    "ifdirective": "IfDirective", "ifsection": "IfSection"}

_READ_TIME = {
    "serverroot": Resolver.server_root, "define": Resolver.define, "undefine": Resolver.undefine,
    "loadmodule": Resolver.load_module, "loadfile": Resolver.load_file, "defaultruntimedir": Resolver.ignored,
}


def _parse_cached(path: str, by: Position | None = None, shared: SharedWords | None = None) -> ConfigFile:
    try:
        data = read_config_bytes(path)
    except ConfigReadError as e:
        raise ResolveError(e.message, by) from None
    observed.file_read(path)
    cf = cache.load(path, data)
    if cf is None:
        cf = parse_text(data, path, shared)
        cache.store(path, data, cf)
    return cf


def running_httpd(modules: dict[str, str], sysroot: str | None) -> str | None:
    """This machine's httpd binary when it is the one that runs the tree: the tree loads a module
    from that httpd's modules directory (a module is built for its httpd), and is not read under
    --root; else None."""
    binary = httpd.binary()
    if binary is None or sysroot is not None:
        return None
    home = str(httpd.modules_dir())
    return binary if any(os.path.dirname(p) == home for p in modules.values()) else None


@lru_cache(maxsize=1024)
def _closure(path: str, library_path: str) -> elf.Closure:
    """elf.closure, once a process for each object (a tree loads the same modules each time);
    four checks a module ask it."""
    return elf.closure((path,), library_path)


def _directive_known(name: str, st: _State) -> bool:
    """Whether httpd would know directive `name` with the modules loaded so far (a loaded
    third-party module's too, when its command table reads from its file)."""
    if _in_version(name, st) and any(st.loaded(m) for m in directive_modules(name)):
        return True
    return third_party(st.modules).lookup(name) is not None


def _in_version(name: str, st: _State) -> bool:
    """Whether the modelled httpd version has directive `name` (registry's `since`)."""
    spec = lookup(name)
    return spec is None or spec.since is None or at_least(st.version, spec.since)


def resolve(main_file: str | os.PathLike[str], options: ResolveOptions | None = None) -> EffectiveConfig:
    """Read `main_file` and everything it includes, as httpd would; see ResolveOptions."""
    opts = options or ResolveOptions()
    with collector.paused():  # the tree is built at once and kept: see apachetune/collector.py
        eff = Resolver(os.fspath(main_file), opts).run()
        if not eff.mpms_loaded and opts.mpm is None:
            # No MPM loaded: httpd runs only if one is compiled in. Read again with it built in,
            # because <IfModule prefork.c> before the LoadModule lines must see it too.
            found = compiled_in_mpm(eff.modules)
            if found:
                mpm, why = found
                opts = dataclasses.replace(opts, compiled_mpm_reason=why,
                                           builtin_modules=(*opts.builtin_modules, f"mpm_{mpm}_module"))
                eff = Resolver(os.fspath(main_file), opts).run()
        return eff
