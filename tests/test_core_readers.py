"""Core's argument readers (lint/checks/core_readers.py) without httpd: APR's address parser,
set_options, set_override by version, and the findings' places. test_reading_rules_oracle.py
compares the same readers with the installed httpd."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apachetune import httpd
from apachetune.config.apr import AddressError, parse_addr_port
from apachetune.config.resolver import ResolveOptions
from apachetune.lint.checks.core_readers import options_error, override_error, vhost_address_error
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings


@pytest.mark.parametrize("text, expected", [
    ("80", (None, None, 80)), ("*:80", ("*", None, 80)), ("127.0.0.1:8080", ("127.0.0.1", None, 8080)),
    ("[::1]:443", ("::1", None, 443)), ("[fe80::1%eth0]:80", ("fe80::1", "eth0", 80)),
    ("example.org", ("example.org", None, 0)), ("127.0.0.1:", ("127.0.0.1:", None, 0)),
    ("[::1]", ("::1", None, 0)),
])
def test_apr_parse_addr_port(text, expected):
    assert parse_addr_port(text) == expected


@pytest.mark.parametrize("text", ["0", "65536", ":80", "[zz]:80", "[::1]x:80", "[fe80::1%]:80", ""])
def test_apr_parse_addr_port_refuses(text):
    with pytest.raises(AddressError):
        parse_addr_port(text)


def test_options_like_set_options():
    assert options_error(["Indexes", "FollowSymLinks"]) is None
    assert options_error(["-Indexes", "+execcgi"]) is None
    assert options_error(["None", "+Indexes"]) is None  # None/All first, then signs: allowed
    assert options_error(["+Indexes", "FollowSymLinks"]).startswith("Either all Options")
    assert options_error(["Indexes", "-FollowSymLinks"]).startswith("Either all Options")
    assert options_error(["Indexes", "None"]) == "'Options None' must be the first Option given."
    assert options_error(["Indexes", "All"]) == "'Options All' must be the first option given."
    assert options_error(["+All"]) == "You may not use 'Options +All' or 'Options -All'."
    assert options_error(["+Bogus"]) == "Illegal option Bogus"


def test_allowoverride_options_list_is_judged_from_2_4_64():
    # Facts: 2.4.37 and 2.4.52 built from httpd's tags say "Syntax OK" to Options=Bogus;
    # Debian's 2.4.71 says "Illegal option Bogus".
    words = ["Options=Indexes,Bogus"]
    assert override_error(words, "2.4.52") is None
    assert override_error(words, "2.4.71") == "Illegal option Bogus"
    assert override_error(["Nonfatal"], "2.4.52") == "=Override, =Unknown or =All expected after Nonfatal"
    assert override_error(["FileInfo", "Everything"], "2.4.37") == "Illegal override option Everything"


@pytest.mark.parametrize("word, expected", [
    ("*:80", None), ("*", None), ("_default_:443", None), ("*:*", None), ("[::1]:80", None),
    ("80", "Missing address for VirtualHost"), (":*", "The address or port is invalid"),
    ("*:0", "The address or port is invalid"),
])
def test_vhost_addresses(word, expected):
    assert vhost_address_error(word) == expected


def _errors(tmp_path, body: str) -> list[tuple[str, int, str]]:
    conf = tmp_path / "httpd.conf"
    conf.write_text("LoadModule mpm_event_module modules/mod_mpm_event.so\nServerName x\n" + body)
    result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
    return [(f.rule, f.location.line, f.message) for f in result.findings if f.severity == "error"]


def test_a_repeated_listener_is_reported_once_at_its_second_line(tmp_path):
    errors = _errors(tmp_path, "Listen 8080\nListen 8081\nListen *:8080\nListen 0.0.0.0:8080\n")
    assert errors == [("AT510", 5, "AH00526: Cannot define multiple Listeners on the same IP:port "
                                   "(httpd will not start)")]


def test_else_needs_an_if_in_its_own_scope(tmp_path):
    body = ("<If true>\n</If>\nServerAdmin a@b\n<Else>\n</Else>\n"       # 3-7: fine
            "<Directory /srv>\n<If true>\n</If>\n</Directory>\n<Else>\n</Else>\n")  # 12: the previous <Else>'s scope
    assert [e[:2] for e in _errors(tmp_path, body)] == [("AT510", 12)]


def test_an_inactive_section_is_not_judged(tmp_path):
    body = "<IfModule nothere_module>\nListen 80\nListen 80\n<Directory>\n</Directory>\n</IfModule>\n"
    assert _errors(tmp_path, body) == []


def test_document_root_is_judged_where_its_parent_exists(tmp_path):
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "html").mkdir()
    ok = _errors(tmp_path, f"DocumentRoot {tmp_path}/www/html\n")
    typo = _errors(tmp_path, f"DocumentRoot {tmp_path}/www/htm\n")
    elsewhere = _errors(tmp_path, f"DocumentRoot {tmp_path}/srv/www\n")  # a tree copied from another machine
    assert ok == [] and elsewhere == []
    assert typo == [("AT510", 3, f"AH00526: DocumentRoot '{tmp_path}/www/htm' is not a directory, or is not "
                                 "readable (httpd will not start)")]


def test_a_virtual_hosts_missing_document_root_is_a_warning(tmp_path):
    conf = tmp_path / "httpd.conf"
    conf.write_text("LoadModule mpm_event_module modules/mod_mpm_event.so\nServerName x\n"
                    f"<VirtualHost *:80>\nDocumentRoot {tmp_path}/nothere\n</VirtualHost>\n")
    found = [f for f in lint_file(conf, LintOptions(ResolveOptions(env={}), Settings())).findings if f.rule == "AT510"]
    assert [(f.severity, f.location.line) for f in found] == [("warning", 4)]
    assert "AH00112" in found[0].message


def test_document_root_under_root_is_looked_up_there(tmp_path):
    machine = tmp_path / "copy"  # another machine's /, as `lint --root` reads it
    (machine / "var" / "www" / "html").mkdir(parents=True)
    (machine / "etc" / "apache2").mkdir(parents=True)
    conf = machine / "etc" / "apache2" / "httpd.conf"
    conf.write_text("ServerRoot /etc/apache2\nLoadModule mpm_event_module modules/mod_mpm_event.so\n"
                    "ServerName x\nDocumentRoot /var/www/htm\n")
    options = LintOptions(ResolveOptions(env={}, sysroot=str(machine)), Settings())
    assert [f.rule for f in lint_file(conf, options).findings if f.severity == "error"] == ["AT510"]
    conf.write_text(conf.read_text().replace("/htm\n", "/html\n"))
    assert [f.rule for f in lint_file(conf, options).findings if f.severity == "error"] == []


def test_a_tree_from_another_machine_is_not_judged_on_this_ones_files(tmp_path):
    # Alpine's ServerRoot /var/www exists on a Debian with httpd; its logs/ does not: the tree
    # is not installed here (its main file is not under that ServerRoot), so nothing is judged.
    conf = tmp_path / "httpd.conf"
    conf.write_text("ServerRoot /var/www\nLoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\n"
                    f"ServerName x\nErrorLog logs/error.log\nDocumentRoot {tmp_path}/nothere\n")
    assert [f for f in lint_file(conf, LintOptions(ResolveOptions(env={}), Settings())).findings
            if f.rule == "AT510"] == []


def test_user_root_is_refused(tmp_path):
    assert [e[:2] for e in _errors(tmp_path, "User root\n")] == [("AT510", 3)]
    assert [e[:2] for e in _errors(tmp_path, "User #0\n")] == [("AT510", 3)]
    assert _errors(tmp_path, "User #1000\nGroup root\n") == []


@pytest.mark.parametrize("text, expected", [
    ("::1", True), ("::", True), ("00000:000:000:0000::2", True), ("::ffff:1.2.3.4", True),
    ("1:2:3:4:5:6:7:8::", True), ("1:2:3:4:5:6:7:8:9", False), ("1::2::3", False), ("10000::", False),
    (":::", False), ("1:2:3:4:5:6:7", False), ("::1.2.3.256", False), ("::1.2.3", False), ("1.2.3.4", False),
])
def test_apr_inet_pton6_is_aprs_not_pythons(text, expected):
    # Facts: Debian's httpd 2.4.71 (APR 1.7) on `Listen [text]:8080` says "Invalid address or
    # port" exactly for the False ones (test_reading_rules_oracle.py runs them).
    from apachetune.config.apr import apr_inet_pton6

    assert apr_inet_pton6(text) is expected


def test_error_document_status_by_version():
    from apachetune.lint.checks.core_readers import status_supported

    assert status_supported("404") and status_supported("500") and status_supported("404x")
    assert not status_supported("418") and not status_supported("0") and not status_supported("999")
    # 103 Early Hints: in 2.4.71's table (measured), not in 2.4.62's (source).
    assert status_supported("103", "2.4.71") and not status_supported("103", "2.4.62")


def test_file_etag_keywords():
    from apachetune.lint.checks.core_readers import etag_error

    assert etag_error(["MTime", "Size"]) is None and etag_error(["-INode", "+digest"]) is None
    assert etag_error(["+None"]) == "FileETag keyword 'None' cannot be used with '+' or '-'"
    assert etag_error(["Bogus"]) == "Unknown keyword 'Bogus' for FileETag directive"


def test_redirect_like_add_redirect_internal():
    from apachetune.lint.checks.module_readers import redirect_error

    assert redirect_error(["/old", "http://example.org/"], False) is None
    assert redirect_error(["permanent", "/old"], False) == "URL to redirect to is missing"
    assert redirect_error(["permanent", "/old"], True) is None  # inside <Location>: an expression
    assert redirect_error(["gone", "/old"], False) is None
    assert redirect_error(["410", "/old", "http://x/"], False) == "Redirect URL not valid for this status"
    assert redirect_error(["moved", "/a", "http://x/"], True) == "Redirect: invalid first argument (of three)"


def test_request_read_timeout_handshake_came_with_2_4_39():
    from apachetune.lint.checks.module_readers import reqtimeout_error

    assert reqtimeout_error(["handshake=5"], "2.4.39") is None
    assert reqtimeout_error(["handshake=5"], "2.4.38") == \
        "RequestReadTimeout: handshake=5: Unknown RequestReadTimeout parameter"
    assert reqtimeout_error(["header=20-40,MinRate=500"]) is None
    assert reqtimeout_error(["body=5x"]) == "RequestReadTimeout: body=5x: Cannot parse 'x'"


def test_a_certificate_is_judged_where_its_directory_exists(tmp_path):
    from apachetune import httpd

    if httpd.binary() is None:
        pytest.skip("needs the installed module paths")
    (tmp_path / "live").mkdir()
    conf = tmp_path / "httpd.conf"
    for line, refused in ((f"SSLCertificateFile {tmp_path}/live/cert.pem", True),
                          (f"SSLCertificateFile {tmp_path}/elsewhere/cert.pem", False),  # a copied tree
                          ("SSLCertificateKeyFile pkcs11:object=key", False)):
        conf.write_text(f"{httpd.load_module_line('mpm_event')}\n{httpd.load_module_line('ssl')}\n"
                        f"{httpd.load_module_line('socache_shmcb')}\nServerName x\n{line}\n")
        found = [f for f in lint_file(conf, LintOptions(ResolveOptions(env={}), Settings())).findings
                 if f.rule == "AT510"]
        assert bool(found) is refused, (line, [f.message for f in found])


def test_rewrite_flags_by_version():
    # Facts: 2.4.52 built from httpd's tag says "unknown flag" to BNE, UNC and BCTLS and takes
    # END and QSL; 2.4.71 takes all five (test_reading_rules_oracle.py).
    from apachetune.lint.checks.module_readers import rewrite_rule_flag_error

    for key, value in (("BNE", "x"), ("UNC", ""), ("BCTLS", "")):
        assert rewrite_rule_flag_error(key, value, "2.4.52") == f"unknown flag '{key}'"
        assert rewrite_rule_flag_error(key, value, "2.4.71") is None
    assert rewrite_rule_flag_error("UnsafeAllow3F", "", "2.4.59") is not None
    assert rewrite_rule_flag_error("UnsafeAllow3F", "", "2.4.60") is None
    assert rewrite_rule_flag_error("END", "", "2.4.52") is None and rewrite_rule_flag_error("QSL", "", "2.4.52") is None
    assert rewrite_rule_flag_error("Dwhatever", "", "2.4.71") is None  # mod_rewrite's 'd' case takes anything


def test_elf_symbols_of_a_shared_object_and_of_anything_else(tmp_path):
    import glob

    from apachetune.config.elf import exported_symbols

    (tmp_path / "not-elf.so").write_bytes(b"#!/bin/sh\n")
    (tmp_path / "short.so").write_bytes(b"\x7fELF\x02\x01")
    assert exported_symbols(str(tmp_path / "not-elf.so")) is None
    assert exported_symbols(str(tmp_path / "short.so")) is None  # truncated: not judged, no traceback
    assert exported_symbols(str(tmp_path / "absent.so")) is None
    modules = sorted(glob.glob("/usr/lib/apache2/modules/mod_*.so"))
    if not modules:
        pytest.skip("no httpd modules on this machine")
    for so in modules:  # every shipped module exports its own identifier
        name = so.rsplit("/mod_", 1)[1][:-3] + "_module"
        assert name in exported_symbols(so), so


_WORD = st.text(alphabet=st.sampled_from(list("[]:/%.,=+-!*~|{}\"' 0189aAfFxX\u0661\t")), max_size=12)


@given(st.lists(_WORD, max_size=5))
def test_the_readers_never_raise(words):
    """Any words at all: each reader answers None or httpd's message, never an exception."""
    from apachetune.config import apr
    from apachetune.lint.checks import authz_readers as a
    from apachetune.lint.checks import core_readers as c
    from apachetune.lint.checks import module_readers as m

    for answer in (c.options_error(words), c.override_error(words), c.etag_error(words),
                   a.require_ip_error(words), m.header_error("Header", words), m.reqtimeout_error(words),
                   m.proxy_pass_error("ProxyPass", words, False), m.proxy_pass_error("ProxyPass", words, True)):
        assert answer is None or isinstance(answer, str)
    for word in words:
        for answer in (c.vhost_address_error(word), c.server_name_error(word), m.worker_url_error(word),
                       c.log_level_error(word, lambda name: True)):
            assert answer is None or isinstance(answer, str)
        apr.apr_inet_pton6(word)
        c.fnmatch_test(word)
        c.status_supported(word)
        try:
            apr.parse_addr_port(word)
        except apr.AddressError:
            pass
        if word:
            m.redirect_error([word, *words][:3], False)
            m.rewrite_rule_flag_error(word, "", "2.4.71")


