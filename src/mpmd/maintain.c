/* maintain.c: the parent's once-a-second pool maintenance, shared by the three models (httpd's
 * perform_idle_server_maintenance). It counts idle workers: below the model's minimum it
 * forks 1, then 2, 4 ... 32 processes a cycle (the spawn rate doubles while more are needed
 * and resets when nothing was); above its maximum it stops one process a cycle, gracefully.
 * A model (struct pool) says how many workers a process has, how many processes at most,
 * the bounds, and which process to stop. SIGHUP: the configuration is read again, the old
 * generation finishes what it holds and exits, and the new one starts. SIGTERM: every child
 * is stopped, and killed after STOP_GRACE_MS. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <signal.h>
#include <stdio.h>
#include <time.h>

#define MAX_SPAWN_RATE 32

static void child_term(int sig) { (void)sig; mpmd_stop = 1; }
static void child_graceful(int sig) { (void)sig; mpmd_graceful = 1; }

void mpm_child_signals(void) {
    struct sigaction sa = {0};
    sa.sa_handler = child_term; /* no SA_RESTART: a blocked accept() or wait returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = child_graceful;
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGHUP, SIG_IGN); /* the parent restarts; a child does not */
    signal(SIGPIPE, SIG_IGN);
}

/* Graceful restart: the old generation finishes what it holds and exits (its slots free up
 * as the parent reaps it); the caller spawns the new one. */
static void restart(struct conf *c, const char *path, struct scoreboard *sb) {
    char err[MPMD_ERR_LEN];
    if (conf_reload(c, path, sb->server_limit, sb->thread_limit, err) != MPMD_OK) {
        fprintf(stderr, "mpmd: restart refused, keeping the running configuration: %s\n", err);
        return;
    }
    sb->g->generation++;
    for (int p = 0; p < sb->server_limit; p++)
        if (sb->procs[p].pid) sb->procs[p].quiescing = 1;
    sb_signal_children(sb, SIGUSR1); /* graceful: no connection is dropped */
    fprintf(stderr, "mpmd: graceful restart, generation %d\n", sb->g->generation);
}

/* Start up to n children; returns how many started. */
static int spawn(const struct conf *c, const struct pool *p, int lfd, struct scoreboard *sb, int procs, int n) {
    int made = 0;
    while (made < n && procs + made < p->max_procs) {
        if (sb_spawn(sb, p->max_procs, p->threads, p->child, c, lfd) != MPMD_OK) {
            fprintf(stderr, "mpmd: could not start a child (%d running)\n", procs + made);
            break;
        }
        made++;
    }
    return made;
}

int mpm_run(struct conf *c, const char *path, int lfd, struct scoreboard *sb, pool_fn model) {
    struct pool p;
    model(c, &p);
    spawn(c, &p, lfd, sb, 0, c->start_servers);
    int spawn_rate = 1;
    struct timespec tick = {1, 0};
    while (!mpmd_stop) {
        nanosleep(&tick, NULL);
        sb_reap(sb);
        if (mpmd_stop) break;
        int busy, idle, procs;
        if (mpmd_restart) {
            mpmd_restart = 0;
            restart(c, path, sb);
            model(c, &p); /* the new generation's shape */
            sb_reap(sb);
            sb_count(sb, &busy, &idle, &procs);
            spawn(c, &p, lfd, sb, procs, c->start_servers);
            spawn_rate = 1;
            continue;
        }
        sb_count(sb, &busy, &idle, &procs);
        if (idle > p.max_idle && procs > 1) {
            int victim = p.victim(sb, p.max_procs);
            if (victim >= 0) {
                sb->procs[victim].quiescing = 1;
                kill(sb->procs[victim].pid, SIGUSR1); /* graceful: it finishes its connections */
            }
            spawn_rate = 1;
        } else if (idle < p.min_idle && procs < p.max_procs) {
            if (spawn(c, &p, lfd, sb, procs, spawn_rate) && spawn_rate < MAX_SPAWN_RATE) spawn_rate *= 2;
        } else {
            spawn_rate = 1;
        }
    }
    sb_stop_children(sb); /* every child is told, and every one is reaped */
    return MPMD_OK;
}
