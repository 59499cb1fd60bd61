/* net.c: the listening socket, accepting with back-off, and the clock. Below http.c and the
 * models, above nothing: main.c, prefork.c and threaded.c call it. */
#define _GNU_SOURCE
#include "mpmd.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int net_listen(const char *host, int port, int backlog, int reuseport, int defer_accept, char *err) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *res = NULL;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    int rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0) {
        snprintf(err, MPMD_ERR_LEN, "Listen %s:%d: %s", host, port, gai_strerror(rc));
        return MPMD_ERR;
    }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) goto err;
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) goto err;
    if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) goto err;
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0) goto err;
    if (listen(fd, backlog) != 0) goto err;
    int defer = 30; /* seconds, as listen.c sets it; the kernel rounds it to 31 s of SYN-ACK retries */
    if (defer_accept && setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof(defer)) != 0)
        fprintf(stderr, "mpmd: TCP_DEFER_ACCEPT: %s\n", strerror(errno)); /* httpd warns and goes on too */
    freeaddrinfo(res);
    return fd;
err:
    snprintf(err, MPMD_ERR_LEN, "Listen %s:%d: %s", host, port, strerror(errno));
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    return MPMD_ERR;
}

/* As httpd does for every connection: no Nagle (a head and a body may go out in separate
 * writes, and with the client's delayed ACK the second would wait ~40 ms), and Timeout on
 * every send, so a client that stops reading a response cannot hold its worker. */
static void socket_setup(int fd, int send_timeout_ms) {
    int one = 1;
    struct timeval tv = {send_timeout_ms / 1000, (send_timeout_ms % 1000) * 1000};
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) /* served anyway, slower */
        fprintf(stderr, "mpmd: setsockopt(connection): %s\n", strerror(errno));
}

int net_accept(int lfd, int send_timeout_ms) {
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) {
        socket_setup(fd, send_timeout_ms);
        return fd;
    }
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        /* The connection stays in the backlog and the listening socket stays readable:
         * back off instead of spinning, and keep serving the connections already open. */
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
        return MPMD_AGAIN;
    }
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) return MPMD_AGAIN;
    fprintf(stderr, "mpmd: accept: %s\n", strerror(errno));
    return MPMD_ERR;
}

int64_t mpmd_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
