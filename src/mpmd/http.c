/* http.c: just enough HTTP/1.1 for real load generators: GET/HEAD of static
 * files under DocumentRoot (sendfile), keep-alive for 1.0 and 1.1, the status
 * page, and synthetic application endpoints. Parsing never allocates. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_LEN 8190   /* httpd's LimitRequestLine / LimitRequestFieldSize */
#define FIELDS_MAX 100      /* LimitRequestFields */
#define HEAD_MAX (64 * 1024)
#define BODY_MAX (1024 * 1024)

struct request {
    char method[16];
    char *target;
    int minor; /* HTTP/1.<minor> */
    int conn_close, conn_keepalive, has_host, chunked;
    long content_length;
};

static int write_all(int fd, const char *buf, size_t len) {
    while (len) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return MPMD_ERR;
        }
        buf += n;
        len -= (size_t)n;
    }
    return MPMD_OK;
}

static const char *reason(int status) {
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
    }
}

static int send_head(int fd, int status, long length, const char *type, int keep, const struct conf *c,
                     int remaining) {
    char date[64], head[512];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nDate: %s\r\nServer: " MPMD_VERSION "\r\nContent-Length: %ld\r\n"
                     "Content-Type: %s\r\n%s",
                     status, reason(status), date, length, type, status == 405 ? "Allow: GET, HEAD\r\n" : "");
    if (keep)
        n += snprintf(head + n, sizeof(head) - (size_t)n, "Connection: Keep-Alive\r\nKeep-Alive: timeout=%d, max=%d\r\n\r\n",
                      c->keepalive_timeout_ms / 1000, remaining);
    else
        n += snprintf(head + n, sizeof(head) - (size_t)n, "Connection: close\r\n\r\n");
    return write_all(fd, head, (size_t)n);
}

static int send_text(int fd, int status, const char *body, int head_only, int keep, const struct conf *c,
                     int remaining) {
    size_t len = strlen(body);
    if (send_head(fd, status, (long)len, "text/plain; charset=utf-8", keep, c, remaining) != MPMD_OK) return MPMD_ERR;
    return head_only ? MPMD_OK : write_all(fd, body, len);
}

static int hexval(int ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    ch = tolower(ch);
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    return -1;
}

/* Percent-decode `in` (up to '?') into `out`; reject NUL, bad escapes, and ".." segments. */
static int decode_path(const char *in, char *out, size_t cap, int *forbidden) {
    size_t o = 0;
    *forbidden = 0;
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
    /* ".." as a whole segment, after decoding, would climb out of DocumentRoot. */
    for (char *s = out; (s = strstr(s, "..")) != NULL; s += 2)
        if ((s == out || s[-1] == '/') && (s[2] == 0 || s[2] == '/')) *forbidden = 1;
    return MPMD_OK;
}

static long query_num(const char *target, const char *key) {
    const char *q = strchr(target, '?');
    size_t klen = strlen(key);
    while (q) {
        q++;
        if (!strncmp(q, key, klen) && q[klen] == '=') return strtol(q + klen + 1, NULL, 10);
        q = strchr(q, '&');
    }
    return 0;
}

static void burn_cpu(long ms) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 10000; i++) x += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

