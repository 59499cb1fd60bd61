/* maintain.c: the parent's once-a-second pool maintenance, shared by the three models (httpd's
 * perform_idle_server_maintenance). It counts idle workers: below the model's minimum it
 * forks 1, then 2, 4 ... 32 processes a cycle (the spawn rate doubles while more are needed
 * and resets when nothing was); above its maximum it stops one process a cycle, gracefully.
 * A model (struct pool) says how many workers a process has, how many processes at most,
 * the bounds, and which process to stop. With listener buckets (ListenCoresBucketsRatio),
 * prefork keeps one count and stops a child of each bucket in turn; worker and event keep the
 * spares a bucket, each against its share of the bounds (httpd 2.4's child_bucket passes).
 *
 * The loop is httpd's server_main_loop: a child that has exited is reaped at once, else the
 * parent sleeps a second and makes a pass, so a child that exits during a sleep holds its slot
 * through the next pass (ap_wait_or_timeout). A graceful restart (SIGUSR1, or SIGHUP) reads the
 * configuration again and tells every child to finish what it holds and exit; then each child
 * reaped is replaced in its slot until StartServers are started, what is left starts at the
 * first pass in any free slot (event: below ServerLimit, beside the stopping ones), and the
 * spawn rate stays where it is for 10 spawning passes (hold_off_on_exponential_spawning).
 * worker's maintenance also forks into a stopping child's slot once it has a dead thread slot
 * (spawn_beside; its new child takes the thread slots as they die, threaded.c).
 * SIGTERM: every child is stopped, and killed after STOP_GRACE_MS. */
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
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &usr1, NULL); /* a stop sent since the fork is delivered now */
}

#define HOLD_OFF_PASSES 10 /* spawning passes without doubling the rate after a graceful restart */
/* What httpd takes to read its configuration again before its loop restarts (a few ms with a
 * small one): an idle child has exited by then and is replaced at the loop's first look. */
#define RESTART_MS 10

/* Graceful restart: the configuration read again (the scoreboard's size kept), every running
 * child told to finish what it holds and exit. Returns whether the new configuration took. */
static int restart(struct conf *c, const char *path, struct scoreboard *sb) {
    char err[MPMD_ERR_LEN];
    if (conf_reload(c, path, sb->server_limit, sb->thread_limit, err) != MPMD_OK) {
        fprintf(stderr, "mpmd: restart refused, keeping the running configuration: %s\n", err);
        return 0;
    }
    sb->g->generation++;
    for (int p = 0; p < sb->server_limit; p++)
        if (sb->procs[p].pid) sb->procs[p].quiescing = 1;
    sb_signal_children(sb, SIGUSR1); /* graceful: no connection is dropped */
    fprintf(stderr, "mpmd: graceful restart, generation %d\n", sb->g->generation);
    return 1;
}

/* Start up to n children (in listener bucket `bucket`, -1: any), while fewer than the pool's
 * processes run (those stopping not counted) and a slot is free; returns how many started. */
static int spawn(const struct conf *c, const struct pool *p, const int *lfds, struct scoreboard *sb, int n,
                 int bucket) {
    int made = 0, active = sb_active(sb);
    while (made < n && active + made < p->max_procs) {
        int rc = sb_spawn(sb, p->slots, p->threads, p->child, c, lfds, bucket);
        if (rc == MPMD_ERR) fprintf(stderr, "mpmd: could not start a child (%d running)\n", active + made);
        if (rc != MPMD_OK) break; /* (MPMD_AGAIN: every slot taken, by children still stopping) */
        made++;
    }
    return made;
}

/* Dead thread slots of slot `s`'s process (of its first `threads`). */
static int dead_threads(const struct scoreboard *sb, int s, int threads) {
    int n = 0;
    for (int t = 0; t < threads; t++) n += sb->slots[s * sb->thread_limit + t] == SLOT_DEAD;
    return n;
}

/* worker: up to n children into the slots of stopping children (of `bucket`, -1: any) that have
 * a dead thread slot, those whose every thread is dead first, as worker.c's maintenance takes
 * them ("back of the bus" for a slot still in use); returns how many started. */
static int spawn_beside(const struct conf *c, const struct pool *p, const int *lfds, struct scoreboard *sb, int n,
                        int bucket) {
    int made = 0, active = sb_active(sb);
    for (int all_dead = 1; all_dead >= 0; all_dead--)
        for (int s = 0; s < p->slots && made < n && active + made < p->max_procs; s++) {
            if (!sb->procs[s].pid || !sb->procs[s].quiescing || (bucket >= 0 && s % c->buckets != bucket)) continue;
            int dead = dead_threads(sb, s, p->threads);
            if (dead == 0 || (dead == p->threads) != all_dead) continue;
            if (sb_spawn_beside(sb, s, p->child, c, lfds) != MPMD_OK) return made;
            made++;
        }
    return made;
}