def test_require_is_judged_only_with_mod_authz_core(tmp_path):
    body = "<Directory /srv>\nRequire all granted\nRequire ip 10.0.0.0/8\n</Directory>\n"
    assert [e for e in _errors(tmp_path, body) if e[0] == "AT510"] == []  # AT502's, not AT510's


def test_a_dump_is_not_judged_on_the_files_of_a_temporary_copy(tmp_path):
    # lint --from-dump reads the dump from a temporary file: a relative path there is not the
    # server's, so the file-system readers stay silent (before: "source path ... does not exist").
    from click.testing import CliRunner

    from apachetune.cli import cli

    dump = tmp_path / "dump.txt"
    dump.write_text("# In file: /etc/apache2/mods-enabled/ssl.conf\n#  12:\nSSLRandomSeed startup file:relative/seed\n"
                    "#  13:\nSSLPassPhraseDialog exec:bin/ask\n")
    result = CliRunner().invoke(cli, ["lint", "--from-dump", str(dump), "--format", "json"])
    assert [f["rule"] for f in json.loads(result.stdout)["findings"] if f["rule"] == "AT510"] == []


def test_words_after_an_if_condition_are_refused_from_2_4_64(tmp_path):
    conf = tmp_path / "httpd.conf"
    conf.write_text("LoadModule mpm_event_module modules/mod_mpm_event.so\nServerName x\n"
                    "<If \"%{REQUEST_URI} =~ m#^/a#\" && -R '10.0.0.0/8'\">\n</If>\n")

    def errors(version: str) -> list[str]:
        result = lint_file(conf, LintOptions(ResolveOptions(env={}, httpd_version=version), Settings()))
        return [f.message for f in result.findings if f.severity == "error"]

    assert errors("2.4.62") == []
    assert errors("2.4.71") == ["Multiple <If> arguments not supported."]