static int serve_status(int fd, const struct http_ctx *ctx, int head_only, int keep, int remaining) {
    char body[8192];
    int busy, idle, procs;
    sb_count(ctx->sb, &busy, &idle, &procs);
    int n = snprintf(body, sizeof(body),
                     "Total Accesses: %llu\nTotal kBytes: 0\nUptime: %lld\nBusyWorkers: %d\nIdleWorkers: %d\n"
                     "Processes: %d\nConnsTotal: %llu\nServerMPM: %s\nScoreboard: ",
                     (unsigned long long)__atomic_load_n(&ctx->sb->g->total_accesses, __ATOMIC_RELAXED),
                     (long long)(time(NULL) - ctx->sb->g->start_time), busy, idle, procs,
                     (unsigned long long)__atomic_load_n(&ctx->sb->g->total_connections, __ATOMIC_RELAXED),
                     ctx->conf->mpm == MPM_PREFORK ? "prefork" : ctx->conf->mpm == MPM_WORKER ? "worker" : "event");
    for (int p = 0; p < ctx->sb->server_limit && n < (int)sizeof(body) - 2; p++)
        for (int t = 0; t < ctx->conf->threads_per_child && n < (int)sizeof(body) - 2; t++) {
            unsigned char s = ctx->sb->procs[p].pid ? ctx->sb->slots[p * ctx->sb->thread_limit + t] : SLOT_DEAD;
            body[n++] = s == SLOT_IDLE ? '_' : s == SLOT_BUSY ? 'W' : s == SLOT_KEEPALIVE ? 'K' : '.';
        }
    body[n++] = '\n';
    body[n] = 0;
    return send_text(fd, 200, body, head_only, keep, ctx->conf, remaining);
}

static int serve_file(int fd, const struct http_ctx *ctx, const char *decoded, int head_only, int keep,
                      int remaining, int *status) {
    const struct conf *c = ctx->conf;
    char path[PATH_MAX * 2], real[PATH_MAX];
    snprintf(path, sizeof(path), "%s%s", c->document_root, decoded);
    if (!realpath(path, real)) {
        *status = errno == EACCES ? 403 : 404;
        return send_text(fd, *status, *status == 403 ? "forbidden\n" : "not found\n", head_only, keep, c, remaining);
    }
    size_t rootlen = strlen(c->document_root);
    if (strncmp(real, c->document_root, rootlen) || (real[rootlen] && real[rootlen] != '/')) {
        *status = 403; /* a symlink that leads out of DocumentRoot */
        return send_text(fd, 403, "forbidden\n", head_only, keep, c, remaining);
    }
    struct stat st;
    if (stat(real, &st) == 0 && S_ISDIR(st.st_mode)) {
        strncat(real, "/index.html", sizeof(real) - strlen(real) - 1);
        if (stat(real, &st) != 0) {
            *status = 403;
            return send_text(fd, 403, "forbidden\n", head_only, keep, c, remaining);
        }
    }
    int file = open(real, O_RDONLY | O_CLOEXEC);
    if (file < 0 || fstat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (file >= 0) close(file);
        *status = 404;
        return send_text(fd, 404, "not found\n", head_only, keep, c, remaining);
    }
    const char *dot = strrchr(real, '.');
    const char *type = dot && !strcmp(dot, ".html") ? "text/html" : dot && !strcmp(dot, ".css") ? "text/css"
                       : dot && !strcmp(dot, ".js") ? "application/javascript"
                       : dot && !strcmp(dot, ".txt") ? "text/plain" : "application/octet-stream";
    *status = 200;
    int rc = send_head(fd, 200, (long)st.st_size, type, keep, c, remaining);
    off_t off = 0;
    while (rc == MPMD_OK && !head_only && off < st.st_size) {
        ssize_t n = sendfile(fd, file, &off, (size_t)(st.st_size - off));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) rc = MPMD_ERR;
    }
    close(file);
    return rc;
}

/* Wait until fd is readable; 0 timeout (or stopping), 1 readable, -1 error.
 * Polls in 100 ms slices: only one thread of a process receives SIGTERM, and
 * the others must notice the stop without waiting out KeepAliveTimeout. */
static int wait_readable(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (!mpmd_stop) {
        int slice = ms > 100 ? 100 : ms;
        int r = poll(&p, 1, slice);
        if (r < 0 && errno == EINTR) continue;
        if (r != 0) return r;
        ms -= slice;
        if (ms <= 0) return 0;
    }
    return 0;
}

/* Read the request head into buf. Returns its length, 0 on a clean close before
 * any byte, or -status for an error to report (-408, -414, -431, -400). */
