/* mpmd: a minimal HTTP/1.1 server with httpd's three process models (prefork,
 * worker, event), driven by the same directives, so that apachetune can test
 * its advice under load in seconds. C11 + POSIX only.
 *
 * Files: conf.c (directives), request.c (the request head, parsed with no I/O),
 * http.c (connections, static files, status, synthetic app, access log),
 * scoreboard.c (shared memory), maintain.c (the parent's pool maintenance and
 * restarts), prefork.c, threaded.c (worker and event), net.c (sockets, clock),
 * main.c (options, signals, start). */
#ifndef MPMD_H
#define MPMD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One convention: a status is MPMD_OK or MPMD_ERR (MPMD_AGAIN: nothing done, try again); a
 * function that returns a value (a descriptor, a length) returns these negatives instead of it.
 * http_find_head alone returns an HTTP status, negated, to answer with. */
#define MPMD_OK 0
#define MPMD_ERR -1
#define MPMD_AGAIN -2
#define MPMD_ERR_LEN 256
#define MPMD_MAX_BUCKETS 64 /* listener buckets at most (ListenCoresBucketsRatio) */
#define MPMD_VERSION "mpmd/0.1"

enum mpm_kind { MPM_PREFORK, MPM_WORKER, MPM_EVENT };

struct conf {
    enum mpm_kind mpm;
    int start_servers, server_limit, thread_limit, threads_per_child;
    int max_request_workers, min_spare_servers, max_spare_servers;
    int min_spare_threads, max_spare_threads, max_connections_per_child;
    int keepalive, keepalive_timeout_ms, max_keepalive_requests, timeout_ms;
    int listen_backlog;
    int defer_accept; /* AcceptFilter http: anything but none sets TCP_DEFER_ACCEPT 30 (Linux), as httpd's listen.c */
    double async_factor;
    char listen_host[64];
    int listen_port;
    char document_root[4096];
    int enable_sendfile;      /* EnableSendfile (httpd 2.4's default is Off) */
    int limit_request_line, limit_request_fieldsize, limit_request_fields;
    char access_log[4096];    /* CustomLog/TransferLog path, "" for none */
    int access_log_fd;        /* opened by main, inherited by the children */
    /* RequestReadTimeout (mod_reqtimeout, on by default as in Debian's httpd): a head must
     * arrive within header_ms of its first byte, extended by 1 s per header_rate bytes up
     * to header_max_ms; a body within body_ms, extended likewise (body_max_ms 0: no cap).
     * header_ms or body_ms 0 turns that limit off (Timeout per read still applies). */
    int header_ms, header_max_ms, header_rate, body_ms, body_max_ms, body_rate;
    char run_token[64];       /* RunToken: sent back as X-Apachetune-Run, so a client knows
                               * it reached this server and not another one on the port */
    int request_cpu_us;       /* RequestCPU: CPU spent per request standing for httpd's
                                 request-processing chain (see conf.c) */
    int connection_cpu_us;    /* ConnectionCPU: CPU spent once per connection (its first
                                 request) standing for httpd's connection set-up and close */
    int buckets_ratio;        /* ListenCoresBucketsRatio: 0, or online cores per listener bucket */
    int buckets;              /* listener buckets (conf_finish): online cores / ratio, at least 1 */
    int max_mem_free_kib;     /* MaxMemFree: read so that a section written for httpd runs
                                 here; mpmd's connection buffers belong to its workers and
                                 have no allocators to bound (validate counts httpd's) */
};

int conf_defaults(struct conf *c, enum mpm_kind mpm);
int conf_load(struct conf *c, const char *path, char *err);
int conf_finish(struct conf *c, char *err); /* httpd's start-up adjustments */
int conf_open_log(struct conf *c, char *err);
int conf_reload(struct conf *c, const char *path, int slot_procs, int slot_threads, char *err);

/* Scoreboard: one slot per worker (ServerLimit x ThreadLimit) in shared memory. */
enum slot_state { SLOT_DEAD = 0, SLOT_IDLE, SLOT_BUSY, SLOT_KEEPALIVE };

