/* Real sleeps: only what must always hold (never early, a signal does not end
 * a wait early). No timing assertions: the machines are shared and noisy. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "tests.h"

#include <keeptime.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

/* The clock keeptime promises to use, read independently of it. */
/* Durations from "no wait" through spin-only to OS wait + spin. */
static const int64_t durations[] = {0, 1, 100, 1000, 4999, 5000, 10000, 20000, 50000, 100000, 250000, 1000000};
#define N_DURATIONS (sizeof durations / sizeof durations[0])

static int reps(int64_t d) { return d >= 250000 ? 6 : 30; }

void test_now_is_clock_monotonic(void) {
    int i;
    for (i = 0; i < 2000; i++) {
        uint64_t a = kt_mono_ns(), k = kt_now_ns(), b = kt_mono_ns();
        CHECK(a <= k && k <= b);
    }
}

void test_sleep_never_early(void) {
    size_t i;
    int r, early = 0, n = 0;
    for (i = 0; i < N_DURATIONS; i++)
        for (r = 0; r < reps(durations[i]); r++) {
            uint64_t before = kt_mono_ns(), after;
            CHECK_STATUS(kt_sleep_ns(durations[i]), KT_OK);
            after = kt_mono_ns();
            early += after - before < (uint64_t)durations[i];
            n++;
        }
    kt_note("%d sleeps", n);
    CHECK_INT(early, 0);
}

void test_sleep_until_never_early(void) {
    size_t i;
    int r, early = 0;
    for (i = 0; i < N_DURATIONS; i++)
        for (r = 0; r < reps(durations[i]); r++) {
            uint64_t deadline = kt_mono_ns() + (uint64_t)durations[i];
            CHECK_STATUS(kt_sleep_until_ns(deadline), KT_OK);
            early += kt_mono_ns() < deadline;
        }
    CHECK_INT(early, 0);
}

static void sleeper_never_early(int mode, uint32_t flags) {
    kt_sleeper *s = NULL;
    size_t i;
    int r, early = 0, bad_woke = 0;
    CHECK_STATUS(kt_sleeper_create(mode, flags, &s), KT_OK);
    if (!s) return;
    for (i = 0; i < N_DURATIONS; i++)
        for (r = 0; r < reps(durations[i]); r++) {
            uint64_t woke = 0, deadline, after, before = kt_mono_ns();
            CHECK_STATUS(kt_sleeper_sleep_ns(s, durations[i]), KT_OK);
            after = kt_mono_ns();
            early += after - before < (uint64_t)durations[i];
            deadline = after + (uint64_t)durations[i];
            CHECK_STATUS(kt_sleeper_sleep_until_ns(s, deadline, &woke), KT_OK);
            after = kt_mono_ns();
            early += woke < deadline || after < deadline;
            bad_woke += woke > after;
        }
    CHECK_INT(early, 0);
    CHECK_INT(bad_woke, 0);
    kt_sleeper_free(s);
}

void test_sleeper_modes_never_early(void) {
    sleeper_never_early(KT_MODE_EXACT, 0);
    sleeper_never_early(KT_MODE_SPIN, 0);
    sleeper_never_early(KT_MODE_EXACT, KT_SLEEPER_KEEP_TIMER_SLACK);
}

void test_sleeper_efficient_returns(void) {
    /* Efficient may end early by design: only check it works and reports sanely. */
    kt_sleeper *s = kt_sleeper_new(KT_MODE_EFFICIENT);
    int i, bad = 0;
    CHECK(s != NULL);
    if (!s) return;
    for (i = 0; i < 40; i++) {
        uint64_t start = kt_mono_ns(), woke = 0, deadline = start + 100000;
        CHECK_STATUS(kt_sleeper_sleep_until_ns(s, deadline, &woke), KT_OK);
        bad += woke < start || woke > kt_mono_ns();
    }
    CHECK_INT(bad, 0);
    kt_sleeper_free(s);
}

struct worker {
    pthread_t thread;
    int seed, early, failed_calls;
};

static void *worker_main(void *arg) {
    struct worker *w = arg;
    kt_sleeper *own = kt_sleeper_new(KT_MODE_EXACT);
    int i;
    for (i = 0; i < 60; i++) {
        int64_t d = 10000 + (int64_t)((w->seed * 7919 + i * 104729) % 190000);
        uint64_t before = kt_mono_ns();
        /* Alternate the thread's own sleeper and an explicit one. */
        if (i % 2 == 0) w->failed_calls += kt_sleep_ns(d) != KT_OK;
        else w->failed_calls += kt_sleeper_sleep_ns(own, d) != KT_OK;
        w->early += kt_mono_ns() - before < (uint64_t)d;
    }
    kt_sleeper_free(own);
    return NULL;
}

