"""AT510: values httpd refuses while it reads the configuration, with each directive's own
argument reader (not a generic atoi): KeepAliveTimeout's time syntax, ListenCoresBucketsRatio's
range, Listen's arity, MaxMemFree's sign and range, and a LoadModule whose shared object is not
on this machine.

Facts: modules/http/http_core.c set_keep_alive_timeout and server/util.c
ap_timeout_parameter_parse; server/listen.c ap_set_listener and ap_set_listencbratio;
server/mpm_common.c ap_mpm_set_max_mem_free; server/mod_so.c load_module (httpd 2.4.x)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from apachetune.config.builtin_mpm import refused_as_built_in
from apachetune.config.effective import ResolvedSection
from apachetune.lint.checks import (
    authz_readers,
    core_readers,
    expressions,
    module_readers,
    simple_readers,
)
from apachetune.lint.checks.core_readers import buffer_size_error, startup_error
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding
from apachetune.mpm.numbers import atoi, max_mem_free, strtol, timeout_parameter


def timeout_ok(text: str) -> bool:
    """Whether ap_timeout_parameter_parse(text, ..., "s") succeeds."""
    return timeout_parameter(text, "s") is not None


def _keepalive_timeout(args: list[str]) -> str | None:
    return None if args and timeout_ok(args[0]) else "KeepAliveTimeout has wrong format"


def _buckets_ratio(args: list[str]) -> str | None:
    return None if args and atoi(args[0]) > 0 else "ListenCoresBucketsRatio must be > 0"


def _listen(args: list[str]) -> str | None:
    return None if 1 <= len(args) <= 2 else "Listen requires 1 or 2 arguments."


def _max_mem_free(args: list[str]) -> str | None:
    return None if args and max_mem_free(args[0]) is not None else f"Invalid MaxMemFree value: {args[0]}"


def _buffer_size(name: str) -> Callable[[list[str]], str | None]:
    """ap_set_send_buffer_size / ap_set_receive_buffer_size: atoi, 0 or at least 512."""
    return lambda args: buffer_size_error(name, atoi(args[0]))


_XML_BODY_MAX = (2**64 - 1) // 6 - 1  # AP_MAX_LIMIT_XML_BODY: APR_SIZE_MAX / 6 - 1


def _xml_body(args: list[str]) -> str | None:
    """set_limit_xml_req_body: atol, not negative, at most AP_MAX_LIMIT_XML_BODY."""
    limit = strtol(args[0]).value or 0
    if limit < 0:
        return "LimitXMLRequestBody requires a non-negative integer."
    return f"LimitXMLRequestBody must not exceed {_XML_BODY_MAX}" if limit > _XML_BODY_MAX else None


READERS = {"keepalivetimeout": _keepalive_timeout, "listencoresbucketsratio": _buckets_ratio,
           "listen": _listen, "maxmemfree": _max_mem_free,
           "sendbuffersize": _buffer_size("SendBufferSize"), "receivebuffersize": _buffer_size("ReceiveBufferSize"),
           "limitxmlrequestbody": _xml_body}


def refused_values(ctx: LintContext) -> Iterator[Finding]:
    for lname, reader in READERS.items():
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedSection) or (lname != "listen" and len(item.args) != 1):
                continue  # a wrong argument count is AT503's
            message = reader(item.args)
            if message:
                yield ctx.finding("AT510", startup_error(message), item)
    yield from core_readers.refused(ctx)
    yield from module_readers.refused(ctx)
    if not ctx.from_dump:  # a dump shows no LoadModule: which providers are loaded is not known
        yield from authz_readers.refused(ctx)
        yield from authz_readers.authn_refused(ctx)
    yield from expressions.refused(ctx)
    yield from simple_readers.refused(ctx)
    for module, path, position, library in ctx.eff.missing_libraries:
        yield ctx.finding("AT510", f"Cannot load {path} into server: {library}: cannot open shared object file: "
                          f"No such file or directory ({module} needs it; httpd will not start)", position)
    for module, path, position in ctx.eff.wrong_identifiers:
        yield ctx.finding("AT510", f"Can't locate API module structure `{module}' in file {path}: {path}: "
                          f"undefined symbol: {module} (httpd will not start)", position)
    for module, path, position, symbol, provider in ctx.eff.unresolved_modules:
        why = (f"defined by {os.path.basename(provider)}, which is not loaded before {module}" if provider
               else "defined by nothing httpd or the modules before it load")
        yield ctx.finding("AT510", f"Cannot load {path} into server: {path}: undefined symbol: {symbol} "
                          f"({why}; httpd will not start)", position)
    for module, path, position in ctx.eff.built_in_loads:
        if not ctx.from_dump and refused_as_built_in(module, ctx.eff.local(path)):
            yield ctx.finding("AT510", f"module {module} is built-in and can't be loaded (httpd will not start)",
                              position)
    # A LoadModule whose directory is absent here is judged only for a tree installed here whose
    # other modules are here too: then it is a mistyped path ("modles"), not another machine's.
    elsewhere = ctx.eff.modules_elsewhere if ctx.eff.modules_elsewhere and core_readers.tree_runs_here(ctx) else []
    for module, path, position in [*ctx.eff.missing_modules, *elsewhere]:
        yield ctx.finding("AT510", f"Cannot load {path} into server: {path}: cannot open shared object "
                          f"file: No such file or directory ({module}; httpd will not start)", position)


RULES = {"AT510": refused_values}