struct process_score {
    volatile pid_t pid;
    volatile int generation;
    volatile int quiescing;
    volatile int connections; /* event: open connections in this process */
    volatile int squatting;   /* worker: forked beside a stopping child, into its slot (maintain.c) */
};

struct sb_global { /* shared: every process updates these (atomically) */
    uint64_t total_accesses;
    uint64_t total_connections;
    int64_t start_time;
    volatile int generation; /* bumped by each graceful restart (SIGHUP) */
    uint64_t busy_closed;    /* event: keep-alive connections closed as every worker was busy */
};

#define MPMD_MAX_EXTRAS 1024
struct scoreboard {
    struct sb_global *g;
    int server_limit, thread_limit;
    struct process_score *procs;
    volatile unsigned char *slots; /* server_limit * thread_limit */
    /* the parent's own: stopping children whose slot a new one took (httpd's "extra" processes),
     * still to be reaped, and signalled at the stop */
    pid_t extras[MPMD_MAX_EXTRAS];
    int nextras;
};

int sb_create(struct scoreboard *sb, int server_limit, int thread_limit, char *err);
void sb_set(struct scoreboard *sb, int proc, int thread, enum slot_state s);
void sb_count(const struct scoreboard *sb, int *busy, int *idle, int *procs);
/* The same over the processes of one listener bucket (slot % buckets == bucket; -1: all). */
void sb_count_bucket(const struct scoreboard *sb, int buckets, int bucket, int *busy, int *idle, int *procs);
void sb_signal_children(struct scoreboard *sb, int sig);
/* A child's life: what runs in a forked process for scoreboard slot `slot`. */
typedef void (*child_main_fn)(const struct conf *c, int lfd, struct scoreboard *sb, int slot);
/* Fork a child into the first free slot below `slots` of listener bucket `bucket` (-1: any),
 * its `threads` slots idle; it accepts on its bucket's socket, lfds[slot % c->buckets].
 * MPMD_AGAIN when every such slot is taken. */
int sb_spawn(struct scoreboard *sb, int slots, int threads, child_main_fn child, const struct conf *c,
             const int *lfds, int bucket);
/* The same into slot `slot` (free). */
int sb_spawn_at(struct scoreboard *sb, int slot, int threads, child_main_fn child, const struct conf *c,
                const int *lfds);
/* worker: a child into the slot of a stopping one (which becomes an extra process): it starts
 * threads only in the thread slots the stopping child has left (threaded.c). */
int sb_spawn_beside(struct scoreboard *sb, int slot, child_main_fn child, const struct conf *c, const int *lfds);
/* Collect one exited child, if any: its slot (every thread slot of it dead), -1 when none had
 * exited, -2 for a child no slot knew. */
int sb_reap_one(struct scoreboard *sb);
/* Processes running and not stopping. */
int sb_active(const struct scoreboard *sb);
void sb_stop_children(struct scoreboard *sb); /* SIGTERM every child, reap them all */

/* The request head (request.c). Parsed in place: the pointers point into the
 * connection's buffer. */
#define HEAD_MAX (64 * 1024) /* the whole head; LimitRequestLine etc. apply per line */

struct head_scan { size_t pos, line_start; int fields; }; /* resumable: no rescans */

struct request {
    char method[16];
    char *target;    /* origin-form path (absolute-form is reduced to its path) */
    char *line;      /* the request line, for the access log */
    int minor;       /* HTTP/1.<minor> */
    int conn_close, conn_keepalive, hosts, hosts_empty, chunked, transfer_encoding;
    long content_length;
};

size_t http_skip_blank_lines(const char *buf, size_t n);
/* > 0: the head's length (through its blank line); 0: incomplete; < 0: -status. */
long http_find_head(const char *buf, size_t n, const struct conf *c, struct head_scan *scan);
/* 0, or the status to answer with (400, 431, 501, 505). */
int http_parse_head(char *head, size_t len, const struct conf *c, struct request *rq);
/* Percent-decode the path (up to '?'); MPMD_ERR on bad escapes or NUL. */
int http_decode_path(const char *in, char *out, size_t cap, int *dotdot);

