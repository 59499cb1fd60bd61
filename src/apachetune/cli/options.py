"""Options shared by the commands that read a configuration (parse, lint, size, generate, simulate)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from apachetune.config.resolver import ResolveOptions

MPM_CHOICE = click.Choice(["prefork", "worker", "event"])


def _server_root():
    return click.option("-d", "--server-root", "server_root", metavar="DIR",
                        help="ServerRoot, like httpd -d (default: the main file's directory).")


def _defines():
    return click.option("-D", "--define", "defines", multiple=True, metavar="NAME",
                        help="Define NAME, like httpd -D (repeatable).")


def _modules():
    return click.option("--module", "modules", multiple=True, metavar="NAME",
                        help="Treat module NAME (ssl_module, ssl or mod_ssl.c) as loaded (repeatable).")


def _env_file():
    return click.option("--env-file", type=click.Path(exists=True, dir_okay=False), default=None,
                        help="A shell file of exports such as Debian's envvars (default: envvars beside FILE).")


def _sysroot():
    return click.option("--root", "sysroot", type=click.Path(file_okay=False), default=None, metavar="DIR",
                        help="FILE's tree is a copy of another machine's /: the absolute paths it names "
                             "(ServerRoot, Include, LoadModule) are read under DIR.")


def resolve_options(func):
    """-d, -D, --module, --httpd-version, --mpm, --env-file: the context httpd would run with."""
    decorators = [
        _server_root(), _defines(), _modules(),
        click.option("--httpd-version", default=None, metavar="X.Y.Z",
                     help="The httpd 2.4.x to model: <IfVersion>, the directives it knows, its "
                          "start-up checks and wording (default: the installed apache2/httpd's, "
                          "else 2.4.71)."),
        click.option("--mpm", type=MPM_CHOICE, default=None,
                     help="The MPM to assume when no MPM is loaded (a lone snippet such as httpd-mpm.conf)."),
        _env_file(), _sysroot(),
    ]
    for deco in reversed(decorators):
        func = deco(func)
    return func


def tree_options(func):
    """-d, -D, --module, --env-file, --root: how FILE's tree is read, for a command with its own
    --mpm and --httpd-version (simulate)."""
    for deco in reversed([_server_root(), _defines(), _modules(), _env_file(), _sysroot()]):
        func = deco(func)
    return func


def tree_context(server_root, defines, modules, env_file, sysroot) -> ResolveOptions | None:
    """tree_options' values as ResolveOptions, or None when none is given (the commands' defaults).
    Envvars beside FILE are read only with --env-file (lint reads them by default)."""
    if not (server_root or defines or modules or env_file or sysroot):
        return None
    from apachetune.config.resolver import ResolveOptions

    return ResolveOptions(server_root=server_root, defines=list(defines), modules=module_ids(modules),
                          env_file=env_file, use_env_file=False, sysroot=sysroot)


def module_ids(modules) -> list[str]:
    """--module's names as module ids: ssl_module and mod_ssl.c as given, ssl and mod_ssl as ssl_module."""
    return [m if m.endswith((".c", "_module")) else m.removeprefix("mod_") + "_module" for m in modules]


# resolve_options' parameters, as a command receives them among its keyword arguments.
RESOLVE_KEYS = ("server_root", "defines", "modules", "httpd_version", "mpm", "env_file", "sysroot")


def pop_resolve_options(kw: dict) -> ResolveOptions:
    """resolve_options' values taken out of a command's keyword arguments (the rest are the
    command's own, e.g. sizing_options'), as ResolveOptions."""
    return make_resolve_options(**{k: kw.pop(k) for k in RESOLVE_KEYS})


def make_resolve_options(server_root, defines, modules, httpd_version, mpm, env_file,
                         sysroot=None) -> ResolveOptions:
    from apachetune.config.resolver import ResolveOptions

    httpd_version, version_source = httpd_version_or_installed(httpd_version)
    modelled_version(httpd_version, "--httpd-version")
    ids = module_ids(modules)
    if mpm:  # one meaning everywhere: the server's MPM, so its <IfModule mpm_X_module> blocks are read
        ids.append(f"mpm_{mpm}_module")
    return ResolveOptions(server_root=server_root, defines=list(defines), modules=ids,
                          httpd_version=httpd_version, version_source=version_source, mpm=mpm,
                          env_file=env_file, sysroot=sysroot)


def modelled_version(text: str, option: str) -> None:
    """A usage error unless `text` is an httpd 2.4.x: the MPMs' start-up checks, defaults and
    directives apachetune models are 2.4's (2.2 read MaxClients, had no AsyncRequestWorkerFactor
    and an experimental event; a 2.4 tree checked as another version would be judged wrongly)."""
    from apachetune.config.conditions import Version
    from apachetune.errors import UsageError

    try:
        v = Version.parse(text)
    except ValueError as e:
        raise UsageError(f"{option}: {e}") from None
    if (v.major, v.minor) != (2, 4):
        raise UsageError(f"{option} {text}: apachetune models httpd 2.4 (2.4.0 and later); "
                         f"{v.major}.{v.minor} is not modelled")


def httpd_version_or_installed(given: str | None) -> tuple[str, str]:
    """The version to model and where it came from: --httpd-version, else the installed
    httpd's, else the version apachetune's tables were taken from."""
    if given:
        return given, "--httpd-version"
    import os

    from apachetune import httpd
    from apachetune.config.conditions import DEFAULT_VERSION

    found = httpd.version()
    if found:
        return found, f"the installed {os.path.basename(httpd.binary() or 'httpd')}"
    return str(DEFAULT_VERSION), "no httpd installed; --httpd-version to choose"


def main_file(file: str | None, sysroot: str | None = None) -> str:
    """FILE, or the main configuration found on this machine (or under --root DIR; said on
    stderr), or a usage error."""
    if file:
        return file
    from apachetune.config.locate import KNOWN_MAIN_FILES, find_main_file
    from apachetune.console import err
    from apachetune.errors import UsageError

    found = find_main_file(sysroot or "/")
    if found is None:
        where = f"under {sysroot}: " if sysroot else "httpd -V and "
        raise UsageError(f"no FILE given and no main configuration found (looked at {where}"
                         + ", ".join(p for p, _ in KNOWN_MAIN_FILES) + ")")
    path, how = found
    err.print(f"apachetune: using {path} ({how})")
    return path
