/* scoreboard.c: worker and process states in anonymous shared memory, so the
 * parent and every child (and the status page) see the same picture. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int sb_create(struct scoreboard *sb, int server_limit, int thread_limit, char *err) {
    size_t procs = sizeof(struct process_score) * (size_t)server_limit;
    size_t slots = (size_t)server_limit * (size_t)thread_limit;
    size_t head = (sizeof(struct sb_global) + 63) / 64 * 64;
    void *mem = mmap(NULL, head + procs + slots, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        snprintf(err, MPMD_ERR_LEN, "scoreboard: mmap: %s", strerror(errno));
        return MPMD_ERR;
    }
    memset(mem, 0, head + procs + slots);
    sb->g = mem;
    sb->server_limit = server_limit;
    sb->nextras = 0;
    sb->thread_limit = thread_limit;
    sb->procs = (struct process_score *)((char *)mem + head);
    sb->slots = (unsigned char *)mem + head + procs;
    sb->g->start_time = (int64_t)time(NULL);
    return MPMD_OK;
}

void sb_set(struct scoreboard *sb, int proc, int thread, enum slot_state s) {
    sb->slots[proc * sb->thread_limit + thread] = (unsigned char)s;
}

void sb_count(const struct scoreboard *sb, int *busy, int *idle, int *procs) {
    sb_count_bucket(sb, 1, -1, busy, idle, procs);
}

void sb_count_bucket(const struct scoreboard *sb, int buckets, int bucket, int *busy, int *idle, int *procs) {
    *busy = *idle = *procs = 0;
    for (int p = 0; p < sb->server_limit; p++) {
        if (!sb->procs[p].pid || (bucket >= 0 && p % buckets != bucket)) continue;
        (*procs)++;
        if (sb->procs[p].quiescing) continue; /* told to stop: its idle threads do not count (as httpd) */
        for (int t = 0; t < sb->thread_limit; t++) {
            unsigned char s = sb->slots[p * sb->thread_limit + t];
            if (s == SLOT_IDLE) (*idle)++;
            else if (s == SLOT_BUSY || s == SLOT_KEEPALIVE) (*busy)++;
        }
    }
}

int sb_spawn(struct scoreboard *sb, int slots, int threads, child_main_fn child, const struct conf *c,
             const int *lfds, int bucket) {
    for (int slot = 0; slot < slots && slot < sb->server_limit; slot++) {
        if (sb->procs[slot].pid || (bucket >= 0 && slot % c->buckets != bucket)) continue;
        return sb_spawn_at(sb, slot, threads, child, c, lfds);
    }
    return MPMD_AGAIN; /* every slot taken */
}

static int fork_into(struct scoreboard *sb, int slot, child_main_fn child, const struct conf *c,
                     const int *lfds, int squatting) {
    sb->procs[slot].squatting = squatting;
    sigset_t usr1, was;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, &was); /* the child unblocks it once its own handler is in */
    pid_t pid = fork();
    if (pid == 0) child(c, lfds[slot % c->buckets], sb, slot); /* never returns */
    sigprocmask(SIG_SETMASK, &was, NULL);
    if (pid < 0) return MPMD_ERR;
    sb->procs[slot].pid = pid;
    sb->procs[slot].generation = sb->g->generation;
    sb->procs[slot].quiescing = 0;
    return MPMD_OK;
}

int sb_spawn_at(struct scoreboard *sb, int slot, int threads, child_main_fn child, const struct conf *c,
                const int *lfds) {
    for (int t = 0; t < threads; t++) sb_set(sb, slot, t, SLOT_IDLE);
    return fork_into(sb, slot, child, c, lfds, 0);
}

int sb_spawn_beside(struct scoreboard *sb, int slot, child_main_fn child, const struct conf *c, const int *lfds) {
    if (sb->nextras >= MPMD_MAX_EXTRAS) return MPMD_AGAIN;
    pid_t old = sb->procs[slot].pid;
    int rc = fork_into(sb, slot, child, c, lfds, 1);
    if (rc == MPMD_OK) sb->extras[sb->nextras++] = old;
    return rc;
}

/* A reaped child forgotten, so that a recycled pid is never signalled: its slot freed (every
 * thread slot dead) and returned, or -2 for an extra process (its slot is the new child's). */
static int forget_child(struct scoreboard *sb, pid_t pid) {
    for (int s = 0; s < sb->server_limit; s++)
        if (sb->procs[s].pid == pid) {
            sb->procs[s].pid = 0;
            for (int t = 0; t < sb->thread_limit; t++) sb_set(sb, s, t, SLOT_DEAD);
            return s;
        }
    for (int i = 0; i < sb->nextras; i++)
        if (sb->extras[i] == pid) {
            sb->extras[i] = sb->extras[--sb->nextras];
            break;
        }
    return -2;
}

int sb_reap_one(struct scoreboard *sb) {
    pid_t pid = waitpid(-1, NULL, WNOHANG);
    return pid > 0 ? forget_child(sb, pid) : -1;
}

int sb_active(const struct scoreboard *sb) {
    int n = 0;
    for (int p = 0; p < sb->server_limit; p++) n += sb->procs[p].pid && !sb->procs[p].quiescing;
    return n;
}

void sb_signal_children(struct scoreboard *sb, int sig) {
    for (int p = 0; p < sb->server_limit; p++)
        if (sb->procs[p].pid) kill(sb->procs[p].pid, sig);
    for (int i = 0; i < sb->nextras; i++) kill(sb->extras[i], sig);
}

/* Stop: SIGTERM to every child, SIGKILL to those still there after STOP_GRACE_MS (a request
 * that runs for minutes must not keep the server up), and every one reaped. */
void sb_stop_children(struct scoreboard *sb) {
    sb_signal_children(sb, SIGTERM);
    int64_t deadline = mpmd_now_ms() + STOP_GRACE_MS;
    int killed = 0;
    for (;;) {
        pid_t pid = waitpid(-1, NULL, WNOHANG);
        if (pid < 0 && errno == ECHILD) break;
        if (pid < 0 && errno != EINTR) break;
        if (pid > 0) {
            forget_child(sb, pid);
            continue;
        }
        if (!killed && mpmd_now_ms() >= deadline) {
            sb_signal_children(sb, SIGKILL);
            killed = 1;
        }
        struct timespec pause = {0, 20000000};
        nanosleep(&pause, NULL);
    }
}