void test_threads_never_early(void) {
    struct worker workers[4];
    int i, early = 0, failed = 0;
    memset(workers, 0, sizeof workers);
    for (i = 0; i < 4; i++) {
        workers[i].seed = i + 1;
        CHECK_INT(pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(workers[i].thread, NULL);
        early += workers[i].early;
        failed += workers[i].failed_calls;
    }
    CHECK_INT(early, 0);
    CHECK_INT(failed, 0);
}

/* ---- interrupting a wait: a helper thread keeps signalling the waiter ---- */

static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t stop_signalling;

static void on_signal(int sig) {
    (void)sig;
    got_signal = 1;
}

static int keep_going_until_signal(void *ctx) {
    int *calls = ctx;
    (*calls)++;
    return !got_signal;
}

struct signaller {
    pthread_t target, thread;
    long interval_ns;
};

static void *signaller_main(void *arg) {
    struct signaller *s = arg;
    struct timespec ts = {0, 0};
    ts.tv_nsec = s->interval_ns;
    while (!stop_signalling) {
        nanosleep(&ts, NULL);
        if (!stop_signalling) pthread_kill(s->target, SIGUSR1);
    }
    return NULL;
}

static void start_signalling(struct signaller *s, long interval_ns) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: waits see EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    got_signal = 0;
    stop_signalling = 0;
    s->target = pthread_self();
    s->interval_ns = interval_ns;
    pthread_create(&s->thread, NULL, signaller_main, s);
}

static void stop(struct signaller *s) {
    stop_signalling = 1;
    pthread_join(s->thread, NULL);
    /* The handler stays installed: a last SIGUSR1 may still be on its way. */
}

void test_interrupt_stops_a_long_sleep(void) {
    struct signaller sig;
    kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
    uint64_t deadline, woke = 0;
    int calls = 0, i, early = 0;
    CHECK(s != NULL);
    if (!s) return;

    /* Without a callback, signals only resume the wait: never early. */
    start_signalling(&sig, 1000000);
    for (i = 0; i < 20; i++) {
        deadline = kt_mono_ns() + 3000000;
        CHECK_STATUS(kt_sleeper_sleep_until_ns(s, deadline, &woke), KT_OK);
        early += woke < deadline || kt_mono_ns() < deadline;
        CHECK_STATUS(kt_sleeper_sleep_until_ns_interruptible(s, kt_mono_ns() + 1000000, NULL, NULL, &woke), KT_OK);
    }
    stop(&sig);
    CHECK_INT(early, 0);

    /* With one, the first signal ends a 60 s wait with KT_EINTR. */
    start_signalling(&sig, 5000000);
    deadline = kt_mono_ns() + UINT64_C(60000000000);
    CHECK_STATUS(kt_sleeper_sleep_until_ns_interruptible(s, deadline, keep_going_until_signal, &calls, &woke),
                 KT_EINTR);
    stop(&sig);
    CHECK(calls >= 1);
    CHECK(woke < deadline);
    CHECK(woke <= kt_mono_ns());
    kt_sleeper_free(s);
}

void test_interrupt_stops_a_ticker_wait(void) {
    struct signaller sig;
    kt_ticker *t = NULL;
    kt_tick tick, untouched;
    kt_stats stats;
    uint64_t before = 0, after = 1;
    int calls = 0;
    CHECK_STATUS(kt_ticker_create(INT64_C(60000000000), KT_MISSED_SKIP, KT_MODE_EXACT, &t), KT_OK);
    if (!t) return;
    memset(&tick, 0xA5, sizeof tick);
    untouched = tick;
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &before), KT_OK);
    start_signalling(&sig, 5000000);
    CHECK_STATUS(kt_ticker_wait_interruptible(t, keep_going_until_signal, &calls, &tick), KT_EINTR);
    stop(&sig);
    CHECK(calls >= 1);
    CHECK(memcmp(&tick, &untouched, sizeof tick) == 0); /* nothing delivered */
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &after), KT_OK);
    CHECK_U64(after, before); /* and no slot used */
    CHECK_STATUS(kt_ticker_stats(t, &stats), KT_OK);
    CHECK_U64(stats.ticks, 0);
    kt_ticker_free(t);
}
