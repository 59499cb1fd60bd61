/* threaded.c: httpd's worker and event MPMs.
 *
 * Each child runs ThreadsPerChild worker threads and one listener (its main
 * thread). worker: the listener accepts only when a thread is idle and hands
 * it the connection, which keeps the thread until it closes, keep-alive idle
 * time included. event: after each response the worker itself puts a keep-alive
 * connection into the process's epoll set (as httpd's worker adds it to the
 * pollset) and is free; the listener hands it to a thread again when the next
 * request arrives, or closes it after KeepAliveTimeout. An event process stops accepting at
 * ThreadsPerChild + idle threads x AsyncRequestWorkerFactor connections.
 * The parent keeps idle threads between MinSpareThreads and MaxSpareThreads.
 * SIGHUP: the old processes finish their connections and exit, new ones start. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKER_FACTOR_SCALE 16 /* event.c keeps AsyncRequestWorkerFactor in 1/16ths */

/* set_worker_factor: the factor in 1/16ths, at least 1 (a double converted as C does). */
static unsigned async_factor_scaled(double f) {
    double scaled = f * WORKER_FACTOR_SCALE;
    unsigned v = scaled >= 0 && scaled < 4294967295.0 ? (unsigned)scaled : 0;
    return v < WORKER_FACTOR_SCALE ? WORKER_FACTOR_SCALE : v;
}

struct job { int fd; int served; int fresh; }; /* fresh: accepted, no worker has started it */

struct child {
    const struct conf *c;
    struct scoreboard *sb;
    int slot, lfd, epfd, wake[2];
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* workers wait here for a job */
    pthread_cond_t idle_cv; /* worker: the listener waits here for an idle thread */
    struct job *queue;
    int qhead, qlen, qcap;
    struct parked *parked; /* event: keep-alive connections by fd, guarded by mu */
    int nparked, nlingering, maxfd, listening;
    int idle, stopping, open_conns;
    int ended;     /* worker: connections its threads have finished (MaxConnectionsPerChild counts these) */
    int unstarted; /* event: fresh connections queued; httpd counts a connection only once a worker
                    * runs it (process_socket), so a listener accepting a burst sees fewer */
    int reserved;  /* event: the listener lost an accept race to another process and holds the idle
                    * worker it had waited for (httpd's have_idle_worker), for its next accept or a
                    * parked request: that worker is not counted idle meanwhile */
    pthread_t *threads;        /* the worker threads, in the order started */
    struct worker_arg *args;
    unsigned char *started;    /* by thread slot */
    int created;
};

/* event: a worker is idle again (whatever became of its connection), so the process may be
 * below its connection limit: wake a listener that stopped listening, as httpd's worker does
 * when it becomes idle, instead of leaving it in its 100 ms wait (a connection handed to the
 * lingering close, parked without a wake-up, halved a 2 x 2 pool's throughput: 40 req/s where
 * httpd served 76). Caller holds mu. */
static void wake_listener(struct child *ch) {
    if (ch->parked && !ch->listening) {
        char b = 0;
        ssize_t ignored = write(ch->wake[1], &b, 1);
        (void)ignored;
    }
}

struct parked { int served; int lingering; int64_t deadline; };
#define LINGER_MS 2000 /* httpd's SECONDS_TO_LINGER */
#define PARKED_MAX 65536

static void push_job(struct child *ch, struct job j) { /* caller holds mu */
    if (ch->qlen == ch->qcap) {
        int ncap = ch->qcap ? ch->qcap * 2 : 64;
        struct job *nq = malloc(sizeof(*nq) * (size_t)ncap);
        if (!nq) { close(j.fd); return; }
        for (int i = 0; i < ch->qlen; i++) nq[i] = ch->queue[(ch->qhead + i) % ch->qcap];
        free(ch->queue);
        ch->queue = nq;
        ch->qcap = ncap;
        ch->qhead = 0;
    }
    ch->queue[(ch->qhead + ch->qlen) % ch->qcap] = j;
    ch->qlen++;
    pthread_cond_signal(&ch->cv);
}

struct worker_arg { struct child *ch; int thread; };
static void start_freed_workers(struct child *ch);

