"""A third-party module's directives, read from its shared object (config/module_table.py).

The module under test is built here with `cc` from a few lines of C that lay out httpd 2.4's
`module` and `command_rec` structures by hand (no httpd headers needed), so httpd itself can
load it: where apache2 is installed, lint's verdicts on its directives are compared with what
`apache2 -t` says, word for word. httpd's own modules are the other oracle: every table read
from the installed modules must be what `apache2 -L` prints.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from apachetune.config import module_table
from apachetune.config.resolver import ResolveOptions
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings
from httpd_oracle import APACHE2, MODULES_DIR, needs_httpd, run_httpd

CC = shutil.which("cc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")

# httpd 2.4's module ABI (http_config.h): STANDARD20_MODULE_STUFF, then the five config
# functions, the command table, register_hooks and flags; command_rec's six members.
MODULE_C = r"""
#include <stddef.h>
typedef const char *(*cmd_func)(void *, void *, const char *);
typedef struct { const char *name; cmd_func func; void *cmd_data; int req_override; int args_how;
                 const char *errmsg; } command_rec;
typedef struct module_struct { int version, minor_version, module_index; const char *name;
    void *dynamic_load_handle; struct module_struct *next; unsigned long magic;
    void (*rewrite_args)(void *); void *(*create_dir_config)(void *, char *);
    void *(*merge_dir_config)(void *, void *, void *); void *(*create_server_config)(void *, void *);
    void *(*merge_server_config)(void *, void *, void *); const command_rec *cmds;
    void (*register_hooks)(void *); int flags; } module;
static const char *take(void *cmd, void *cfg, const char *arg) { return NULL; }
static void *dir_config(void *p, char *d) { return NULL; }
static const command_rec cmds[] = {
    {"ExampleLimit", (cmd_func)take, NULL, 128, 1, "the most widgets a process keeps"},   /* RSRC_CONF, TAKE1 */
    {"ExampleSwitch", (cmd_func)take, NULL, 4 | 64 | 128, 5, "On to switch widgets on"}, /* OR_FILEINFO|ACCESS|RSRC, FLAG */
    {"ExamplePair", (cmd_func)take, NULL, 64, 2, "a widget and its size"},              /* ACCESS_CONF, TAKE2 */
    {NULL, NULL, NULL, 0, 0, NULL}
};
module example_module = {20120211, 0, -1, "mod_example.c", NULL, NULL, 0x41503234UL, NULL,
                         dir_config, NULL, NULL, NULL, cmds, NULL, 0};