def test_proxy_worker_keys_by_the_release_that_added_them():
    """Checked against 2.4.37 built from its tag: addressttl (2.4.59) and secret (2.4.42) are
    unknown there, responsefieldsize (2.4.34) is not."""
    from apachetune.lint.checks.proxy_params import table, worker_param_error
    assert worker_param_error("addressttl", "60", "2.4.37") == "unknown Worker parameter"
    assert worker_param_error("AddressTTL", "60", "2.4.59") is None
    assert worker_param_error("secret", "x", "2.4.41") == "unknown Worker parameter"
    assert worker_param_error("responsefieldsize", "10", "2.4.37") is None
    assert worker_param_error("bogus", "1", hcheck=True) == "unknown Worker hcheck parameter"
    assert table(["Timeout=abc", "retry=1", "timeout=5"]) == [("Timeout", "5"), ("retry", "1")]


_READ_BY_CONTEXT = ("ProxyPass /a", "ProxyPass /a balancer://c/", "Mutex", "AddOutputFilterByType", "FilterProvider f",
                    "RewriteOptions", "SSLOCSPEnable", "SSLCARevocationCheck", "SSLVerifyDepth", "DeflateMemLevel",
                    "H2Padding", "Order", "ProxyErrorOverride", "AuthBasicProvider", "AllowMethods", "Require expr",
                    "Require user", "Header set X", "RequestHeader set X v", "ErrorDocument 404", "SetHandler", "Error",
                    "SetEnvIfExpr", "RewriteCond expr", "CustomLog /dev/null common", "LimitXMLRequestBody")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_READ_BY_CONTEXT), st.lists(_WORD, max_size=4), st.sampled_from(["", "<If true>", "<Location /l>"]))
