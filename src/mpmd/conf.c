/* conf.c: the directive file (one "Name value" per line, # comments), with
 * httpd 2.4's names, defaults and start-up adjustments. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* RequestCPU (mpmd's own directive, microseconds of CPU per request): what
 * httpd spends per request in its hooks, filters and per-directory merges,
 * which mpmd does not have; ConnectionCPU likewise per connection. apachetune
 * measures both where it runs (validate/calibration.py) and passes them; this
 * default is what a loaded run here measured, for mpmd started by hand.
 * RequestCPU 0 and ConnectionCPU 0 measure mpmd alone. */
#define REQUEST_CPU_DEFAULT_US 18

int conf_defaults(struct conf *c, enum mpm_kind mpm) {
    memset(c, 0, sizeof(*c));
    c->mpm = mpm;
    if (mpm == MPM_PREFORK) {
        c->start_servers = 5;
        c->server_limit = 256;
        c->max_request_workers = 256;
        c->threads_per_child = 1;
        c->thread_limit = 1;
    } else {
        c->start_servers = 3;
        c->server_limit = 16;
        c->thread_limit = 64;
        c->threads_per_child = 25;
        c->max_request_workers = 400;
    }
    c->min_spare_servers = 5;
    c->max_spare_servers = 10;
    c->min_spare_threads = 75;
    c->max_spare_threads = 250;
    c->keepalive = 1;
    c->keepalive_timeout_ms = 5000;
    c->max_keepalive_requests = 100;
    c->max_mem_free_kib = 2048;
    c->buckets = 1;
    c->timeout_ms = 60000;
    c->listen_backlog = 511;
    c->defer_accept = 1; /* httpd's default AcceptFilter on Linux: http data */
    c->async_factor = 2.0;
    strcpy(c->listen_host, "127.0.0.1");
    c->listen_port = 8080;
    c->enable_sendfile = 0;
    c->limit_request_line = 8190;
    c->limit_request_fieldsize = 8190;
    c->limit_request_fields = 100;
    c->access_log_fd = -1;
    c->request_cpu_us = REQUEST_CPU_DEFAULT_US;
    /* mod_reqtimeout's defaults: header=20-40,MinRate=500 body=20,MinRate=500 */
    c->header_ms = 20000;
    c->header_max_ms = 40000;
    c->header_rate = 500;
    c->body_ms = 20000;
    c->body_max_ms = 0;
    c->body_rate = 500;
    return MPMD_OK;
}

static int parse_int(const char *v, int *out) {
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < -2147483647L || n > 2147483647L) return MPMD_ERR;
    *out = (int)n;
    return MPMD_OK;
}

/* Seconds, or with a unit like httpd's timeouts: 500ms. Checked: NaN, infinity and negative
 * values are refused; a finite value beyond what poll() can wait (INT_MAX ms, about 24.8
 * days) is clamped there, as httpd accepts such timeouts (it keeps them as 64-bit
 * microseconds), so no conversion overflows. */
static int parse_time_ms(const char *v, int *out) {
    char *end;
    errno = 0;
    double n = strtod(v, &end);
    if (end == v || !isfinite(n) || n < 0) return MPMD_ERR;
    double ms;
    if (!*end || !strcasecmp(end, "s")) ms = n * 1000.0;
    else if (!strcasecmp(end, "ms")) ms = n;
    else return MPMD_ERR;
    *out = ms >= (double)INT_MAX ? INT_MAX : (int)ms;
    return MPMD_OK;
}

/* One "stage=timeout[-maxtimeout][,MinRate=rate]" of RequestReadTimeout (mod_reqtimeout's
 * syntax; the handshake stage is accepted and ignored: mpmd has no TLS). */
