"""Each value from the fidelity issue gets httpd's verdict: where `apache2 -t` refuses, lint has
an error with httpd's words; where httpd accepts, lint has no error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from apachetune import httpd
from apachetune.config.resolver import ResolveOptions
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings
from httpd_oracle import APACHE2, needs_httpd, run_httpd

CASES = [
    "KeepAliveTimeout -1", "KeepAliveTimeout abc", "KeepAliveTimeout 1e3", "KeepAliveTimeout 0x10",
    "KeepAliveTimeout 99999999999999999999", "KeepAliveTimeout 5", "KeepAliveTimeout 5ms",
    "KeepAliveTimeout 2min", "KeepAliveTimeout 1h", "KeepAliveTimeout 5.5", "KeepAliveTimeout s",
    "KeepAliveTimeout ms", "KeepAliveTimeout h", "KeepAliveTimeout x", "KeepAliveTimeout -0", "KeepAliveTimeout +5",
    "ListenCoresBucketsRatio 0", "ListenCoresBucketsRatio -1", "ListenCoresBucketsRatio abc",
    "ListenCoresBucketsRatio 2", "Listen", "Listen 127.0.0.1:8081 http", "Define a b c", "Define a:b",
    "Define a b", "Include a b", "ServerRoot /nonexistent", "AsyncRequestWorkerFactor nan",
    "AsyncRequestWorkerFactor 0x10", "AsyncRequestWorkerFactor 0", "AsyncRequestWorkerFactor 1.5x",
    "MaxRequestWorkers \u0661\u0665\u0660", "Timeout abc",
    "MaxMemFree -1", "MaxMemFree abc", "MaxMemFree 99999999999999999999", "MaxMemFree 9223372036854775807",
    "MaxMemFree 9223372036854775808", "MaxMemFree 4194304", "MaxMemFree 12x", "MaxMemFree -0",
    # core's own readers (lint/checks/core_readers.py): Listen's address and duplicates,
    "Listen 8080\nListen *:8080", "Listen 8080\nListen 0.0.0.0:8080", "Listen abc", "Listen :80",
    "Listen 127.0.0.1", "Listen 70000", "Listen 0", "Listen [zz]:80", "Listen [::1]", "Listen [::1]:8080",
    "Listen 127.0.0.1:8080\nListen 127.0.0.1:8080 https", "Listen 127.0.0.1:\n",
    *(f"Listen [{a}]:8080" for a in ("00000:000:000:0000::2", "::", "1:2:3:4:5:6:7:8:9", "1::2::3", "::ffff:1.2.3.4",
                                     "10000::", "1:2:3:4:5:6:7:8::", ":::", "1:2:3:4:5:6:7", "::1.2.3.256", "1.2.3.4")),
    # Options and AllowOverride,
    "Options +Indexes FollowSymLinks", "Options Indexes -FollowSymLinks", "Options -Indexes +ExecCGI",
    "Options None Indexes", "Options Indexes None", "Options +None", "Options All -Indexes",
    "Options Bogus", "Options", "Options includesnoexec MULTIVIEWS",
    "<Directory /srv>\nAllowOverride Bogus\n</Directory>", "<Directory /srv>\nAllowOverride Nonfatal\n</Directory>",
    "<Directory /srv>\nAllowOverride Options=Bogus Nonfatal=Foo FileInfo=x\n</Directory>",
    # sections' words, <Else>'s place, <Limit TRACE>, <VirtualHost> addresses and nesting.
    "<Directory>\n</Directory>", "<Directory /a /b>\n</Directory>", "<Directory ~ ^/a>\n</Directory>",
    "<DirectoryMatch ^/a ^/b>\n</DirectoryMatch>", "<Location>\n</Location>", "<Location /a /b>\n</Location>",
    "<Files>\n</Files>", "<FilesMatch a b>\n</FilesMatch>", "<Files ~ a>\n</Files>",
    "<If>\n</If>", "<Else x>\n</Else>", "<Else>\n</Else>", "<If true>\n</If>\nServerAdmin a@b\n<ElseIf false>\n</ElseIf>",
    "<If true>\n</If>\n<Else>\n</Else>\n<Else>\n</Else>", "<Directory /srv>\n<If true>\n</If>\n</Directory>\n<Else>\n</Else>",
    "<Directory /srv>\n<Limit TRACE>\n</Limit>\n</Directory>", "<Directory /srv>\n<LimitExcept TRACE>\n</LimitExcept>\n</Directory>",
    "<Directory /srv>\n<Limit>\n</Limit>\n</Directory>",
    "<VirtualHost>\n</VirtualHost>", "<VirtualHost 80>\n</VirtualHost>", "<VirtualHost *:80 8080>\n</VirtualHost>",
    "<VirtualHost :*>\n</VirtualHost>", "<VirtualHost *:*>\n</VirtualHost>", "<VirtualHost [::1]:80 _default_:443>\n</VirtualHost>",
    "<VirtualHost *:80>\n<VirtualHost *:81>\n</VirtualHost>\n</VirtualHost>",
    # keywords, LogLevel's levels and modules, ServerName's wildcards and port.
    "HostnameLookups maybe", "HostnameLookups DOUBLE", "UseCanonicalName dns", "UseCanonicalName yes",
    "EnableMMAP no", "EnableSendfile Off", "UseCanonicalPhysicalPort on", "ServerSignature email",
    "ServerSignature full", "ServerTokens Bogus", "ServerTokens productonly", "ServerTokens Minimal",
    "TraceEnable maybe", "TraceEnable extended", "AllowEncodedSlashes NoDecode", "AllowEncodedSlashes yes",
    "AcceptPathInfo default", "AcceptPathInfo maybe",
    "LogLevel verbose", "LogLevel WARN", "LogLevel info core:trace8", "LogLevel warn core:bogus",
    "LogLevel warn nothere:info", "LogLevel warn mpm_event:debug", "LogLevel warn mod_so.c:debug",
    "LogLevel warn so_module:debug", "LogLevel core:", "LogLevel trace9",
    "ServerName *.example.org", "ServerName www.example.org:8080", "ServerName http://x:abc",
    "ServerName https://example.org", "ServerName x:0", "ServerName x:65536", "ServerName [::1]:80",
    "ServerName x[1]", "ServerName x[1",
    # ErrorDocument's status, the request limits, FileETag, ServerAlias outside a virtual host.
    "ErrorDocument 404 /e.html", "ErrorDocument 999 /x", "ErrorDocument abc /x", "ErrorDocument 418 x",
    "ErrorDocument 103 /x", "ErrorDocument 500 oops", "ErrorDocument 404x /x", "ErrorDocument 100 /x",
    "LimitRequestLine -1", "LimitRequestLine abc", "LimitRequestFieldSize -5", "LimitRequestFields -1",
    "LimitRequestFields 0", "LimitRequestBody abc", "LimitRequestBody -1", "LimitRequestBody 10k",
    "LimitRequestBody 99999999999999999999", "LimitRequestBody 1048576", "LimitRequestBody ' 12'",
    "FileETag Bogus", "FileETag +None", "FileETag MTime Size", "FileETag -INode +digest", "FileETag All",
    "ServerAlias www.example.org", "<VirtualHost *:80>\nServerAlias www.example.org *.example.net\n</VirtualHost>",
    # CustomLog's condition (mod_log_config is compiled into Debian's httpd)
    "CustomLog /tmp/x.log combined bogus", "CustomLog /tmp/x.log combined env=", "CustomLog /tmp/x.log combined env=!",
    "CustomLog /tmp/x.log combined env=!x", "CustomLog /tmp/x.log combined expr=", "CustomLog /tmp/x.log combined ENV=x",
    'LogFormat "%h %Z" x', 'LogFormat "%{x" y', 'LogFormat "%h %" z', 'LogFormat "%h %%" z', 'LogFormat "%>s %<s %!200,304{X}i" z',
    'LogFormat "%^ti %^to %{%Y}t %D %T" z', 'LogFormat "%^FB" z', 'LogFormat "%I %O" z', 'LogFormat "%^xx" z',
    'CustomLog /tmp/x.log "%h %Q"', 'CustomLog /tmp/x.log "%h %a"', 'CustomLog /tmp/x.log nickname', 'LogFormat "100%% %b" z',
    'LogFormat "%{c}a %{User-Agent}i \\"%r\\"" z',
    # ranges, recursion, protocols, a core dump directory
    "MaxRanges abc", "MaxRanges -5", "MaxRanges unlimited", "MaxRanges 10", "MaxRangeOverlaps 0",
    "MaxRangeReversals none", "LimitInternalRecursion 0", "LimitInternalRecursion 10 0", "LimitInternalRecursion 10 5",
    "ProtocolsHonorOrder maybe", "ProtocolsHonorOrder Off", "HttpProtocolOptions Bogus",
    "HttpProtocolOptions Strict Unsafe", "HttpProtocolOptions Unsafe LenientMethods Allow0.9",
    "HttpProtocolOptions Allow0.9\nHttpProtocolOptions Require1.0",
    "HttpProtocolOptions Allow0.9\n<VirtualHost *:80>\nHttpProtocolOptions Require1.0\n</VirtualHost>",
    "CoreDumpDirectory /nonexistent", "CoreDumpDirectory /etc/passwd", "CoreDumpDirectory /tmp",
    # the buffer sizes, LimitXMLRequestBody, Mutex (the event MPM registers no mpm-accept)
    "SendBufferSize 100", "SendBufferSize 0", "ReceiveBufferSize 511", "ReceiveBufferSize 512", "SendBufferSize 1 2",
    "LogIOTrackTTFB bogus", "LogIOTrackTTFB on", "ListenBacklog 1 2", "GracefulShutdownTimeout",
    "LimitXMLRequestBody -1", "LimitXMLRequestBody 3074457345618258602", "LimitXMLRequestBody 3074457345618258601",
    "Mutex bogus", "Mutex", "Mutex posixsem", "Mutex sysvsem mpm-accept", "Mutex default bogus-mutex-name",
    "Mutex none", "Mutex no default", "Mutex file:/tmp default omitpid", "Mutex file:/etc/passwd",
    "Mutex sem:/tmp", "Mutex flock:relative", "Mutex yes", "Mutex fcntl:", "Mutex Default", "Mutex default Default",
    "Mutex default watchdog-callback",
    'Error bogus', 'Error "Need mod_ssl"', "Error", '<IfModule !ssl_module>\nError "mod_ssl is required"\n</IfModule>',
    "<IfModule mime_module>\nError x\n</IfModule>",
    # an empty word among Options (lint's own Options reading raised IndexError on it)
    'Options "" Indexes', 'Options ""', 'Options +Indexes ""',
    # a path as httpd names it (apr_filepath_merge: "//" one, "." dropped, ".." back a segment)
    "DocumentRoot a/./b/../c//d/", "DocumentRoot ../nosuch-x", "DocumentRoot http://", "CoreDumpDirectory http://",
    "DocumentRoot ./",
]


def httpd_and_lint(tmp_path, body: str, error_log: str | None = None):
    """Write httpd.conf (the event MPM, ServerName, ErrorLog, then `body`) in `tmp_path`, the
    ServerRoot: (apache2 -t's result, lint's findings)."""
    conf = tmp_path / "httpd.conf"
    conf.write_text(f"{httpd.load_module_line('mpm_event')}\nServerName x\nErrorLog {error_log or tmp_path / 'e.log'}\n"
                    f"{body}\n")
    proc = run_httpd("-t", "-f", str(conf), "-d", str(tmp_path))
    return proc, lint_file(conf, LintOptions(ResolveOptions(env={}), Settings())).findings  # root: the file's directory


@needs_httpd
@pytest.mark.parametrize("line", CASES)
def test_lint_and_httpd_agree_on_the_value(tmp_path, line):
    proc, findings = httpd_and_lint(tmp_path, f"ServerTokens Prod\nTraceEnable Off\n{line}")
    errors = [f for f in findings if f.severity == "error"]
    if proc.returncode == 0:
        assert errors == [], (line, [f.message for f in errors])
    else:
        said = proc.stderr.strip().splitlines()[-1].split(f"{tmp_path / 'httpd.conf'}:", 1)[-1].strip()
        assert errors, (line, said)
        assert any(said in f.message for f in errors), (said, [f.message for f in errors])


def test_a_missing_module_file_is_judged_where_its_directory_exists_or_the_tree_runs_here(tmp_path):
    """A missing module file is judged where its directory exists; in a directory absent here,
    only for a tree that runs here (installed here, its other modules here: a mistyped path);
    a tree whose modules are all elsewhere is another machine's."""
    modules = httpd.modules_dir()
    here = (modules / "mod_mpm_event.so").is_file()
    conf = tmp_path / "httpd.conf"
    mpm_elsewhere = f"LoadModule mpm_event_module {tmp_path}/other/mod_mpm_event.so"
    for mpm_line, path, expected in (
            (httpd.load_module_line("mpm_event"), modules / "mod_nothere.so", modules.is_dir()),
            (httpd.load_module_line("mpm_event"), tmp_path / "elsewhere" / "mod_nothere.so", here),
            (mpm_elsewhere, tmp_path / "elsewhere" / "mod_nothere.so", False)):
        conf.write_text(f"{mpm_line}\nLoadModule nothere_module {path}\n")
        result = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings()))
        assert any(f.rule == "AT510" and f"Cannot load {path}" in f.message for f in result.findings) == expected


