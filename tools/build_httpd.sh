#!/bin/sh
# Build one httpd 2.4.x tag from httpd's git history into a scratch prefix, to record what that
# version prints (tools/record_httpd_version.py). Nothing built here is committed: only the
# recorded outputs (facts) go into fixtures/httpd-versions/.
#
#   tools/build_httpd.sh 2.4.37 /tmp/httpd-2.4.37      # ~1-2 minutes on 2 cores
#
# Needs: git, a C compiler, autoconf, libtool, libapr1-dev, libaprutil1-dev, libpcre3-dev
# (PCRE1; versions before 2.4.53 cannot use PCRE2) or libpcre2-dev.
# HTTPD_GIT: a clone of https://github.com/apache/httpd (bare or not); default: fetched shallowly.
# HTTPD_LUA=1: build mod_lua too (liblua5.3-dev), for validate's /app/sleep application.
set -eu
tag=$1
prefix=$(realpath -m "$2")
src=$(mktemp -d "${TMPDIR:-/tmp}/httpd-src-$tag.XXXXXX")
trap 'rm -rf "$src"' EXIT
if [ -n "${HTTPD_GIT:-}" ]; then
    git --git-dir="$HTTPD_GIT" archive --format=tar "$tag" | tar -x -C "$src"
else
    git clone -q --depth 1 --branch "$tag" https://github.com/apache/httpd "$src"
fi
cd "$src"
# What ./buildconf does, from Debian's packaged APR build files instead of APR's source tree
# (old tags' buildconf cannot use apr-1-config).
cp /usr/share/misc/config.guess /usr/share/misc/config.sub /usr/share/apr-1.0/build/PrintPath \
   /usr/share/apr-1.0/build/apr_common.m4 /usr/share/apr-1.0/build/find_apr.m4 \
   /usr/share/apr-1.0/build/find_apu.m4 build/
rm -f include/ap_config_auto.h.in
autoheader >/dev/null 2>&1
autoconf >/dev/null 2>&1
(cd server && touch util_expr_parse.y util_expr_scan.l && sleep 1 && touch util_expr_parse.c util_expr_parse.h util_expr_scan.c)
pcre=""
lua="--disable-lua"
if [ "${HTTPD_LUA:-0}" = 1 ]; then lua="--enable-lua --with-lua=/usr"; fi
if [ -x /usr/bin/pcre-config ]; then pcre="--with-pcre=/usr/bin/pcre-config"; fi
# Every MPM shared, the modules that need no extra library; gcc >= 10 defaults to -fno-common,
# which old tags do not build with.
CFLAGS="-O1 -fcommon -w" ./configure --prefix="$prefix" --with-apr=/usr/bin/apr-1-config \
    --with-apr-util=/usr/bin/apu-1-config $pcre --enable-mpms-shared=all \
    --enable-mods-shared=all --disable-ssl $lua --disable-http2 --disable-proxy-http2 \
    --disable-md --disable-brotli --disable-xml2enc --disable-proxy-html --disable-session-crypto \
    --disable-crypto --disable-authnz-ldap --disable-ldap --disable-socache-dc \
    --disable-heartmonitor >/dev/null
make -j"$(nproc)" >/dev/null 2>build.err || { tail -30 build.err; exit 1; }
make install >/dev/null
echo "$prefix/bin/httpd"
