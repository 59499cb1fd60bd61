/* http.c: connections. Enough HTTP/1.1 for real load generators: GET/HEAD of
 * static files under DocumentRoot (mmap + writev, or sendfile with
 * EnableSendfile On, as httpd), keep-alive for 1.0 and 1.1, pipelining, the
 * status page, synthetic application endpoints and the access log. The head
 * itself is parsed in request.c. */
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
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BODY_MAX (1024 * 1024)  /* a GET body we read and discard; more gets 413 */
#define MMAP_LIMIT (4 * 1024 * 1024) /* APR_MMAP_LIMIT: larger files are read in chunks */

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

/* The head and (a small) body in one writev, as httpd's core output filter does. */
static int write_two(int fd, const char *a, size_t alen, const char *b, size_t blen) {
    struct iovec iov[2] = {{(void *)a, alen}, {(void *)b, blen}};
    int cnt = blen ? 2 : 1;
    struct iovec *v = iov;
    while (cnt) {
        ssize_t n = writev(fd, v, cnt);
        if (n < 0) {
            if (errno == EINTR) continue;
            return MPMD_ERR;
        }
        while (cnt && (size_t)n >= v->iov_len) { n -= (ssize_t)v->iov_len; v++; cnt--; }
        if (cnt) { v->iov_base = (char *)v->iov_base + n; v->iov_len -= (size_t)n; }
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
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

/* One response being answered: what the access log and the head need. */
struct reply {
    int status, keep, remaining, head_only;
    long bytes;
};

static int format_head(char *head, size_t cap, struct reply *r, long length, const char *type,
                       const struct conf *c) {
    if (mpmd_graceful) r->keep = 0; /* told to stop while serving: as httpd decides at the head */
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    int n = snprintf(head, cap,
                     "HTTP/1.1 %d %s\r\nDate: %s\r\nServer: " MPMD_VERSION "\r\nContent-Length: %ld\r\n"
                     "Content-Type: %s\r\n%s",
                     r->status, reason(r->status), date, length, type,
                     r->status == 405 || r->status == 501 ? "Allow: GET, HEAD\r\n" : "");
    if (c->run_token[0])
        n += snprintf(head + n, cap - (size_t)n, "X-Apachetune-Run: %s\r\n", c->run_token);
    if (r->keep)
        n += snprintf(head + n, cap - (size_t)n, "Connection: Keep-Alive\r\nKeep-Alive: timeout=%d, max=%d\r\n\r\n",
                      c->keepalive_timeout_ms / 1000, r->remaining);
    else
        n += snprintf(head + n, cap - (size_t)n, "Connection: close\r\n\r\n");
    return n;
}

static int send_text(int fd, struct reply *r, const char *body, const struct conf *c) {
    char head[512];
    size_t len = strlen(body);
    int n = format_head(head, sizeof(head), r, (long)len, "text/plain; charset=utf-8", c);
    r->bytes = r->head_only ? 0 : (long)len;
    return write_two(fd, head, (size_t)n, body, r->head_only ? 0 : len);
}

static int send_error(int fd, struct reply *r, int status, const struct conf *c) {
    char body[128];
    r->status = status;
    snprintf(body, sizeof(body), "%d %s\n", status, reason(status));
    return send_text(fd, r, body, c);
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
        for (int i = 0; i < 10000; i++) x = (x ^ (unsigned long)i) + 1; /* reads x: no "unused" warning */
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

/* Spend `us` microseconds of this thread's CPU time (RequestCPU): CPU time, not
 * wall time, so that a preempted request still costs what it should. */
static void spend_cpu(int us) {
    if (us <= 0) return;
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    volatile uint32_t x = 2463534242u;
    do {
        for (int i = 0; i < 256; i++) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

static int serve_status(int fd, const struct http_ctx *ctx, struct reply *r) {
    char body[8192];
    int busy, idle, procs;
    sb_count(ctx->sb, &busy, &idle, &procs);
    int n = snprintf(body, sizeof(body),
                     "Total Accesses: %llu\nTotal kBytes: 0\nUptime: %lld\nBusyWorkers: %d\nIdleWorkers: %d\n"
                     "Processes: %d\nConnsTotal: %llu\nConnsClosedBusy: %llu\nGeneration: %d\nServerMPM: %s\n"
                     "Scoreboard: ",
                     (unsigned long long)__atomic_load_n(&ctx->sb->g->total_accesses, __ATOMIC_RELAXED),
                     (long long)(time(NULL) - ctx->sb->g->start_time), busy, idle, procs,
                     (unsigned long long)__atomic_load_n(&ctx->sb->g->total_connections, __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&ctx->sb->g->busy_closed, __ATOMIC_RELAXED),
                     ctx->sb->g->generation,
                     ctx->conf->mpm == MPM_PREFORK ? "prefork" : ctx->conf->mpm == MPM_WORKER ? "worker" : "event");
    for (int p = 0; p < ctx->sb->server_limit && n < (int)sizeof(body) - 2; p++)
        for (int t = 0; t < ctx->sb->thread_limit && n < (int)sizeof(body) - 2; t++) {
            unsigned char s = ctx->sb->procs[p].pid ? ctx->sb->slots[p * ctx->sb->thread_limit + t] : SLOT_DEAD;
            body[n++] = s == SLOT_IDLE ? '_' : s == SLOT_BUSY ? 'W' : s == SLOT_KEEPALIVE ? 'K' : '.';
        }
    body[n++] = '\n';
    body[n] = 0;
    r->status = 200;
    return send_text(fd, r, body, ctx->conf);
}

static const char *content_type(const char *path) {
    const char *dot = strrchr(path, '.');
    if (!dot) return "application/octet-stream";
    if (!strcmp(dot, ".html") || !strcmp(dot, ".htm")) return "text/html";
    if (!strcmp(dot, ".css")) return "text/css";
    if (!strcmp(dot, ".js")) return "application/javascript";
    if (!strcmp(dot, ".txt")) return "text/plain";
    if (!strcmp(dot, ".json")) return "application/json";
    if (!strcmp(dot, ".png")) return "image/png";
    if (!strcmp(dot, ".jpg") || !strcmp(dot, ".jpeg")) return "image/jpeg";
    return "application/octet-stream";
}

static int send_body(int fd, int file, off_t size, const char *head, size_t hlen, const struct conf *c) {
    if (c->enable_sendfile) {
        if (write_all(fd, head, hlen) != MPMD_OK) return MPMD_ERR;
        off_t off = 0;
        while (off < size) {
            ssize_t n = sendfile(fd, file, &off, (size_t)(size - off));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return MPMD_ERR;
        }
        return MPMD_OK;
    }
    if (size > 0 && size <= MMAP_LIMIT) {
        void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, file, 0);
        if (m != MAP_FAILED) {
            int rc = write_two(fd, head, hlen, m, (size_t)size);
            munmap(m, (size_t)size);
            return rc;
        }
    }
    if (write_all(fd, head, hlen) != MPMD_OK) return MPMD_ERR;
    char chunk[16384];
    for (off_t off = 0; off < size;) {
        ssize_t n = pread(file, chunk, sizeof(chunk), off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || write_all(fd, chunk, (size_t)n) != MPMD_OK) return MPMD_ERR;
        off += n;
    }
    return MPMD_OK;
}

static int serve_file(int fd, const struct http_ctx *ctx, const char *decoded, struct reply *r) {
    const struct conf *c = ctx->conf;
    char path[PATH_MAX * 2], real[PATH_MAX];
    snprintf(path, sizeof(path), "%s%s", c->document_root, decoded);
    struct stat st;
    int index = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    if (index) { /* the directory's index (mod_dir) */
        size_t len = strlen(path);
        if (len + sizeof("/index.html") > sizeof(path)) return send_error(fd, r, 404, c);
        memcpy(path + len, "/index.html", sizeof("/index.html"));
    }
    /* The containment check runs on the final file, index name included: a symlinked
     * directory leading out of DocumentRoot must not serve the index (or anything) there. */
    if (!realpath(path, real)) /* a directory without an index, and no autoindex: 403 */
        return send_error(fd, r, errno == EACCES || (index && errno == ENOENT) ? 403 : 404, c);
    size_t rootlen = strlen(c->document_root);
    if (strncmp(real, c->document_root, rootlen) || (real[rootlen] && real[rootlen] != '/'))
        return send_error(fd, r, 403, c);
    int file = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (file < 0 || fstat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (file >= 0) close(file);
        return send_error(fd, r, file < 0 && errno == EACCES ? 403 : 404, c);
    }
    r->status = 200;
    char head[512];
    int n = format_head(head, sizeof(head), r, (long)st.st_size, content_type(real), c);
    int rc = r->head_only ? write_all(fd, head, (size_t)n) : send_body(fd, file, st.st_size, head, (size_t)n, c);
    r->bytes = r->head_only ? 0 : (long)st.st_size;
    close(file);
    return rc;
}

/* Wait until fd is readable; 0 timeout (or stopping), 1 readable, -1 error.
 * Polls in 100 ms slices: only one thread of a process receives SIGTERM, and
 * the others must notice the stop without waiting out KeepAliveTimeout. A
 * graceful stop does not end a wait: a keep-alive client's next request is
 * answered (with Connection: close) instead of racing a close against it. */
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

/* mod_reqtimeout's clock for one stage (the head, or a body): the stage must be read within
 * `ms` of its start, extended by 1 s for every `rate` bytes received, up to `max_ms` (0: no
 * cap). A client trickling bytes is cut when the clock runs out, however often it sends. */
struct read_clock { int64_t start; int ms, max_ms, rate; long bytes; };

static void clock_start(struct read_clock *k, int ms, int max_ms, int rate) {
    *k = (struct read_clock){mpmd_now_ms(), ms, max_ms, rate, 0};
}

/* Milliseconds left; INT64_MAX when the stage has no limit (ms 0). */
static int64_t clock_left(const struct read_clock *k) {
    if (k->ms <= 0) return INT64_MAX;
    int64_t allowed = k->ms + (k->rate > 0 ? (int64_t)k->bytes * 1000 / k->rate : 0);
    if (k->max_ms > 0 && allowed > k->max_ms) allowed = k->max_ms;
    return k->start + allowed - mpmd_now_ms();
}

/* How long the next wait for data may be: Timeout, or less when the stage's clock says so.
 * 0 when the clock has run out. */
static int next_wait_ms(const struct read_clock *k, const struct conf *c) {
    int64_t left = clock_left(k);
    if (left <= 0) return 0;
    return left < c->timeout_ms ? (int)left : c->timeout_ms;
}

/* Read until the buffer holds a whole head. Returns its length, 0 when the
 * client closed (or stayed silent) before sending a byte, or -status. A new
 * connection's head runs on mod_reqtimeout's header clock from the start;
 * between keep-alive requests the wait for the first byte is KeepAliveTimeout
 * and the clock starts at that byte (408 when it runs out with part of a head
 * read), each wait still bounded by Timeout. */
static long read_head(struct conn *cn, const struct conf *c) {
    struct read_clock k = {0};
    int started = 0;
    if (cn->served == 0) { /* a new connection: mod_reqtimeout's header clock runs from the first
                            * read (httpd 2.4.71: a silent connection closed 20 s after accept) */
        clock_start(&k, c->header_ms, c->header_max_ms, c->header_rate);
        started = 1;
    }
    for (;;) {
        if (cn->scan.pos == 0) { /* empty lines before a request line are ignored */
            size_t skip = http_skip_blank_lines(cn->buf, cn->have);
            if (skip) {
                memmove(cn->buf, cn->buf + skip, cn->have - skip);
                cn->have -= skip;
            }
        }
        long len = http_find_head(cn->buf, cn->have, c, &cn->scan);
        if (len != 0) return len;
        /* Read first, wait only when nothing is there (as httpd: one syscall when the
         * request has already arrived, which is the usual case). */
        ssize_t got = recv(cn->fd, cn->buf + cn->have, HEAD_MAX - cn->have, MSG_DONTWAIT);
        if (got > 0) {
            if (!started) clock_start(&k, c->header_ms, c->header_max_ms, c->header_rate);
            started = 1;
            k.bytes += got;
            cn->have += (size_t)got;
            continue;
        }
        if (got == 0) return cn->have == 0 ? 0 : -400;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return cn->have == 0 ? 0 : -400;
        int wait_ms;
        if (!started) { /* (only between keep-alive requests: a new connection's clock runs from the start) */
            wait_ms = c->keepalive_timeout_ms;
        } else {
            wait_ms = next_wait_ms(&k, c);
            if (wait_ms <= 0) return cn->have == 0 ? 0 : -408; /* nothing sent: closed, no response */
        }
        int r = wait_readable(cn->fd, wait_ms);
        if (r == 0) return cn->have == 0 ? 0 : -408;
        if (r < 0) return 0;
    }
}

/* Take `n` bytes off the front of the buffer (the answered request). */
static void consume(struct conn *cn, size_t n) {
    memmove(cn->buf, cn->buf + n, cn->have - n);
    cn->have -= n;
    cn->scan = (struct head_scan){0, 0, 0};
}

/* Read and drop a request body of `n` bytes (some may be buffered already), on
 * mod_reqtimeout's body clock: a body trickled slower than it allows is cut. */
static int discard_body(struct conn *cn, long n, const struct conf *c) {
    long inbuf = (long)cn->have < n ? (long)cn->have : n;
    consume(cn, (size_t)inbuf);
    n -= inbuf;
    struct read_clock k;
    clock_start(&k, c->body_ms, c->body_max_ms, c->body_rate);
    while (n > 0) {
        char sink[4096];
        int wait_ms = next_wait_ms(&k, c);
        if (wait_ms <= 0 || wait_readable(cn->fd, wait_ms) <= 0) return MPMD_ERR;
        ssize_t got = recv(cn->fd, sink, sizeof(sink) < (size_t)n ? sizeof(sink) : (size_t)n, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return MPMD_ERR;
        n -= got;
        k.bytes += got;
    }
    return MPMD_OK;
}

/* mod_log_config's common format, one write() per request (BufferedLogs Off). */
static void access_log(const struct conf *c, const struct conn *cn, const char *line, const struct reply *r) {
    if (c->access_log_fd < 0) return;
    char when[64], entry[1024];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof(when), "%d/%b/%Y:%H:%M:%S %z", &tm);
    int n = snprintf(entry, sizeof(entry), "%s - - [%s] \"%.800s\" %d %ld\n", cn->peer, when, line, r->status,
                     r->bytes);
    if (n > (int)sizeof(entry) - 1) { n = (int)sizeof(entry) - 1; entry[n - 1] = '\n'; }
    ssize_t ignored = write(c->access_log_fd, entry, (size_t)n);
    (void)ignored;
}

static int is_known_method(const char *m) {
    static const char *const known[] = {"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (!strcmp(m, known[i])) return 1;
    return 0;
}

/* kb KiB (1 GiB at most) with every page touched, so it counts in the process's memory;
 * NULL for none. */
static char *touched_alloc(long kb) {
    char *mem = kb > 0 && kb <= 1024 * 1024 ? malloc((size_t)kb * 1024) : NULL;
    if (mem)
        for (long i = 0; i < kb * 1024; i += 4096) mem[i] = (char)i;
    return mem;
}

static int serve_app(int fd, const char *decoded, const char *target, struct reply *r, const struct conf *c) {
    if (!strcmp(decoded, "/app/sleep")) {
        /* An application request: hold kb KiB of touched memory (optional) for ms. */
        char *mem = touched_alloc(query_num(target, "kb"));
        long v = query_num(target, "ms");
        struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
        while (v > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
        free(mem);
    } else if (!strcmp(decoded, "/app/cpu")) {
        burn_cpu(query_num(target, "ms"));
    } else if (!strcmp(decoded, "/app/alloc")) {
        free(touched_alloc(query_num(target, "kb")));
    } else {
        return send_error(fd, r, 404, c);
    }
    r->status = 200;
    return send_text(fd, r, "ok\n", c);
}

int http_handle_one(struct conn *cn, const struct http_ctx *ctx, int *keep) {
    const struct conf *c = ctx->conf;
    struct reply r = {0};
    *keep = 0;
    long len = read_head(cn, c);
    if (len == 0) return 0;
    __atomic_fetch_add(&ctx->sb->g->total_accesses, 1, __ATOMIC_RELAXED);
    if (len < 0) { /* 408, 414, 431, 400: answer and close */
        send_error(cn->fd, &r, (int)-len, c);
        access_log(c, cn, "-", &r);
        return -1;
    }
    char line[512]; /* the request line as sent, for the log */
    size_t ll = 0;
    while (ll < (size_t)len && cn->buf[ll] != '\r' && cn->buf[ll] != '\n') ll++;
    snprintf(line, sizeof(line), "%.*s", (int)(ll < sizeof(line) ? ll : sizeof(line) - 1), cn->buf);
    for (char *p = line; *p; p++) /* a log line stays one line, with its quotes balanced */
        if ((unsigned char)*p < 0x20 || *p == '"' || *p == 0x7f) *p = '?';
    struct request rq;
    int status = http_parse_head(cn->buf, (size_t)len, c, &rq);
    if (status) {
        send_error(cn->fd, &r, status, c);
        access_log(c, cn, line, &r);
        return -1;
    }
    /* A connection's first request also pays what httpd spends setting a connection up and
     * tearing it down (ConnectionCPU): its pools, connection hooks and lingering close. */
    spend_cpu(c->request_cpu_us + (cn->served == 0 ? c->connection_cpu_us : 0));
    r.head_only = !strcmp(rq.method, "HEAD");
    r.remaining = c->max_keepalive_requests ? c->max_keepalive_requests - cn->served - 1 : 100;
    /* The head's pointers are used below: copy what is needed before the buffer moves. */
    char target[8192 + 1];
    snprintf(target, sizeof(target), "%s", rq.target);
    if (rq.content_length > BODY_MAX) {
        send_error(cn->fd, &r, 413, c);
        access_log(c, cn, line, &r);
        return -1;
    }
    consume(cn, (size_t)len);
    if (rq.content_length && discard_body(cn, rq.content_length, c) != MPMD_OK) return -1;
    *keep = c->keepalive && !rq.conn_close && (rq.minor == 1 || rq.conn_keepalive) && !rq.chunked &&
            (c->max_keepalive_requests == 0 || cn->served + 1 < c->max_keepalive_requests) &&
            !mpmd_graceful; /* stopping: say so in this response, the client reconnects (and if
                             * told while the request runs, format_head says it) */
    r.keep = *keep; /* a chunked body is never read: closing keeps it from being taken for a request */
    char decoded[PATH_MAX];
    int dotdot;
    int rc;
    if (strcmp(rq.method, "GET") && !r.head_only) {
        rc = send_error(cn->fd, &r, is_known_method(rq.method) ? 405 : 501, c);
    } else if (!strcmp(target, "*") || http_decode_path(target, decoded, sizeof(decoded), &dotdot) != MPMD_OK) {
        r.keep = *keep = 0;
        rc = send_error(cn->fd, &r, 400, c);
    } else if (dotdot) {
        rc = send_error(cn->fd, &r, 403, c);
    } else if (!strcmp(decoded, "/server-status")) {
        rc = serve_status(cn->fd, ctx, &r);
    } else if (!strncmp(decoded, "/app/", 5)) {
        rc = serve_app(cn->fd, decoded, target, &r, c);
    } else {
        rc = serve_file(cn->fd, ctx, decoded, &r);
    }
    access_log(c, cn, line, &r);
    *keep = *keep && r.keep;
    cn->served++;
    return rc == MPMD_OK ? 1 : -1;
}

void http_conn_init(struct conn *cn, int fd, int served) {
    cn->fd = fd;
    cn->served = served;
    cn->have = 0;
    cn->scan = (struct head_scan){0, 0, 0};
    strcpy(cn->peer, "-");
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, cn->peer, sizeof(cn->peer));
        else if (ss.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, cn->peer, sizeof(cn->peer));
    }
}

int http_serve(struct conn *cn, const struct http_ctx *ctx, int proc, int thread) {
    int keep = 1, r = 0;
    while (keep && !mpmd_stop) {
        if (cn->served) sb_set(ctx->sb, proc, thread, SLOT_KEEPALIVE);
        r = http_handle_one(cn, ctx, &keep);
        if (r <= 0) break;
        sb_set(ctx->sb, proc, thread, SLOT_BUSY);
    }
    return r != 0; /* the server ended it (a response was the last word): linger */
}

/* httpd's lingering close (ap_lingering_close): shut our side, then read and drop
 * what the client still sends until it closes, for up to 2 s (SECONDS_TO_LINGER).
 * Closing with unread bytes would send a reset, and the client could lose the
 * response it has not read yet. prefork and worker linger in the worker; event
 * parks the connection and lets the listener finish it (threaded.c). */
void http_lingering_close(int fd) {
    if (shutdown(fd, SHUT_WR) == 0) {
        char sink[512];
        int64_t deadline = mpmd_now_ms() + 2000;
        for (;;) {
            ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
            if (n > 0) continue;
            int left = (int)(deadline - mpmd_now_ms());
            if (left <= 0 || wait_readable(fd, left) <= 0) break;
        }
    }
    close(fd);
}
