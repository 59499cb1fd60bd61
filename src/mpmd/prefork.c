/* prefork.c: one connection per child process, as httpd's prefork MPM.
 *
 * Children block in accept() on the shared listening socket (Linux wakes one).
 * The parent's maintenance (maintain.c) keeps idle children between MinSpareServers
 * and MaxSpareServers, stopping an idle one when there are too many; MaxRequestWorkers
 * caps the children; MaxConnectionsPerChild recycles one. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <unistd.h>

static void child_main(const struct conf *c, int lfd, struct scoreboard *sb, int slot) {
    mpm_child_signals();
    struct http_ctx ctx = {c, sb};
    static struct conn cn; /* one connection at a time: its buffer lives here */
    int connections = 0;
    sb_set(sb, slot, 0, SLOT_IDLE);
    while (!mpmd_stop && !mpmd_graceful) {
        int fd = net_accept(lfd, c->timeout_ms); /* accepted: served, even if told to stop now */
        if (fd == MPMD_AGAIN) continue;
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

/* Above MaxSpareServers: the first idle child not already stopping (of `bucket`, -1: any). */
static int idle_child(const struct scoreboard *sb, int buckets, int bucket) {
    for (int s = 0; s < sb->server_limit; s++)
        if ((bucket < 0 || s % buckets == bucket) && sb->procs[s].pid && !sb->procs[s].quiescing && sb->slots[s * sb->thread_limit] == SLOT_IDLE) return s;
    return -1;
}

void prefork_pool(const struct conf *c, struct pool *p) {
    *p = (struct pool){.threads = 1, .max_procs = c->max_request_workers, .slots = c->max_request_workers,
                       .min_idle = c->min_spare_servers,
                       .max_idle = c->max_spare_servers, .child = child_main, .victim = idle_child};
}
