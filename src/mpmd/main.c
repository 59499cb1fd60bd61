/* main.c: mpmd -f CONF -m prefork|worker|event [-t] [-r FD]
 * Reads the directives, applies httpd's start-up adjustments, listens (on
 * loopback unless Listen says otherwise) and runs the chosen model until
 * SIGTERM or SIGINT, then stops every child and reaps it. SIGUSR1 (httpd's graceful) or SIGHUP
 * is a graceful restart: the file is read again and the children replaced (maintain.c). With -r FD it writes
 * "ready" to FD (a pipe from its runner) once it listens, so nobody polls for it. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t mpmd_stop;
volatile sig_atomic_t mpmd_restart;
volatile sig_atomic_t mpmd_graceful;

static void on_stop(int sig) { (void)sig; mpmd_stop = 1; }
static void on_restart(int sig) { (void)sig; mpmd_restart = 1; }

static int usage(void) {
    fprintf(stderr, "usage: mpmd -f CONFIG -m prefork|worker|event [-t] [-r FD]\n");
    return 2;
}

int main(int argc, char **argv) {
    const char *path = NULL, *model = NULL;
    int test_only = 0, ready_fd = -1, opt;
    while ((opt = getopt(argc, argv, "f:m:tr:")) != -1) {
        if (opt == 'f') path = optarg;
        else if (opt == 'm') model = optarg;
        else if (opt == 't') test_only = 1;
        else if (opt == 'r') {
            char *end;
            long fd = strtol(optarg, &end, 10);
            if (*end || fd < 0 || fd > 65535) return usage();
            ready_fd = (int)fd;
        } else return usage();
    }
    if (!path || !model) return usage();
    enum mpm_kind kind;
    if (!strcmp(model, "prefork")) kind = MPM_PREFORK;
    else if (!strcmp(model, "worker")) kind = MPM_WORKER;
    else if (!strcmp(model, "event")) kind = MPM_EVENT;
    else return usage();
    struct conf c;
    char err[MPMD_ERR_LEN];
    conf_defaults(&c, kind);
    if (conf_load(&c, path, err) != MPMD_OK || conf_finish(&c, err) != MPMD_OK ||
        (!test_only && conf_open_log(&c, err) != MPMD_OK)) {
        fprintf(stderr, "mpmd: %s\n", err);
        return 2;
    }
    if (test_only) {
        /* The values the MPM will run with, one "Name value" per line, after "Syntax OK":
         * tests compare them with apachetune's model of httpd's start-up. */
        printf("Syntax OK\nStartServers %d\nServerLimit %d\nMaxRequestWorkers %d\n", c.start_servers,
               c.server_limit, c.max_request_workers);
        if (kind == MPM_PREFORK)
            printf("MinSpareServers %d\nMaxSpareServers %d\n", c.min_spare_servers, c.max_spare_servers);
        else
            printf("ThreadLimit %d\nThreadsPerChild %d\nMinSpareThreads %d\nMaxSpareThreads %d\n",
                   c.thread_limit, c.threads_per_child, c.min_spare_threads, c.max_spare_threads);
        return 0;
    }
    /* Many keep-alive connections need many descriptors: raise the soft limit to the hard one. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_stop; /* no SA_RESTART: the parent's sleep returns at once */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_restart;
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL); /* (blocked across each fork: the child installs its own first) */
    signal(SIGPIPE, SIG_IGN);
    /* One listening socket a listener bucket, all on the port (SO_REUSEPORT: the kernel
     * hashes each new connection to one of them); a child accepts on its bucket's. */
    int lfds[MPMD_MAX_BUCKETS];
    for (int b = 0; b < c.buckets; b++) {
        lfds[b] = net_listen(c.listen_host, c.listen_port, c.listen_backlog, c.buckets > 1, c.defer_accept, err);
        if (lfds[b] < 0) {
            fprintf(stderr, "mpmd: %s\n", err);
            return 1;
        }
        if (kind != MPM_PREFORK) {
            /* The listener threads poll before accepting, and another process may take the
             * connection first: accept must then fail with EAGAIN, not block the listener. */
            int fl = fcntl(lfds[b], F_GETFL);
            if (fl < 0 || fcntl(lfds[b], F_SETFL, fl | O_NONBLOCK) != 0) {
                fprintf(stderr, "mpmd: fcntl(listener): %s\n", strerror(errno));
                return 1;
            }
        }
    }
    pool_fn pool_of = kind == MPM_PREFORK ? prefork_pool : threaded_pool;
    struct pool pool;
    pool_of(&c, &pool);
    struct scoreboard sb;
    /* ServerLimit slots, as httpd's scoreboard: a graceful restart may raise MaxRequestWorkers up
     * to them, and event starts a restart's processes beside the stopping ones. */
    int slots = c.server_limit > pool.max_procs ? c.server_limit : pool.max_procs;
    if (sb_create(&sb, slots, c.threads_per_child, err) != MPMD_OK) {
        fprintf(stderr, "mpmd: %s\n", err);
        return 1;
    }
    fprintf(stderr, "mpmd: %s listening on %s:%d\n", model, c.listen_host, c.listen_port);
    if (ready_fd >= 0) {
        /* Connections are queued from here on: the runner may send its first request now.
         * Closed before any fork, so only this write ever reaches the pipe. */
        ssize_t n = write(ready_fd, "ready\n", 6);
        (void)n; /* a runner that went away is not our failure */
        close(ready_fd);
    }
    int rc = mpm_run(&c, path, lfds, &sb, pool_of);
    for (int b = 0; b < c.buckets; b++) close(lfds[b]);
    return rc == MPMD_OK ? 0 : 1;
}
