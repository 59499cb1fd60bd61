/* maintain.c: the parent's once-a-second pool maintenance, shared by the three models (httpd's
 * perform_idle_server_maintenance). It counts idle workers: below the model's minimum it
 * forks 1, then 2, 4 ... 32 processes a cycle (the spawn rate doubles while more are needed
 * and resets when nothing was); above its maximum it stops one process a cycle, gracefully.
 * A model (struct pool) says how many workers a process has, how many processes at most,
 * the bounds, and which process to stop. SIGHUP: the configuration is read again, the old
 * generation finishes what it holds and exits, and the new one starts. SIGTERM: every child
 * is stopped, and killed after STOP_GRACE_MS. With listener buckets (ListenCoresBucketsRatio),
 * prefork keeps one count and stops a child of each bucket in turn; worker and event keep the
 * spares a bucket, each against its share of the bounds (httpd 2.4's child_bucket passes). */
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

/* Start up to n children (in listener bucket `bucket`, -1: any); returns how many started. */
static int spawn(const struct conf *c, const struct pool *p, const int *lfds, struct scoreboard *sb, int procs,
                 int n, int bucket) {
    int made = 0;
    while (made < n && procs + made < p->max_procs) {
        if (sb_spawn(sb, p->max_procs, p->threads, p->child, c, lfds, bucket) != MPMD_OK) {
            if (bucket < 0) fprintf(stderr, "mpmd: could not start a child (%d running)\n", procs + made);
            break; /* (a bucket whose slots are all taken starts none) */
        }
        made++;
    }
    return made;
}

static void stop_one(struct scoreboard *sb, const struct pool *p, int buckets, int bucket) {
    int victim = p->victim(sb, p->max_procs, buckets, bucket);
    if (victim >= 0) {
        sb->procs[victim].quiescing = 1;
        kill(sb->procs[victim].pid, SIGUSR1); /* graceful: it finishes its connections */
    }
}

/* One pass over bucket `bucket`'s processes (-1: all) against `share` of the spare bounds
 * (httpd's worker and event: MinSpareThreads / buckets, MaxSpareThreads / buckets, the spawn
 * rate doubling while below 32 / buckets). A pass over all with buckets (prefork) stops a child
 * of each bucket in turn, `*kill_record` the bucket whose child was stopped last. */
static void maintain(const struct conf *c, const struct pool *p, const int *lfds, struct scoreboard *sb,
                     int bucket, int share, int *kill_record, int *spawn_rate) {
    int busy, idle, procs, all_busy, all_idle, all;
    sb_count_bucket(sb, c->buckets, bucket, &busy, &idle, &procs);
    sb_count(sb, &all_busy, &all_idle, &all); /* the process limit is the whole server's */
    if (idle > p->max_idle / share && all > 1) {
        int victims = bucket;
        if (bucket < 0 && c->buckets > 1) victims = *kill_record = (*kill_record + 1) % c->buckets;
        stop_one(sb, p, c->buckets, victims);
        *spawn_rate = 1;
    } else if (idle < p->min_idle / share && all < p->max_procs) {
        if (spawn(c, p, lfds, sb, all, *spawn_rate, bucket) && *spawn_rate < MAX_SPAWN_RATE / share)
            *spawn_rate *= 2;
    } else {
        *spawn_rate = 1;
    }
}

static void reset_rates(int *spawn_rate) {
    for (int b = 0; b < MPMD_MAX_BUCKETS; b++) spawn_rate[b] = 1;
}

int mpm_run(struct conf *c, const char *path, const int *lfds, struct scoreboard *sb, pool_fn model) {
    struct pool p;
    model(c, &p);
    spawn(c, &p, lfds, sb, 0, c->start_servers, -1);
    int spawn_rate[MPMD_MAX_BUCKETS];
    reset_rates(spawn_rate);
    int kill_record = -1; /* prefork: the bucket whose child was stopped last */
    struct timespec tick = {1, 0};
    while (!mpmd_stop) {
        nanosleep(&tick, NULL);
        sb_reap(sb);
        if (mpmd_stop) break;
        if (mpmd_restart) {
            int busy, idle, procs;
            mpmd_restart = 0;
            restart(c, path, sb);
            model(c, &p); /* the new generation's shape */
            sb_reap(sb);
            sb_count(sb, &busy, &idle, &procs);
            spawn(c, &p, lfds, sb, procs, c->start_servers, -1);
            reset_rates(spawn_rate);
            continue;
        }
        if (c->mpm == MPM_PREFORK || c->buckets == 1) /* one count for all */
            maintain(c, &p, lfds, sb, -1, 1, &kill_record, &spawn_rate[0]);
        else
            for (int b = 0; b < c->buckets; b++) maintain(c, &p, lfds, sb, b, c->buckets, &kill_record, &spawn_rate[b]);
    }
    sb_stop_children(sb); /* every child is told, and every one is reaped */
    return MPMD_OK;
}
