/* libFuzzer target for the request head (request.c): `make -C src/mpmd fuzz`,
 * then ./fuzz-request [corpus dir] -max_total_time=N. Built with ASan + UBSan;
 * the checks below turn a wrong answer into a crash the fuzzer reports. */
#include "../mpmd.h"

#include <stdlib.h>
#include <string.h>

static void check(int ok) {
    if (!ok) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct conf c;
    static int ready;
    if (!ready) {
        conf_defaults(&c, MPM_EVENT);
        ready = 1;
    }
    if (size > HEAD_MAX) return 0;
    char *buf = malloc(size ? size : 1); /* exactly the input: ASan sees any over-read */
    if (!buf) return 0;
    memcpy(buf, data, size);
    size_t skip = http_skip_blank_lines(buf, size);
    check(skip <= size);
    char *p = buf + skip;
    size_t n = size - skip;
    /* Arrive in two parts, as from the network: the resumed scan must agree with a fresh one. */
    struct head_scan s1 = {0, 0, 0}, s2 = {0, 0, 0};
    long whole = http_find_head(p, n, &c, &s1);
    long part = http_find_head(p, n / 2, &c, &s2);
    if (part == 0) part = http_find_head(p, n, &c, &s2);
    check(part == whole);
    check(whole <= (long)n);
    if (whole > 0) {
        struct request rq;
        int status = http_parse_head(p, (size_t)whole, &c, &rq);
        check(status == 0 || (status >= 400 && status <= 505));
        if (status == 0) {
            check(rq.method[0] != 0 && rq.target != NULL);
            check(rq.target[0] == '/' || !strcmp(rq.target, "*"));
            check(rq.content_length >= 0 && (rq.minor == 0 || rq.minor == 1));
            check(!(rq.transfer_encoding && rq.content_length));
            char out[4096];
            int dotdot;
            if (http_decode_path(rq.target, out, sizeof(out), &dotdot) == MPMD_OK) {
                check(strlen(out) < sizeof(out));
                /* no path that climbs out of DocumentRoot gets through unflagged */
                if (!dotdot) check(strstr(out, "/../") == NULL && strcmp(out, "/..") != 0);
            }
        }
    }
    free(buf);
    return 0;
}