AUTHZ_CASES = [
    "Require all granted", "Require All granted", "Require all grant", "Require all granted now",
    "Require", "Require not", "Require NOT all granted", "Require group admins", "Require valid-user",
    "Require user bob", "Require ip 10.0.0.0/8", "Require host example.org", "Require local",
    "Require env X", "Require method GET", "Require expr true", "Require file-owner",
    "<RequireAll>\nRequire all granted\nRequire not ip 10.1.2.3\n</RequireAll>",
    "<RequireNone>\nRequire not ip 10.1.2.3\n</RequireNone>",
    "<RequireAny>\nRequire not ip 10.1.2.3\n</RequireAny>",
    "<RequireAll>\n<RequireAny>\nRequire not local\n</RequireAny>\n</RequireAll>",
    "Require method GET POST OPTIONSx", "Require method get", "Require method GET HEAD PROPFIND BASELINE-CONTROL",
    "Require not method TRACE", "<Limit PURGE>\n</Limit>\nRequire method PURGE", "Require method PURGE",
    # mod_authz_host's ip reader (apr_ipsubnet_create)
    *(f"Require ip {a}" for a in (
        "10", "10.1.", "192.168.1", "bogus", "10.0.0.0/0", "10.0.0.0/33", "10.0.0.0/255.0.0.0", "10.0.0.0/255.0.0",
        "fe80::/10", "::ffff:1.2.3.4", "0:0:0:0:0:ffff:102:304", "2001:db8::/129", "1.2.3.4.5", "300.1.1.1",
        "10.0.0.1 10.0.0.2", "010.001.0.0", "10..1", "10.0.0.0/ 8", "1.2.3.4/8x", ":::", "10.0.0.1 bogus")),
]


@needs_httpd
@pytest.mark.parametrize("line", AUTHZ_CASES)
def test_lint_and_httpd_agree_on_require(tmp_path, line):
    """mod_authz_core's reader: providers of the loaded modules (authz_core, host, user; not
    groupfile nor owner), 'Require all', and negation where it has no effect."""
    test_lint_and_httpd_agree_on_the_value(tmp_path, "\n".join(
        [httpd.load_module_line(m) for m in ("authz_core", "authz_host", "authz_user")]
        + ["<AuthzProviderAlias ip office 10.0.0.0/8>", "</AuthzProviderAlias>",
           "<Directory /srv>", "Require office", line, "</Directory>"]))


@needs_httpd
@pytest.mark.parametrize("line", ["User root", "User #0", "User #4242", "DocumentRoot {tmp}/www",
                                  "DocumentRoot {tmp}/ww", "DocumentRoot {tmp}/www/index.html",
                                  "<VirtualHost *:80>\nDocumentRoot {tmp}/ww\n</VirtualHost>"])
def test_lint_and_httpd_agree_on_user_and_document_root(tmp_path, line):
    """httpd's verdicts on User root and on a DocumentRoot that is not a directory (a virtual
    host's only warns, AH00112): lint has an error exactly where httpd stops."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "index.html").write_text("hi\n")
    proc, findings = httpd_and_lint(tmp_path, line.format(tmp=tmp_path))
    errors = [f for f in findings if f.severity == "error" and f.rule == "AT510"]
    assert bool(errors) == (proc.returncode != 0), (line, proc.stderr, [f.message for f in errors])
    warned = "AH00112" in proc.stderr
    assert warned == any("AH00112" in f.message for f in findings if f.rule == "AT510"), (line, proc.stderr)


MODULE_CASES = [
    "Alias /x", "Alias /icons/ /usr/share/apache2/icons/", "<Location /x>\nAlias /srv\n</Location>",
    "Redirect 301 /a", "Redirect permanant /a http://x/", "Redirect /old new.html", "Redirect 404 /a http://x",
    "Redirect /old http://example.org/new", "Redirect permanent /old https://example.org/",
    "Redirect gone /old", "Redirect 410 /old", "Redirect seeother /a /b", "Redirect /a", "Redirect 303 /a x:y",
    "<Location /old>\nRedirect /new\n</Location>", "<Location /old>\nRedirect 301 https://example.org/\n</Location>",
    "<Location /old>\nRedirect gone\n</Location>", "<Location /old>\nRedirect 301 /a b\n</Location>",
    "RequestReadTimeout header=abc", "RequestReadTimeout bogus=20", "RequestReadTimeout header=20-40",
    "RequestReadTimeout header=20-40,MinRate=500 body=20,minrate=0", "RequestReadTimeout header=40-20,MinRate=500",
    "RequestReadTimeout header=20-40,MinRate=500 body=20,MinRate=500 handshake=5", "RequestReadTimeout header",
    "RequestReadTimeout header=-1", "RequestReadTimeout header=5x", "RequestReadTimeout body=0",
    "AddOutputFilterByType DEFLATE", "AddOutputFilterByType DEFLATE text/html text/css",
    "AddOutputFilterByType DEFLAT text/html", "AddOutputFilterByType deflate;;INFLATE text/html",
    "AddOutputFilterByType INCLUDES text/html", "AddOutputFilterByType DEFLATE;SUBSTITUTE text/html",
    "FilterProvider f BOGUS \"%{CONTENT_TYPE} =~ m#^text/#\"", "FilterDeclare mine\nAddOutputFilterByType mine text/html",
    "AddOutputFilterByType CONTENT_LENGTH text/plain", "AddOutputFilterByType BYTERANGE;CORE text/plain",
    "BrowserMatch", "BrowserMatch x", "BrowserMatch ^Mozilla nokeepalive", "SetEnvIf User-Agent",
    "BrowserMatch +\"^WebDAVFS/1\\.[012]\" redirect-carefully", "BrowserMatch (MSIE x", "SetEnvIfNoCase Host [abc x=1",
    "BrowserMatch (?<v>MSIE) x", "BrowserMatch (MSIE", "SetEnvIf Host a) x",
    "SetEnvIf", "SetEnvIfNoCase Referer example\\.org local_ref=1", "SetEnvIfExpr", "setenvif Host x",
    "DeflateCompressionLevel 99", "DeflateCompressionLevel 0", "DeflateCompressionLevel 6",
    "ForceLanguagePriority Prefer None", "ForceLanguagePriority None Fallback", "ForceLanguagePriority Prefer Fallback",
    "ForceLanguagePriority Maybe",
]


@needs_httpd
@pytest.mark.parametrize("line", MODULE_CASES)
def test_lint_and_httpd_agree_on_stock_modules(tmp_path, line):
    """The readers of Debian's stock modules (lint/checks/module_readers.py)."""
    test_lint_and_httpd_agree_on_the_value(tmp_path, "\n".join(
        [httpd.load_module_line(m) for m in ("alias", "filter", "setenvif", "reqtimeout", "deflate",
                                             "negotiation", "mime")] + [line]))


SSL_CASES = ["SSLEngine 0", "SSLEngine optional", "SSLEngine ON", "SSLEngine -on", "SSLSessionTickets +off",
             "SSLSessionTickets off", "SSLCompression maybe", "SSLRequireSSL x", "SSLRandomSeed startup builtin",
             "SSLRandomSeed +connect file:/dev/urandom 512", "SSLRandomSeed startup builtinx", "SSLRandomSeed startup builtin 512",
             "SSLRandomSeed connect file:/dev/urandom -1", "SSLRandomSeed startup egd:/run/egd", "SSLRandomSeed startup file:nothere",
             "SSLRandomSeed startup exec:/bin/true", "SSLPassPhraseDialog eec:/bin/true", "SSLPassPhraseDialog builtin",
             "SSLPassPhraseDialog |/bin/cat", "SSLPassPhraseDialog exec:", "SSLOptions +StdEnvVar", "SSLOptions +StdEnvVars -ExportCertData",
             "SSLOptions FakeBasicAuth StrictRequire", "SSLSessionCache shmcb:{tmp}/c(512000", "SSLSessionCache shmcb:{tmp}/c(512000)",
             "SSLSessionCache shmcb:{tmp}/c(100)", "SSLSessionCache shmcb:{tmp}/c(abc)", "SSLSessionCache shmcb:{tmp}/c)",
             "SSLCertificateFile +/etc/ssl/certs/ssl-cert-snakeoil.pem",
             "SSLProtocol TLSv1.4", "SSLProtocol -all +TLSv1.2 +TLSv1.3", "SSLProtocol -all TLSv1.2",
             "SSLProtocol all -SSLv3", "SSLProtocol +SSLv3", "SSLProtocol SSLv2", "SSLProtocol -SSLv2 -SSLv3 tlsv1.2",
             "SSLProtocol +TLSv1.2 TLS1.3", "SSLProxyProtocol TLSv9", "SSLVerifyClient maybe", "SSLVerifyClient OPTIONAL",
             "SSLVerifyClient optional_no_ca", "SSLProxyVerify sometimes", "SSLProxyVerify require",
             "SSLCertificateFile {tmp}/cert.pem", "SSLCertificateFile {tmp}/cret.pem",
             "SSLCertificateFile {tmp}/empty.pem", "SSLCertificateFile {tmp}", "SSLCertificateKeyFile {tmp}/nokey.pem",
             "SSLCertificateFile pkcs11:token=x", "SSLCACertificatePath {tmp}", "SSLCACertificatePath {tmp}/nodir",
             "SSLCACertificateFile cert.pem", "SSLCertificateChainFile {tmp}/chain.pem",
             "<VirtualHost *:443>\nSSLCertificateFile {tmp}/gone.pem\n</VirtualHost>"]


