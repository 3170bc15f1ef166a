/* Every error path of the C API: NULL pointers, zero and negative periods and
 * durations, unknown modes, policies and flags. Each must return its status
 * code, change nothing, and never abort. */
#include "harness.h"
#include "tests.h"

#include <keeptime.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#ifndef KT_EXPECTED_VERSION
#define KT_EXPECTED_VERSION ""
#endif

void test_status_strings_and_version(void) {
    static const int codes[] = {KT_OK, KT_ENULL, KT_EINVAL, KT_EINTR, KT_EPANIC, KT_EPROFILE};
    size_t i, j;
    for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *m = kt_strerror(codes[i]);
        CHECK(m != NULL && strlen(m) > 0);
        CHECK(strcmp(m, kt_strerror(12345)) != 0);
        for (j = 0; j < i; j++) CHECK(strcmp(m, kt_strerror(codes[j])) != 0);
    }
    CHECK(strcmp(kt_strerror(12345), "unknown keeptime status") == 0);
    CHECK(kt_strerror(-1000) != NULL);
    CHECK(strcmp(kt_strerror(KT_OK), "success") == 0);
    CHECK(kt_version() != NULL);
    if (*KT_EXPECTED_VERSION) CHECK(strcmp(kt_version(), KT_EXPECTED_VERSION) == 0);
}

void test_status_enums_match_the_abi(void) {
    /* The values are part of the ABI: they must never change. */
    CHECK_INT(KT_OK, 0);
    CHECK_INT(KT_ENULL, -1);
    CHECK_INT(KT_EINVAL, -2);
    CHECK_INT(KT_EINTR, -3);
    CHECK_INT(KT_EPANIC, -4);
    CHECK_INT(KT_EPROFILE, -5);
    CHECK_INT(KT_MODE_EXACT, 0);
    CHECK_INT(KT_MODE_EFFICIENT, 1);
    CHECK_INT(KT_MODE_SPIN, 2);
    CHECK_INT(KT_MISSED_SKIP, 0);
    CHECK_INT(KT_MISSED_BURST, 1);
    CHECK_INT(KT_MISSED_DELAY, 2);
    CHECK_INT(KT_STEP_WAIT, 0);
    CHECK_INT(KT_STEP_NOW, 1);
    CHECK_INT(KT_SLEEPER_KEEP_TIMER_SLACK, 1);
    CHECK_INT(KT_SLEEPER_DEFAULT_PROFILE, 2);
    CHECK_INT(sizeof(kt_tick), 32);
    CHECK_INT(sizeof(kt_stats), 32);
    CHECK_INT(sizeof(kt_sleep_stats), 48);
    CHECK_INT(offsetof(kt_sleep_stats, unproven_sleeps), 40);
    CHECK_INT(offsetof(kt_sleep_stats, late), 8);
    CHECK_INT(offsetof(kt_sleep_stats, cpu_estimate_ns), 32);
    CHECK_INT(offsetof(kt_step, tick), 16);
}

void test_errors_sleep(void) {
    uint64_t before = kt_now_ns();
    CHECK_STATUS(kt_sleep_ns(-1), KT_EINVAL);
    CHECK_STATUS(kt_sleep_ns(INT64_MIN), KT_EINVAL);
    CHECK_STATUS(kt_sleep_ns(0), KT_OK);
    CHECK_STATUS(kt_sleep_until_ns(0), KT_OK);
    CHECK_STATUS(kt_sleep_until_ns(before), KT_OK);
    /* A rejected sleep does not wait: these took far less than a 2^63 ns wait. */
    CHECK(kt_now_ns() >= before);
}