static int read_head(int fd, char *buf, size_t cap, int first_wait_ms, int timeout_ms, size_t *have) {
    size_t n = *have;
    int waited_first = 0;
    for (;;) {
        buf[n] = 0;
        char *end = strstr(buf, "\r\n\r\n");
        if (end) { *have = n; return (int)(end - buf) + 4; }
        char *nl = strchr(buf, '\n');
        if (!nl && n > LINE_MAX_LEN) return -414;
        if (n >= cap - 1) return -431;
        int r = wait_readable(fd, n == 0 && !waited_first ? first_wait_ms : timeout_ms);
        waited_first = 1;
        if (r == 0) return n == 0 ? 0 : -408;
        if (r < 0) return 0;
        ssize_t got = recv(fd, buf + n, cap - 1 - n, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return n == 0 ? 0 : -400;
        n += (size_t)got;
    }
}

static int parse_head(char *head, struct request *rq) {
    memset(rq, 0, sizeof(*rq));
    char *line_end = strstr(head, "\r\n");
    *line_end = 0;
    if (strlen(head) > LINE_MAX_LEN) return 414;
    char *sp1 = strchr(head, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || sp1 == head || (size_t)(sp1 - head) >= sizeof(rq->method) || sp2 == sp1 + 1) return 400;
    memcpy(rq->method, head, (size_t)(sp1 - head));
    *sp2 = 0;
    rq->target = sp1 + 1;
    if (!strcmp(sp2 + 1, "HTTP/1.1")) rq->minor = 1;
    else if (!strcmp(sp2 + 1, "HTTP/1.0")) rq->minor = 0;
    else return 400;
    if (rq->target[0] != '/') return 400;
    int fields = 0;
    for (char *line = line_end + 2; *line && strncmp(line, "\r\n", 2); ) {
        char *eol = strstr(line, "\r\n");
        if (!eol) return 400;
        *eol = 0;
        if (strlen(line) > LINE_MAX_LEN || ++fields > FIELDS_MAX) return 431;
        char *colon = strchr(line, ':');
        if (!colon || colon == line) return 400;
        *colon = 0;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        if (!strcasecmp(line, "Connection")) {
            if (strcasestr(v, "close")) rq->conn_close = 1;
            if (strcasestr(v, "keep-alive")) rq->conn_keepalive = 1;
        } else if (!strcasecmp(line, "Host")) {
            rq->has_host = 1;
        } else if (!strcasecmp(line, "Content-Length")) {
            char *end;
            rq->content_length = strtol(v, &end, 10);
            if (end == v || *end || rq->content_length < 0) return 400;
        } else if (!strcasecmp(line, "Transfer-Encoding")) {
            rq->chunked = 1;
        }
        line = eol + 2;
    }
    if (rq->minor == 1 && !rq->has_host) return 400;
    return 0;
}

/* Handle one request on fd. *keep says whether the connection stays open.
 * Returns 1 if a request was answered, 0 if the client closed, -1 on error. */
int http_handle_one(int fd, const struct http_ctx *ctx, int served, int *keep) {
    const struct conf *c = ctx->conf;
    char buf[HEAD_MAX + 1];
    size_t have = 0;
    *keep = 0;
    int first_wait = served ? c->keepalive_timeout_ms : c->timeout_ms;
    int len = read_head(fd, buf, sizeof(buf), first_wait, c->timeout_ms, &have);
    if (len == 0) return 0;
    int remaining = c->max_keepalive_requests ? c->max_keepalive_requests - served - 1 : 100;
    if (len < 0) {
        send_text(fd, -len, reason(-len), 0, 0, c, 0);
        return -1;
    }
    struct request rq;
    int status = parse_head(buf, &rq);
    __atomic_fetch_add(&ctx->sb->g->total_accesses, 1, __ATOMIC_RELAXED);
    if (status) {
        send_text(fd, status, reason(status), 0, 0, c, 0);
        return -1;
    }
    int head_only = !strcmp(rq.method, "HEAD");
    if (!head_only && strcmp(rq.method, "GET")) {
        send_text(fd, 405, "method not allowed\n", 0, 0, c, 0);
        return -1;
    }
    if (rq.chunked || rq.content_length > BODY_MAX) {
        send_text(fd, 413, "request body too large\n", 0, 0, c, 0);
        return -1;
    }
    /* Discard a small body (GET with a body is legal, if odd). */
    long pending = rq.content_length - (long)(have - (size_t)len);
    while (pending > 0) {
        char sink[4096];
        if (wait_readable(fd, c->timeout_ms) <= 0) return -1;
        ssize_t n = recv(fd, sink, sizeof(sink) < (size_t)pending ? sizeof(sink) : (size_t)pending, 0);
        if (n <= 0) return -1;
        pending -= n;
    }
    *keep = c->keepalive && !rq.conn_close && (rq.minor == 1 || rq.conn_keepalive) &&
            (c->max_keepalive_requests == 0 || served + 1 < c->max_keepalive_requests);
    /* Pipelined bytes after this request are not supported: close after answering. */
    if (have > (size_t)len + (size_t)(rq.content_length > 0 ? rq.content_length : 0)) *keep = 0;
    char decoded[PATH_MAX];
    int forbidden;
    if (decode_path(rq.target, decoded, sizeof(decoded), &forbidden) != MPMD_OK) {
        send_text(fd, 400, "bad request\n", head_only, 0, c, 0);
        return -1;
    }
    int rc;
    if (forbidden) {
        rc = send_text(fd, 403, "forbidden\n", head_only, *keep, c, remaining);
    } else if (!strcmp(decoded, "/server-status")) {
        rc = serve_status(fd, ctx, head_only, *keep, remaining);
    } else if (!strncmp(decoded, "/app/", 5)) {
        long v = 0;
        if (!strcmp(decoded, "/app/sleep")) {
            /* An application request: hold kb KiB of touched memory (optional) for ms. */
            long kb = query_num(rq.target, "kb");
            char *mem = kb > 0 && kb <= 1024 * 1024 ? malloc((size_t)kb * 1024) : NULL;
            if (mem)
                for (long i = 0; i < kb * 1024; i += 4096) mem[i] = (char)i;
            v = query_num(rq.target, "ms");
            struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
            while (v > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
            free(mem);
        } else if (!strcmp(decoded, "/app/cpu")) {
            burn_cpu(query_num(rq.target, "ms"));
        } else if (!strcmp(decoded, "/app/alloc")) {
            v = query_num(rq.target, "kb");
            if (v > 0 && v <= 1024 * 1024) {
                char *mem = malloc((size_t)v * 1024);
                if (mem) {
                    for (long i = 0; i < v * 1024; i += 4096) mem[i] = (char)i;
                    free(mem);
                }
            }
        } else {
            rc = send_text(fd, 404, "not found\n", head_only, *keep, c, remaining);
            return rc == MPMD_OK ? 1 : -1;
        }
        rc = send_text(fd, 200, "ok\n", head_only, *keep, c, remaining);
    } else {
        rc = serve_file(fd, ctx, decoded, head_only, *keep, remaining, &status);
    }
    return rc == MPMD_OK ? 1 : -1;
}

void http_socket_setup(int fd) {
    /* As httpd does: the head and the body go out in separate writes, and Nagle's
     * algorithm with the client's delayed ACK would hold the second for ~40 ms. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int http_serve(int fd, const struct http_ctx *ctx, int proc, int thread, int *unused) {
    (void)unused;
    int served = 0, keep = 1;
    while (keep && !mpmd_stop) {
        if (served) sb_set(ctx->sb, proc, thread, SLOT_KEEPALIVE);
        int r = http_handle_one(fd, ctx, served, &keep);
        if (r <= 0) break;
        served++;
        sb_set(ctx->sb, proc, thread, SLOT_BUSY);
    }
    return served;
}