static void *worker_main(void *p) {
    struct worker_arg *wa = p;
    struct child *ch = wa->ch;
    int t = wa->thread;
    struct http_ctx ctx = {ch->c, ch->sb};
    struct conn *cn = malloc(sizeof(*cn)); /* this thread's connection buffer */
    pthread_mutex_lock(&ch->mu);
    for (;;) {
        ch->idle++;
        sb_set(ch->sb, ch->slot, t, SLOT_IDLE);
        pthread_cond_signal(&ch->idle_cv); /* the listener may wait for an idle thread */
        wake_listener(ch);                 /* or have stopped listening */
        while (!ch->qlen && !ch->stopping) pthread_cond_wait(&ch->cv, &ch->mu);
        ch->idle--;
        if (!ch->qlen && ch->stopping) break;
        struct job j = ch->queue[ch->qhead];
        ch->qhead = (ch->qhead + 1) % ch->qcap;
        ch->qlen--;
        ch->unstarted -= j.fresh;
        pthread_mutex_unlock(&ch->mu);
        sb_set(ch->sb, ch->slot, t, SLOT_BUSY);
        if (!cn) {
            close(j.fd);
            pthread_mutex_lock(&ch->mu);
            ch->open_conns--;
            continue;
        }
        http_conn_init(cn, j.fd, j.served);
        if (ch->c->mpm == MPM_WORKER) {
            if (http_serve(cn, &ctx, ch->slot, t)) http_lingering_close(j.fd);
            else close(j.fd);
            pthread_mutex_lock(&ch->mu);
            ch->open_conns--;
            ch->ended++;
            continue;
        }
        /* event: answer what has arrived (pipelined requests included), then give
         * the idle connection back to the listener instead of waiting on it. */
        int keep = 0, r;
        do r = http_handle_one(cn, &ctx, &keep);
        while (r > 0 && keep && cn->have > 0 && !mpmd_stop);
        /* The server ends the connection: shut our side and let the listener finish the
         * lingering close, as httpd's event MPM does, instead of holding this thread. */
        int linger = r != 0 && !(r > 0 && keep) && shutdown(j.fd, SHUT_WR) == 0;
        pthread_mutex_lock(&ch->mu);
        if (((r > 0 && keep) || linger) && !ch->stopping && j.fd < PARKED_MAX) {
            /* Park: the deadline first, then arm the fd (the listener may see it at once). */
            ch->parked[j.fd] = (struct parked){cn->served, linger,
                                               mpmd_now_ms() + (linger ? LINGER_MS : ch->c->keepalive_timeout_ms)};
            ch->nlingering += linger;
            if (j.fd > ch->maxfd) ch->maxfd = j.fd;
            /* ADD here and DEL when the listener dispatches it, as httpd's apr_pollset_add and
             * apr_pollset_remove (one epoll_ctl each way). */
            struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = j.fd};
            if (epoll_ctl(ch->epfd, EPOLL_CTL_ADD, j.fd, &ev) == 0) {
                ch->nparked++;
                continue;
            }
            ch->nlingering -= linger; /* could not watch it: finished below instead */
            ch->parked[j.fd].deadline = 0;
        }
        if (linger) { /* stopping: finish the lingering close here, so no reset reaches the client */
            pthread_mutex_unlock(&ch->mu);
            http_lingering_close(j.fd);
            pthread_mutex_lock(&ch->mu);
        } else {
            close(j.fd); /* also leaves the epoll set */
        }
        ch->open_conns--;
        ch->sb->procs[ch->slot].connections = ch->open_conns;
    }
    sb_set(ch->sb, ch->slot, t, SLOT_DEAD);
    pthread_mutex_unlock(&ch->mu);
    free(cn);
    return NULL;
}

/* The listener waits until a worker is idle and not yet promised a job; it wakes every
 * slice_ms to notice a stop (only one thread of the process receives SIGTERM). */
static int wait_for_idle_worker(struct child *ch, int slice_ms) {
    pthread_mutex_lock(&ch->mu);
    while (ch->idle - ch->qlen <= 0 && !mpmd_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)slice_ms * 1000000L;
        if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
        pthread_cond_timedwait(&ch->idle_cv, &ch->mu, &ts);
        if (ch->created < ch->c->threads_per_child) break; /* threads still to start: back to the caller */
    }
    int idle = ch->idle - ch->qlen > 0;
    pthread_mutex_unlock(&ch->mu);
    return idle;
}

/* event: close a parked connection now. Caller holds mu. */
static void expire_parked_fd(struct child *ch, int fd) {
    ch->nlingering -= ch->parked[fd].lingering;
    ch->parked[fd].deadline = 0;
    ch->nparked--;
    close(fd); /* also leaves the epoll set */
    ch->open_conns--;
    ch->sb->procs[ch->slot].connections = ch->open_conns;
}

