/*
 * hello.c: libkeeptime in a few lines. Sleeps precisely, then shows how far
 * past each deadline it returned.
 *
 *   cc hello.c $(pkg-config --cflags --libs keeptime) -o hello && ./hello
 */
#include <keeptime.h>
#include <inttypes.h>
#include <stdio.h>

int main(void) {
    static const int64_t waits_ns[] = {10000, 100000, 1000000};
    size_t i;
    int rc;

    printf("libkeeptime %s\n", kt_version());

    kt_sleep_ns(100000); /* 100 µs, precisely */

    for (i = 0; i < sizeof waits_ns / sizeof waits_ns[0]; i++) {
        uint64_t deadline = kt_now_ns() + (uint64_t)waits_ns[i]; /* CLOCK_MONOTONIC ns */
        uint64_t woke;
        if ((rc = kt_sleep_until_ns(deadline)) != KT_OK) {
            fprintf(stderr, "kt_sleep_until_ns: %s\n", kt_strerror(rc));
            return 1;
        }
        woke = kt_now_ns();
        printf("sleep %7" PRId64 " ns: returned %5" PRIu64 " ns after the deadline\n", waits_ns[i],
               woke - deadline);
    }

    /* Errors are status codes, never aborts. */
    rc = kt_sleep_ns(-1);
    printf("kt_sleep_ns(-1): %s\n", kt_strerror(rc));
    return rc == KT_EINVAL ? 0 : 1;
}