static int set_read_timeout(struct conf *c, const char *value, char *err) {
    char buf[256];
    size_t n = strlen(value);
    if (n >= sizeof(buf)) {
        snprintf(err, MPMD_ERR_LEN, "RequestReadTimeout: value too long");
        return MPMD_ERR;
    }
    memcpy(buf, value, n + 1);
    for (char *save = NULL, *item = strtok_r(buf, " \t", &save); item; item = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(item, '=');
        int *ms = NULL, *max_ms = NULL, *rate = NULL;
        if (eq && !strncasecmp(item, "header", (size_t)(eq - item)) && eq - item == 6) {
            ms = &c->header_ms; max_ms = &c->header_max_ms; rate = &c->header_rate;
        } else if (eq && !strncasecmp(item, "body", (size_t)(eq - item)) && eq - item == 4) {
            ms = &c->body_ms; max_ms = &c->body_max_ms; rate = &c->body_rate;
        } else if (eq && !strncasecmp(item, "handshake", (size_t)(eq - item)) && eq - item == 9) {
            continue;
        } else {
            snprintf(err, MPMD_ERR_LEN, "RequestReadTimeout: unknown parameter '%.60s' (expected "
                     "header=, body= or handshake=)", item);
            return MPMD_ERR;
        }
        char *end;
        long lo = strtol(eq + 1, &end, 10), hi = 0, r = 0;
        if (end == eq + 1 || lo < 0 || lo > 2000000) goto bad;
        if (*end == '-') {
            char *p = end + 1;
            hi = strtol(p, &end, 10);
            if (end == p || hi < lo || hi > 2000000) goto bad;
        }
        if (!strncasecmp(end, ",MinRate=", 9)) {
            char *p = end + 9;
            r = strtol(p, &end, 10);
            if (end == p || r < 1 || r > 1000000000) goto bad;
        }
        if (*end) goto bad;
        *ms = (int)lo * 1000;
        *max_ms = (int)hi * 1000;
        *rate = (int)r;
        continue;
    bad:
        snprintf(err, MPMD_ERR_LEN, "RequestReadTimeout: bad value '%.60s' (expected "
                 "timeout[-maxtimeout][,MinRate=rate], in seconds and bytes a second)", item);
        return MPMD_ERR;
    }
    return MPMD_OK;
}

struct int_directive { const char *name; size_t off; int min; };
#define OFF(f) offsetof(struct conf, f)
static const struct int_directive ints[] = {
    {"StartServers", OFF(start_servers), 0}, {"ServerLimit", OFF(server_limit), 0},
    {"ThreadLimit", OFF(thread_limit), 0}, {"ThreadsPerChild", OFF(threads_per_child), 0},
    {"MaxRequestWorkers", OFF(max_request_workers), 0}, {"MaxClients", OFF(max_request_workers), 0},
    {"MinSpareServers", OFF(min_spare_servers), 0}, {"MaxSpareServers", OFF(max_spare_servers), 0},
    {"MinSpareThreads", OFF(min_spare_threads), 0}, {"MaxSpareThreads", OFF(max_spare_threads), 0},
    {"MaxConnectionsPerChild", OFF(max_connections_per_child), 0},
    {"MaxRequestsPerChild", OFF(max_connections_per_child), 0},
    {"MaxKeepAliveRequests", OFF(max_keepalive_requests), 0}, {"ListenBacklog", OFF(listen_backlog), 1},
    {"LimitRequestLine", OFF(limit_request_line), 1}, {"LimitRequestFieldSize", OFF(limit_request_fieldsize), 1},
    {"LimitRequestFields", OFF(limit_request_fields), 0}, {"RequestCPU", OFF(request_cpu_us), 0},
    {"ConnectionCPU", OFF(connection_cpu_us), 0}, {"MaxMemFree", OFF(max_mem_free_kib), 0},
    {"ListenCoresBucketsRatio", OFF(buckets_ratio), 1},
};

struct flag_directive { const char *name; size_t off; }; /* On or Off */
static const struct flag_directive flags[] = {
    {"KeepAlive", OFF(keepalive)}, {"EnableSendfile", OFF(enable_sendfile)},
};