/* event: a lingering connection is readable: drop what came; close it at the
 * client's close (or an error), else wait for more. Caller holds mu. */
static void linger_read(struct child *ch, int fd) {
    char sink[512];
    ssize_t n;
    while ((n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0) {}
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return; /* still in the set */
    expire_parked_fd(ch, fd);
}

/* event: close a parked connection gracefully: our side shut, what the client still sends read
 * and dropped until its close or LINGER_MS (httpd's start_lingering_close). Caller holds mu. */
static void start_linger(struct child *ch, int fd) {
    struct parked *pk = &ch->parked[fd];
    pk->lingering = 1;
    ch->nlingering++;
    pk->deadline = mpmd_now_ms() + LINGER_MS;
    if (shutdown(fd, SHUT_WR) == 0) linger_read(ch, fd);
    else { pk->deadline = 1; expire_parked_fd(ch, fd); }
}

/* event: close keep-alive connections idle for longer than KeepAliveTimeout
 * and lingering ones after LINGER_MS.
 * Called every 100 ms by the listener, over the fds parked so far. */
static void expire_parked(struct child *ch, int64_t now) {
    pthread_mutex_lock(&ch->mu);
    for (int fd = 0; fd <= ch->maxfd && ch->nparked; fd++)
        if (ch->parked[fd].deadline && ch->parked[fd].deadline <= now)
            expire_parked_fd(ch, fd);
    pthread_mutex_unlock(&ch->mu);
}

/* event: the idle workers the listener counts (httpd's ap_queue_info_num_idlers): not those
 * promised a queued job, nor the one it holds reserved. Caller holds mu. */
static int idlers(const struct child *ch) { return ch->idle - ch->qlen - ch->reserved; }

/* event: httpd 2.4.71's connections_above_limit (event.c): with no idle worker a process is
 * over its limit; else it is under while its connections, lingering ones not counted, are
 * fewer than ThreadsPerChild + idle workers x the integer part of AsyncRequestWorkerFactor
 * (one idle worker fewer while not listening, so that the listener does not flip-flop).
 * (httpd 2.4.6-2.4.29 multiplied by the fractional factor and had no zero-idle case.)
 * Caller holds mu. */
static int connections_above_limit(const struct child *ch, int tpc) {
    int idle = idlers(ch);
    if (idle <= 0) return 1;
    int conns = ch->open_conns - ch->unstarted, lingering = ch->nlingering;
    unsigned factor = async_factor_scaled(ch->c->async_factor) / WORKER_FACTOR_SCALE;
    if (conns <= lingering) return 0;
    return (unsigned)(conns - lingering) >= (unsigned)tpc + (unsigned)(idle - !ch->listening) * factor;
}

/* Accept one connection (if another process did not take it first) and queue it for a worker.
 * Returns whether it got one. */
static int accept_one(struct child *ch, int *accepted) {
    int fd = net_accept(ch->lfd, ch->c->timeout_ms);
    if (fd < 0) return 0; /* MPMD_AGAIN, or an error net_accept reported: the listener goes on */
    (*accepted)++;
    __atomic_fetch_add(&ch->sb->g->total_connections, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&ch->mu);
    ch->reserved = 0; /* (event: the worker it held takes this one) */
    ch->open_conns++;
    ch->sb->procs[ch->slot].connections = ch->open_conns;
    ch->unstarted++;
    push_job(ch, (struct job){fd, 0, 1});
    pthread_mutex_unlock(&ch->mu);
    return 1;
}

/* worker: reserve an idle thread before accepting (wait for one if none); the thread keeps the
 * connection until it ends. A graceful stop ends accepting at once: the threads finish theirs.
 * MaxConnectionsPerChild counts the connections the threads have finished, looked at before each
 * wait for an idle thread, as httpd's worker.c does (requests_this_child): with every thread busy
 * the listener takes one more connection each time a thread frees, so a child serves up to
 * MaxConnectionsPerChild + ThreadsPerChild - 1. */
static void worker_listener(struct child *ch) {
    int accepted = 0;
    int64_t next_start = mpmd_now_ms() + 1000;
    while (!mpmd_stop && !mpmd_graceful) {
        if (ch->created < ch->c->threads_per_child && mpmd_now_ms() >= next_start) {
            start_freed_workers(ch); /* beside a stopping child: the thread slots it has left since */
            next_start += 1000;
        }
        if (ch->c->max_connections_per_child
            && __atomic_load_n(&ch->ended, __ATOMIC_RELAXED) >= ch->c->max_connections_per_child) break;
        int idle = wait_for_idle_worker(ch, 200);
        if (mpmd_stop || mpmd_graceful) break;
        if (!idle) continue; /* (beside a stopping child, with thread slots still to take) */
        struct pollfd pfd = {.fd = ch->lfd, .events = POLLIN};
        if (poll(&pfd, 1, 200) <= 0) continue;
        accept_one(ch, &accepted);
    }
}

/* event: add the listening socket to the epoll set or take it out. Caller holds mu. */
static void event_listen(struct child *ch, int on) {
    if (on == ch->listening) return;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ch->lfd};
    if (epoll_ctl(ch->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, ch->lfd, &ev) == 0)
        ch->listening = on;
    else
        fprintf(stderr, "mpmd: epoll_ctl(listener): %s\n", strerror(errno));
}

