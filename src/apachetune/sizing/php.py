"""PHP beside httpd: what bounds a mod_php child, and whether php-fpm's pool and httpd's workers fit.

- mod_php runs PHP inside each prefork child: one request may grow its child by up to php.ini's
  `memory_limit`, so MaxRequestWorkers x (child + memory_limit) is the worst case memory must hold.
- php-fpm behind mod_proxy_fcgi: each httpd worker on a PHP request waits for one php-fpm child.
  A pool smaller than the workers httpd needs at the peak queues requests in php-fpm's listen
  backlog while they hold httpd's workers (the pool starves httpd); a pool larger than
  MaxRequestWorkers is never filled (and with `pm = static` still holds its memory).
Files are read as PHP reads them (INI: `key = value`, `;` comments, `[section]`, shorthand sizes
128M / 1G / -1); the pools httpd talks to are found from its own SetHandler / ProxyPass targets.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from typing import Any

from apachetune.config.effective import EffectiveConfig, ResolvedDirective
from apachetune.errors import UsageError

PHP_MODULE = re.compile(r"^php\d*_module$")
# Where distributions keep them (php.ini of mod_php; php-fpm's pool files).
INI_CANDIDATES = ("/etc/php/{version}/apache2/php.ini", "/etc/php.ini", "/usr/local/etc/php/php.ini")
POOL_GLOBS = ("/etc/php/*/fpm/pool.d/*.conf", "/etc/php-fpm.d/*.conf", "/usr/local/etc/php-fpm.d/*.conf")
_FCGI = re.compile(r"(?:unix:(?P<sock>[^|\s\"]+)\|)?fcgi://(?P<host>[^/:\s\"]+)(?::(?P<port>\d+))?", re.I)


def php_size_mib(text: str) -> float | None:
    """PHP's shorthand byte value in MiB (128M, 1G, 512K, bytes); None for -1 (no limit)."""
    m = re.fullmatch(r"\s*(-?\d+)\s*([kKmMgG]?)\s*", text.strip().strip("\"'"))
    if m is None:
        raise ValueError(f"not a PHP size: {text!r}")
    number = int(m.group(1))
    if number < 0:
        return None
    return number * {"": 1 / 1048576, "k": 1 / 1024, "m": 1, "g": 1024}[m.group(2).lower()]


def _where(path: str, key: str) -> str:
    """`path:line:1` of the last `key = ...` line in an INI file (the one PHP keeps)."""
    line = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, raw in enumerate(fh, 1):
            if "=" in raw and raw.split("=", 1)[0].strip().lower() == key:
                line = number
    return f"{path}:{line}:1"


def _size_in(path: str, key: str, text: str) -> float | None:
    """php_size_mib of `key = text` read from `path`; a value PHP's shorthand does not allow is
    a usage error naming the file and line."""
    try:
        return php_size_mib(text)
    except ValueError:
        raise UsageError(f"{_where(path, key)}: {key} = {text}: expected a size such as 128M, 1G, "
                         "134217728 or -1") from None