@needs_httpd
@pytest.mark.parametrize("line", SSL_CASES)
def test_lint_and_httpd_agree_on_certificate_paths(tmp_path, line):
    """mod_ssl checks that each certificate file exists and is not empty (a directory for the
    *Path ones), relative to ServerRoot; lint does where the parent directory exists."""
    (tmp_path / "cert.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    (tmp_path / "empty.pem").write_text("")
    test_lint_and_httpd_agree_on_the_value(tmp_path, httpd.load_module_line("ssl") + "\n"
                                           + httpd.load_module_line("socache_shmcb") + "\n"
                                           + line.format(tmp=tmp_path))


REWRITE_CASES = [
    "RewriteRule ^/a /b [R=301,L]", "RewriteRule ^/a /b [R=301;L]", "RewriteRule ^/a /b [X]", "RewriteRule ^/a /b R",
    "RewriteRule ^/a", "RewriteRule", "RewriteRule ^/a /b [R=999]", "RewriteRule ^/a /b [R=418]",
    "RewriteRule ^/a /b [R=500]", "RewriteRule ^/a /b [ L , NC ]", "RewriteRule ^/a /b \"[ L , NC ]\"",
    "RewriteRule ^/a /b [L,,R]", "RewriteRule ^/a /b [L,]", "RewriteRule ^/a /b []", "RewriteRule ^/a /b [DX,QSA,NE,BNE]",
    "RewriteRule ^/a /b [BNE=x,UNC,UnsafeAllow3F,UnsafePrefixStat,END,BCTLS,BNP]", "RewriteRule ^/a /b [Last,nocase]",
    "RewriteRule ^/a /b [R=permanent,E=x:y,CO=a:b:c,T=text/plain,H=h,S=1,N=3,G,P,PT,C,NS,B,QSD,QSL]",
    "RewriteRule ^/a /b [Redirect=seeother,redirect=Temp,F,forbidden,gone,skip=2,type=x,handler=y,chain]",
    "RewriteRule ^/a /b [QS,L]", "RewriteRule ^/a /b [R=301,L] extra words",
    "RewriteCond %{HTTPS} off [NC,OR,NV]\nRewriteRule ^ - [F]", "RewriteCond %{HTTPS} off [NC,X]",
    "RewriteCond %{HTTPS}", "RewriteCond %{HTTPS} off [ornext,novary,nocase]", "RewriteCond %{HTTPS} off NC",
    "RewriteRule +^/a /b", "RewriteRule ^/(a /b", "RewriteRule ^/a) /b", "RewriteRule ^/[a /b", "RewriteRule !^/(a /b [L]",
    "RewriteRule ^/(?<name>a)$ /b", "RewriteRule ^/a\\h /b", "RewriteRule ^/a++ /b", "RewriteRule ^/(a /b [X]",
    "RewriteCond %{HTTP_HOST} (www [NC]", "RewriteCond %{REQUEST_FILENAME} !-f", "RewriteCond %{REQUEST_URI} <(abc",
    "RewriteCond expr \"true\"", "RewriteCond %{HTTP_HOST} !^(www\\.)?example\\.org$ [NC]",
]



HEADER_CASES = [
    'Header edit Location "^(http" https', 'Header edit Location "^http://" "https://"', 'Header echo "^(X"',
    "Header echo ^X-", "Header edit* Set-Cookie \"(?i)(;\\s*secure)\" \"\"",
    "Header set X-Frame-Options SAMEORIGIN", "Header set X-Frame-Options SAMEORIGIN always",
    "Header always set X-Frame-Options SAMEORIGIN", "Header onsuccess unset Server",
    "Header set Content-Security-Policy default-src 'self'", "Header sett X y", "Header set X",
    "Header unset X", "Header unset X env=Y", "Header unset X env=Y extra", "Header echo ^X-",
    "RequestHeader echo ^X-", "Header edit Location ^http: https:", "Header edit Location ^http:",
    "Header set X y env=", "Header set X y env=!", "Header set X y env=!FOO", "Header set X y early",
    "Header set X y expr=true", "Header set X \"50% off\"", "Header set X 100%", "Header set X %%",
    "Header set X \"%{REMOTE_USER}e %D %t\"", "Header set X %{x}q", "Header set X %{x", "Header note X y",
    "Header add X y z w v", "RequestHeader set X y", "RequestHeader always set X y", "Header",
    "Header always", "Header merge Cache-Control no-cache", "Header setifempty X y", "Header append X y",
    "Header edit* X a b", "Header set X y env=Z extra",
]



PROXY_CASES = [
    # a regex worker's URL: parsed as any, but for the $n references of its port
    "ProxyPassMatch ^/(.*) $1", "ProxyPassMatch ^/(.*) http://$1/", "ProxyPassMatch ^/x x", "ProxyPassMatch ^/x http://a:b/",
    "ProxyPass ~ ^/x x", "ProxyPassMatch ^/(.*) http://backend:$1/", "ProxyPassMatch ^/(a|b)(/.*)? http://host:80$2",
    "ProxyPassMatch ^/(.*) http://host:8$1x/", 'ProxyPassMatch "" x',
    "ProxyPassMatch ^/(.*)$ unix:/run/php.sock|fcgi://localhost/var/www/$1",
    "ProxyPass /a", "ProxyPass /a http://b/", "ProxyPass /a http://b/ retry=abc", "ProxyPass /a b",
    "ProxyPass /a !", "<Location /a>\nProxyPass /a http://b/\n</Location>", "<Location /a>\nProxyPass http://b/\n</Location>",
    "ProxyPassReverse /a", "ProxyPass /a http://b/ connectiontimeout", "ProxyPass /a unix:/run/php.sock|fcgi://localhost/",
    "ProxyPass /a http://b:abc/", "ProxyPass /a unix:/run/x.sock", "ProxyPass /a unix:/run/x.sock|",
    "ProxyPass /a localhost:8080/", "ProxyPass /a http:///x", "ProxyPass /a balancer://mycluster/",
    "ProxyPass /a http://b/ nocanon noquery", "ProxyPass /a http://b/ mapping=bogus", "ProxyPass /a http://b/ mapping=servlet",
    "ProxyPassMatch ~ ^/a http://b/", "ProxyPass ~ ^/a(.*) http://b/$1", "ProxyPass /a HTTP://B/",
    "ProxyPass /a fcgi://127.0.0.1:9000/var/www/", "ProxyPass /a /local", "ProxyPass /a http://[::1]:8080/",
    "ProxyPass /a http://user@b:8080/x", "ProxyPassMatch ^/(.*)$ http://b:$1/", "ProxyPassReverse /a http://b/",
    "<Location /x>\nProxyPassReverse /y http://b/\n</Location>", "<Location /x>\nProxyPassReverse http://b/ interpolate\n</Location>",
    "<Location /x>\nProxyPass http://b/ bogus\n</Location>", "<Location /x>\nProxyPass http://b/ /c\n</Location>",
    "ProxyPassReverse /a interpolate",
    # mod_proxy's own small readers
    "ProxyReceiveBufferSize 100", "ProxyIOBufferSize 0", "ProxyIOBufferSize 511", "ProxyTimeout 0", "ProxyTimeout 5",
    # atoi against atol: 4294967297 is 1 to atoi (refused), itself to atol
    "ProxyReceiveBufferSize 4294967297", "ProxyIOBufferSize 4294967297",
    "BalancerGrowth 1001", "BalancerGrowth 5", "ProxyErrorOverride maybe", "ProxyErrorOverride On 404 500",
    "ProxyErrorOverride Off 404", "ProxyErrorOverride On abc", "ProxyErrorOverride On 302", "ProxyErrorOverride 404",
    "ProxyErrorOverride On\nProxyErrorOverride 404", "<Location /a>\nProxyErrorOverride On\n</Location>\nProxyErrorOverride 404",
    "Mutex default rewrite-map proxy", "Mutex none proxy",
]


# The parameters' values (lint/checks/proxy_params.py): each worker and balancer key, a key given
# twice, a worker an earlier line already defines (its parameters ignored), a ProxyPassMatch.
PROXY_PARAM_CASES = [
    'ProxyPass /a http://b/ timeout=abc', 'ProxyPass /a http://b/ timeout=5', 'ProxyPass /a http://b/ timeout=0',
    'ProxyPass /a http://b/ retry=-1', 'ProxyPass /a http://b/ retry=abc', 'ProxyPass /a http://b/ ttl=0',
    'ProxyPass /a http://b/ min=-1 max=-2', 'ProxyPass /a http://b/ smax=-1', 'ProxyPass /a http://b/ acquire=0',
    'ProxyPass /a http://b/ acquire=abc', 'ProxyPass /a http://b/ acquire=5',
    'ProxyPass /a http://b/ acquire=1s', 'ProxyPass /a http://b/ iobuffersize=100',
    'ProxyPass /a http://b/ iobuffersize=0', 'ProxyPass /a http://b/ receivebuffersize=511',
    'ProxyPass /a http://b/ iobuffersize=4294967297', 'ProxyPass /a http://b/ receivebuffersize=4294967297',
    'ProxyPass /a http://b/ keepalive=yes', 'ProxyPass /a http://b/ keepalive=On',
    'ProxyPass /a http://b/ disablereuse=1', 'ProxyPass /a http://b/ enablereuse=on',
    'ProxyPass /a http://b/ addressttl=-1', 'ProxyPass /a http://b/ addressttl=500ms',
    'ProxyPass /a http://b/ addressttl=60', 'ProxyPass /a http://b/ addressttl=99999999999',
    'ProxyPass /a http://b/ status=+H', 'ProxyPass /a http://b/ status=X', 'ProxyPass /a http://b/ status=+',
    'ProxyPass /a http://b/ status=-dI', 'ProxyPass /a http://b/ flushpackets=maybe',
    'ProxyPass /a http://b/ flushpackets=AUTO', 'ProxyPass /a http://b/ flushwait=1001',
    'ProxyPass /a http://b/ ping=0', 'ProxyPass /a http://b/ ping=500ms', 'ProxyPass /a http://b/ ping=x',
    'ProxyPass /a http://b/ lbset=100', 'ProxyPass /a http://b/ connectiontimeout=5',
    'ProxyPass /a http://b/ connectiontimeout=0', 'ProxyPass /a http://b/ connectiontimeout=5x',
    'ProxyPass /a http://b/ responsefieldsize=-1', 'ProxyPass /a http://b/ loadfactor=0.5',
    'ProxyPass /a http://b/ loadfactor=1', 'ProxyPass /a http://b/ loadfactor=100.5',
    'ProxyPass /a http://b/ loadfactor=abc', 'ProxyPass /a http://b/ bogus=1',
    'ProxyPass /a http://b/ Timeout=abc timeout=5', 'ProxyPass /a http://b/ timeout=5 timeout=abc',
    'ProxyPass /a http://b/ upgrade=websocket secret=x route=r1 redirect=r2 flusher=flush',
    'ProxyPass /a http://b/ hcmethod=GET', 'ProxyPass /b http://b/\nProxyPass /a http://b/x timeout=abc',
    'ProxyPass /a http://b/x timeout=abc\nProxyPass /b http://b/',
    'ProxyPass /a balancer://c/ lbmethod=byrequests\n<Proxy balancer://c>\nBalancerMember http://c\n</Proxy>',
    'ProxyPass /a balancer://c/ lbmethod=bybusyness', 'ProxyPass /a balancer://c/ lbmethod=Byrequests',
    'ProxyPass /a balancer://c/ stickysessionsep=ab', 'ProxyPass /a balancer://c/ stickysessionsep=.',
    'ProxyPass /a balancer://c/ nofailover=maybe', 'ProxyPass /a balancer://c/ timeout=0',
    'ProxyPass /a balancer://c/ maxattempts=-1', 'ProxyPass /a balancer://c/ failonstatus=500,503',
    'ProxyPass /a balancer://c/ failonstatus=500,abc', 'ProxyPass /a balancer://c/ failonstatus=600',
    'ProxyPass /a balancer://c/ growth=0', 'ProxyPass /a balancer://c/ forcerecovery=x',
    'ProxyPass /a balancer://c/ nonce=None stickysession=JSESSIONID|jsessionid',
    'ProxyPass /a balancer://c/ retry=5', 'ProxyPassMatch ^/(.*)$ http://b/$1 timeout=abc',
    '<Location /l>\nProxyPass http://b/ keepalive=maybe\n</Location>', 'ProxyPass /a http://b/ ! timeout=abc',
    'ProxyPass /a ! timeout=abc', 'ProxyPass /a unix:/run/php.sock|fcgi://localhost/ timeout=0',
]


@needs_httpd
@pytest.mark.parametrize("line", PROXY_CASES + PROXY_PARAM_CASES)
def test_lint_and_httpd_agree_on_proxy_pass(tmp_path, line):
    """mod_proxy's ProxyPass and ProxyPassReverse words, worker URL and parameters."""
    test_lint_and_httpd_agree_on_the_value(tmp_path, "\n".join(
        httpd.load_module_line(m) for m in ("proxy", "proxy_http", "proxy_fcgi", "proxy_balancer",
                                            "slotmem_shm", "lbmethod_byrequests")) + "\n" + line)

@needs_httpd
@pytest.mark.parametrize("line", [
    'ProxyPass /a http://b/ hcmethod=GET',
    'ProxyPass /a http://b/ bogus=1',
    'ProxyPass /a http://b/ hcinterval=abc',
    'ProxyPass /a http://b/ timeout=0 hcfails=2',
    'ProxyPass /a http://b/ hcinterval=50ms',
    'ProxyPass /a http://b/ hcinterval=100ms',
    'ProxyPass /a http://b/ hcpasses=-1',
])
def test_lint_and_httpd_agree_on_health_check_parameters(tmp_path, line):
    """With mod_proxy_hcheck loaded, its hc* keys are a worker's too (their values partly judged)."""
    test_lint_and_httpd_agree_on_the_value(tmp_path, "\n".join(
        httpd.load_module_line(m) for m in ("proxy", "proxy_http", "proxy_hcheck")) + "\n" + line)



@needs_httpd
@pytest.mark.parametrize("identifier, module", [("rewrite_modul", "rewrite"), ("rewrite_module", "rewrite"),
                                                ("mod_rewrite", "rewrite"), ("headers_module", "rewrite")])
def test_lint_and_httpd_agree_on_the_module_identifier(tmp_path, identifier, module):
    """LoadModule's identifier must be a symbol the shared object exports (httpd's dlsym;
    lint reads the ELF dynamic symbol table)."""
    test_lint_and_httpd_agree_on_the_value(tmp_path, f"LoadModule {identifier} {httpd.module_path(module)}")


@needs_httpd
@pytest.mark.parametrize("line, socache", [
    ("SSLSessionCache shmcb:/tmp/x(512000)", None), ("SSLSessionCache shmcb:/tmp/x(512000)", "socache_shmcb"),
    ("SSLSessionCache dbm:/tmp/x", "socache_shmcb"), ("SSLSessionCache none", None),
    ("SSLSessionCache nonenotnull", None), ("SSLSessionCache SHMCB:/tmp/x", "socache_shmcb"),
    ("SSLStaplingCache nosuch:foo", "socache_shmcb"), ("SSLStaplingCache none", "socache_shmcb"),
    ("SSLStaplingCache SHMCB", "socache_shmcb"), ("SSLStaplingCache dbm:/tmp/x", None)])
def test_lint_and_httpd_agree_on_the_session_cache(tmp_path, line, socache):
    """SSLSessionCache and SSLStaplingCache need the socache module of their provider loaded."""
    import re

    modules = [httpd.load_module_line("ssl")] + ([httpd.load_module_line(socache)] if socache else [])
    proc, findings = httpd_and_lint(tmp_path, "\n".join([*modules, line]))
    errors = [f.message for f in findings if f.severity == "error"]

    def names_sorted(text: str) -> str:  # httpd lists the known names in hash order, not a fixed one
        return re.sub(r"known names: ([^)]*)", lambda m: "known names: " + ",".join(sorted(m.group(1).split(","))), text)

    if proc.returncode == 0:
        assert errors == []
    else:
        said = names_sorted(proc.stderr.strip().splitlines()[-1])
        assert any(said in names_sorted(e) for e in errors), (said, errors)


EXPIRES_CASES = [
    'ExpiresDefault "access plus 1 month"', 'ExpiresDefault "access plus 1 mnth"', "ExpiresDefault A3600",
    'ExpiresDefault "now plus 2 hours 30 minutes"', 'ExpiresDefault "modification 1 m"', 'ExpiresDefault "later plus 1 day"',
    'ExpiresDefault "access plus one day"', 'ExpiresDefault "access plus 1"', 'ExpiresDefault ""', "ExpiresDefault M0",
    'ExpiresByType text/html "access plus 1 mont"', 'ExpiresByType text "access plus 1 day"',
    'ExpiresByType image/* "a p 1 y 2 mo 3 w 4 d 5 h 6 mi 7 s"', 'ExpiresByType text/css "access plus 1 lightyear"',
    'ExpiresDefault "Access Plus 1 Month"', 'ExpiresDefault "xccess 1 day"', 'ExpiresDefault "a 1 day extra"',
]


# One module's reader each (lint/checks/module_readers.py): mod_rewrite's argument line and
# flags, mod_headers' action, words, condition and format tags, mod_expires' codes (regular
# expressions are not judged).
ONE_MODULE_CASES = [*(("rewrite", line) for line in REWRITE_CASES), *(("headers", line) for line in HEADER_CASES),
                    *(("expires", line) for line in EXPIRES_CASES),
                    *(("cache+cache_disk", line) for line in (
                        "CacheDirLength -1", "CacheDirLevels 0", "CacheDirLevels 5\nCacheDirLength 4",
                        "CacheDirLevels 5\nCacheDirLength 5", "CacheDirLevels 11", "CacheDirLevels 10",
                        "CacheDirLength 3\n<VirtualHost *:80>\nCacheDirLevels 10\n</VirtualHost>")),
                    *(("autoindex", f"IndexOptions {words}") for words in (
                        "FancyIndexing HTMLTable bogus", "FancyIndexing FoldersFirst VersionSort", "+None", "None FancyIndexing",
                        "FancyIndexing None", "None IconWidth Type=text/html", "NameWidth", "-NameWidth", "NameWidth=*",
                        "NameWidth=3", "NameWidth=-3", "NameWidth=0", "-NameWidth=20", "DescriptionWidth=10",
                        "DescriptionWidth=*", "-DescriptionWidth", "IconWidth=16 IconHeight=16", "-IconWidth=16",
                        "Charset=UTF-8 +SuppressSize -IgnoreCase", "None +FancyIndexing", "XHTML UseOldDateFormat")),
                    *(("autoindex", line) for line in (
                        "AddIconByType (VID,/icons/movie.gif video/*", "AddIconByType (VID,/icons/movie.gif) video/*",
                        "AddIcon (BAK,/icons/back.gif .bak", "AddIconByEncoding (CMP,/icons/c.gif) x-gzip",
                        "AddIcon /icons/blank.gif ^^BLANKICON^^"))]


@needs_httpd
@pytest.mark.parametrize("module, line", ONE_MODULE_CASES)
def test_lint_and_httpd_agree_on_a_modules_reader(tmp_path, module, line):
    agree_with_modules_loaded(tmp_path, module, line)


def agree_with_modules_loaded(tmp_path, modules: str, line: str) -> None:
    """test_lint_and_httpd_agree_on_the_value after LoadModule lines for "a+b" (in that order;
    "" loads none)."""
    loads = "\n".join(httpd.load_module_line(m) for m in modules.split("+") if m)
    test_lint_and_httpd_agree_on_the_value(tmp_path, loads + "\n" + line)


@needs_httpd
@pytest.mark.parametrize("line", [
    "ErrorLog {tmp}/logs/error.log", "ErrorLog {tmp}/nologs/error.log", "ErrorLog {tmp}/file.txt/error.log",
    "ErrorLog \"|/bin/cat\"", "ErrorLog syslog:local1", "ErrorLog logs/error.log", "ErrorLog nologs/error.log",
    "<VirtualHost *:80>\nErrorLog {tmp}/nologs/v.log\n</VirtualHost>", "CustomLog {tmp}/nologs/a.log common",
    "CustomLog {tmp}/logs/a.log common", "TransferLog {tmp}/nologs/t.log", "CustomLog \"|/bin/cat\" common"])
def test_lint_and_httpd_agree_on_log_directories(tmp_path, line):
    """httpd checks each log file's directory before it opens it (AH02291, AH02297): the check
    fails -t, and lint reports it where the tree is on this machine."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "file.txt").write_text("x\n")
    proc, findings = httpd_and_lint(tmp_path, f"PidFile {tmp_path}/pid\n{line.format(tmp=tmp_path)}",
                                    error_log=f"{tmp_path}/logs/e.log")
    errors = [f.message for f in findings if f.severity == "error"]
    said = [code for code in ("AH02291", "AH02297") if code in proc.stderr]
    assert bool(errors) == (proc.returncode != 0), (line, proc.stderr, errors)
    assert [code for code in ("AH02291", "AH02297") if any(code in e for e in errors)] == said
    for message in errors:  # the directory and what it is for, word for word
        assert message.split(": ", 1)[1].split(" (httpd will not start)")[0] in proc.stderr, (message, proc.stderr)


def _shipped_module_files() -> list[str]:
    modules = httpd.modules_dir() if APACHE2 else None
    if modules is None or not modules.is_dir():
        return []
    return sorted(p.name for p in modules.glob("mod_*.so") if not p.name.startswith("mod_mpm_"))



@needs_httpd
@pytest.mark.parametrize("so", _shipped_module_files())
def test_lint_and_httpd_agree_on_loading_each_module_alone(tmp_path, so):
    """Every module the installed httpd ships, loaded alone: where it needs another module's
    symbols (mod_proxy_http without mod_proxy), httpd names the first its dynamic linker cannot
    resolve, and lint names the same one (read from the ELF relocation tables)."""
    module = so[len("mod_"):-len(".so")] + "_module"
    proc, findings = httpd_and_lint(tmp_path, f"LoadModule {module} {httpd.modules_dir() / so}")
    refused = [f.message for f in findings if f.rule == "AT510"]
    said = re.search(r"undefined symbol: (\S+)", proc.stderr)
    if said is None:
        assert refused == [], (so, proc.stderr)
    else:
        assert len(refused) == 1 and f"undefined symbol: {said[1]} " in refused[0], (so, said[1], refused)


# Authentication providers (lint/checks/authz_readers.py authn_refused), AllowMethods, and mod_ldap's
# directives (the registry once named their module util_ldap_module, after util_ldap.c).
AUTHN_CASES = [
    *(("authn_core+authz_core+auth_basic+auth_digest+authn_file+authn_anon+allowmethods+ldap+authnz_ldap", line) for line in (
        "<Directory /srv>\nAuthType Basic\nAuthName x\nAuthBasicProvider file\n</Directory>",
        "<Directory /srv>\nAuthBasicProvider bogus\n</Directory>", "<Directory /srv>\nAuthBasicProvider file dbm\n</Directory>",
        "<Directory /srv>\nAuthBasicProvider File\n</Directory>", "<Directory /srv>\nAuthBasicProvider anon ldap\n</Directory>",
        "<Directory /srv>\nAuthDigestProvider anon\n</Directory>", "<Directory /srv>\nAuthDigestProvider file\n</Directory>",
        "<Directory /srv>\nAuthDigestProvider ldap\n</Directory>",
        "<AuthnProviderAlias file mine>\nAuthUserFile /tmp/x\n</AuthnProviderAlias>\n<Directory /srv>\nAuthDigestProvider mine\n</Directory>",
        "<Directory /srv>\nAllowMethods GET POST\n</Directory>", "<Directory /srv>\nAllowMethods reset\n</Directory>",
        "<Directory /srv>\nAllowMethods get\n</Directory>", "<Directory /srv>\nAllowMethods GET reset\n</Directory>",
        "LDAPVerifyServerCert Off", "LDAPVerifyServerCert bogus", "LDAPCacheEntries 100")),
    ("authn_core+authz_core+auth_basic", "<Directory /srv>\nAuthBasicProvider file\n</Directory>"),
    # AP_INIT_NO_ARGS declares RAW_ARGS: words after these are taken (2.4.37 and 2.4.52 too)
    ("authn_socache", "AuthnCacheEnable bogus"), ("authn_socache", "AuthnCacheEnable"),
    ("socache_shmcb+ssl", "<Directory /srv>\nSSLRequireSSL bogus\n</Directory>"),
]


@needs_httpd
@pytest.mark.parametrize("module, line", AUTHN_CASES)
def test_lint_and_httpd_agree_on_authentication_providers(tmp_path, module, line):
    agree_with_modules_loaded(tmp_path, module, line)


# ap_expr (config/ap_expr.py, lint/checks/expressions.py): the parser's own messages, wrapped in
# each directive's words; which modules are loaded decides SSL_* and HC_* names.
EXPRESSION_CASES = [
    *(("", line) for line in (
        "<If \"%{HTTP_HOST} == 'example.org'\">\n</If>", "<If \"%{HTTP_HOST} = x\">\n</If>",
        "<If \"%{HTTP_HOSTX} == 'a'\">\n</If>", "<If \"-R '10.0.0.0/33'\">\n</If>", "<If \"-R '10.0.0.0/8'\">\n</If>",
        "<If \"%{REQUEST_URI} =~ m#^/(a|b#\">\n</If>", "<If \"%{REQUEST_URI} =~ m#^/(a|b)#i\">\n</If>",
        "<If true>\n</If>\n<ElseIf \"%{QUERY_STRING} =~ /x/ &&\">\n</ElseIf>", "<If \"'\\9' == 'a'\">\n</If>",
        "<If \"%{SSL_CLIENT_VERIFY} == 'SUCCESS'\">\n</If>", "<If \"tolower(%{HTTP_HOST}) -strmatch '*.org'\">\n</If>",
        "<If \"%{tolower:%{HTTP_HOST}} in {'a', 'b'}\">\n</If>", "<If \"'a' in {'a',}\">\n</If>",
        "<If \"-z %{reqenv:X} || -n %{env:Y}\">\n</If>", "<If \"%{HTTP_HOST} == 'a' 'b'\">\n</If>",
        "<If \"%{HTTP_HOST\">\n</If>", "<If \"%{REMOTE_ADDR} -ipmatch 'bogus'\">\n</If>", "<If \"-X 'a'\">\n</If>",
        "<If \"md5('a') == sha1('b')\">\n</If>", "<If \"unknownfn('a') == 'b'\">\n</If>",
        "<If \"%{REQUEST_URI} =~ m#^/wp-(admin|login)#\" && ! -R '192.168.0.0/16'\">\n</If>", "<If \"true\" \"\">\n</If>",
        "<If true>\n</If>\n<ElseIf \"true\" x>\n</ElseIf>", "<If \"true\" >\n</If>",
        "ErrorDocument 500 \"Sorry, %{HTTP_HOSTX} is down\"", "ErrorDocument 403 \"Denied: %{REQUEST_URI}\"",
        "ErrorDocument 404 /err/%{FOO}", "ErrorDocument 404 /err/%{REQUEST_URI}", "ErrorDocument 401 http://x/%{FOO}",
        "ErrorDocument 404 http://x/%{FOO}", "ErrorDocument 500 \"a \\9 b\"", "ErrorDocument 404 default",
        "SetHandler %{FOO}", "SetHandler server-status", "SetHandler \"proxy:unix:/run/php/fpm.sock|fcgi://localhost\"",
        "CustomLog /tmp/x.log combined \"expr=%{REQUEST_STATUS} -eq 200\"",
        "CustomLog /tmp/x.log combined \"expr=%{REQUEST_STATUSX} -eq 200\"", "CustomLog /tmp/x.log combined expr=-z")),
    *(("authz_core", line) for line in (
        "Require expr %{REQUEST_METHOD} == 'GET'", "Require expr \"%{REQUEST_METHOD} == 'GET'\"",
        "Require expr %{REQUEST_METHODS} == 'GET'", "Require expr %{REMOTE_ADDR} -ipmatch '10.0.0.0/8'",
        "Require expr -R 'bogus'", "Require expr", "Require expr \"true\" && false")),
    *(("authz_core+authz_user+authz_host", line) for line in (
        "Require user %{HTTP_HOSTX}", "Require user bob alice", "Require host %{FOO}.example.org",
        "Require host %{SERVER_NAME}", "Require not user %{X}")),
    *(("setenvif", line) for line in (
        "SetEnvIfExpr \"tolower(req('X')) == 'a'\" x=1", "SetEnvIfExpr \"tolowr(req('X')) == 'a'\" x=1",
        "SetEnvIfExpr \"req('X') =~ /(/\" x", "SetEnvIfExpr \"req('X') =~ /a{2,1}/\" x")),
    *(("headers", line) for line in (
        "Header set X-A \"expr=%{HTTP_HOST}\"", "Header set X-A \"expr=%{HTTP_HOSTX}\"",
        "Header always set X-A 1 \"expr=%{REQUEST_STATUS} -eq 200\"", "Header set X-A 1 \"expr=%{REQUEST_STATUS} -eq\"",
        "RequestHeader set X \"expr=%{TIME}\" \"expr=true\"", "Header set X \"EXPR=%{FOO}e\"",
        "Header unset X \"expr=%{X}\"", "Header echo ^X \"EXPR=true\"")),
    *(("rewrite", line) for line in (
        "RewriteCond expr \"%{HTTP_HOST} == 'a'\"\nRewriteRule ^ - [F]", "RewriteCond expr \"%{HTTP_HOST} ==\"",
        "RewriteCond EXPR \"!%{X} == 'a'\"", "RewriteCond expr \"!%{HTTP_HOST} -strmatch '*.org'\" [NC]")),
    *(("alias", line) for line in (
        "<Location /x>\nAlias \"/srv/%{HTTP_HOST}\"\n</Location>", "<Location /x>\nAlias \"/srv/%{HTTP_HOSTX}\"\n</Location>",
        "<Location /old>\nRedirect \"/new/%{FOO}\"\n</Location>", "<Location /old>\nRedirect 301 \"/new/%{QUERY_STRING}\"\n</Location>",
        "<Location /old>\nRedirect 301 \"/new/%{X\"\n</Location>")),
    *(("authn_core", line) for line in (
        "<Directory /srv>\nAuthName \"Realm %{HTTP_HOST}\"\n</Directory>", "<Directory /srv>\nAuthName \"Realm %{X}\"\n</Directory>",
        "<Directory /srv>\nAuthType %{X}\n</Directory>", "<Directory /srv>\nAuthName \"50% off $1\"\n</Directory>")),
    *(("filter+deflate", line) for line in (
        "FilterProvider f DEFLATE \"%{CONTENT_TYPE} =~ m#^text/#\"", "FilterProvider f DEFLATE \"%{CONTENT_TYPEX} =~ m#^text/#\"")),
    *(("socache_shmcb+ssl", line) for line in (
        "<If \"%{SSL_PROTOCOL} == 'TLSv1.3'\">\n</If>", "<If \"'x' in PeerExtList('1.2.3')\">\n</If>",
        "<If \"SSL('x') == ''\">\n</If>", "<If \"%{ssl_protocol} == 'x'\">\n</If>", "<If \"ssl('x') == ''\">\n</If>",
        "<If \"%{SSLX} == 'x'\">\n</If>", "<If \"'x' in peerextlist('1.2.3')\">\n</If>")),
    *(("proxy+proxy_hcheck", line) for line in (
        "<If \"%{HC_BODY} == ''\">\n</If>", "<If \"hc('body') == ''\">\n</If>")),
]


@needs_httpd
@pytest.mark.parametrize("module, line", EXPRESSION_CASES)
def test_lint_and_httpd_agree_on_an_expression(tmp_path, module, line):
    agree_with_modules_loaded(tmp_path, module, line)


_AT510 = Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "AT510"


@needs_httpd
@pytest.mark.parametrize("name", ["good-core-readers.conf", "good-module-readers.conf", "good-expressions.conf"])
def test_the_readers_good_fixtures_start_httpd(tmp_path, name):
    """What lint passes in the readers' good fixtures, httpd reads (the file has no ErrorLog)."""
    proc = run_httpd("-t", "-d", str(tmp_path), "-C", "ErrorLog /dev/null", "-f", str(_AT510 / name))
    assert proc.returncode == 0, proc.stderr


@needs_httpd
def test_each_bad_expression_is_refused_in_the_pinned_words(tmp_path):
    """Each expression of bad-expressions.conf alone (after the file's LoadModule lines) stops
    apache2 -t with the message pinned for that line."""
    lines = (_AT510 / "bad-expressions.conf").read_text().splitlines()
    pinned = {f["line"]: f["message"] for f in yaml.safe_load((_AT510 / "bad-expressions.expected.yaml").read_text())
              if f["rule"] == "AT510"}
    head = [line for line in lines if line.startswith(("LoadModule", "ServerName"))]
    assert len(pinned) >= 10
    for number, message in pinned.items():
        start = end = number - 1
        if lines[start].startswith(" "):  # inside a section: the section too
            start = max(i for i in range(number) if lines[i].startswith("<"))
        if lines[start].startswith("<"):
            end = next(i for i in range(start, len(lines)) if lines[i].startswith("</"))
        body = lines[start:end + 1]
        if lines[start].startswith("RewriteCond"):
            body.append("RewriteRule ^ - [F]")
        conf = tmp_path / "one.conf"
        conf.write_text("\n".join([*head, "ErrorLog /dev/null", *body]) + "\n")
        proc = run_httpd("-t", "-d", str(tmp_path), "-f", str(conf))
        said = proc.stderr.strip().splitlines()[-1]
        assert proc.returncode != 0 and f"AH00526: {said} (httpd will not start)" == message, (number, said, message)

# The stock modules' one-value readers (lint/checks/simple_readers.py), each list with the
# modules it loads: (modules, line).
_ONE_VALUE_MODULES = "deflate+brotli+http2+rewrite+dir+access_compat+authz_core+proxy+autoindex+socache_shmcb+ssl"
READER_CASES = [
    *((_ONE_VALUE_MODULES, line) for line in (
        'SSLVerifyDepth -1', 'SSLVerifyDepth 5', 'SSLProxyVerifyDepth -2', 'SSLSessionCacheTimeout -1',
        'SSLSessionCacheTimeout 300', '<Directory /srv>\nSSLRenegBufferSize -1\n</Directory>',
        'SSLOCSPResponseTimeSkew -1', 'SSLOCSPResponderTimeout -5', 'SSLStaplingResponseMaxAge -1',
        'SSLStaplingStandardCacheTimeout -1', 'SSLStaplingErrorCacheTimeout 600', 'SSLCARevocationCheck chain',
        'SSLCARevocationCheck Chain no_crl_for_cert_ok', 'SSLCARevocationCheck bogus', 'SSLCARevocationCheck leaf x',
        'SSLProxyCARevocationCheck none', 'SSLOCSPEnable leaf', 'SSLOCSPEnable on no_ocsp_for_cert_ok',
        'SSLOCSPEnable maybe', 'SSLOCSPEnable off x', '<Directory /srv>\nOrder allow,deny\n</Directory>',
        '<Directory /srv>\nOrder Deny,Allow\n</Directory>', '<Directory /srv>\nOrder allow\n</Directory>',
        '<Directory /srv>\nOrder Allow, Deny\n</Directory>',
        'DeflateWindowSize 16', 'DeflateWindowSize 15', 'DeflateMemLevel 0', 'DeflateMemLevel 9',
        'DeflateBufferSize 0', 'DeflateBufferSize 8096', 'DeflateInflateRatioLimit 0', 'DeflateInflateRatioBurst -1',
        'DeflateInflateLimitRequestBody abc', 'DeflateInflateLimitRequestBody 99999999999999999999',
        'DeflateInflateLimitRequestBody 1024', 'DeflateAlterETag remove', 'DeflateAlterETag Bogus',
        'BrotliCompressionQuality 12', 'BrotliCompressionQuality 5', 'BrotliCompressionWindow 9',
        'BrotliCompressionMaxInputBlock 25', 'BrotliAlterETag nochange', 'BrotliAlterETag x',
        'H2MaxSessionStreams 0', 'H2MaxSessionStreams 100', 'H2WindowSize 1000', 'H2MinWorkers 0',
        'H2MaxWorkers abc', 'H2StreamMaxMemSize 1023', 'H2MaxDataFrameLen -1', 'H2PushDiarySize -1',
        'H2PushDiarySize 256', 'H2Padding 9', 'H2Padding -1', 'H2Padding 8', 'H2Direct yes', 'H2Direct on',
        'H2Push Off', 'H2Push maybe', 'H2ModernTLSOnly 1', 'H2Upgrade OFF', 'H2CopyFiles x', 'H2EarlyHints x',
        'H2OutputBuffering x', 'H2ProxyRequests x', 'H2WebSockets x', 'H2WebSockets off', 'RewriteOptions inherit',
        'RewriteOptions Inherit IgnoreInherit', 'RewriteOptions bogus', 'RewriteOptions MaxRedirects=5',
        'RewriteOptions UnsafePrefixStat', 'RewriteBase /x', '<VirtualHost *:80>\nRewriteBase /x\n</VirtualHost>',
        '<Directory /srv>\nRewriteBase /x\n</Directory>', '<Directory /srv>\nRewriteBase x\n</Directory>',
        '<Directory /srv>\nRewriteBase ""\n</Directory>', '<Location /a>\nRewriteBase /a\n</Location>',
        '<Directory /srv>\nDirectoryIndexRedirect on\n</Directory>',
        '<Directory /srv>\nDirectoryIndexRedirect 404\n</Directory>',
        '<Directory /srv>\nDirectoryIndexRedirect 301\n</Directory>',
        '<Directory /srv>\nDirectoryIndexRedirect maybe\n</Directory>',
        '<Directory /srv>\nSatisfy Any\n</Directory>', '<Directory /srv>\nSatisfy some\n</Directory>',
        '<Directory /srv>\nAuthMerging and\n</Directory>', '<Directory /srv>\nAuthMerging xor\n</Directory>',
        'ProxyVia Block', 'ProxyVia maybe', '<Directory /srv>\nFancyIndexing on\n</Directory>', 'SSLLog /tmp/x',
        'SSLLogLevel info', 'Port 80'
    )),
    *(("cache+cache_disk", line) for line in (
        'CacheEnable disk /',
        'CacheEnable disk',
        'CacheEnable /x disk',
        '<Location /a>\nCacheEnable disk\n</Location>',
        '<Location /a>\nCacheEnable disk /a/b\n</Location>',
        '<Location /a>\nCacheEnable disk /b\n</Location>',
        '<Location /a>\nCacheEnable disk http://x/a\n</Location>',
        'CacheDisable /x',
        'CacheDisable http://x/',
        'CacheDisable x',
        '<Location /a>\nCacheDisable on\n</Location>',
        '<Location /a>\nCacheDisable /a\n</Location>',
        '<VirtualHost *:80>\nCacheEnable mem\n</VirtualHost>',
        '<LocationMatch ^/a>\nCacheEnable disk\n</LocationMatch>',
    )),
    *(("cgid+proxy+proxy_fcgi+proxy_connect", line) for line in (
        '<Directory /srv>\nCGIDScriptTimeout x\n</Directory>',
        '<Directory /srv>\nCGIDScriptTimeout 30s\n</Directory>',
        '<Directory /srv>\nCGIDScriptTimeout ms\n</Directory>',
        'ThreadStackSize -1',
        'ThreadStackSize 99999999999999999999',
        'ThreadStackSize 8388608',
        'ThreadStackSize abc',
        'ProxyBadHeader ignore',
        'ProxyBadHeader x',
        'ProxyFCGIBackendType fpm',
        'ProxyFCGIBackendType php',
        'AllowCONNECT 443 563',
        'AllowCONNECT 443-',
        'AllowCONNECT 443-x',
        'AllowCONNECT 8000-9000',
        'AllowCONNECT 443x',
        'AllowCONNECT x443',
        'AllowCONNECT 10-20-30',
    )),
    *(("request+buffer", line) for line in (
        '<Directory /srv>\nKeptBodySize 1024\n</Directory>',
        '<Directory /srv>\nKeptBodySize -1\n</Directory>',
        '<Directory /srv>\nKeptBodySize 10k\n</Directory>',
        '<Directory /srv>\nKeptBodySize x\n</Directory>',
        '<Directory /srv>\nBufferSize 0\n</Directory>',
        '<Directory /srv>\nBufferSize 10k\n</Directory>',
        '<Directory /srv>\nBufferSize x\n</Directory>',
        'RegexDefaultOptions +ICASE -dotall',
        'RegexDefaultOptions none extended',
        'RegexDefaultOptions bogus',
        'RegexDefaultOptions +Bogus',
        'RegexDefaultOptions',
    )),
    *((modules, line) for modules in ("dav", "dav+dav_fs") for line in (
        '<Location /d>\nDAV On\n</Location>',
        '<Location /d>\nDAV off\n</Location>',
        '<Location /d>\nDAV filesystem\n</Location>',
        '<Location /d>\nDAV svn\n</Location>',
    )),
    *(("authn_socache+cache+cache_socache+socache_shmcb", line) for line in (
        'AuthnCacheSOCache shmcb',
        'AuthnCacheSOCache bogus',
        'AuthnCacheSOCache bogus:x',
        'AuthnCacheSOCache dbm:/tmp/x',
        'CacheSocache shmcb',
        'CacheSocache bogus:x(100)',
        'CacheSocache memcache:localhost',
    )),
    *(("substitute", line) for line in (
        '<Location /x>\nSubstitute "s/foo/bar/i"\n</Location>',
        '<Location /x>\nSubstitute "s|foo|bar|"\n</Location>',
        '<Location /x>\nSubstitute "s/foo/bar"\n</Location>',
        '<Location /x>\nSubstitute "s/foo"\n</Location>',
        '<Location /x>\nSubstitute "s//bar/"\n</Location>',
        '<Location /x>\nSubstitute "x/foo/bar/"\n</Location>',
        '<Location /x>\nSubstitute "S/foo/bar/nq"\n</Location>',
        '<Location /x>\nSubstitute "s/foo/bar/z"\n</Location>',
        '<Location /x>\nSubstitute "s/(foo/bar/"\n</Location>',
        '<Location /x>\nSubstitute "s/(foo/bar/n"\n</Location>',
        '<Location /x>\nSubstitute s\n</Location>',
        '<Location /x>\nSubstitute "s/a/b/c/"\n</Location>',
    )),
    *(("usertrack+http2", line) for line in (
        '<Directory /srv>\nCookieExpires 3600\n</Directory>',
        '<Directory /srv>\nCookieExpires "2 weeks"\n</Directory>',
        '<Directory /srv>\nCookieExpires "plus 1 month 2 days"\n</Directory>',
        '<Directory /srv>\nCookieExpires "1 m"\n</Directory>',
        '<Directory /srv>\nCookieExpires "x weeks"\n</Directory>',
        '<Directory /srv>\nCookieExpires "3"\n</Directory>',
        '<Directory /srv>\nCookieExpires "3 "\n</Directory>',
        '<Directory /srv>\nCookieExpires "2 bogus"\n</Directory>',
        '<Directory /srv>\nCookieExpires "p 1 year"\n</Directory>',
        '<Directory /srv>\nCookieDomain .example.org\n</Directory>',
        '<Directory /srv>\nCookieDomain example.org\n</Directory>',
        '<Directory /srv>\nCookieDomain .org\n</Directory>',
        '<Directory /srv>\nCookieDomain ""\n</Directory>',
        '<Directory /srv>\nCookieStyle rfc2965\n</Directory>',
        '<Directory /srv>\nCookieStyle bogus\n</Directory>',
        '<Directory /srv>\nCookieSameSite lax\n</Directory>',
        '<Directory /srv>\nCookieSameSite x\n</Directory>',
        'H2MaxWorkerIdleSeconds 600',
        'H2MaxWorkerIdleSeconds x',
        'H2StreamTimeout 30s',
        'H2StreamTimeout 1x',
    )),
    *(("ldap", line) for line in (
        'LDAPTrustedMode tls',
        'LDAPTrustedMode x',
        'LDAPTimeout 5',
        'LDAPTimeout -1',
        'LDAPTimeout 5s',
        'LDAPConnectionPoolTTL -x',
        'LDAPConnectionPoolTTL 5x',
        'LDAPConnectionPoolTTL 30',
        'LDAPRetryDelay 5x',
        'LDAPRetryDelay 500ms',
        '<Directory /srv>\nLDAPReferrals Default\n</Directory>', '<Directory /srv>\nLDAPReferrals x\n</Directory>',
        '<Directory /srv>\nLDAPReferralHopLimit 4294967296\n</Directory>',
        '<Directory /srv>\nLDAPReferralHopLimit 4294967297\n</Directory>',
        'LDAPRetries -1', 'LDAPRetries 3',
    )),
    *(("ldap+authnz_ldap", f"<Directory /srv>\nAuthLDAPDereferenceAliases {value}\n</Directory>")
      for value in ("Never", "never", "ON", "finding", "sometimes")),
    # the sweep's long tail (tools/sweep_readers.py): core's and the stock modules' small readers
    *(("", line) for line in (
        'ErrorLogFormat "%M %Z"', 'ErrorLogFormat request "%7a"', 'ErrorLogFormat "%M %16a"',
        'ErrorLogFormat "%M %15a"', 'ErrorLogFormat "%M %4294967297a"', 'ErrorLogFormat "%M %{x}}}e"',
        'ErrorLogFormat "x\\\\%Z %M"', 'ErrorLogFormat connection ""', 'ErrorLogFormat Connection "%a %M"',
        'ErrorLogFormat "%+M"', 'ErrorLogFormat "%M %+a"', 'ErrorLogFormat request "%M"', 'ErrorLogFormat "%{x"',
        'ErrorLogFormat "%M %"', 'ErrorLogFormat "% %M"', 'ErrorLogFormat "%M %%"', 'ErrorLogFormat bogus "%a"',
        'ErrorLogFormat Request "%a %{x}e"', 'ErrorLogFormat bogus', 'ErrorLogFormat "%-{x}e %M"',
        'ErrorLogFormat "[%t] [%l] %7F: %E: [client\\\\ %a] %M% ,\\\\ referer\\\\ %{Referer}i"',
        'ListenTCPDeferAccept 0', 'ListenTCPDeferAccept 5abc', 'ListenTCPDeferAccept 4294967296',
        "FlushMaxThreshold ' 5'", "FlushMaxThreshold '5 '", 'FlushMaxThreshold 4294967296', 'FlushMaxThreshold 0',
        'FlushMaxPipelined -2', 'FlushMaxPipelined -1', 'FlushMaxPipelined 2147483648',
        'ReadBufferSize 8192', 'ReadBufferSize -1', 'WatchdogInterval 50ms', 'WatchdogInterval 1',
        'WatchdogInterval x',
    )),
    *((module, line) for module, lines in (
        ("substitute", tuple(f"<Directory /srv>\nSubstituteMaxLineLength {v}\n</Directory>"
                             for v in ("10k", "10kb", "10B", "x", "-1", "5 m"))),
        ("vhost_alias", ("VirtualDocumentRoot /srv/%0", "VirtualDocumentRoot /srv/%-2+.1/x", "VirtualDocumentRoot /srv/%x",
                         "VirtualDocumentRoot /srv/%1.x", "VirtualDocumentRoot /srv/%", "VirtualDocumentRoot None",
                         "VirtualScriptAliasIP srv/%1", "VirtualDocumentRoot /srv/%p/%%", "VirtualScriptAlias /x/%1.-2+")),
        ("dbd", ("DBDMin 5", "DBDMax 5x", "DBDExptime -1")),
        ("auth_digest", tuple(f"<Directory /srv>\n{v}\n</Directory>" for v in (
            "AuthDigestQop auth", "AuthDigestQop AUTH auth-int", "AuthDigestQop none", "AuthDigestAlgorithm md5",
            "AuthDigestAlgorithm MD5-sess", "AuthDigestAlgorithm SHA-256", "AuthDigestNonceLifetime 5x",
            "AuthDigestNonceLifetime '5 x'", "AuthDigestNonceLifetime x", "AuthDigestNonceLifetime 300"))),
        ("auth_basic", tuple(f"<Directory /srv>\nAuthBasicUseDigestAlgorithm {v}\n</Directory>"
                             for v in ("OFF", "md5", "SHA-256"))),
        ("socache_shmcb+ssl", ("SSLVHostSNIPolicy Secure", "SSLVHostSNIPolicy authonly", "SSLVHostSNIPolicy x")),
        # SSLRequire: its raw text (quotes and all) parsed as a condition, the old syntax's words included
        ("socache_shmcb+ssl", tuple(f"<Location /x>\nSSLRequire{line}\n</Location>" for line in (
            " %{SSL_CIPHER} !~ m/^(EXP|NULL)-/ and %{SSL_CLIENT_S_DN_O} eq \"Snake Oil, Ltd.\"",
            " \"%{SSL_CIPHER} == 'x'\"", " %{SSL_CIPHERX} == \"x\"", " ( %{TIME_WDAY} >= 1 and %{TIME_WDAY} <= 5 )",
            " %{SSL_CLIENT_VERIFY} eq \"SUCCESS\" and file(\"/etc/x\") =~ /y/", " %{TIME_WDAY} >= 1 and", "",
            " %{SSL_CLIENT_S_DN_OU} in {\"Staff\", \"CA\", \"Dev\"}", " é", " %{HTTP_HOST} =~ m#(#",
            " %{FOO} == \"a\"", "   true   ", " not (%{A} eq \"x\")", " %{SSL_CIPHER_USEKEYSIZE} >= 128"))),
        ("lua", tuple(f"<Directory /srv>\n{v}\n</Directory>" for v in (
            "LuaInherit Parent-First", "LuaInherit x", "LuaCodeCache STAT", "LuaCodeCache x", "LuaScope server 1 5",
            "LuaScope Server", "LuaScope thread"))),
        ("socache_memcache", ("MemcacheConnTTL 30", "MemcacheConnTTL 2h", "MemcacheConnTTL x")),
        ("socache_redis", ("RedisTimeout 3600", "RedisTimeout 3601", "RedisConnPoolTTL 500ms", "RedisConnPoolTTL -1")),
        ("proxy+proxy_hcheck", ("ProxyHCTPsize -1", "ProxyHCTPsize 16")),
        ("socache_shmcb+ssl+md", ("MDRetryFailover 0", "MDRetryFailover 3", "MDChallengeDns01Version 2",
                                  "MDChallengeDns01Version 02")),
        ("session", ("<Directory /srv>\nSessionExpiryUpdateInterval -1\n</Directory>",
                     "<Directory /srv>\nSessionExpiryUpdateInterval 5\n</Directory>")),
        ("cache+cache_socache", ("CacheSocacheMaxSize 1023", "CacheSocacheMaxSize 1024x", "CacheSocacheMaxTime x",
                                 "CacheSocacheMaxTime -1", "CacheSocacheReadTime -5")),
        ("cache+cache_disk", ("CacheMinFileSize -1", "CacheReadTime 5", "CacheMaxFileSize 99999999999999999999")),
    ) for line in lines),
    *(("alias", line) for line in (
        "ScriptAlias /cgi-bin/", "ScriptAlias /cgi-bin/ /usr/lib/cgi-bin/",
        "<Location /x>\nScriptAlias /usr/lib/cgi-bin/\n</Location>", "AliasMatch ^/(a /srv",
        "ScriptAliasMatch ^/x(.*) /srv$1", "ScriptAliasMatch ^/x[ /srv", "RedirectMatch ^/(a http://x/",
        "RedirectMatch 301 ^/a(.*) http://x/$1", "RedirectMatch ^/a relative", "RedirectMatch gone ^/a",
        "RedirectMatch 404 ^/a http://x", "RedirectPermanent /a b", "RedirectPermanent /a /b",
        "RedirectTemp /a http://x/", "RedirectTemp permanent /x", "RedirectPermanent gone /x",
        "<Location /x>\nRedirectMatch 301 http://x/\n</Location>",
        "<Location /x>\nRedirectPermanent 301 %{bad\n</Location>",
    )),
    *(("mime", line) for line in (
        "MultiviewsMatch Any", "MultiviewsMatch Any Handlers", "MultiviewsMatch Handlers Filters",
        "MultiviewsMatch NegotiatedOnly\nMultiviewsMatch Any", "MultiviewsMatch bogus",
        "<Directory /srv>\nMultiviewsMatch Filters\n</Directory>\nMultiviewsMatch Any",
        "<Directory /srv>\nMultiviewsMatch Filters\nMultiviewsMatch negotiatedonly\n</Directory>",
    )),
    *((module, line) for module, lines in (
        ("include", ("<Directory /srv>\nXBitHack full\n</Directory>", "<Directory /srv>\nXBitHack maybe\n</Directory>")),
        ("proxy", ("ProxyDomain example.com", "ProxyDomain .example.com")),
        ("charset_lite", ("<Directory /srv>\nCharsetOptions ImplicitAdd bogus\n</Directory>",
                          "<Directory /srv>\nCharsetOptions notranslateallmimetypes\n</Directory>")),
        ("auth_form+session", tuple(f"<Directory /srv>\n{line}\n</Directory>" for line in (
            "AuthFormUsername x=y", "AuthFormUsername user", "authformbody a&b", "AuthFormSize -1", "AuthFormSize 10k",
            "AuthFormLoginRequiredLocation %{x", 'AuthFormLoginSuccessLocation "https://%{HTTP_HOST}/ok"',
            "AuthFormLogoutLocation %{NOPE}", 'AuthFormMethod ""'))),
        ("auth_basic", tuple(f"<Directory /srv>\n{line}\n</Directory>" for line in (
            "AuthBasicFake %{x", "AuthBasicFake demo %{x", "AuthBasicFake off", 'AuthBasicFake "%{SSL_CLIENT_S_DN_CN}" pw'))),
        ("auth_digest", ("AuthDigestShmemSize 10", "AuthDigestShmemSize 1k", "AuthDigestShmemSize 5x",
                         "AuthDigestShmemSize ' 5 k'", "AuthDigestShmemSize 2g", "AuthDigestShmemSize 88")),
        ("cache", ("CacheKeyBaseURL x=y", "CacheKeyBaseURL http://a/", "CacheKeyBaseURL //h", "CacheKeyBaseURL *")),
        ("dialup", tuple(f"<Directory /srv>\nModemStandard {m}\n</Directory>" for m in ("v.92", "V.34", "v.90"))),
        ("session+session_dbd+dbd", ("SessionDBDCookieName x;y", "SessionDBDCookieName a&b", "SessionDBDCookieName ok path=/",
                                     'SessionDBDCookieName "a b" x', 'SessionDBDCookieName2 "" a=b')),
        ("session+session_crypto", ("SessionCryptoPassphraseFile /nonexistent", "SessionCryptoPassphraseFile /etc/hostname")),
        ("heartmonitor", ("HeartbeatListen foo", "HeartbeatListen 239.0.0.1:27999", "HeartbeatListen :1",
                          "HeartbeatListen 239.0.0.1:27999\nHeartbeatListen 239.0.0.2:27999",
                          "HeartbeatListen 239.0.0.1:27999\nHeartbeatListen bad", "HeartbeatMaxServers 5",
                          "HeartbeatMaxServers 0", "HeartbeatMaxServers 10")),
        ("heartbeat", ("HeartbeatAddress 239.0.0.1:27999\nHeartbeatAddress bad",)),
        ("socache_shmcb+ssl+md", (
            "MDCheckInterval x=y", "MDCheckInterval 12h", "MDCheckInterval 30", "MDCheckInterval 5mx", "MDCheckInterval 5mi",
            "MDCheckInterval 500ms", "MDCheckInterval 0", "MDRetryDelay *", "MDRetryDelay 5d", "MDRetryDelay 0",
            "MDRetryDelay -5", "MDRetryDelay 1ms", "MDActivationDelay 2", "MDActivationDelay -1h", "MDInitialDelay 3x",
            "MDInitialDelay 0", "MDInitialDelay -1", "MDRenewWindow 33%", "MDRenewWindow -5%", "MDRenewWindow 30d",
            "MDRenewWindow x", "MDWarnWindow 10", "MDStaplingKeepResponse 7", "MDStaplingRenewWindow 33%%",
            "MDStoreLocks On", "MDStoreLocks 5s", "MDStoreLocks maybe", "MDCheckInterval ' 5'",
            "MDPortMap x=y", "MDPortMap http://", "MDPortMap 80:8080", "MDPortMap http:8080 https:-", "MDPortMap 81:80",
            "MDPortMap 80:0", "MDPortMap https:99999", "MDPortMap 80:8080 bad", "MDHttpProxy x=y",
            "MDHttpProxy http://proxy:3128", "MDHttpProxy ftp://proxy", "MDHttpProxy proxy:3128",
            "MDHttpProxy HTTPS://p")),
        ("log_debug", ("LogMessage %{x", 'LogMessage "hello %{REQUEST_URI}" hook=fixups', "LogMessage x hook=nope",
                       "LogMessage x hook=ALL expr=%{x", "LogMessage x bogus", "LogMessage x expr=true hook=*")),
        ("ext_filter", ("<Directory /srv>\nExtFilterOptions onfail=REMOVE LogStderr\n</Directory>",
                        "<Directory /srv>\nExtFilterOptions Onfail=x\n</Directory>")),
        ("dav", ("<Directory /srv>\nDAVMinTimeout -5\n</Directory>", "<Directory /srv>\nDAVMinTimeout 5x\n</Directory>")),
        ("cache", ("CacheLockMaxAge 0x5", "CacheLockMaxAge 5", "CacheLastModifiedFactor .5x", "CacheLastModifiedFactor x1",
                   "CacheLastModifiedFactor inf", "CacheLastModifiedFactor ' -2'")),
        ("http2", ("H2MaxStreamErrors 2147483648", "H2MaxStreamErrors 8", "H2MaxHeaderBlockLen -1",
                   "H2MaxHeaderBlockLen abc")),
        ("socache_shmcb+ssl+md", (
            "MDStapling ON", "MDStapling yes", "MDMustStaple off", "MDBaseServer maybe", "MDServerStatus x",
            "MDCertificateStatus on", "MDStapleOthers 0", "MDRequireHttps Permanent", "MDRequireHttps always",
            "MDRenewMode stick", "MDRenewMode bogus", "MDDriveMode auto", "MDMatchNames all", "MDMatchNames some",
            "MDMembers auto manual", "MDMember manual", "MDMember x", "MDCertificateFile /x",
            "<MDomainSet a.org>\nMDMembers b.org\n</MDomainSet>", "<MDomainSet a.org>\nMDStapling x\n</MDomainSet>",
            "<MDomainSet a.org>\nMDRenewMode x\n</MDomainSet>", "<MDomainSet a.org>\nMDRequireHttps x\n</MDomainSet>")),
        # libxml2's charset names (this machine's library, as httpd's), an xml2EncAlias first
        ("xml2enc", ("xml2EncDefault nosuchcharset", "xml2EncDefault utf8", "xml2EncDefault latin1",
                     "xml2EncDefault windows-1252", "xml2EncDefault 'iso latin 1'", "xml2EncDefault ISO-8859-9",
                     "xml2EncAlias UTF-8 mine\nxml2EncDefault MINE", "xml2EncDefault html")),
        ("xml2enc+proxy+proxy_html", ("ProxyHTMLBufSize abc", "proxyhtmlbufsize 10x", "ProxyHTMLBufSize ' 10'",
                                      "ProxyHTMLBufSize -5", "ProxyHTMLBufSize ''")),
        # ProxyHTMLURLMap's condition, after old_expr's rewrite (which breaks `var` and `!var`)
        ("xml2enc+proxy+proxy_html", (
            "ProxyHTMLURLMap", "ProxyHTMLURLMap a b", "ProxyHTMLURLMap ( b R", "ProxyHTMLURLMap a b i var",
            "ProxyHTMLURLMap a b i var=1", "ProxyHTMLURLMap a b i !var", "ProxyHTMLURLMap a b i !var=1",
            "ProxyHTMLURLMap a b i var=", "ProxyHTMLURLMap a b i var='", "ProxyHTMLURLMap a b R $x",
            "ProxyHTMLURLMap a b R \"%{x\"", "ProxyHTMLURLMap a b x \"-n %{x}\"", "ProxyHTMLURLMap a b \"\" $x",
            "ProxyHTMLURLMap a b x \"reqenv('v') == 'a'\" extra", "ProxyHTMLURLMap a b x \"v=a b\"",
            "ProxyHTMLURLMap a b x é", "<Location /x>\nProxyHTMLURLMap http://in/ /out/ Ri \"%{HTTP_HOSTX} == 'a'\"\n</Location>")),
        ("", ("ChrootDir /nonexistent", "ChrootDir /tmp", "ChrootDir /etc/passwd")),
        # mod_md's CA names (the installed module's own) or a URI
        ("md+socache_shmcb+ssl+watchdog", (
            "MDCertificateAuthority letsencrypt-staging", "MDCertificateAuthority https://acme.example/dir",
            "MDCertificateAuthority LetsEncrypt-Test buypass zzzca", "MDCertificateAuthority x:y",
            "<MDomainSet a.org>\nMDCertificateAuthority bogus\n</MDomainSet>", "MDCertificateAuthority '' letsencrypt",
            # the external account binding's JSON file, ServerRoot-relative (what it holds is not judged)
            "MDExternalAccountBinding NONE", "MDExternalAccountBinding a", "MDExternalAccountBinding a b",
            "mdexternalaccountbinding /nonexistent", "MDExternalAccountBinding /tmp",
            "<MDomainSet a.org>\nMDExternalAccountBinding /nonexistent\n</MDomainSet>")),
        # mod_authnz_fcgi: a provider's type, name and backend (resolved at once: addresses and
        # localhost only), a FastCGI authz provider's Require line, the authn check's options
        ("authnz_fcgi+authn_core+authz_core+auth_basic", (
            "AuthnzFcgiDefineProvider", "AuthnzFcgiDefineProvider x", "AuthnzFcgiDefineProvider AuthZ",
            "AuthnzFcgiDefineProvider authz n", "AuthnzFcgiDefineProvider authz n http://a:1/",
            "AuthnzFcgiDefineProvider authz n fcgi://a:99999/", "AuthnzFcgiDefineProvider authz n fcgi://:9000/",
            "AuthnzFcgiDefineProvider authz n fcgi://[::1]:9000", "AuthnzFcgiDefineProvider authz n fcgi://::1:9000",
            "AuthnzFcgiDefineProvider authz n fcgi://127.0.0.1:9000/ x", "AuthnzFcgiDefineProvider authz n FCGI://a:9/",
            "AuthnzFcgiDefineProvider authz n fcgi://127.0.0.1:123456/", "AuthnzFcgiDefineProvider authz n fcgi://a:b:9/",
            "AuthnzFcgiDefineProvider authz n fcgi://localhost:9000//", "AuthnzFcgiDefineProvider authz n fcgi://[a:b]:9",
            "AuthnzFcgiDefineProvider authz n fcgi://localhost:9000 ''", "AuthnzFcgiDefineProvider authz n fcgi://1.2.3:0",
            "<VirtualHost *:80>\nAuthnzFcgiDefineProvider x\n</VirtualHost>",
            "AuthnzFcgiDefineProvider authz myp fcgi://127.0.0.1:10103/\n<Location /x>\nRequire myp\n</Location>",
            "AuthnzFcgiDefineProvider authnz myp fcgi://127.0.0.1:10103/\n<Location /x>\nRequire myp a\n</Location>",
            "AuthnzFcgiDefineProvider AuthN myp fcgi://127.0.0.1:10103/\n<Location /x>\nRequire myp a\n</Location>",
            "AuthnzFcgiDefineProvider authn myp fcgi://127.0.0.1:1/\n<Location /x>\nAuthType Basic\nAuthName x\n"
            "AuthBasicProvider myp\nRequire valid-user\n</Location>",
            "AuthnzFcgiCheckAuthnProvider", "AuthnzFcgiCheckAuthnProvider none",
            *(f"<Location /x>\nAuthnzFcgiCheckAuthnProvider {args}\n</Location>" for args in (
                "None x", "p Authoritative", "p Authoritative maybe", "p RequireBasicAuth ON DefaultUser u",
                "p UserExpr %{FOO}", "p UserExpr \"%{reqenv:U}\" x y", "p UserExpr \"%{file:/etc/passwd}\"",
                "p UserExpr \"%{tolower:%{REMOTE_USER}}\"", "p Bogus 1", "p UserExpr \"%{FILESIZE:/x}\"",
                "p DefaultUser ''", "p DefaultUser '' ''", "p UserExpr \"%{md5:%{REMOTE_USER}}\"")))),
        # APR-util's driver files, as this machine has them (Debian ships sqlite3's; mysql, pgsql
        # and odbc are packages of their own)
        ("dbd", ("DBDriver sqlite3", "DBDriver bogus", "DBDriver SQLite3", "DBDriver pgsql", "DBDriver ../x",
                 "DBDriver ''", "<VirtualHost *:80>\nDBDriver mysql\n</VirtualHost>", "DBDriver sqlite3\nDBDriver x")),
        ("remoteip", ("RemoteIPTrustedProxyList /nonexistent", "RemoteIPTrustedProxyList /tmp", "RemoteIPTrustedProxyList http://",
                      "RemoteIPInternalProxyList /dev/null", "RemoteIPInternalProxyList /etc/hostname")),
        ("heartbeat", ("HeartbeatAddress foo", "HeartbeatAddress 239.0.0.1:27999", "HeartbeatAddress [::1]:27999",
                       "HeartbeatAddress :80", "HeartbeatAddress 27999", "HeartbeatAddress 239.0.0.1:99999",
                       "HeartbeatAddress 239.0.0.1:27999\nHeartbeatAddress 239.0.0.2:27999")),
        ("socache_shmcb+ssl", ("SSLStaplingCache shmcb", "SSLStaplingCache shmcb:/tmp/x(100)",
                               "SSLStaplingCache shmcb:/tmp/x(512000)")),
        ("proxy+proxy_balancer+lbmethod_byrequests", (
            "BalancerMember http://a/", "BalancerMember balancer://c http://a/", "BalancerMember balancer://c http://a/ x",
            "BalancerMember", "<Proxy balancer://c>\nBalancerMember http://a/ loadfactor=0\n</Proxy>",
            "<Proxy balancer://c>\nBalancerMember http://a/ b\n</Proxy>", "<Location /x>\nBalancerMember http://a/\n</Location>",
            "BalancerMember C http://a/", "BalancerMember balancer://c unix:/x|", "BalancerMember balancer://c relative",
            "BalancerMember balancer://c unix:/run/x.sock|http://localhost/ retry=0",
            "ProxyPass /a http://b/\nBalancerMember balancer://c http://b/ timeout=x",
            "ProxySet nosuch=1", "ProxySet http://nosuch/ timeout=1", "ProxyPass /a http://b/\nProxySet http://b/ timeout=x",
            "ProxyPass /a http://b/\nProxySet http://b/ timeout", "ProxyPass /a http://B:80/\nProxySet http://b/ timeout=5",
            "ProxyPass /a balancer://q\nBalancerMember balancer://q http://c/\nProxySet balancer://q lbmethod=nosuch",
            "ProxyPass /a balancer://q\nBalancerMember balancer://q http://c/\nProxySet balancer://q lbmethod=byrequests",
            "<Proxy balancer://q>\nProxySet lbmethod=byrequests bogus=1\n</Proxy>", "ProxySet balancer://nope lbset=1",
            "ProxySet balancer:x lbset=1", "<Proxy http://w/>\nProxySet retry=x\n</Proxy>",
            "<Proxy http://w/>\nProxySet keepalive=on ttl=5\n</Proxy>")),
        # the handlers that refuse no argument, each as it reads its line
        ("userdir", ("UserDir", 'UserDir ""', "UserDir public_html")),
        ("remoteip", ("RemoteIPProxyProtocolExceptions", 'RemoteIPProxyProtocolExceptions ""',
                      'RemoteIPProxyProtocolExceptions "" 10.0.0.1', "RemoteIPProxyProtocolExceptions 10.0.0.1",
                      "RemoteIPProxyProtocolExceptions 10.0.0.0/8 ::1 fe80::/10", "RemoteIPProxyProtocolExceptions 10.0.0.1/33",
                      "RemoteIPProxyProtocolExceptions example.org", "RemoteIPProxyProtocolExceptions 10.1/16 1.2.3.4/255.0.0.0")),
        ("session+session_cookie", ("SessionCookieName", "SessionCookieName a=b", 'SessionCookieName "" path=/',
                                    "sessioncookiename2 x&y", "SessionCookieName session path=/",
                                    'SessionCookieName "a=b"')),
        ("dbd+session+session_dbd", ("SessionDBDCookieName", 'SessionDBDCookieName ""', "SessionDBDCookieName s path=/")),
        ("proxy+proxy_hcheck", ("ProxyHCExpr", 'ProxyHCExpr ""', "ProxyHCExpr abcdefghijklmnop {true}",
                                "ProxyHCExpr abcdefghijklmno {true}", "ProxyHCExpr ok", "ProxyHCTemplate",
                                "ProxyHCTemplate t hcinterval=x", "ProxyHCTemplate t bogus=1", "ProxyHCTemplate t hcpasses",
                                "ProxyHCTemplate t hcmethod=GET hcpasses=2", "ProxySet", "ProxyHCExpr a b c d",
                                'ProxyHCExpr ok "%{REQUEST_STATUS} =~ /^[234]/"',
                                'ProxyHCExpr ok "%{REQUEST_STATUS} =~ /^[234]/" extra', 'ProxyHCExpr ok "%{NOPE} = 1"',
                                "ProxyHCExpr ok {%{REQUEST_STATUS} =~ /^[234]/}", 'ProxyHCExpr ok "hc(\\"body\\") =~ /x/"')),
        ("socache_shmcb+ssl+md", ("MDomain", "MDomain auto", 'MDomain ""', 'MDomain a.org ""', "MDomain Manual example.org",
                                  "MDPrivateKeys", 'MDPrivateKeys ""', "MDPrivateKeys RSA")),
        ("http2", ("H2MaxHeaderBlockLen", "H2MaxStreamErrors 1 2")),
        ("", ("ListenTCPDeferAccept", "WatchdogInterval")),
        ("ext_filter", ("ExtFilterDefine a b c d", 'ExtFilterDefine "" x', 'ExtFilterDefine f mode=output cmd="/bin/tr a-z A-Z"',
                        "ExtFilterDefine f mode=sideways cmd=/bin/cat", 'ExtFilterDefine f cmd="/bin/cat',
                        'ExtFilterDefine f cmd=""', "ExtFilterDefine f preservescontentlengthx cmd=/bin/cat",
                        "ExtFilterDefine f PreservesContentLength intype=text/html outtype=text/plain ftype=20 "
                        "enableenv=x disableenv=y cmd=/bin/cat", "ExtFilterDefine f cmd=/bin/cat\nExtFilterDefine F cmd=/bin/cat",
                        "ExtFilterDefine f cmd=/bin/cat\n<VirtualHost *:80>\nExtFilterDefine f cmd=/bin/cat\n</VirtualHost>",
                        "ExtFilterDefine f", 'ExtFilterDefine f cmd="/bin/echo \\"x\\"" mode=input')),
        ("allowmethods", tuple(f"<Directory /srv>\n{line}\n</Directory>" for line in (
            'AllowMethods "" x', 'AllowMethods GET ""', 'AllowMethods ""', 'AllowMethods reset ""', "AllowMethods GET BOGUS"))),
        ("access_compat", tuple(f"<Directory /srv>\n{line}\n</Directory>" for line in (
            "allow a b c d", "Allow from 10.0.0.0/33", "Allow from 10.0.0.1/abc", "Deny from x/8",
            "Allow from 10.0.0.1 example.org env=!X All", "Allow from 10.1", "Allow from #x", "Allow from 10.0.0.256",
            "Allow from ::1 fe80::/10 ::ffff:1.2.3.4", "Allow FROM 1.2.3.4/255.255.0.0", 'Allow from ""',
            'Allow from "" 10.0.0.256', "Deny from all", "Deny from env=bad"))),
        ("proxy", ('<Proxy "http://x/">\nProxyPassReverse / http://x/\n</Proxy>',
                   '<Proxy "http://x/">\nProxyPassReverse http://x/\n</Proxy>')),
    ) for line in lines),
]


@needs_httpd
@pytest.mark.parametrize("module, line", READER_CASES)
def test_lint_and_httpd_agree_on_a_modules_one_value_reader(tmp_path, module, line):
    agree_with_modules_loaded(tmp_path, module, line)


@needs_httpd
@pytest.mark.parametrize("module", ["so", "watchdog", "log_config", "logio", "version", "unixd", "core", "http",
                                    "rewrite"])
def test_lint_and_httpd_agree_on_loading_a_compiled_in_module(tmp_path, module):
    """mod_so refuses LoadModule of a compiled-in mod_X.c ("built-in and can't be loaded")
    whatever the file; which ones are compiled in is the installed httpd's -l (Debian: mod_so,
    mod_watchdog, mod_log_config, mod_logio, mod_version, mod_unixd)."""
    line = f"LoadModule {module}_module {httpd.modules_dir()}/mod_{module}.so"
    proc, findings = httpd_and_lint(tmp_path, f"ServerTokens Prod\nTraceEnable Off\n{line}")
    errors = [f.message for f in findings if f.severity == "error"]
    if "built-in" in proc.stderr:
        assert any(f"module {module}_module is built-in and can't be loaded" in e for e in errors), errors
    else:
        assert not any("built-in" in e for e in errors), (proc.stderr, errors)