void test_errors_sleeper(void) {
    kt_sleeper *s = (kt_sleeper *)&s; /* poisoned: must be overwritten with NULL */
    int mode = -7;
    uint64_t woke = 0;

    CHECK(kt_sleeper_new(3) == NULL);
    CHECK(kt_sleeper_new(-1) == NULL);
    CHECK_STATUS(kt_sleeper_create(KT_MODE_EXACT, 0, NULL), KT_ENULL);
    CHECK_STATUS(kt_sleeper_create(99, 0, &s), KT_EINVAL);
    CHECK(s == NULL);
    s = (kt_sleeper *)&s;
    CHECK_STATUS(kt_sleeper_create(KT_MODE_EXACT, 4, &s), KT_EINVAL);
    CHECK(s == NULL);
    CHECK_STATUS(kt_sleeper_create(KT_MODE_EXACT, 0xFFFFFFFFu, &s), KT_EINVAL);
    CHECK(s == NULL);

    CHECK_STATUS(kt_sleeper_sleep_ns(NULL, 1000), KT_ENULL);
    CHECK_STATUS(kt_sleeper_sleep_until_ns(NULL, 0, &woke), KT_ENULL);
    CHECK_STATUS(kt_sleeper_sleep_until_ns_interruptible(NULL, 0, NULL, NULL, &woke), KT_ENULL);
    CHECK_STATUS(kt_sleeper_mode(NULL, &mode), KT_ENULL);
    CHECK_STATUS(kt_sleeper_set_mode(NULL, KT_MODE_SPIN), KT_ENULL);
    CHECK_INT(mode, -7);

    CHECK_STATUS(kt_sleeper_create(KT_MODE_SPIN, KT_SLEEPER_KEEP_TIMER_SLACK, &s), KT_OK);
    CHECK(s != NULL);
    CHECK_STATUS(kt_sleeper_mode(s, NULL), KT_ENULL);
    CHECK_STATUS(kt_sleeper_sleep_ns(s, -1), KT_EINVAL);
    CHECK_STATUS(kt_sleeper_set_mode(s, 3), KT_EINVAL);
    CHECK_STATUS(kt_sleeper_set_mode(s, -1), KT_EINVAL);
    CHECK_STATUS(kt_sleeper_mode(s, &mode), KT_OK);
    CHECK_INT(mode, KT_MODE_SPIN); /* unchanged by the rejected calls */
    CHECK_STATUS(kt_sleeper_set_mode(s, KT_MODE_EFFICIENT), KT_OK);
    CHECK_STATUS(kt_sleeper_mode(s, &mode), KT_OK);
    CHECK_INT(mode, KT_MODE_EFFICIENT);
    {
        uint64_t min_spin = 7;
        CHECK_STATUS(kt_sleeper_set_min_spin_ns(NULL, 1000), KT_ENULL);
        CHECK_STATUS(kt_sleeper_min_spin_ns(NULL, &min_spin), KT_ENULL);
        CHECK_STATUS(kt_sleeper_min_spin_ns(s, NULL), KT_ENULL);
        CHECK_STATUS(kt_sleeper_min_spin_ns(s, &min_spin), KT_OK);
        CHECK(min_spin == 0);
        CHECK_STATUS(kt_sleeper_set_min_spin_ns(s, 60000), KT_OK);
        CHECK_STATUS(kt_sleeper_set_min_spin_ns(s, -1), KT_EINVAL);
        CHECK_STATUS(kt_sleeper_min_spin_ns(s, &min_spin), KT_OK);
        CHECK(min_spin == 60000); /* unchanged by the rejected call */
    }
    /* woke_ns is optional. */
    CHECK_STATUS(kt_sleeper_sleep_until_ns(s, 0, NULL), KT_OK);
    CHECK_STATUS(kt_sleeper_sleep_until_ns_interruptible(s, 0, NULL, NULL, NULL), KT_OK);
    kt_sleeper_free(s);

    s = kt_sleeper_new(KT_MODE_EXACT);
    CHECK(s != NULL);
    CHECK_STATUS(kt_sleeper_sleep_ns(s, 0), KT_OK);
    kt_sleeper_free(s);
}