/* event: httpd's process_keepalive_queue(0) after a listener pass that found every worker busy
 * ("kill'em all", every 2.4.x): the idle keep-alive connections are closed, so that their
 * clients come back to a process with room instead of holding this one's connection slots.
 * Caller holds nothing. */
static void close_parked_keepalive(struct child *ch, int busy) {
    pthread_mutex_lock(&ch->mu);
    for (int fd = 0; fd <= ch->maxfd && ch->nparked; fd++)
        if (ch->parked[fd].deadline && !ch->parked[fd].lingering) {
            if (!busy) { /* stopping: a request already on its way is read and dropped, no reset */
                start_linger(ch, fd);
                continue;
            }
            expire_parked_fd(ch, fd);
            __atomic_fetch_add(&ch->sb->g->busy_closed, 1, __ATOMIC_RELAXED);
        }
    pthread_mutex_unlock(&ch->mu);
}

/* event: a parked connection became readable (its next request, or its close). Returns whether
 * it found every worker busy. Caller holds mu. */
static int event_parked_ready(struct child *ch, int fd) {
    struct parked *pk = &ch->parked[fd];
    if (!pk->deadline) return 0;
    if (pk->lingering) {
        linger_read(ch, fd);
    } else if (ch->idle - ch->qlen <= 0) { /* (a reserved worker is there for it) */
        /* As httpd: a keep-alive request does not wait for a worker; with every thread busy
         * the connection is closed (the client retries, maybe on another process). */
        __atomic_fetch_add(&ch->sb->g->busy_closed, 1, __ATOMIC_RELAXED);
        start_linger(ch, fd);
        return 1;
    } else {
        pk->deadline = 0;
        ch->nparked--;
        if (epoll_ctl(ch->epfd, EPOLL_CTL_DEL, fd, NULL) != 0)
            fprintf(stderr, "mpmd: epoll_ctl(del %d): %s\n", fd, strerror(errno));
        push_job(ch, (struct job){fd, pk->served, 0});
        ch->reserved = 0; /* (it took the reserved worker, if there was one) */
    }
    return 0;
}

/* event: one wait on the process's epoll set; returns whether the listening socket is ready, and
 * sets *busy when a keep-alive request found every worker busy. */
static int event_poll(struct child *ch, int64_t *next_scan, int *busy) {
    struct epoll_event evs[64];
    int n = epoll_wait(ch->epfd, evs, 64, 100);
    if (n < 0 && errno != EINTR) fprintf(stderr, "mpmd: epoll_wait: %s\n", strerror(errno));
    int accept_ready = 0;
    for (int i = 0; i < n; i++) {
        int fd = evs[i].data.fd;
        if (fd == ch->wake[0]) {
            char drain[64];
            while (read(ch->wake[0], drain, sizeof(drain)) > 0) {}
        } else if (fd == ch->lfd) {
            accept_ready = 1;
        } else {
            pthread_mutex_lock(&ch->mu);
            *busy |= event_parked_ready(ch, fd);
            pthread_mutex_unlock(&ch->mu);
        }
    }
    int64_t now = mpmd_now_ms();
    if (now >= *next_scan) {
        *next_scan = now + 100;
        expire_parked(ch, now);
    }
    return accept_ready;
}

/* event: the listening socket is ready. As httpd's listener: over the connection limit it stops
 * listening; else it waits for an idle worker and accepts. Returns whether it found every worker
 * busy (over the limit with none idle, or it had to wait). */
