/*
 * ticker.c: a 1 kHz loop on an absolute schedule, stopped by Ctrl-C.
 *
 *   cc ticker.c $(pkg-config --cflags --libs keeptime) -o ticker && ./ticker [ticks]
 *
 * Deadlines are start + k * 1 ms, never "now + 1 ms", so the loop does not
 * drift however long its body takes; a body that overruns makes the next
 * tick come at once and skips the slots it missed (KT_MISSED_SKIP).
 */
#include <keeptime.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t stop;

static void on_sigint(int sig) {
    (void)sig;
    stop = 1;
}

/* Asked during a wait when a signal arrives: 0 ends the wait (KT_EINTR). */
static int keep_going(void *ctx) {
    (void)ctx;
    return !stop;
}

int main(int argc, char **argv) {
    long ticks = argc > 1 ? atol(argv[1]) : 1000;
    kt_ticker *t = kt_ticker_new(1000000, KT_MISSED_SKIP); /* 1 kHz */
    kt_tick tick;
    kt_stats stats;
    uint64_t late_sum = 0;
    long n = 0;
    int rc = KT_OK;

    if (!t) return 1;
    signal(SIGINT, on_sigint);
    while (n < ticks && !stop &&
           (rc = kt_ticker_wait_interruptible(t, keep_going, NULL, &tick)) == KT_OK) {
        late_sum += tick.lateness_ns; /* the loop body goes here */
        n++;
    }
    if (rc != KT_OK && rc != KT_EINTR) fprintf(stderr, "kt_ticker_wait: %s\n", kt_strerror(rc));

    kt_ticker_stats(t, &stats);
    printf("%" PRIu64 " ticks, %" PRIu64 " missed, %" PRIu64 " skipped; lateness mean %" PRIu64
           " ns, worst %" PRIu64 " ns\n",
           stats.ticks, stats.missed, stats.skipped, n ? late_sum / (uint64_t)n : 0,
           stats.worst_lateness_ns);
    kt_ticker_free(t);
    return rc == KT_OK || rc == KT_EINTR ? 0 : 1;
}