"""


@pytest.fixture(scope="module")
def example_so(tmp_path_factory) -> Path:
    if CC is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("module")
    (folder / "mod_example.c").write_text(MODULE_C)
    so = folder / "mod_example.so"
    subprocess.run([CC, "-shared", "-fPIC", "-O1", "-o", str(so), str(folder / "mod_example.c")],
                   check=True, capture_output=True)
    return so


def test_the_command_table_reads_from_the_shared_object(example_so):
    table = module_table.read(str(example_so), "example_module")
    assert table is not None and table.source == "mod_example.c"
    assert [(c.name, c.kind, c.help) for c in table.commands] == [
        ("ExampleLimit", "TAKE1", "the most widgets a process keeps"),
        ("ExampleSwitch", "FLAG", "On to switch widgets on"),
        ("ExamplePair", "TAKE2", "a widget and its size")]
    limit, switch, pair = table.commands
    assert limit.contexts == ("server config", "virtual host")
    assert switch.allowed == "Allowed in *.conf anywhere and in .htaccess when AllowOverride includes FileInfo"
    assert pair.contexts == ("directory",)
    assert module_table.read(str(example_so), "other_module") is None  # no such symbol


def test_what_is_not_an_httpd_24_module_is_not_read(tmp_path, example_so):
    garbage = tmp_path / "mod_garbage.so"
    garbage.write_bytes(b"\x7fELF" + bytes(200))
    assert module_table.read(str(garbage), "garbage_module") is None
    assert module_table.read(str(tmp_path / "absent.so"), "absent_module") is None
    if CC is not None:  # an httpd 2.2 module (cookie "AP22"): httpd refuses it before its table
        source = tmp_path / "mod_old.c"
        source.write_text(MODULE_C.replace("0x41503234UL", "0x41503232UL"))
        so = tmp_path / "mod_old.so"
        subprocess.run([CC, "-shared", "-fPIC", "-o", str(so), str(source)], check=True, capture_output=True)
        assert module_table.read(str(so), "example_module") is None


def _conf(folder: Path, so: Path, lines: str) -> Path:
    conf = folder / "httpd.conf"
    conf.write_text(f"LoadModule mpm_event_module {MODULES_DIR}/mod_mpm_event.so\n"
                    f"LoadModule authz_core_module {MODULES_DIR}/mod_authz_core.so\n"
                    f"LoadModule example_module {so}\n"
                    f"ServerName localhost\nErrorLog /dev/null\nPidFile {folder}/pid\nListen 127.0.0.1:8\n"
                    + lines)
    return conf


def _errors(conf: Path) -> list[tuple[str, int, str, str]]:
    result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
    return [(f.rule, f.location.line, f.severity, f.message) for f in result.findings if f.rule.startswith("AT50")]


CASES = [
    # (lines, the finding lint gives (rule, line, message) or None, what httpd -t says)
    ("ExampleLimit 10\nExampleSwitch on\n<Directory /srv>\nExamplePair a 2\n</Directory>\n", None, None),
    ("ExampleLimt 10\n", ("AT501", "Invalid command 'ExampleLimt', perhaps misspelled or defined by a module "
                          "not included in the server configuration; did you mean ExampleLimit or ExampleSwitch?"),
     "Invalid command 'ExampleLimt', perhaps misspelled or defined by a module not included in the "
     "server configuration"),
    ("ExampleLimit 10 20\n", ("AT503", "ExampleLimit takes one argument, the most widgets a process keeps"),
     "ExampleLimit takes one argument, the most widgets a process keeps"),
    ("ExampleSwitch maybe\n", ("AT503", "ExampleSwitch must be On or Off"), "ExampleSwitch must be On or Off"),
    ("ExamplePair a 2\n", ("AT504", "ExamplePair not allowed here"), "ExamplePair not allowed here"),
    ("<Directory /srv>\nExampleLimit 3\n</Directory>\n",
     ("AT504", "ExampleLimit not allowed in <Directory> context"), "ExampleLimit not allowed in <Directory> context"),
    ("<IfDirective ExamplePair>\nDefine HAVE_PAIR\n</IfDirective>\n<IfDefine HAVE_PAIR>\nNoSuchThing\n</IfDefine>\n",
     ("AT501", "Invalid command 'NoSuchThing', perhaps misspelled or defined by a module not included in the "
               "server configuration"), "Invalid command 'NoSuchThing'"),
]


@needs_cc
@pytest.mark.parametrize("lines, finding, httpd_says", CASES)
def test_lint_judges_a_third_party_modules_directives_as_httpd_does(tmp_path, example_so, lines, finding, httpd_says):
    conf = _conf(tmp_path, example_so, lines)
    found = _errors(conf)
    if finding is None:
        assert found == []
    else:
        rule, message = finding
        [(got_rule, _line, severity, got)] = found
        assert (got_rule, severity, got) == (rule, "error", message)  # an error: the table was read
    if APACHE2:
        proc = run_httpd("-t", "-f", str(conf))
        if httpd_says is None:
            assert proc.returncode == 0, proc.stderr
        else:
            assert proc.returncode != 0 and httpd_says in proc.stderr, proc.stderr


@needs_cc
def test_a_module_whose_file_is_not_here_still_leaves_a_warning(tmp_path, example_so):
    conf = _conf(tmp_path, example_so, "LoadModule other_module /nonexistent/dir/mod_other.so\n"
                                       "ExampleLimt 10\nOtherThing 1\n")
    found = _errors(conf)
    assert [(r, s) for r, _, s, _ in found] == [("AT501", "warning"), ("AT501", "warning")]
    assert all("unless other_module, which apachetune has no table for, defines it" in m for *_, m in found)


def _httpd_L(modules: dict[str, Path], tmp_path: Path) -> dict[str, list[tuple[str, str, str]]]:
    """`apache2 -L` with `modules` loaded: source file -> [(name, help, allowed)]."""
    conf = tmp_path / "all.conf"
    conf.write_text("ServerName localhost\nErrorLog /dev/null\n"
                    + "".join(f"LoadModule {m} {so}\n" for m, so in modules.items())
                    + f"LoadModule mpm_event_module {MODULES_DIR}/mod_mpm_event.so\n")
    proc = run_httpd("-L", "-f", str(conf))
    assert proc.returncode == 0, proc.stderr
    found: dict[str, list[tuple[str, str, str]]] = {}
    # a directive's block: its header, "\t" + its help (which may hold newlines), then
    # "\tAllowed in ..." (and "\twhen AllowOverride ..." on a line of its own)
    blocks = re.split(r"^(\S+) \((\S+\.c)\)\n", proc.stdout, flags=re.M)
    for name, source, body in zip(blocks[1::3], blocks[2::3], blocks[3::3], strict=True):
        help_text, _, allowed = body.partition("\tAllowed in")
        allowed = ("Allowed in" + allowed).replace("\n\t", " ").strip()
        found.setdefault(source, []).append((name, help_text.removeprefix("\t").removesuffix("\n"), allowed))
    return found


@needs_httpd
def test_every_installed_module_reads_as_httpd_lists_it(tmp_path):
    modules: dict[str, Path] = {}
    for so in sorted(MODULES_DIR.glob("mod_*.so")):
        stem = so.stem.removeprefix("mod_")
        if not stem.startswith("mpm_") and so.is_file():
            modules[f"{stem}_module" if stem != "ldap" else "ldap_module"] = so
    tables = {m: module_table.read(str(so), m) for m, so in modules.items()}
    # httpd's own modules only (a third-party one installed here may need another loaded first)
    from apachetune.config.directives import shipped_modules
    own = {m: so for m, so in modules.items() if m in shipped_modules()}
    listed = _httpd_L(own, tmp_path)
    assert len(own) > 40 and sum(map(len, listed.values())) > 500
    for m in own:
        table = tables[m]
        assert table is not None, m
        got = [(c.name, c.help, c.allowed) for c in table.commands]
        assert got == listed.get(table.source, []), m


@needs_httpd
def test_what_httpds_own_modules_register_is_found_in_their_files():
    """Each kind a module registers, by apachetune's hand tables (the names lint looks up),
    is found in the module's file by the functions it calls: a module read as registering
    none of a kind registers none (the readers judge names while it is loaded)."""
    from apachetune.lint.checks import (
        authz_readers,
        core_readers,
        filters,
        module_readers,
        proxy_params,
    )

    expected = {
        "providers": [*authz_readers.AUTHZ_PROVIDERS, *authz_readers._AUTHN_PROVIDERS,
                      *module_readers.SOCACHE_PROVIDERS, *proxy_params.LBMETHODS, "dav_fs_module"],
        "filters": list(filters._BY_MODULE),
        "mutex types": [m for m in core_readers._MUTEX_TYPES if not m.startswith("mpm_")],
        "expression functions": ["ssl_module", "proxy_hcheck_module"],
        "log handlers": [m for m in module_readers._LOG_HANDLERS if m != "log_config_module"],
    }
    checked = 0
    for kind, modules in expected.items():
        for module in modules:
            so = MODULES_DIR / f"mod_{module.removesuffix('_module')}.so"
            if so.is_file():
                table = module_table.read(str(so), module)
                assert table is not None and kind in table.registers, (module, kind)
                checked += 1
    assert checked > 40
    status = module_table.read(str(MODULES_DIR / "mod_status.so"), "status_module")
    assert status is not None and status.registers == frozenset()  # a handler only


@needs_cc
def test_a_read_module_that_registers_no_provider_leaves_require_judged(tmp_path, example_so):
    # the example module calls no registrar: Require's provider names are judged as without it
    conf = _conf(tmp_path, example_so, "<Directory /srv>\nRequire locl\n</Directory>\n")
    result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
    assert [f.message for f in result.findings if f.rule == "AT510"] == \
        ["AH00526: Unknown Authz provider: locl (httpd will not start)"]
    if APACHE2:
        proc = run_httpd("-t", "-f", str(conf))
        assert proc.returncode != 0 and "Unknown Authz provider: locl" in proc.stderr
    # a module whose file is not here may register anything: not judged
    conf.write_text(conf.read_text() + "LoadModule other_module /nonexistent/dir/mod_other.so\n")
    result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
    assert not any("Unknown Authz provider" in f.message for f in result.findings)


MISSING_C = MODULE_C.replace(
    "static const char *take(void *cmd, void *cfg, const char *arg) { return NULL; }",
    "extern const char *apachetune_nowhere(const char *);\n"
    "extern const char *apachetune_maybe(const char *) __attribute__((weak));\n"
    "static const char *take(void *cmd, void *cfg, const char *arg)"
    " { return apachetune_maybe ? apachetune_maybe(arg) : WHAT; }")


def _build(folder: Path, name: str, what: str) -> Path:
    source = folder / f"mod_{name}.c"
    source.write_text(MISSING_C.replace("WHAT", what))
    so = folder / f"mod_{name}.so"
    subprocess.run([CC, "-shared", "-fPIC", "-O1", "-o", str(so), str(source)], check=True, capture_output=True)
    return so


@needs_httpd
@needs_cc
def test_a_module_needing_a_symbol_nothing_defines_does_not_load(tmp_path):
    """httpd dlopens a module with every symbol bound at once: one that neither httpd, its
    libraries, the modules loaded before nor the module's own libraries define stops it.
    Judged where this machine's httpd runs the tree (it loads a module from httpd's modules
    directory); a weak reference that nothing defines is no error."""
    broken = _build(tmp_path, "broken", "apachetune_nowhere(arg)")
    fine = _build(tmp_path, "fine", "NULL")
    for so, says in ((broken, f"Cannot load {broken} into server: {broken}: undefined symbol: apachetune_nowhere"),
                     (fine, None)):
        conf = _conf(tmp_path, so, "")
        result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
        found = [f.message for f in result.findings if f.rule == "AT510"]
        if says is None:
            assert found == []
        else:
            assert found == [f"{says} (defined by nothing httpd or the modules before it load; "
                             "httpd will not start)"]
        proc = run_httpd("-t", "-f", str(conf))
        assert (proc.returncode == 0) is (says is None) and (says or "Syntax OK") in proc.stderr, proc.stderr
    # a tree that loads nothing from this httpd's modules may be another httpd's: not judged
    conf = tmp_path / "elsewhere.conf"
    conf.write_text(f"LoadModule example_module {broken}\nServerName localhost\n")
    result = lint_file(conf, LintOptions(ResolveOptions(env={}, mpm="event"), Settings()))
    assert [f for f in result.findings if "undefined symbol" in f.message] == []


FAKE_HTTPD_C = MODULE_C.replace('"mod_example.c"', '"core.c"').replace("example_module", "core_module").replace(
    '{"ExampleLimit", (cmd_func)take, NULL, 128, 1, "the most widgets a process keeps"},',
    '{"SymlinkProtect", (cmd_func)take, NULL, 128, 5, "Enable or disable symlink protection"},'
    '{"ServerName", (cmd_func)take, NULL, 128, 1, "The hostname and port of the server"},') + "int main(void) { return 0; }\n"


@needs_cc
def test_the_running_httpds_own_patched_core_directives_are_known(tmp_path, monkeypatch, example_so):
    """A vendor's httpd may patch core (cPanel's EasyApache adds SymlinkProtect): when this
    machine's httpd runs the tree and is the release modelled, the directives its compiled-in
    modules register beyond the registry are read from the binary and known."""
    from apachetune import httpd

    source = tmp_path / "httpd.c"
    source.write_text(FAKE_HTTPD_C)
    binary = tmp_path / "httpd"
    subprocess.run([CC, "-rdynamic", "-fPIE", "-pie", "-o", str(binary), str(source)], check=True, capture_output=True)
    conf = _conf(tmp_path, example_so, "SymlinkProtect On\nSymlinkProtect maybe\n")

    def verdicts() -> list[tuple[str, str]]:
        result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
        return [(f.rule, f.message) for f in result.findings if f.rule in ("AT501", "AT503")]

    assert [r for r, _ in verdicts()] == ["AT501", "AT501"]  # stock httpd knows no SymlinkProtect
    version = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings())).httpd_version
    monkeypatch.setattr(httpd, "binary", lambda: str(binary))
    monkeypatch.setattr(httpd, "version", lambda: version)
    assert verdicts() == [("AT503", "SymlinkProtect must be On or Off")]
    monkeypatch.setattr(httpd, "version", lambda: "2.4.1")  # another release than the one modelled
    assert [r for r, _ in verdicts()] == ["AT501", "AT501"]


@needs_cc
def test_a_module_that_adds_modules_at_run_time_may_define_any_directive(tmp_path):
    # mod_perl calls ap_add_loaded_module for PerlLoadModule's packages: their directives are
    # not in its table, so an unknown name stays a warning naming it
    source = tmp_path / "mod_adder.c"
    source.write_text(MODULE_C.replace("static void *dir_config", "extern int ap_add_loaded_module(void *, void *, void *);\n"
                                       "int (*keep)(void *, void *, void *) = ap_add_loaded_module;\n"
                                       "static void *dir_config"))
    so = tmp_path / "mod_adder.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(so), str(source)], check=True, capture_output=True)
    table = module_table.read(str(so), "example_module")
    assert table is not None and "directives" in table.registers and len(table.commands) == 3
    found = _errors(_conf(tmp_path, so, "ExampleLimit 3\nPerlThing 1\n"))
    assert [(r, s) for r, _, s, _ in found] == [("AT501", "warning")]
    assert "unless example_module, which apachetune has no table for, defines it" in found[0][3]


@needs_httpd
@needs_cc
@pytest.mark.parametrize("rpath", [False, True])
def test_a_module_needing_a_library_the_linker_does_not_find_does_not_load(tmp_path, rpath):
    """dlopen maps a module's DT_NEEDED libraries first: one not found (in its RUNPATH, the
    ld.so cache, the system's directories) stops httpd with "NAME: cannot open shared object
    file"; found through the module's RUNPATH it loads."""
    (tmp_path / "dep.c").write_text("const char *apachetune_dep(const char *a) { return 0; }\n")
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(tmp_path / "libapachetune_dep.so"), str(tmp_path / "dep.c")],
                   check=True, capture_output=True)
    (tmp_path / "mod_needs.c").write_text(MISSING_C.replace("apachetune_nowhere", "apachetune_dep")
                                          .replace("WHAT", "apachetune_dep(arg)"))
    so = tmp_path / "mod_needs.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(so), str(tmp_path / "mod_needs.c"), f"-L{tmp_path}",
                    "-lapachetune_dep", *([f"-Wl,-rpath,{tmp_path}"] if rpath else [])], check=True, capture_output=True)
    conf = _conf(tmp_path, so, "")
    result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
    found = [f.message for f in result.findings if f.rule == "AT510"]
    said = f"Cannot load {so} into server: libapachetune_dep.so: cannot open shared object file: No such file or directory"
    proc = run_httpd("-t", "-f", str(conf))
    if rpath:
        assert found == [] and proc.returncode == 0, (found, proc.stderr)
    else:
        assert found == [f"{said} (example_module needs it; httpd will not start)"]
        assert proc.returncode != 0 and said in proc.stderr, proc.stderr