static int event_accept(struct child *ch, int tpc, int *accepted) {
    pthread_mutex_lock(&ch->mu);
    int over = connections_above_limit(ch, tpc), none_idle = idlers(ch) <= 0;
    if (over) event_listen(ch, 0);
    pthread_mutex_unlock(&ch->mu);
    if (over) return none_idle;
    /* As httpd's get_worker(blocking): a new connection is accepted only once an idle
     * worker is there to take it, and the listener waits for one meanwhile. Every listener
     * polling the socket wakes for a new connection; one that loses the race (EAGAIN) keeps
     * the worker it waited for reserved, as httpd's does (have_idle_worker), so that worker is
     * not counted idle: with ThreadsPerChild 2, one busy, the process stops accepting. */
    int idle = wait_for_idle_worker(ch, 100);
    if (!mpmd_stop && !mpmd_graceful && !accept_one(ch, accepted) && idle) {
        pthread_mutex_lock(&ch->mu);
        ch->reserved = 1;
        pthread_mutex_unlock(&ch->mu);
    }
    return none_idle;
}

/* event: the listener serves the parked connections, and accepts while under the limit. As
 * httpd's, it stops listening when a connection arrives over the limit, listens again only after
 * a pass that found no worker busy and the process under the limit (should_enable_listensocks),
 * and after a pass that found every worker busy closes its idle keep-alive connections. On a
 * graceful stop it stops accepting, closes its idle keep-alive connections at once (event.c's
 * listener, dying: "kill'em all"; their clients reconnect to the new generation) and drains the
 * rest before the child exits. */
static void event_listener(struct child *ch, int tpc) {
    int accepted = 0, busy = 0;
    int64_t next_scan = 0;
    while (!mpmd_stop) {
        pthread_mutex_lock(&ch->mu);
        int left = ch->open_conns;
        if (mpmd_graceful) event_listen(ch, 0);
        else if (!busy && !connections_above_limit(ch, tpc)) event_listen(ch, 1);
        pthread_mutex_unlock(&ch->mu);
        busy = 0;
        if (mpmd_graceful && left == 0) break;
        if (ch->c->max_connections_per_child && accepted >= ch->c->max_connections_per_child) break;
        if (event_poll(ch, &next_scan, &busy) && !mpmd_graceful && ch->listening)
            busy |= event_accept(ch, tpc, &accepted);
        if (busy || mpmd_graceful) close_parked_keepalive(ch, busy);
    }
}

/* A child's set-up: signals, its locks, the wake-up pipe, event's epoll set and parked table.
 * Any failure ends the child (the parent's maintenance starts another). */
static void child_init(struct child *ch) {
    mpm_child_signals();
    if (pthread_mutex_init(&ch->mu, NULL) || pthread_cond_init(&ch->cv, NULL) ||
        pthread_cond_init(&ch->idle_cv, NULL) || pipe2(ch->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "mpmd: child %d: set-up failed: %s\n", ch->slot, strerror(errno));
        _exit(1);
    }
    if (ch->c->mpm != MPM_EVENT) return;
    ch->parked = calloc(PARKED_MAX, sizeof(*ch->parked));
    ch->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ch->wake[0]};
    if (!ch->parked || ch->epfd < 0 || epoll_ctl(ch->epfd, EPOLL_CTL_ADD, ch->wake[0], &ev) != 0) {
        fprintf(stderr, "mpmd: child %d: epoll set-up failed: %s\n", ch->slot, strerror(errno));
        _exit(1);
    }
}

/* Start the worker threads; returns how many exist. Threads that could not be created are dead
 * slots, not idle ones: the parent's spare-thread count must see only workers that exist (as
 * httpd's worker does, whose child exits when it cannot create a thread; here it keeps what it
 * has). */
static int start_one(struct child *ch, int t) {
    ch->args[ch->created] = (struct worker_arg){ch, t};
    int rc = pthread_create(&ch->threads[ch->created], NULL, worker_main, &ch->args[ch->created]);
    if (rc == 0) {
        ch->started[t] = 1;
        ch->created++;
        return 1;
    }
    sb_set(ch->sb, ch->slot, t, SLOT_DEAD);
    fprintf(stderr, "mpmd: child %d: pthread_create: %s\n", ch->slot, strerror(rc));
    return 0;
}

/* worker, forked beside a stopping child (maintain.c): a thread in each thread slot that child's
 * threads have left, as httpd's start_threads takes only dead ones; the listener calls it again
 * once a second until every thread runs. */
