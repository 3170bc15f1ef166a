/* Real tickers: never early, deadlines exactly start + k * period (no drift),
 * and each policy's behaviour on a loop that overran, checked only through
 * lower bounds that hold however noisy the machine is. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "tests.h"

#include <keeptime.h>
#include <time.h>

static void busy_for(uint64_t ns) {
    uint64_t end = kt_mono_ns() + ns;
    struct timespec ts = {0, 200000};
    while (kt_mono_ns() < end) nanosleep(&ts, NULL);
}

static void never_early_and_no_drift(int policy, int mode) {
    const uint64_t period = 400000;
    kt_ticker *t = NULL;
    kt_stats stats;
    uint64_t first = 0, start, prev = 0, skipped = 0, late_worst = 0;
    int i, early = 0, drift = 0, order = 0, n = 150;
    CHECK_STATUS(kt_ticker_create((int64_t)period, policy, mode, &t), KT_OK);
    if (!t) return;
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &first), KT_OK);
    start = first - period;
    for (i = 0; i < n; i++) {
        kt_tick tick;
        uint64_t after;
        CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
        after = kt_mono_ns();
        early += after < tick.scheduled_ns;
        drift += tick.scheduled_ns != start + tick.index * period;
        order += tick.index != prev + 1 + tick.skipped;
        if (tick.lateness_ns > after - tick.scheduled_ns) early++;
        if (tick.lateness_ns > late_worst) late_worst = tick.lateness_ns;
        skipped += tick.skipped;
        prev = tick.index;
        if (i % 50 == 49) busy_for(50000); /* a little work now and then */
    }
    CHECK_INT(early, 0);
    CHECK_INT(drift, 0);
    CHECK_INT(order, 0);
    CHECK_STATUS(kt_ticker_stats(t, &stats), KT_OK);
    CHECK_U64(stats.ticks, (uint64_t)n);
    CHECK_U64(stats.skipped, skipped);
    /* A wait that ends in a spin is recorded at its deadline (spec/ticker.md),
     * so the stats never see more than the ticks reported. */
    CHECK(stats.worst_lateness_ns <= late_worst);
    CHECK(stats.missed >= stats.skipped);
    kt_ticker_free(t);
}

void test_ticker_never_early_and_no_drift(void) {
    never_early_and_no_drift(KT_MISSED_SKIP, KT_MODE_EXACT);
    never_early_and_no_drift(KT_MISSED_BURST, KT_MODE_EXACT);
    never_early_and_no_drift(KT_MISSED_SKIP, KT_MODE_SPIN);
    {
        /* The example from the header, verbatim apart from the loop bound. */
        kt_ticker *t = kt_ticker_new(1000000, KT_MISSED_SKIP);
        kt_tick tick;
        int n = 0;
        CHECK(t != NULL);
        while (n < 5 && kt_ticker_wait(t, &tick) == KT_OK) n++;
        CHECK_INT(n, 5);
        kt_ticker_free(t);
    }
}

void test_ticker_policies_on_a_late_loop(void) {
    const uint64_t p = 2000000;
    kt_ticker *t;
    kt_tick tick;
    kt_stats stats;
    uint64_t start, late_from, next;
    int i;

    /* BURST: after overrunning 3+ deadlines, slots 2, 3, 4 come at once, on schedule. */
    t = kt_ticker_new((int64_t)p, KT_MISSED_BURST);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &start), KT_OK);
    start -= p;
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    busy_for(3 * p + p / 2);
    for (i = 2; i <= 4; i++) {
        CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
        CHECK_U64(tick.index, (uint64_t)i);
        CHECK_U64(tick.scheduled_ns, start + (uint64_t)i * p);
        CHECK_U64(tick.skipped, 0);
    }
    CHECK_STATUS(kt_ticker_stats(t, &stats), KT_OK);
    CHECK(stats.missed >= 3);
    CHECK(stats.worst_lateness_ns >= p);
    kt_ticker_free(t);

    /* SKIP: one late tick for the latest passed slot, the ones before it dropped. */
    t = kt_ticker_new((int64_t)p, KT_MISSED_SKIP);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &start), KT_OK);
    start -= p;
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    busy_for(3 * p + p / 2);
    late_from = kt_mono_ns();
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    CHECK(tick.index >= 4);
    CHECK_U64(tick.skipped, tick.index - 2);
    CHECK_U64(tick.scheduled_ns, start + tick.index * p);
    CHECK(tick.scheduled_ns <= kt_mono_ns());
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    CHECK_U64(tick.scheduled_ns, start + tick.index * p); /* phase kept */
    CHECK_STATUS(kt_ticker_stats(t, &stats), KT_OK);
    CHECK(stats.skipped >= 2);
    kt_ticker_free(t);

    /* DELAY: the late slot comes at once, then the schedule restarts from then. */
    t = kt_ticker_new((int64_t)p, KT_MISSED_DELAY);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &start), KT_OK);
    start -= p;
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    busy_for(3 * p + p / 2);
    late_from = kt_mono_ns();
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    CHECK_U64(tick.index, 2);
    CHECK_U64(tick.scheduled_ns, start + 2 * p);
    CHECK(tick.lateness_ns >= p);
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &next), KT_OK);
    CHECK(next >= late_from + p);
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    CHECK_U64(tick.index, 3);
    CHECK_U64(tick.scheduled_ns, next);
    kt_ticker_free(t);
}