void test_errors_ticker(void) {
    kt_ticker *t = (kt_ticker *)&t;
    kt_tick tick;
    kt_stats stats;
    uint64_t u = 7, deadline = 0;
    double share = -1.0;
    int policy = -7;

    CHECK(kt_ticker_new(0, KT_MISSED_SKIP) == NULL);
    CHECK(kt_ticker_new(-1000000, KT_MISSED_SKIP) == NULL);
    CHECK(kt_ticker_new(INT64_MIN, KT_MISSED_BURST) == NULL);
    CHECK(kt_ticker_new(1000000, 3) == NULL);
    CHECK(kt_ticker_new(1000000, -1) == NULL);
    CHECK_STATUS(kt_ticker_create(1000000, KT_MISSED_SKIP, KT_MODE_EXACT, NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_create(0, KT_MISSED_SKIP, KT_MODE_EXACT, &t), KT_EINVAL);
    CHECK(t == NULL);
    t = (kt_ticker *)&t;
    CHECK_STATUS(kt_ticker_create(-5, KT_MISSED_SKIP, KT_MODE_EXACT, &t), KT_EINVAL);
    CHECK(t == NULL);
    CHECK_STATUS(kt_ticker_create(1000000, 42, KT_MODE_EXACT, &t), KT_EINVAL);
    CHECK_STATUS(kt_ticker_create(1000000, KT_MISSED_SKIP, 42, &t), KT_EINVAL);
    CHECK(t == NULL);

    CHECK_STATUS(kt_ticker_wait(NULL, &tick), KT_ENULL);
    CHECK_STATUS(kt_ticker_wait_interruptible(NULL, NULL, NULL, &tick), KT_ENULL);
    CHECK_STATUS(kt_ticker_stats(NULL, &stats), KT_ENULL);
    CHECK_STATUS(kt_ticker_reset(NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_set_period(NULL, 1000), KT_ENULL);
    CHECK_STATUS(kt_ticker_set_mode(NULL, KT_MODE_EXACT), KT_ENULL);
    CHECK_STATUS(kt_ticker_set_tail_target(NULL, KT_TAIL_STRICT), KT_ENULL);
    CHECK_STATUS(kt_ticker_set_min_spin_ns(NULL, 1000), KT_ENULL);
    CHECK_STATUS(kt_ticker_tail_target(NULL, &share), KT_ENULL);
    CHECK_STATUS(kt_ticker_min_spin_ns(NULL, &u), KT_ENULL);
    CHECK_STATUS(kt_ticker_period_ns(NULL, &u), KT_ENULL);
    CHECK_STATUS(kt_ticker_policy(NULL, &policy), KT_ENULL);
    CHECK_STATUS(kt_ticker_next_deadline_ns(NULL, &u), KT_ENULL);
    CHECK_U64(u, 7);
    CHECK_INT(policy, -7);

    /* A 1000 s period: nothing below ever waits for it. */
    t = kt_ticker_new(INT64_C(1000000000000), KT_MISSED_BURST);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &deadline), KT_OK);
    CHECK_STATUS(kt_ticker_wait(t, NULL), KT_ENULL); /* and no wait, no slot used */
    CHECK_STATUS(kt_ticker_wait_interruptible(t, NULL, NULL, NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &u), KT_OK);
    CHECK_U64(u, deadline);
    CHECK_STATUS(kt_ticker_stats(t, NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_period_ns(t, NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_policy(t, NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_set_period(t, 0), KT_EINVAL);
    CHECK_STATUS(kt_ticker_set_period(t, -1), KT_EINVAL);
    /* The sleeper's settings: bad values change nothing. */
    CHECK_STATUS(kt_ticker_set_mode(t, 42), KT_EINVAL);
    CHECK_STATUS(kt_ticker_set_tail_target(t, 0.0), KT_EINVAL);
    CHECK_STATUS(kt_ticker_set_tail_target(t, 1.0), KT_EINVAL);
    CHECK_STATUS(kt_ticker_set_tail_target(t, NAN), KT_EINVAL);
    CHECK_STATUS(kt_ticker_set_tail_target(t, 5e-7), KT_EINVAL);
    CHECK_STATUS(kt_ticker_tail_target(t, &share), KT_OK);
    CHECK(share == KT_TAIL_BALANCED);
    CHECK_STATUS(kt_ticker_set_min_spin_ns(t, -1), KT_EINVAL);
    CHECK_STATUS(kt_ticker_min_spin_ns(t, &u), KT_OK);
    CHECK_U64(u, 0);
    CHECK_STATUS(kt_ticker_tail_target(t, NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_min_spin_ns(t, NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_period_ns(t, &u), KT_OK);
    CHECK_U64(u, UINT64_C(1000000000000)); /* unchanged */
    CHECK_STATUS(kt_ticker_next_deadline_ns(t, &u), KT_OK);
    CHECK_U64(u, deadline);
    CHECK_STATUS(kt_ticker_policy(t, &policy), KT_OK);
    CHECK_INT(policy, KT_MISSED_BURST);
    CHECK_STATUS(kt_ticker_stats(t, &stats), KT_OK);
    CHECK_U64(stats.ticks, 0);
    kt_ticker_free(t);
}

void test_errors_schedule(void) {
    kt_schedule *s = (kt_schedule *)&s;
    kt_step step;
    kt_tick tick;
    kt_stats stats;
    uint64_t u = 7;

    CHECK(kt_schedule_new(0, 0, KT_MISSED_SKIP) == NULL);
    CHECK(kt_schedule_new(0, 1000, 3) == NULL);
    CHECK_STATUS(kt_schedule_create(0, 1000, KT_MISSED_SKIP, NULL), KT_ENULL);
    CHECK_STATUS(kt_schedule_create(0, 0, KT_MISSED_SKIP, &s), KT_EINVAL);
    CHECK(s == NULL);
    s = (kt_schedule *)&s;
    CHECK_STATUS(kt_schedule_create(0, 1000, -1, &s), KT_EINVAL);
    CHECK(s == NULL);

    CHECK_STATUS(kt_schedule_poll(NULL, 0, &step), KT_ENULL);
    CHECK_STATUS(kt_schedule_woke(NULL, 0, &tick), KT_ENULL);
    CHECK_STATUS(kt_schedule_reset(NULL, 0), KT_ENULL);
    CHECK_STATUS(kt_schedule_set_period(NULL, 1), KT_ENULL);
    CHECK_STATUS(kt_schedule_stats(NULL, &stats), KT_ENULL);
    CHECK_STATUS(kt_schedule_next_deadline_ns(NULL, &u), KT_ENULL);
    CHECK_STATUS(kt_schedule_next_index(NULL, &u), KT_ENULL);
    CHECK_U64(u, 7);

    s = kt_schedule_new(100, 1000, KT_MISSED_SKIP);
    CHECK(s != NULL);
    if (!s) return;
    /* NULL out pointers leave the schedule as it was. */
    CHECK_STATUS(kt_schedule_poll(s, 5000, NULL), KT_ENULL);
    CHECK_STATUS(kt_schedule_woke(s, 5000, NULL), KT_ENULL);
    CHECK_STATUS(kt_schedule_next_index(s, &u), KT_OK);
    CHECK_U64(u, 1);
    CHECK_STATUS(kt_schedule_stats(s, NULL), KT_ENULL);
    CHECK_STATUS(kt_schedule_next_deadline_ns(s, NULL), KT_ENULL);
    CHECK_STATUS(kt_schedule_next_index(s, NULL), KT_ENULL);
    CHECK_STATUS(kt_schedule_set_period(s, 0), KT_EINVAL);
    CHECK_STATUS(kt_schedule_next_deadline_ns(s, &u), KT_OK);
    CHECK_U64(u, 1100);
    CHECK_STATUS(kt_schedule_stats(s, &stats), KT_OK);
    CHECK_U64(stats.ticks, 0);
    kt_schedule_free(s);
}

void test_free_null_is_a_noop(void) {
    kt_sleeper_free(NULL);
    kt_ticker_free(NULL);
    kt_schedule_free(NULL);
    kt_string_free(NULL);
    CHECK(1);
}