def test_the_readers_that_need_the_configuration_never_raise(tmp_path_factory, head, words, section):
    """Any words after any of those directives, at server level or in a section: lint answers
    with findings, never an exception."""
    from apachetune.config.words import join_words

    mods = ("proxy", "proxy_http", "proxy_balancer", "filter", "deflate", "rewrite", "socache_shmcb", "ssl", "http2",
            "access_compat", "auth_basic", "authn_file", "allowmethods", "authz_core", "authz_user", "headers", "setenvif")
    line = f"{head} {join_words(words)}"
    body = f"{section}\n{line}\n</{section[1:].split()[0].rstrip('>')}>" if section else line
    conf = tmp_path_factory.mktemp("r") / "httpd.conf"
    conf.write_text(f"{httpd.load_module_line('mpm_event')}\nServerName x\n"
                    + "".join(httpd.load_module_line(m) + "\n" for m in mods) + body + "\n")
    result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
    assert all(isinstance(f.message, str) for f in result.findings)


def test_the_installed_tree_is_judged_for_what_a_copy_may_lack(tmp_path, monkeypatch):
    """A copy of a server's tree may name the server's own users and certificates; the tree
    this machine's httpd starts with (its -V SERVER_CONFIG_FILE) may not. An undefined
    variable left in User ("${APACHE_RUN_USR}") is no user anywhere: judged in both."""
    from apachetune import httpd
    from apachetune.lint.checks import core_readers

    if httpd.binary() is None or not (httpd.modules_dir() / "mod_mpm_event.so").is_file():
        pytest.skip("needs the installed modules")
    conf = tmp_path / "httpd.conf"

    def refused(body: str, installed: bool) -> list[str]:
        conf.write_text(f"{httpd.load_module_line('mpm_event')}\n{httpd.load_module_line('ssl')}\n"
                        f"{httpd.load_module_line('socache_shmcb')}\nServerName x\n{body}\n")
        monkeypatch.setattr(core_readers, "installed_main_file", lambda: str(conf) if installed else None)
        return [f.message for f in lint_file(conf, LintOptions(ResolveOptions(env={}), Settings())).findings
                if f.rule == "AT510"]

    for installed in (False, True):
        users = refused("User no-such-user-here", installed)
        assert bool(users) is installed and (not users or "bad user name no-such-user-here" in users[0])
        certs = refused(f"SSLCertificateFile {tmp_path}/elsewhere/cert.pem", installed)
        assert bool(certs) is installed
        assert refused("User ${APACHE_RUN_USR}", installed), installed
        assert refused("Group ${APACHE_RUN_GRP}", installed), installed
        assert not refused("User #33", installed)