def read_ini(path: str) -> dict[str, dict[str, str]]:
    """{section: {key: value}} of a PHP or php-fpm INI file ('' is the part before any section)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror}") from None
    out: dict[str, dict[str, str]] = {"": {}}
    section = ""
    for raw in lines:
        line = raw.split(";", 1)[0].strip() if not raw.lstrip().startswith(("#", ";")) else ""
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            out.setdefault(section, {})
        elif "=" in line:
            key, value = line.split("=", 1)
            out[section][key.strip().lower()] = value.strip().strip("\"'")
    return out


@dataclass
class FpmPool:
    name: str
    path: str
    listen: str
    pm: str
    max_children: int | None
    memory_limit_mib: float | None  # php_admin_value / php_value [memory_limit]; None: php.ini's or none

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class PhpSetup:
    mod_php: str | None = None  # the module id, when mod_php is loaded
    ini: str | None = None  # the php.ini read for mod_php
    memory_limit_mib: float | None = None
    handlers: list[str] = field(default_factory=list)  # "file:line: target" of each fcgi hand-off
    pools: list[FpmPool] = field(default_factory=list)  # php-fpm pools those targets reach
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"mod_php": self.mod_php, "php_ini": self.ini, "memory_limit_mib": self.memory_limit_mib,
                "fcgi_handlers": self.handlers, "fpm_pools": [p.to_json() for p in self.pools],
                "notes": self.notes}


def _fcgi_targets(eff: EffectiveConfig) -> list[tuple[ResolvedDirective, str]]:
    """(directive, target) for every hand-off to FastCGI: a socket path or host:port."""
    found = []
    for item, _parents in eff.walk():
        if not isinstance(item, ResolvedDirective) or item.lname not in (
                "sethandler", "proxypass", "proxypassmatch", "proxypassreverse"):
            continue
        for word in item.args:
            m = _FCGI.search(word)
            if m:
                target = m.group("sock") or f"{m.group('host')}:{m.group('port') or '9000'}"
                found.append((item, target))
    return found


def _same_endpoint(listen: str, target: str) -> bool:
    if listen.startswith("/") or target.startswith("/"):
        return os.path.normpath(listen) == os.path.normpath(target)
    host, _, port = target.rpartition(":")
    lhost, _, lport = listen.rpartition(":") if ":" in listen else ("", "", listen)
    local = {"127.0.0.1", "localhost", "::1", "[::1]"}
    return lport == port and (not lhost or lhost == host or (lhost in local and host in local))


def read_pools(paths: list[str]) -> list[FpmPool]:
    pools = []
    for path in paths:
        files = sorted(glob.glob(os.path.join(path, "*.conf"))) if os.path.isdir(path) else [path]
        for file in files:
            for name, keys in read_ini(file).items():
                if not name or "listen" not in keys:
                    continue
                children = keys.get("pm.max_children")
                if children is not None and not children.isdigit():
                    raise UsageError(f"{_where(file, 'pm.max_children')}: [{name}] pm.max_children = {children}: "
                                     "expected a whole number")
                key = "php_admin_value[memory_limit]" if "php_admin_value[memory_limit]" in keys \
                    else "php_value[memory_limit]"
                limit = keys.get(key)
                pools.append(FpmPool(name, file, keys["listen"], keys.get("pm", "dynamic"),
                                     int(children) if children else None,
                                     _size_in(file, key, limit) if limit else None))
    return pools


def find_php(eff: EffectiveConfig | None, php_ini: str | None = None, fpm_paths: list[str] | None = None,
             search_host: bool = False) -> PhpSetup | None:
    """What PHP setup the configuration uses; None when it uses none. Files given win; with
    `search_host` the distributions' usual places are read too."""
    if eff is None:
        return None
    setup = PhpSetup()
    setup.mod_php = next((m for m in eff.modules if PHP_MODULE.match(m)), None)
    if setup.mod_php:
        ini = php_ini
        if ini is None and search_host:
            so = os.path.basename(eff.modules[setup.mod_php])
            version = re.search(r"(\d+\.\d+)", so)
            for candidate in INI_CANDIDATES:
                path = candidate.format(version=version.group(1) if version else "*")
                if os.path.isfile(path):
                    ini = path
                    break
        if ini:
            try:
                sections = read_ini(ini)
                value = next((keys["memory_limit"] for keys in sections.values() if "memory_limit" in keys), None)
                setup.memory_limit_mib = _size_in(ini, "memory_limit", value) if value else 128.0  # PHP's default
                setup.ini = ini
            except UsageError as e:
                if php_ini:  # the file given: its error is the user's to see
                    raise
                setup.notes.append(f"{e} (not judged)")
    targets = _fcgi_targets(eff)
    setup.handlers = [f"{d.node.file}:{d.node.line}: {target}" for d, target in targets]
    if targets:
        paths = list(fpm_paths or [])
        if not paths and search_host:
            paths = [p for pattern in POOL_GLOBS for p in sorted(glob.glob(pattern))]
        try:
            pools = read_pools(paths)
        except UsageError as e:
            if fpm_paths:
                raise
            pools = []  # a pool file found on the host that we cannot read (e.g. ${VAR} values)
            setup.notes.append(f"{e} (php-fpm pools not judged)")
        wanted = {target for _, target in targets}
        setup.pools = [p for p in pools if any(_same_endpoint(p.listen, t) for t in wanted)]
        if paths and not setup.pools:
            setup.notes.append(f"no php-fpm pool read listens on {', '.join(sorted(wanted))}")
    if not setup.mod_php and not targets:
        return None
    return setup


def judge(setup: PhpSetup, mpm: str, max_request_workers: int, load_workers: int | None, usable_mib: float,
          per_worker_mib: float) -> list[str]:
    """What the operator should know about PHP and the recommended section (`load_workers`: the
    workers the given load needs; without a load, every worker may be on a PHP request)."""
    notes = list(setup.notes)
    need = load_workers or max_request_workers
    needs = "needs at the peak" if load_workers else "may hand PHP requests to (MaxRequestWorkers)"
    if setup.mod_php:
        if mpm != "prefork":
            notes.append(f"{setup.mod_php} is loaded: mod_php is not thread-safe, {mpm} would crash it; "
                         "keep prefork or move PHP to php-fpm")
        if setup.memory_limit_mib is None and setup.ini:
            notes.append(f"{setup.ini}: memory_limit = -1: a single request may grow a child without bound")
        elif setup.memory_limit_mib is not None:
            worst = max_request_workers * (per_worker_mib + setup.memory_limit_mib)
            safe = int(usable_mib // (per_worker_mib + setup.memory_limit_mib))
            verdict = "fits" if worst <= usable_mib else f"exceeds the {usable_mib:.0f} MiB usable"
            notes.append(f"mod_php: memory_limit {setup.memory_limit_mib:g} MiB ({setup.ini}): if every child ran a "
                         f"request that reached it, {max_request_workers} children would need {worst:.0f} MiB, "
                         f"which {verdict}" + ("" if worst <= usable_mib else
                                              f"; MaxRequestWorkers {safe} or a lower memory_limit guarantees it"))
    for pool in setup.pools:
        where = f"php-fpm pool [{pool.name}] ({pool.path}, listen {pool.listen})"
        if pool.max_children is None:
            notes.append(f"{where}: pm.max_children not set")
            continue
        if pool.max_children < need:
            notes.append(f"{where}: pm.max_children {pool.max_children} < the {need} workers httpd {needs}: "
                         f"up to {need - pool.max_children} PHP requests wait in php-fpm's listen queue while "
                         f"each holds an httpd worker (the pool starves httpd); pm.max_children {need} sizes "
                         "them together")
        elif pool.max_children > max_request_workers:
            spare = pool.max_children - max_request_workers
            static = " (pm = static: their memory is held anyway)" if pool.pm == "static" else ""
            notes.append(f"{where}: pm.max_children {pool.max_children} > MaxRequestWorkers {max_request_workers}: "
                         f"httpd never sends more than {max_request_workers} PHP requests at once, {spare} "
                         f"children are never used{static}")
    return notes