static int set(struct conf *c, const char *name, const char *value, char *err) {
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        if (strcasecmp(name, ints[i].name)) continue;
        int n;
        if (parse_int(value, &n) != MPMD_OK || n < ints[i].min) {
            snprintf(err, MPMD_ERR_LEN, "%.60s: invalid value '%.80s' (expected a whole number >= %d)", name, value,
                     ints[i].min);
            return MPMD_ERR;
        }
        *(int *)((char *)c + ints[i].off) = n;
        return MPMD_OK;
    }
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        if (strcasecmp(name, flags[i].name)) continue;
        int on = !strcasecmp(value, "on");
        if (!on && strcasecmp(value, "off")) {
            snprintf(err, MPMD_ERR_LEN, "%s must be On or Off, not '%.80s'", flags[i].name, value);
            return MPMD_ERR;
        }
        *(int *)((char *)c + flags[i].off) = on;
        return MPMD_OK;
    }
    if (!strcasecmp(name, "CustomLog") || !strcasecmp(name, "TransferLog")) {
        /* The path (the format nickname after it is ignored: the common format is written). */
        size_t n = strcspn(value, " \t");
        if (n == 0 || n >= sizeof(c->access_log)) {
            snprintf(err, MPMD_ERR_LEN, "%.60s: expected a file path", name);
            return MPMD_ERR;
        }
        memcpy(c->access_log, value, n);
        c->access_log[n] = 0;
        return MPMD_OK;
    }
    if (!strcasecmp(name, "KeepAliveTimeout") || !strcasecmp(name, "Timeout")) {
        int ms;
        if (parse_time_ms(value, &ms) != MPMD_OK) {
            snprintf(err, MPMD_ERR_LEN, "%.60s: invalid time '%.80s'", name, value);
            return MPMD_ERR;
        }
        if (!strcasecmp(name, "Timeout")) c->timeout_ms = ms; else c->keepalive_timeout_ms = ms;
        return MPMD_OK;
    }
    if (!strcasecmp(name, "RequestReadTimeout")) return set_read_timeout(c, value, err);
    if (!strcasecmp(name, "AcceptFilter")) { /* "protocol filter": only http's matters here */
        char proto[16], filter[32], rest[2];
        if (sscanf(value, "%15s %31s %1s", proto, filter, rest) != 2) {
            snprintf(err, MPMD_ERR_LEN, "AcceptFilter: expected a protocol and a filter, got '%.80s'", value);
            return MPMD_ERR;
        }
        if (!strcasecmp(proto, "http")) c->defer_accept = strcasecmp(filter, "none") != 0;
        return MPMD_OK;
    }
    if (!strcasecmp(name, "RunToken")) {
        size_t n = strlen(value);
        if (n == 0 || n >= sizeof(c->run_token) || strpbrk(value, " \t\r\n")) {
            snprintf(err, MPMD_ERR_LEN, "RunToken: expected one word of at most %zu bytes", sizeof(c->run_token) - 1);
            return MPMD_ERR;
        }
        memcpy(c->run_token, value, n + 1);
        return MPMD_OK;
    }
    if (!strcasecmp(name, "AsyncRequestWorkerFactor")) {
        char *end;
        double f = strtod(value, &end);
        if (end == value || *end || !(f > 0) || !isfinite(f)) {
            snprintf(err, MPMD_ERR_LEN, "AsyncRequestWorkerFactor argument must be a positive number");
            return MPMD_ERR;
        }
        c->async_factor = f;
        return MPMD_OK;
    }
    if (!strcasecmp(name, "Listen")) {
        const char *colon = strrchr(value, ':');
        int port;
        if (!colon) { colon = value - 1; strcpy(c->listen_host, "127.0.0.1"); }
        else {
            size_t n = (size_t)(colon - value);
            if (n == 0 || n >= sizeof(c->listen_host)) { snprintf(err, MPMD_ERR_LEN, "Listen: bad address '%.80s'", value); return MPMD_ERR; }
            memcpy(c->listen_host, value, n);
            c->listen_host[n] = 0;
        }
        if (parse_int(colon + 1, &port) != MPMD_OK || port < 0 || port > 65535) {
            snprintf(err, MPMD_ERR_LEN, "Listen: bad port in '%.80s'", value);
            return MPMD_ERR;
        }
        c->listen_port = port;
        return MPMD_OK;
    }
    if (!strcasecmp(name, "DocumentRoot")) {
        if (!realpath(value, c->document_root)) {
            snprintf(err, MPMD_ERR_LEN, "DocumentRoot '%.80s': %s", value, strerror(errno));
            return MPMD_ERR;
        }
        return MPMD_OK;
    }
    snprintf(err, MPMD_ERR_LEN, "unknown directive '%.80s'", name);
    return MPMD_ERR;
}