@pytest.mark.parametrize("line, at_2_4_62, at_2_4_71", [
    ("AuthDigestQop none", None, "AuthDigestQop is deprecated: only 'auth' is supported"),
    ("AuthDigestQop auth-int", "AuthDigestQop auth-int is not implemented",
     "AuthDigestQop is deprecated: only 'auth' is supported"),
    ("AuthDigestQop x", "Unrecognized qop: x", "AuthDigestQop is deprecated: only 'auth' is supported"),
    ("AuthDigestAlgorithm MD5-sess", "AuthDigestAlgorithm: ERROR: algorithm `MD5-sess' is not implemented",
     "Unsupported algorithm in AuthDigestAlgorithm: MD5-sess"),
    ("AuthDigestAlgorithm x", "Invalid algorithm in AuthDigestAlgorithm: x",
     "Unsupported algorithm in AuthDigestAlgorithm: x"),
    ("AuthDigestAlgorithm md5", None, None),
])
def test_mod_auth_digest_readers_by_version(tmp_path, line, at_2_4_62, at_2_4_71):
    """2.4.62's source (set_qop, set_algorithm) and what the installed 2.4.71 says
    (test_reading_rules_oracle.py): the release between is taken as 2.4.64."""
    conf = tmp_path / "httpd.conf"
    conf.write_text("LoadModule mpm_event_module modules/mod_mpm_event.so\n"
                    "LoadModule auth_digest_module modules/mod_auth_digest.so\n"
                    f"<Directory /srv>\n{line}\n</Directory>\n")
    for version, expected in (("2.4.62", at_2_4_62), ("2.4.71", at_2_4_71)):
        found = [f.message for f in lint_file(conf, LintOptions(ResolveOptions(env={}, httpd_version=version),
                                                                Settings())).findings if f.rule == "AT510"]
        assert (found[0] if found else None) == (None if expected is None else
                                                 f"AH00526: {expected} (httpd will not start)"), (version, found)