@needs_cc
def test_mod_perl_adds_directives_and_providers_only_when_asked(tmp_path):
    # mod_perl calls ap_add_loaded_module for each PerlLoadModule and registers a provider for
    # each PerlAddAuthzProvider: without those lines a typo is an error and Require is judged
    source = tmp_path / "mod_perl.c"
    source.write_text(MODULE_C.replace("example_module", "perl_module").replace('"mod_example.c"', '"mod_perl.c"')
                      .replace('"ExamplePair"', '"PerlLoadModule"')
                      .replace("static void *dir_config",
                               "extern int ap_add_loaded_module(void *, void *, void *);\n"
                               "extern int ap_register_auth_provider(void *, void *, void *);\n"
                               "int (*keep)(void *, void *, void *) = ap_add_loaded_module;\n"
                               "int (*keep2)(void *, void *, void *) = ap_register_auth_provider;\n"
                               "static void *dir_config"))
    so = tmp_path / "mod_perl.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(so), str(source)], check=True, capture_output=True)
    plain = "ExampleLimt 3\n<Directory /srv>\nRequire locl\n</Directory>\n"
    conf = _conf(tmp_path, so, plain).read_text().replace("example_module", "perl_module")
    (tmp_path / "httpd.conf").write_text(conf)
    result = lint_file(tmp_path / "httpd.conf", LintOptions(ResolveOptions(env={}), Settings()))
    judged = sorted((f.rule, f.severity) for f in result.findings if f.rule in ("AT501", "AT510"))
    assert judged == [("AT501", "error"), ("AT510", "error")]  # the typo; Unknown Authz provider: locl
    (tmp_path / "httpd.conf").write_text(conf + "<Directory /srv>\nPerlLoadModule My::Directives\n</Directory>\n")
    result = lint_file(tmp_path / "httpd.conf", LintOptions(ResolveOptions(env={}), Settings()))
    judged = sorted((f.rule, f.severity) for f in result.findings if f.rule in ("AT501", "AT510"))
    assert judged == [("AT501", "warning")]  # My::Directives may define it, and a provider
