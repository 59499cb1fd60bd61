/* mpmd: a minimal HTTP/1.1 server with httpd's three process models (prefork,
 * worker, event), driven by the same directives, so that apachetune can test
 * its advice under load in seconds. C11 + POSIX only.
 *
 * Files: conf.c (directives), http.c (request parsing, static files, status,
 * synthetic app), scoreboard.c (shared memory), prefork.c, threaded.c (worker
 * and event), main.c (start, signals). */
#ifndef MPMD_H
#define MPMD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MPMD_OK 0
#define MPMD_ERR -1
#define MPMD_ERR_LEN 256
#define MPMD_VERSION "mpmd/0.1"

enum mpm_kind { MPM_PREFORK, MPM_WORKER, MPM_EVENT };

struct conf {
    enum mpm_kind mpm;
    int start_servers, server_limit, thread_limit, threads_per_child;
    int max_request_workers, min_spare_servers, max_spare_servers;
    int min_spare_threads, max_spare_threads, max_connections_per_child;
    int keepalive, keepalive_timeout_ms, max_keepalive_requests, timeout_ms;
    int listen_backlog;
    double async_factor;
    char listen_host[64];
    int listen_port;
    char document_root[4096];
};

int conf_defaults(struct conf *c, enum mpm_kind mpm);
int conf_load(struct conf *c, const char *path, char *err);
int conf_finish(struct conf *c, char *err); /* httpd's start-up adjustments */

/* Scoreboard: one slot per worker (ServerLimit x ThreadLimit) in shared memory. */
enum slot_state { SLOT_DEAD = 0, SLOT_IDLE, SLOT_BUSY, SLOT_KEEPALIVE };

struct process_score {
    volatile pid_t pid;
    volatile int generation;
    volatile int quiescing;
    volatile int connections; /* event: open connections in this process */
};

struct sb_global { /* shared: every process updates these (atomically) */
    uint64_t total_accesses;
    uint64_t total_connections;
    int64_t start_time;
};

struct scoreboard {
    struct sb_global *g;
    int server_limit, thread_limit;
    struct process_score *procs;
    volatile unsigned char *slots; /* server_limit * thread_limit */
};

int sb_create(struct scoreboard *sb, int server_limit, int thread_limit, char *err);
void sb_set(struct scoreboard *sb, int proc, int thread, enum slot_state s);
void sb_count(const struct scoreboard *sb, int *busy, int *idle, int *procs);
void sb_stop_children(struct scoreboard *sb); /* SIGTERM every child, reap them all */

/* HTTP */
struct http_ctx {
    const struct conf *conf;
    struct scoreboard *sb;
};
/* Serve one connection until it closes; returns the number of requests served.
 * `keepalive_wait` is called between requests (prefork/worker: poll in place;
 * event returns to the listener instead when it is NULL). */
int http_serve(int fd, const struct http_ctx *ctx, int proc, int thread, int *keepalive_next);
int http_handle_one(int fd, const struct http_ctx *ctx, int first, int *keep);
void http_socket_setup(int fd);

/* Listening socket */
int net_listen(const char *host, int port, int backlog, char *err);

int prefork_run(const struct conf *c, int lfd, struct scoreboard *sb);
int threaded_run(const struct conf *c, int lfd, struct scoreboard *sb);

extern volatile sig_atomic_t mpmd_stop;

#endif
