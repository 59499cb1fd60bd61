"""The output filters a configuration can name as a provider (mod_filter's AddOutputFilterByType
and FilterProvider look each up with ap_get_output_filter_handle, any case, and refuse "Unknown
filter provider X"): those the loaded modules register, and those the configuration defines
(ExtFilterDefine, LuaOutputFilter). A filter mod_filter declares (FilterDeclare) is not one.

Facts: the ap_register_output_filter calls of httpd 2.4.x's server/core.c, modules/http/
http_core.c and each module's register_hooks (the names behind their variables resolved)."""

from __future__ import annotations

from apachetune.lint.context import LintContext

_CORE = ("CONTENT_LENGTH", "CORE", "SUBREQ_CORE", "OLD_WRITE", "HTTP_HEADER", "CHUNK", "HTTP_OUTERROR", "BYTERANGE")
_BY_MODULE = {
    "cache_module": ("CACHE", "CACHE_SAVE", "CACHE_SAVE_SUBREQ", "CACHE_OUT", "CACHE_OUT_SUBREQ", "CACHE_REMOVE_URL",
                     "CACHE_INVALIDATE"),
    "bucketeer_module": ("BUCKETEER",), "dumpio_module": ("DUMPIO_OUT",), "brotli_module": ("BROTLI_COMPRESS",),
    "buffer_module": ("BUFFER",), "charset_lite_module": ("XLATEOUT",), "data_module": ("DATA",),
    "deflate_module": ("DEFLATE", "INFLATE"), "include_module": ("INCLUDES",), "proxy_html_module": ("proxy-html",),
    "ratelimit_module": ("RATE_LIMIT",), "reqtimeout_module": ("reqtimeout",), "sed_module": ("Sed",),
    "substitute_module": ("SUBSTITUTE",), "xml2enc_module": ("xml2enc",), "logio_module": ("LOGIO_TTFB_OUT",),
    "http2_module": ("H2_C2_NET_OUT", "H2_C2_NET_CATCH_H1", "H2_C2_RESPONSE_OUT",
                     "H2_C2_TRAILERS_OUT", "H2_C2_WS_OUT"),
    "expires_module": ("MOD_EXPIRES",), "headers_module": ("FIXUP_HEADERS_OUT", "FIXUP_HEADERS_ERR"),
    "proxy_ftp_module": ("PROXY_SEND_DIR",), "session_module": ("MOD_SESSION_OUT",),
    "ssl_module": ("SSL/TLS Coalescing Filter", "SSL/TLS Filter"), "tls_module": ("TLS raw",),
}
# Directives that register an output filter under the name they are given (their first word).
_DEFINING = {"extfilterdefine": "ext_filter_module", "luaoutputfilter": "lua_module"}


def output_filters(ctx: LintContext) -> frozenset[str] | None:
    """The registered output filters' names in lower case, or None when a loaded module apachetune
    has no table for may register more."""
    def compute() -> frozenset[str] | None:
        if ctx.third_party_may_register("filters"):
            return None
        names = {n.lower() for n in _CORE}
        for module, registered in _BY_MODULE.items():
            if ctx.module_loaded(module):
                names.update(n.lower() for n in registered)
        for lname, module in _DEFINING.items():
            if ctx.module_loaded(module):
                names.update(item.args[0].lower() for item in ctx.items_named(lname) if item.args)
        return frozenset(names)
    return ctx.memo("output-filters", compute)


def unknown_provider(ctx: LintContext, names: list[str]) -> str | None:
    """add_filter's first check, for each provider name in turn."""
    known = output_filters(ctx)
    if known is None:
        return None
    unknown = next((n for n in names if n.lower() not in known), None)
    return None if unknown is None else f"Unknown filter provider {unknown}"
