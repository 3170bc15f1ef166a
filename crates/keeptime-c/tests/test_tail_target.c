/* A sleeper's tail target and stats: bad targets are KT_EINVAL and
 * change nothing (no clamping), the target round-trips, and the stats of real
 * sleeps hold their invariants. No timing assertions: the machines are shared. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "tests.h"

#include <keeptime.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

void test_errors_tail_target(void) {
    static const double bad[] = {0.0, -0.0, -0.01, 1.0, 1.5, 5e-7, 9.99e-7, 0.9999996, 1e300, -1e300};
    kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
    double share = -1;
    kt_sleep_stats st;
    size_t i;
    CHECK(s != NULL);
    if (!s) return;

    CHECK_STATUS(kt_sleeper_set_tail_target(NULL, KT_TAIL_STRICT), KT_ENULL);
    CHECK_STATUS(kt_sleeper_tail_target(NULL, &share), KT_ENULL);
    CHECK_STATUS(kt_sleeper_tail_target(s, NULL), KT_ENULL);
    CHECK_STATUS(kt_sleeper_stats(NULL, &st), KT_ENULL);
    CHECK_STATUS(kt_sleeper_stats(s, NULL), KT_ENULL);
    CHECK_STATUS(kt_sleeper_reset_stats(NULL), KT_ENULL);
    CHECK(share == -1);

    CHECK_STATUS(kt_sleeper_set_tail_target(s, KT_TAIL_STRICT), KT_OK);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kt_note("share %g", bad[i]);
        CHECK_STATUS(kt_sleeper_set_tail_target(s, bad[i]), KT_EINVAL);
    }
    CHECK_STATUS(kt_sleeper_set_tail_target(s, (double)NAN), KT_EINVAL);
    CHECK_STATUS(kt_sleeper_set_tail_target(s, (double)INFINITY), KT_EINVAL);
    CHECK_STATUS(kt_sleeper_set_tail_target(s, -(double)INFINITY), KT_EINVAL);
    CHECK_STATUS(kt_sleeper_tail_target(s, &share), KT_OK);
    CHECK(share == KT_TAIL_STRICT); /* unchanged by every rejected call */
    kt_sleeper_free(s);
}

void test_tail_target_round_trips(void) {
    static const double shares[] = {KT_TAIL_RELAXED, KT_TAIL_BALANCED, KT_TAIL_STRICT, 0.002, 0.25, 0.5,
                                    1e-6, 0.999999, 0.123456};
    kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
    double share = 0;
    size_t i;
    CHECK(s != NULL);
    if (!s) return;
    CHECK(KT_TAIL_RELAXED == 0.05 && KT_TAIL_BALANCED == 0.01 && KT_TAIL_STRICT == 0.001);
    CHECK_STATUS(kt_sleeper_tail_target(s, &share), KT_OK);
    CHECK(share == KT_TAIL_BALANCED); /* the default */
    for (i = 0; i < sizeof shares / sizeof shares[0]; i++) {
        CHECK_STATUS(kt_sleeper_set_tail_target(s, shares[i]), KT_OK);
        CHECK_STATUS(kt_sleeper_tail_target(s, &share), KT_OK);
        kt_note("share %.9g read back as %.9g", shares[i], share);
        CHECK(share == shares[i]);
    }
    /* Held in ppm as spec/sleep.md rounds it: round(share * 1e6). */
    CHECK_STATUS(kt_sleeper_set_tail_target(s, 0.0123456), KT_OK);
    CHECK_STATUS(kt_sleeper_tail_target(s, &share), KT_OK);
    CHECK(share == 0.012346);
    /* A mode switch keeps the target. */
    CHECK_STATUS(kt_sleeper_set_mode(s, KT_MODE_SPIN), KT_OK);
    CHECK_STATUS(kt_sleeper_tail_target(s, &share), KT_OK);
    CHECK(share == 0.012346);
    kt_sleeper_free(s);
}

static void check_invariants(const kt_sleep_stats *st, uint64_t calls) {
    /* A sleep whose deadline passed before keeptime looked (the thread was
     * preempted in between) is not counted, so a call need not be a sleep. */
    CHECK(st->sleeps >= 1 && st->sleeps <= calls);
    CHECK(st->late <= st->sleeps);
    CHECK(st->cpu_estimate_ns >= st->spin_ns);
}