/* mpmd's line limit: a longer line is refused, never split into two directives. */
#define CONF_LINE_MAX 8191

int conf_load(struct conf *c, const char *path, char *err) {
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, MPMD_ERR_LEN, "%.150s: %.80s", path, strerror(errno)); return MPMD_ERR; }
    char line[CONF_LINE_MAX + 2];
    int lineno = 0, rc = MPMD_OK;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        size_t len = strlen(line), content = len && line[len - 1] == '\n' ? len - 1 : len;
        if (content > CONF_LINE_MAX || (content == len && !feof(f))) {
            snprintf(err, MPMD_ERR_LEN, "%.100s:%d: line too long (more than %d bytes)", path, lineno,
                     CONF_LINE_MAX);
            rc = MPMD_ERR;
            break;
        }
        char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (!*p || *p == '#') continue;
        char *name = p;
        while (*p && !isspace((unsigned char)*p)) p++;
        if (*p) *p++ = 0;
        while (isspace((unsigned char)*p)) p++;
        char *value = p;
        size_t n = strlen(value);
        while (n && isspace((unsigned char)value[n - 1])) value[--n] = 0;
        if (n >= 2 && value[0] == '"' && value[n - 1] == '"') { value[n - 1] = 0; value++; }
        char msg[MPMD_ERR_LEN];
        if (set(c, name, value, msg) != MPMD_OK) {
            snprintf(err, MPMD_ERR_LEN, "%.100s:%d: %.140s", path, lineno, msg);
            rc = MPMD_ERR;
            break;
        }
    }
    fclose(f);
    return rc;
}

/* httpd's start-up checks, in its order (see apachetune's docs/mpm-model.md). */
/* Listener buckets (httpd's listen.c ap_duplicate_listeners: online cores / ratio, when above
 * 1) and what the MPMs' run functions raise for them ("don't thrash"; prefork.c, worker.c,
 * event.c): every bucket gets a process to start, and spares enough for one a bucket. */
static void buckets_finish(struct conf *c) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int b = c->buckets_ratio > 0 && cores / c->buckets_ratio > 1 ? (int)(cores / c->buckets_ratio) : 1;
    if (b > MPMD_MAX_BUCKETS) b = MPMD_MAX_BUCKETS;
    c->buckets = b;
    if (b == 1) return;
    if (c->mpm == MPM_PREFORK) {
        if (c->max_request_workers < b) c->max_request_workers = b;
        if (c->server_limit < c->max_request_workers) c->server_limit = c->max_request_workers;
        if (c->start_servers < b) c->start_servers = b;
        if (c->min_spare_servers < b) c->min_spare_servers = b;
        if (c->max_spare_servers < c->min_spare_servers + b) c->max_spare_servers = c->min_spare_servers + b;
        return;
    }
    int tpc = c->threads_per_child;
    if (c->max_request_workers < b * tpc) c->max_request_workers = b * tpc;
    if (c->server_limit < c->max_request_workers / tpc) c->server_limit = c->max_request_workers / tpc;
    if (c->start_servers < b) c->start_servers = b;
    if (c->min_spare_threads < tpc * (b - 1) + b) c->min_spare_threads = tpc * (b - 1) + b;
    if (c->max_spare_threads < c->min_spare_threads + (tpc + 1) * b)
        c->max_spare_threads = c->min_spare_threads + (tpc + 1) * b;
}