/* Connections (http.c) */
struct http_ctx {
    const struct conf *conf;
    struct scoreboard *sb;
};

struct conn {
    int fd;
    int served;            /* requests answered on this connection */
    size_t have;           /* bytes in buf: pipelined requests stay here */
    struct head_scan scan;
    char peer[64];
    char buf[HEAD_MAX + 1];
};

void http_conn_init(struct conn *cn, int fd, int served);
/* Serve one connection until it ends (prefork, worker). Returns 1 when the server
 * ended it (close with http_lingering_close), 0 when the client did (close). */
int http_serve(struct conn *cn, const struct http_ctx *ctx, int proc, int thread);
void http_lingering_close(int fd);
/* Answer one request. Returns 1 if answered, 0 if the client closed or idled
 * out, -1 on error; *keep says whether the connection stays open. */
int http_handle_one(struct conn *cn, const struct http_ctx *ctx, int *keep);

/* Sockets and time (net.c) */
/* reuseport: SO_REUSEPORT, one of several sockets on the port (listener buckets); defer_accept:
 * TCP_DEFER_ACCEPT 30, so a connection reaches accept() with its first data (or after 31 s). */
int net_listen(const char *host, int port, int backlog, int reuseport, int defer_accept, char *err);
/* Accept a connection, set up for HTTP (no Nagle, sends time out after send_timeout_ms).
 * MPMD_AGAIN: try again (interrupted, lost to another process, aborted, or out of descriptors,
 * after a short back-off); MPMD_ERR: a real error (reported). */
int net_accept(int lfd, int send_timeout_ms);
int64_t mpmd_now_ms(void); /* monotonic */

/* A model's pool, as the parent's maintenance (maintain.c) sees it. */
struct pool {
    int threads;           /* workers per process */
    int max_procs;         /* processes at most, not counting those stopping */
    int slots;             /* the scoreboard slots it forks into: ServerLimit on event (a restart's new
                            * processes start beside the stopping ones), max_procs otherwise */
    int squats;            /* worker: forks into a stopping child's slot once its idle threads are gone */
    int min_idle, max_idle; /* idle workers kept between these */
    child_main_fn child;   /* what a new process runs */
    /* the process to stop (of listener bucket `bucket`, -1: any), or -1 */
    int (*victim)(const struct scoreboard *sb, int buckets, int bucket);
};
typedef void (*pool_fn)(const struct conf *c, struct pool *p);
void prefork_pool(const struct conf *c, struct pool *p);  /* prefork.c */
void threaded_pool(const struct conf *c, struct pool *p); /* threaded.c: worker and event */
/* A new child's signals: SIGTERM sets mpmd_stop, SIGUSR1 mpmd_graceful, SIGHUP and SIGPIPE
 * ignored; then SIGUSR1 unblocked (sb_spawn_at blocks it across the fork, so that a stop sent
 * just after the fork waits for the child's handler) (maintain.c). */
void mpm_child_signals(void);
/* Run the model until SIGTERM; SIGUSR1 or SIGHUP reloads `path` and replaces the children
 * gracefully, as httpd's graceful restart does (maintain.c). */
int mpm_run(struct conf *c, const char *path, const int *lfds, struct scoreboard *sb, pool_fn model);

extern volatile sig_atomic_t mpmd_stop;
extern volatile sig_atomic_t mpmd_restart; /* the parent's SIGUSR1 or SIGHUP: graceful restart */
/* In a child: SIGUSR1 (httpd's AP_SIG_GRACEFUL) asks it to stop accepting, answer what its
 * connections send (each next response says Connection: close, so clients reconnect to the new
 * generation; an idle one ends at KeepAliveTimeout) and exit: nothing is dropped. SIGTERM
 * (mpmd_stop) asks it to exit now; the parent kills it after STOP_GRACE_MS. */
extern volatile sig_atomic_t mpmd_graceful;
#define STOP_GRACE_MS 3000 /* SIGTERM, then SIGKILL after this (httpd's reclaim escalates too) */

#endif