void test_ticker_reset_and_set_period(void) {
    /* BURST, so a stall of the test machine cannot skip the slot checked below. */
    kt_ticker *t = kt_ticker_new(1000000, KT_MISSED_BURST);
    kt_tick tick;
    uint64_t before, after, next, period;
    CHECK(t != NULL);
    if (!t) return;
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    CHECK_U64(tick.index, 1);
    busy_for(300000);
    before = kt_mono_ns();
    CHECK_STATUS(kt_ticker_reset(t), KT_OK);
    after = kt_mono_ns();
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &next), KT_OK);
    CHECK(next >= before + 1000000 && next <= after + 1000000);
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    CHECK_U64(tick.index, 2); /* slot numbers continue */
    CHECK_U64(tick.scheduled_ns, next);
    CHECK(kt_mono_ns() >= next);

    CHECK_STATUS(kt_ticker_set_period(t, 250000), KT_OK);
    CHECK_STATUS(kt_ticker_period_ns(t, &period), KT_OK);
    CHECK_U64(period, 250000);
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &next), KT_OK);
    CHECK_U64(next, tick.scheduled_ns + 250000);
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    CHECK(kt_mono_ns() >= tick.scheduled_ns);
    kt_ticker_free(t);
}

void test_ticker_from_a_sleepers_settings(void) {
    kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
    kt_ticker *t = NULL;
    kt_tick tick;
    double share = 0;
    uint64_t min_spin = 0;
    int mode = -1;
    CHECK(s != NULL);
    if (!s) return;
    CHECK_STATUS(kt_sleeper_set_tail_target(s, 0.001), KT_OK);
    CHECK_STATUS(kt_sleeper_set_min_spin_ns(s, 30000), KT_OK);
    CHECK_STATUS(kt_ticker_create_with_sleeper(1000000, KT_MISSED_SKIP, NULL, &t), KT_ENULL);
    CHECK_STATUS(kt_ticker_create_with_sleeper(1000000, KT_MISSED_SKIP, s, NULL), KT_ENULL);
    t = (kt_ticker *)&share; /* a failed create sets *out to NULL */
    CHECK_STATUS(kt_ticker_create_with_sleeper(0, KT_MISSED_SKIP, s, &t), KT_EINVAL);
    CHECK(t == NULL);
    CHECK_STATUS(kt_ticker_create_with_sleeper(1000000, 99, s, &t), KT_EINVAL);
    CHECK(t == NULL);
    CHECK_STATUS(kt_ticker_create_with_sleeper(500000, KT_MISSED_BURST, s, &t), KT_OK);
    if (!t) {
        kt_sleeper_free(s);
        return;
    }
    CHECK_STATUS(kt_ticker_tail_target(t, &share), KT_OK);
    CHECK(share == 0.001);
    CHECK_STATUS(kt_ticker_min_spin_ns(t, &min_spin), KT_OK);
    CHECK_U64(min_spin, 30000);
    /* The sleeper stays the caller's: changing it does not change the ticker. */
    CHECK_STATUS(kt_sleeper_set_min_spin_ns(s, 0), KT_OK);
    CHECK_STATUS(kt_ticker_min_spin_ns(t, &min_spin), KT_OK);
    CHECK_U64(min_spin, 30000);
    CHECK_STATUS(kt_sleeper_mode(s, &mode), KT_OK);
    CHECK(mode == KT_MODE_EXACT);
    CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
    CHECK_U64(tick.index, 1);
    CHECK(kt_mono_ns() >= tick.scheduled_ns);
    kt_ticker_free(t);
    kt_sleeper_free(s);
}
