/* request.c: the HTTP/1.x request head, found and parsed in place with no I/O
 * and no allocation, so that it can be fuzzed on its own (fuzz/fuzz_request.c).
 *
 * Strict like httpd 2.4.71's default HttpProtocolOptions Strict (checked against a real
 * httpd by tests/test_mpmd_http.py): lines end in CRLF (a bare LF is 400), one space between
 * the parts of the request line, a token for the method, no NUL or control bytes, one valid
 * Host in HTTP/1.1 (an absolute-form target does not replace it), a numeric Content-Length,
 * no Content-Length beside Transfer-Encoding (request smuggling); obs-fold is joined. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static int is_tchar(int ch) {
    return ch > 0x20 && ch < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", ch);
}

/* RFC 9112 2.2: a server SHOULD ignore at least one empty line before the request line. */
/* Empty CRLF lines before a request line are skipped, as httpd does; a bare LF is not (it
 * becomes an empty request line, answered with 400 as Strict parsing does). */
size_t http_skip_blank_lines(const char *buf, size_t n) {
    size_t i = 0;
    while (i + 1 < n && buf[i] == '\r' && buf[i + 1] == '\n') i += 2;
    return i;
}

long http_find_head(const char *buf, size_t n, const struct conf *c, struct head_scan *s) {
    for (; s->pos < n; s->pos++) {
        if (buf[s->pos] != '\n') continue;
        size_t len = s->pos - s->line_start;
        if (len && buf[s->pos - 1] == '\r') len--;
        if (s->line_start == 0) {
            if (len > (size_t)c->limit_request_line) return -414;
        } else if (len == 0) {
            return (long)(s->pos + 1);
        } else if (len > (size_t)c->limit_request_fieldsize || ++s->fields > c->limit_request_fields) {
            return -431;
        }
        s->line_start = s->pos + 1;
    }
    size_t partial = n - s->line_start;
    if (s->line_start == 0 && partial > (size_t)c->limit_request_line + 1) return -414;
    if (s->line_start > 0 && partial > (size_t)c->limit_request_fieldsize + 1) return -431;
    if (n >= HEAD_MAX) return -431;
    return 0;
}

/* Cut the line starting at p and NUL-terminate it. Returns the next line, or NULL when the
 * line holds a NUL byte or does not end in CRLF: httpd 2.4's default HttpProtocolOptions
 * Strict answers a bare LF with 400. */
static char *cut_line(char *p, char *end, char **line, size_t *len) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) nl = end; /* not reached: http_find_head saw the blank line */
    size_t l = (size_t)(nl - p);
    if (!l || p[l - 1] != '\r') return NULL;
    l--;
    if (memchr(p, 0, l)) return NULL;
    p[l] = 0;
    *line = p;
    *len = l;
    return nl < end ? nl + 1 : end;
}

static int has_token(const char *v, const char *tok) {
    size_t n = strlen(tok);
    for (const char *p = v; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        const char *e = p;
        while (*e && *e != ',') e++;
        const char *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\t')) t--;
        if ((size_t)(t - p) == n && !strncasecmp(p, tok, n)) return 1;
        p = e;
    }
    return 0;
}

/* httpd's fix_hostname: a name of letters, digits, '-', '.' and '_', or an IPv6 literal in
 * brackets, then an optional :port of digits. Anything else (a space, a slash, ...) is 400. */
static int valid_host(const char *v) {
    const char *p = v;
    if (*p == '[') {
        p = strchr(p, ']');
        if (!p || p == v + 1) return 0;
        for (const char *q = v + 1; q < p; q++)
            if (!isxdigit((unsigned char)*q) && *q != ':' && *q != '.') return 0;
        p++;
    } else {
        for (; isalnum((unsigned char)*p) || *p == '-' || *p == '.' || *p == '_'; p++)
            if (p[0] == '.' && p[1] == '.') return 0; /* an empty label */
        if (p == v) return 0;
    }
    if (*p == ':') {
        if (!isdigit((unsigned char)*++p)) return 0; /* a colon needs a port */
        while (isdigit((unsigned char)*p)) p++;
    }
    return *p == 0;
}

