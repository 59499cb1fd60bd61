/* A keep-alive load client that stamps every request: C connections to 127.0.0.1:PORT, each
 * with one GET of PATH in flight at a time (as ab -k and wrk do), N requests in all; prints a
 * line a request, "connection sent_us answered_us" (CLOCK_MONOTONIC, microseconds from the
 * start), so a tail can be told apart: a stall of everything (many connections slow over the
 * same interval) or a few connections left behind. A connection the server closes is opened
 * again and its request written once more (counted on stderr). One thread, epoll, loopback only.
 *
 *     cc -O2 -o /tmp/stamp_client benchmarks/stamp_client.c
 *     /tmp/stamp_client PORT /index.html 100 50000 > stamps.tsv
 *
 * Used by benchmarks/static_tail.py --stamps (docs/benchmarks.md, "The static tail is the
 * kernel's autogroup"). Responses must carry Content-Length (httpd's static files do). */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF 65536

typedef struct {
    int fd;
    long sent;      /* µs the request in flight was written at (-1: none) */
    size_t got;     /* bytes of the response read so far */
    long need;      /* bytes the whole response has (-1: headers not complete yet) */
    char buf[BUF];
} conn;

static long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static int open_conn(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        perror("connect");
        exit(1);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* The response's whole length once its headers are in, else -1. */
static long response_length(const char *b, size_t n) {
    const char *end = NULL;
    for (size_t i = 3; i < n; i++)
        if (b[i - 3] == '\r' && b[i - 2] == '\n' && b[i - 1] == '\r' && b[i] == '\n') {
            end = b + i + 1;
            break;
        }
    if (!end) return -1;
    const char *cl = NULL;
    for (const char *p = b; p + 15 < end; p++)
        if (strncasecmp(p, "\nContent-Length:", 16) == 0) {
            cl = p + 16;
            break;
        }
    if (!cl) {
        fprintf(stderr, "a response without Content-Length\n");
        exit(1);
    }
    return (long)(end - b) + atol(cl);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s PORT PATH CONNECTIONS REQUESTS\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]), c = atoi(argv[3]);
    long total = atol(argv[4]), started = 0, done = 0, closes = 0;
    if (port <= 0 || c <= 0 || total <= 0) return 2;
    char req[512];
    int len = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", argv[2]);
    conn *cs = calloc((size_t)c, sizeof *cs);
    long *stamps = malloc(sizeof(long) * 3 * (size_t)total);
    int ep = epoll_create1(0);
    long t0 = now_us();
    for (int i = 0; i < c; i++) {
        cs[i].fd = open_conn(port);
        cs[i].sent = -1;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (unsigned)i};
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
    }
    for (int i = 0; i < c && started < total; i++, started++) {
        cs[i].sent = now_us() - t0;
        cs[i].need = -1;
        if (write(cs[i].fd, req, (size_t)len) != len) return 1;
    }
    struct epoll_event evs[256];
    while (done < total) {
        int n = epoll_wait(ep, evs, 256, 10000);
        if (n <= 0) {
            fprintf(stderr, "no response for 10 s (%ld of %ld answered)\n", done, total);
            return 1;
        }
        for (int k = 0; k < n; k++) {
            conn *x = &cs[evs[k].data.u32];
            ssize_t r = read(x->fd, x->buf + x->got, BUF - x->got);
            if (r <= 0) {
                /* closed by the server (event closes keep-alive connections when its workers are
                 * busy): connect again and write the request once more, as ab -r and wrk do; its
                 * time runs on from the first write, and the close is counted */
                epoll_ctl(ep, EPOLL_CTL_DEL, x->fd, NULL);
                close(x->fd);
                closes++;
                x->fd = open_conn(port);
                struct epoll_event ev = {.events = EPOLLIN, .data.u32 = evs[k].data.u32};
                epoll_ctl(ep, EPOLL_CTL_ADD, x->fd, &ev);
                x->got = 0;
                x->need = -1;
                if (x->sent >= 0 && write(x->fd, req, (size_t)len) != len) return 1;
                continue;
            }
            x->got += (size_t)r;
            if (x->need < 0) x->need = response_length(x->buf, x->got);
            if (x->need < 0 || (long)x->got < x->need) continue;
            long t = now_us() - t0;
            stamps[3 * done] = evs[k].data.u32;
            stamps[3 * done + 1] = x->sent;
            stamps[3 * done + 2] = t;
            done++;
            x->got = 0;
            x->need = -1;
            x->sent = -1;
            if (started < total) {
                started++;
                x->sent = now_us() - t0;
                if (write(x->fd, req, (size_t)len) != len) return 1;
            }
        }
    }
    for (long i = 0; i < done; i++) printf("%ld\t%ld\t%ld\n", stamps[3 * i], stamps[3 * i + 1], stamps[3 * i + 2]);
    fprintf(stderr, "%ld connections closed by the server\n", closes);
    return 0;
}
