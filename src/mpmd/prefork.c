/* prefork.c: one connection per child process, as httpd's prefork MPM.
 *
 * Children block in accept() on the shared listening socket (Linux wakes one).
 * Once a second the parent counts idle children: below MinSpareServers it forks
 * 1, then 2, 4 ... 32 a cycle (httpd's spawn rate, which resets when nothing
 * was needed); above MaxSpareServers it stops one idle child a cycle.
 * MaxRequestWorkers caps the children; MaxConnectionsPerChild recycles one.
 * SIGHUP: the old children finish their connection and exit, new ones start.
 * SIGTERM: every child is stopped, and killed after STOP_GRACE_MS. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SPAWN_RATE 32

static void child_term(int sig) { (void)sig; mpmd_stop = 1; }
static void child_graceful(int sig) { (void)sig; mpmd_graceful = 1; }

static void child_main(const struct conf *c, int lfd, struct scoreboard *sb, int slot) {
    struct sigaction sa = {0};
    sa.sa_handler = child_term; /* no SA_RESTART: accept() returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = child_graceful;
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    struct http_ctx ctx = {c, sb};
    static struct conn cn; /* one connection at a time: its buffer lives here */
    int connections = 0;
    sb_set(sb, slot, 0, SLOT_IDLE);
    while (!mpmd_stop && !mpmd_graceful) {
        int fd = net_accept(lfd, c->timeout_ms); /* accepted: served, even if told to stop now */
        if (fd == -1) continue;
        if (fd < 0) break;
        sb_set(sb, slot, 0, SLOT_BUSY);
        __atomic_fetch_add(&sb->g->total_connections, 1, __ATOMIC_RELAXED);
        http_conn_init(&cn, fd, 0);
        if (http_serve(&cn, &ctx, slot, 0)) http_lingering_close(fd);
        else close(fd);
        sb_set(sb, slot, 0, SLOT_IDLE);
        if (c->max_connections_per_child && ++connections >= c->max_connections_per_child) break;
    }
    sb_set(sb, slot, 0, SLOT_DEAD);
    _exit(0);
}

static int spawn(const struct conf *c, int lfd, struct scoreboard *sb) {
    return sb_spawn(sb, c->max_request_workers, 1, child_main, c, lfd);
}

int prefork_run(struct conf *c, const char *path, int lfd, struct scoreboard *sb) {
    for (int i = 0; i < c->start_servers; i++) spawn(c, lfd, sb);
    int spawn_rate = 1;
    struct timespec tick = {1, 0};
    while (!mpmd_stop) {
        nanosleep(&tick, NULL);
        sb_reap(sb);
        if (mpmd_stop) break;
        if (mpmd_restart) {
            mpmd_restart = 0;
            mpm_restart(c, path, sb);
            sb_reap(sb);
            for (int i = 0; i < c->start_servers; i++) spawn(c, lfd, sb);
            spawn_rate = 1;
            continue;
        }
        int busy, idle, procs;
        sb_count(sb, &busy, &idle, &procs);
        if (idle > c->max_spare_servers) {
            for (int s = 0; s < sb->server_limit; s++)
                if (sb->procs[s].pid && !sb->procs[s].quiescing && sb->slots[s * sb->thread_limit] == SLOT_IDLE) {
                    sb->procs[s].quiescing = 1;
                    kill(sb->procs[s].pid, SIGUSR1); /* graceful: it finishes its connection */
                    break;
                }
            spawn_rate = 1;
        } else if (idle < c->min_spare_servers) {
            int made = 0;
            for (int i = 0; i < spawn_rate && procs + made < c->max_request_workers; i++)
                if (spawn(c, lfd, sb) == MPMD_OK) made++;
            if (made && spawn_rate < MAX_SPAWN_RATE) spawn_rate *= 2;
        } else {
            spawn_rate = 1;
        }
    }
    sb_stop_children(sb); /* graceful stop: every child is told, and every one is reaped */
    return MPMD_OK;
}