static int parse_request_line(char *line, struct request *rq) {
    char *sp1 = strchr(line, ' ');
    if (!sp1 || sp1 == line) return 400;
    size_t mlen = (size_t)(sp1 - line);
    for (size_t i = 0; i < mlen; i++)
        if (!is_tchar((unsigned char)line[i])) return 400;
    if (mlen >= sizeof(rq->method)) return 501; /* a token, but no method we know */
    memcpy(rq->method, line, mlen);
    rq->method[mlen] = 0;
    char *target = sp1 + 1, *sp2 = strchr(target, ' ');
    if (!sp2 || sp2 == target) return 400; /* HTTP/0.9 (no version) is refused too */
    for (char *p = target; p < sp2; p++)
        if ((unsigned char)*p <= 0x20 || *p == 0x7f) return 400;
    *sp2 = 0;
    const char *v = sp2 + 1;
    if (strncmp(v, "HTTP/", 5) || !isdigit((unsigned char)v[5]) || v[6] != '.' ||
        !isdigit((unsigned char)v[7]) || v[8])
        return 400;
    if (v[5] != '1') return 505;
    rq->minor = v[7] == '0' ? 0 : 1;
    /* absolute-form: keep the path. As httpd 2.4.71, an HTTP/1.1 request still needs its
     * Host header (the authority does not stand for it). */
    if (!strncasecmp(target, "http://", 7) || !strncasecmp(target, "https://", 8)) {
        char *auth = strstr(target, "//") + 2, *path = strchr(auth, '/');
        if (!path) { /* "http://host" means "/": reuse the byte before the authority */
            auth[-1] = '/';
            auth[0] = 0;
            path = auth - 1;
        }
        target = path;
    }
    if (target[0] != '/' && strcmp(target, "*")) return 400;
    rq->target = target;
    return 0;
}

int http_parse_head(char *head, size_t len, const struct conf *c, struct request *rq) {
    (void)c;
    memset(rq, 0, sizeof(*rq));
    char *end = head + len, *line;
    size_t llen;
    char *p = cut_line(head, end, &line, &llen);
    if (!p) return 400;
    rq->line = line;
    int status = parse_request_line(line, rq);
    if (status) return status;
    int lengths = 0, prev_field = 0, prev_field_read = 0;
    while (p < end) {
        p = cut_line(p, end, &line, &llen);
        if (!p) return 400;
        if (llen == 0) break;
        if (line[0] == ' ' || line[0] == '\t') {
            /* obs-fold: httpd joins it to the field above. The fields read here cannot be
             * valid folded (a Host or a length with a space in it is 400 in httpd too). */
            if (!prev_field || prev_field_read) return 400;
            continue;
        }
        char *colon = strchr(line, ':');
        if (!colon || colon == line) return 400;
        for (char *n = line; n < colon; n++)
            if (!is_tchar((unsigned char)*n)) return 400; /* also: no space before the colon */
        *colon = 0;
        prev_field = 1;
        prev_field_read = !strcasecmp(line, "Host") || !strcasecmp(line, "Content-Length") ||
                          !strcasecmp(line, "Transfer-Encoding");
        char *v = colon + 1, *ve = line + llen;
        while (*v == ' ' || *v == '\t') v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) *--ve = 0;
        for (char *q = v; q < ve; q++)
            if ((unsigned char)*q < 0x20 && *q != '\t') return 400;
        if (!strcasecmp(line, "Host")) {
            if (++rq->hosts > 1) return 400;
            if (!*v) rq->hosts_empty = 1;
            else if (!valid_host(v)) return 400;
        } else if (!strcasecmp(line, "Content-Length")) {
            long n = 0;
            if (!*v || strlen(v) > 15) return 400;
            for (char *q = v; *q; q++) {
                if (!isdigit((unsigned char)*q)) return 400;
                n = n * 10 + (*q - '0');
            }
            if (lengths++ && n != rq->content_length) return 400;
            rq->content_length = n;
        } else if (!strcasecmp(line, "Transfer-Encoding")) {
            rq->transfer_encoding = 1;
            /* chunked must be the last coding; anything else we cannot read */
            const char *last = strrchr(v, ',');
            last = last ? last + 1 : v;
            while (*last == ' ' || *last == '\t') last++;
            if (strcasecmp(last, "chunked")) return 501;
            rq->chunked = 1;
        } else if (!strcasecmp(line, "Connection")) {
            if (has_token(v, "close")) rq->conn_close = 1;
            if (has_token(v, "keep-alive")) rq->conn_keepalive = 1;
        }
    }
    if (rq->transfer_encoding && lengths) return 400;
    if (rq->minor == 1 && (!rq->hosts || rq->hosts_empty)) return 400; /* HTTP/1.0 may omit it */
    return 0;
}

static int hexval(int ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    ch = tolower(ch);
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    return -1;
}

int http_decode_path(const char *in, char *out, size_t cap, int *dotdot) {
    size_t o = 0;
    *dotdot = 0;
    for (const char *p = in; *p && *p != '?'; p++) {
        int ch = (unsigned char)*p;
        if (ch == '%') {
            int hi = hexval((unsigned char)p[1]), lo = hi < 0 ? -1 : hexval((unsigned char)p[2]);
            if (hi < 0 || lo < 0) return MPMD_ERR;
            ch = hi * 16 + lo;
            p += 2;
            if (ch == 0) return MPMD_ERR;
        }
        if (o + 1 >= cap) return MPMD_ERR;
        out[o++] = (char)ch;
    }
    out[o] = 0;
    /* ".." as a whole segment, after decoding, would climb out of DocumentRoot
     * (a decoded "/" counts as a separator, as on the file system). */
    for (char *s = out; (s = strstr(s, "..")) != NULL; s += 2)
        if ((s == out || s[-1] == '/') && (s[2] == 0 || s[2] == '/')) *dotdot = 1;
    return MPMD_OK;
}