int conf_finish(struct conf *c, char *err) {
    if (!c->document_root[0]) { snprintf(err, MPMD_ERR_LEN, "DocumentRoot is required"); return MPMD_ERR; }
    /* The head buffer bounds a line; LimitRequestFields 0 means unlimited, as in httpd. */
    if (c->limit_request_line > HEAD_MAX - 2) c->limit_request_line = HEAD_MAX - 2;
    if (c->limit_request_fieldsize > HEAD_MAX - 2) c->limit_request_fieldsize = HEAD_MAX - 2;
    if (c->limit_request_fields == 0) c->limit_request_fields = INT_MAX;
    if (c->server_limit < 1) c->server_limit = 1;
    if (c->mpm == MPM_PREFORK) {
        if (c->server_limit > 200000) c->server_limit = 200000;
        if (c->max_request_workers > c->server_limit) c->max_request_workers = c->server_limit;
        if (c->max_request_workers < 1) c->max_request_workers = 1;
        c->threads_per_child = c->thread_limit = 1;
        if (c->min_spare_servers < 1) c->min_spare_servers = 1;
        if (c->max_spare_servers < c->min_spare_servers + 1) c->max_spare_servers = c->min_spare_servers + 1;
        if (c->start_servers < 1) c->start_servers = 1;
        if (c->start_servers > c->max_request_workers) c->start_servers = c->max_request_workers;
    } else {
        if (c->server_limit > 20000) c->server_limit = 20000;
        int max_tl = c->mpm == MPM_EVENT ? 100000 : 20000;
        if (c->thread_limit > max_tl) c->thread_limit = max_tl;
        if (c->thread_limit < 1) c->thread_limit = 1;
        if (c->threads_per_child > c->thread_limit) c->threads_per_child = c->thread_limit;
        if (c->threads_per_child < 1) c->threads_per_child = 1;
        if (c->max_request_workers < c->threads_per_child) c->max_request_workers = c->threads_per_child;
        int daemons = c->max_request_workers / c->threads_per_child;
        if (daemons > c->server_limit) daemons = c->server_limit;
        c->max_request_workers = daemons * c->threads_per_child;
        c->server_limit = daemons < c->server_limit ? c->server_limit : daemons;
        if (c->start_servers < 1) c->start_servers = 1;
        if (c->start_servers > daemons) c->start_servers = daemons;
        if (c->min_spare_threads < 1) c->min_spare_threads = 1;
        if (c->max_spare_threads < c->min_spare_threads + c->threads_per_child + 1)
            c->max_spare_threads = c->min_spare_threads + c->threads_per_child + 1;
    }
    buckets_finish(c);
    return MPMD_OK;
}

int conf_open_log(struct conf *c, char *err) {
    if (!c->access_log[0]) return MPMD_OK;
    int fd = open(c->access_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, MPMD_ERR_LEN, "CustomLog %.150s: %.60s", c->access_log, strerror(errno));
        return MPMD_ERR;
    }
    c->access_log_fd = fd;
    return MPMD_OK;
}

/* SIGHUP: read the file again. As httpd, a restart cannot grow the scoreboard
 * (ServerLimit, ThreadLimit) nor move the listener; a bad file keeps the old
 * configuration (httpd would stop instead: a test server should not). */
int conf_reload(struct conf *c, const char *path, int slot_procs, int slot_threads, char *err) {
    struct conf n;
    conf_defaults(&n, c->mpm);
    if (conf_load(&n, path, err) != MPMD_OK || conf_finish(&n, err) != MPMD_OK) return MPMD_ERR;
    if (n.mpm == MPM_PREFORK) {
        if (n.max_request_workers > slot_procs) n.max_request_workers = slot_procs;
        if (n.start_servers > n.max_request_workers) n.start_servers = n.max_request_workers;
    } else {
        if (n.threads_per_child > slot_threads) n.threads_per_child = slot_threads;
        if (n.max_request_workers > slot_procs * n.threads_per_child)
            n.max_request_workers = slot_procs * n.threads_per_child;
        n.max_request_workers -= n.max_request_workers % n.threads_per_child;
        if (n.start_servers > n.max_request_workers / n.threads_per_child)
            n.start_servers = n.max_request_workers / n.threads_per_child;
    }
    n.server_limit = slot_procs; /* as httpd: kept from the first start (AH00501) */
    memcpy(n.listen_host, c->listen_host, sizeof(n.listen_host));
    n.listen_port = c->listen_port;
    if (conf_open_log(&n, err) != MPMD_OK) return MPMD_ERR;
    if (c->access_log_fd >= 0) close(c->access_log_fd); /* reopened: log rotation works */
    *c = n;
    return MPMD_OK;
}