static void stop_one(struct scoreboard *sb, const struct pool *p, int buckets, int bucket) {
    int victim = p->victim(sb, buckets, bucket);
    if (victim >= 0) {
        sb->procs[victim].quiescing = 1;
        kill(sb->procs[victim].pid, SIGUSR1); /* graceful: it finishes its connections */
    }
}

struct rates {
    int spawn[MPMD_MAX_BUCKETS]; /* the spawn rate, a bucket's (one for all on prefork) */
    int hold_off;                /* spawning passes left without doubling it */
    int kill_record;             /* prefork: the bucket whose child was stopped last */
};

/* One pass over bucket `bucket`'s processes (-1: all) against `share` of the spare bounds
 * (httpd's worker and event: MinSpareThreads / buckets, MaxSpareThreads / buckets, the spawn
 * rate doubling while below 32 / buckets). A pass over all with buckets (prefork) stops a child
 * of each bucket in turn, `r->kill_record` the bucket whose child was stopped last. */
static void maintain(const struct conf *c, const struct pool *p, const int *lfds, struct scoreboard *sb,
                     int bucket, int share, struct rates *r) {
    int busy, idle, procs, all_busy, all_idle, all;
    int *rate = &r->spawn[bucket < 0 ? 0 : bucket];
    sb_count_bucket(sb, c->buckets, bucket, &busy, &idle, &procs);
    sb_count(sb, &all_busy, &all_idle, &all); /* the process limit is the whole server's */
    if (idle > p->max_idle / share && all > 1) {
        int victims = bucket;
        if (bucket < 0 && c->buckets > 1) victims = r->kill_record = (r->kill_record + 1) % c->buckets;
        stop_one(sb, p, c->buckets, victims);
        *rate = 1;
    } else if (idle < p->min_idle / share && sb_active(sb) < p->max_procs) {
        int made = spawn(c, p, lfds, sb, *rate, bucket);
        if (p->squats && made < *rate) made += spawn_beside(c, p, lfds, sb, *rate - made, bucket);
        if (made) {
            if (r->hold_off) r->hold_off--;
            else if (*rate < MAX_SPAWN_RATE / share) *rate *= 2;
        }
    } else {
        *rate = 1;
    }
}

int mpm_run(struct conf *c, const char *path, const int *lfds, struct scoreboard *sb, pool_fn model) {
    struct pool p;
    model(c, &p);
    spawn(c, &p, lfds, sb, c->start_servers, -1);
    struct rates r = {.hold_off = 0, .kill_record = -1};
    for (int b = 0; b < MPMD_MAX_BUCKETS; b++) r.spawn[b] = 1;
    int remaining = 0; /* a graceful restart's children not yet started */
    struct timespec tick = {1, 0};
    while (!mpmd_stop) {
        int slot = sb_reap_one(sb);
        if (slot != -1) { /* reaped: the next at once, no pass (ap_wait_or_timeout) */
            if (slot >= 0 && remaining > 0 && slot < p.slots && sb_active(sb) < p.max_procs &&
                sb_spawn_at(sb, slot, p.threads, p.child, c, lfds) == MPMD_OK)
                remaining--; /* one for one, in the slot just freed */
            continue;
        }
        nanosleep(&tick, NULL); /* a signal ends it early */
        if (mpmd_stop) break;
        if (mpmd_restart) {
            mpmd_restart = 0;
            if (restart(c, path, sb)) {
                model(c, &p); /* the new generation's shape */
                remaining = c->start_servers;
                r.hold_off = HOLD_OFF_PASSES;
                struct timespec reread = {0, RESTART_MS * 1000000L};
                nanosleep(&reread, NULL);
            }
            continue;
        }
        if (remaining) { /* the first pass after a restart starts what replacement did not */
            spawn(c, &p, lfds, sb, remaining, -1);
            remaining = 0;
            continue;
        }
        if (c->mpm == MPM_PREFORK || c->buckets == 1) /* one count for all */
            maintain(c, &p, lfds, sb, -1, 1, &r);
        else
            for (int b = 0; b < c->buckets; b++) maintain(c, &p, lfds, sb, b, c->buckets, &r);
    }
    sb_stop_children(sb); /* every child is told, and every one is reaped */
    return MPMD_OK;
}