void test_sleeper_stats_invariants(void) {
    static const int64_t lengths[] = {2000, 20000, 100000, 300000, 1000000, 2500000};
    static const double targets[] = {KT_TAIL_RELAXED, KT_TAIL_BALANCED, KT_TAIL_STRICT};
    size_t t, i;
    int r;
    for (t = 0; t < 3; t++) {
        kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
        kt_sleep_stats st;
        uint64_t calls = 0;
        CHECK(s != NULL);
        if (!s) return;
        CHECK_STATUS(kt_sleeper_set_tail_target(s, targets[t]), KT_OK);
        CHECK_STATUS(kt_sleeper_stats(s, &st), KT_OK);
        CHECK_U64(st.sleeps, 0);
        CHECK_U64(st.cpu_estimate_ns, 0);
        for (r = 0; r < 4; r++)
            for (i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
                CHECK_STATUS(kt_sleeper_sleep_ns(s, lengths[i]), KT_OK);
                calls++;
            }
        CHECK_STATUS(kt_sleeper_stats(s, &st), KT_OK);
        kt_note("target %g: %llu sleeps, %llu late, %llu OS waits, %llu ns spin, %llu ns CPU est.", targets[t],
                (unsigned long long)st.sleeps, (unsigned long long)st.late, (unsigned long long)st.os_waits,
                (unsigned long long)st.spin_ns, (unsigned long long)st.cpu_estimate_ns);
        check_invariants(&st, calls);
        CHECK(st.os_waits >= 1); /* sleeps of a millisecond and more wait on the OS */
        CHECK(st.spin_ns > 0);   /* and the short ones spin */

        /* Past deadlines are not sleeps; reset starts afresh. */
        CHECK_STATUS(kt_sleeper_reset_stats(s), KT_OK);
        CHECK_STATUS(kt_sleeper_sleep_until_ns(s, 0, NULL), KT_OK);
        CHECK_STATUS(kt_sleeper_sleep_ns(s, 0), KT_OK);
        CHECK_STATUS(kt_sleeper_stats(s, &st), KT_OK);
        CHECK(st.sleeps == 0 && st.late == 0 && st.os_waits == 0 && st.spin_ns == 0 && st.cpu_estimate_ns == 0);
        CHECK_STATUS(kt_sleeper_sleep_ns(s, 50000000), KT_OK); /* no preemption outlasts 50 ms */
        CHECK_STATUS(kt_sleeper_stats(s, &st), KT_OK);
        CHECK_U64(st.sleeps, 1);
        check_invariants(&st, 1);
        kt_sleeper_free(s);
    }
}

void test_sleeper_stats_by_mode(void) {
    kt_sleeper *spin = kt_sleeper_new(KT_MODE_SPIN), *efficient = kt_sleeper_new(KT_MODE_EFFICIENT);
    kt_sleep_stats st;
    int i;
    CHECK(spin != NULL && efficient != NULL);
    if (!spin || !efficient) {
        kt_sleeper_free(spin);
        kt_sleeper_free(efficient);
        return;
    }
    for (i = 0; i < 20; i++) {
        CHECK_STATUS(kt_sleeper_sleep_ns(spin, 50000), KT_OK);
        CHECK_STATUS(kt_sleeper_sleep_ns(efficient, 200000), KT_OK);
    }
    CHECK_STATUS(kt_sleeper_stats(spin, &st), KT_OK);
    check_invariants(&st, 20);
    CHECK(st.os_waits == 0 && st.late == 0); /* a spin never waits on the OS */
    CHECK(st.spin_ns > 0 && st.cpu_estimate_ns == st.spin_ns);
    CHECK_STATUS(kt_sleeper_stats(efficient, &st), KT_OK);
    check_invariants(&st, 20);
    CHECK(st.spin_ns == 0 && st.late == 0); /* no spin, never counted late */
    CHECK(st.os_waits >= 1);
    kt_sleeper_free(spin);
    kt_sleeper_free(efficient);
}