static void start_freed_workers(struct child *ch) {
    for (int t = 0; t < ch->c->threads_per_child; t++)
        if (!ch->started[t] && ch->sb->slots[ch->slot * ch->sb->thread_limit + t] == SLOT_DEAD) start_one(ch, t);
}

static int start_workers(struct child *ch) {
    int tpc = ch->c->threads_per_child, squatting = ch->sb->procs[ch->slot].squatting;
    if (squatting)
        start_freed_workers(ch);
    else
        for (int t = 0; t < tpc; t++) start_one(ch, t);
    if (ch->created == 0) {
        fprintf(stderr, "mpmd: child %d: no worker thread could be created\n", ch->slot);
        _exit(1);
    }
    if (ch->created < tpc && !squatting)
        fprintf(stderr, "mpmd: child %d: %d of %d worker threads created\n", ch->slot, ch->created, tpc);
    return ch->created;
}

/* Exit: stop accepting, let workers finish what they hold. Parked keep-alive connections whose
 * next request has arrived are answered (with Connection: close), the idle ones closed
 * without a reset. */
static void child_finish(struct child *ch) {
    pthread_mutex_lock(&ch->mu);
    if (ch->parked && !mpmd_stop)
        for (int fd = 0; fd <= ch->maxfd; fd++) {
            if (!ch->parked[fd].deadline) continue;
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            if (!ch->parked[fd].lingering && poll(&pfd, 1, 0) == 1) {
                ch->parked[fd].deadline = 0;
                ch->nparked--;
                (void)epoll_ctl(ch->epfd, EPOLL_CTL_DEL, fd, NULL); /* the child is leaving: the set goes too */
                push_job(ch, (struct job){fd, ch->parked[fd].served, 0});
            } else {
                ch->parked[fd].lingering = 0;
                (void)shutdown(fd, SHUT_WR); /* a peer already gone: close below is all there is */
            }
        }
    ch->stopping = 1;
    pthread_cond_broadcast(&ch->cv);
    pthread_mutex_unlock(&ch->mu);
    for (int t = 0; t < ch->created; t++) pthread_join(ch->threads[t], NULL);
    if (ch->parked)
        for (int fd = 0; fd <= ch->maxfd; fd++)
            if (ch->parked[fd].deadline) {
                char sink[512]; /* what arrived since: read, so that close sends no reset */
                while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {}
                close(fd);
            }
}

static void child_main(const struct conf *c, int lfd, struct scoreboard *sb, int slot) {
    struct child ch = {.c = c, .sb = sb, .slot = slot, .lfd = lfd, .epfd = -1};
    child_init(&ch);
    ch.threads = calloc((size_t)c->threads_per_child, sizeof(*ch.threads));
    ch.args = calloc((size_t)c->threads_per_child, sizeof(*ch.args));
    ch.started = calloc((size_t)c->threads_per_child, 1);
    if (!ch.threads || !ch.args || !ch.started) _exit(1);
    int tpc = start_workers(&ch);
    if (c->mpm == MPM_WORKER) worker_listener(&ch);
    else event_listener(&ch, tpc);
    /* The listener has stopped (MaxConnectionsPerChild, a graceful stop): the process is going
     * away, so the parent no longer counts its idle threads, and worker's maintenance may fork
     * into its slot once a thread of it has died (worker.c and event.c set quiescing here too). */
    sb->procs[slot].quiescing = 1;
    child_finish(&ch);
    _exit(0);
}

/* Above MaxSpareThreads: the newest process not already stopping (of `bucket`, -1: any). */
static int newest_child(const struct scoreboard *sb, int buckets, int bucket) {
    for (int s = sb->server_limit - 1; s >= 0; s--)
        if ((bucket < 0 || s % buckets == bucket) && sb->procs[s].pid && !sb->procs[s].quiescing) return s;
    return -1;
}

void threaded_pool(const struct conf *c, struct pool *p) {
    int max_procs = c->max_request_workers / c->threads_per_child;
    /* event starts processes in any free slot below ServerLimit; worker only below
     * MaxRequestWorkers / ThreadsPerChild, whatever ServerLimit says (worker.c) */
    int slots = c->mpm == MPM_EVENT && c->server_limit > max_procs ? c->server_limit : max_procs;
    *p = (struct pool){.threads = c->threads_per_child, .max_procs = max_procs, .slots = slots,
                       .squats = c->mpm == MPM_WORKER,
                       .min_idle = c->min_spare_threads, .max_idle = c->max_spare_threads, .child = child_main,
                       .victim = newest_child};
}
