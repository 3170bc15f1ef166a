/* The spec's ticker vectors (spec/vectors/ticker.json), replayed through the
 * C API's kt_schedule: one case per vector, read from the JSON file itself. */
#include "harness.h"
#include "json.h"
#include "tests.h"

#include <keeptime.h>
#include <stdio.h>
#include <string.h>

static uint64_t u64_of(const json *obj, const char *key) {
    uint64_t v = 0;
    int ok = json_u64(json_get(obj, key), &v);
    if (!ok) kt_note("field %s is missing or not an unsigned 64-bit integer", key);
    kt_check(ok, __FILE__, __LINE__, key);
    return v;
}

static int policy_of(const char *name) {
    if (strcmp(name, "skip") == 0) return KT_MISSED_SKIP;
    if (strcmp(name, "burst") == 0) return KT_MISSED_BURST;
    if (strcmp(name, "delay") == 0) return KT_MISSED_DELAY;
    return -1;
}

static void tick_step(kt_schedule *s, const json *step) {
    const json *expect = json_get(step, "expect");
    const json *wait = json_get(expect, "wait_until_ns");
    uint64_t now = u64_of(step, "tick_at");
    kt_step st;
    kt_tick tick;
    CHECK(expect != NULL && wait != NULL);
    if (!expect || !wait) return;
    CHECK_STATUS(kt_schedule_poll(s, now, &st), KT_OK);
    if (wait->type == JSON_NULL) {
        CHECK_INT(st.kind, KT_STEP_NOW);
        tick = st.tick;
    } else {
        CHECK_INT(st.kind, KT_STEP_WAIT);
        CHECK_U64(st.deadline_ns, u64_of(expect, "wait_until_ns"));
        CHECK_STATUS(kt_schedule_woke(s, u64_of(step, "wake_ns"), &tick), KT_OK);
    }
    CHECK_U64(tick.index, u64_of(expect, "index"));
    CHECK_U64(tick.scheduled_ns, u64_of(expect, "scheduled_ns"));
    CHECK_U64(tick.lateness_ns, u64_of(expect, "lateness_ns"));
    CHECK_U64(tick.skipped, u64_of(expect, "skipped"));
}

static void replay(const json *c) {
    const json *policy = json_get(c, "policy");
    const json *steps = json_get(c, "steps");
    kt_schedule *s = NULL;
    size_t i;
    CHECK(policy && policy->type == JSON_STRING && policy_of(policy->text) >= 0);
    CHECK(steps && steps->type == JSON_ARRAY && steps->count > 0);
    if (!policy || policy->type != JSON_STRING || !steps || steps->type != JSON_ARRAY) return;
    CHECK_STATUS(kt_schedule_create(u64_of(c, "start_ns"), u64_of(c, "period_ns"),
                                    policy_of(policy->text), &s),
                 KT_OK);
    if (!s) return;
    for (i = 0; i < steps->count; i++) {
        const json *step = steps->items[i];
        const json *stats = json_get(step, "expect_stats");
        kt_note("step %zu", i);
        if (json_get(step, "tick_at")) {
            tick_step(s, step);
        } else if (json_get(step, "reset_at")) {
            CHECK_STATUS(kt_schedule_reset(s, u64_of(step, "reset_at")), KT_OK);
        } else if (json_get(step, "set_period")) {
            const json *err = json_get(step, "expect_error");
            CHECK(err && err->type == JSON_BOOL);
            CHECK_STATUS(kt_schedule_set_period(s, u64_of(step, "set_period")),
                         err && err->boolean ? KT_EINVAL : KT_OK);
        } else if (stats) {
            kt_stats got;
            CHECK_STATUS(kt_schedule_stats(s, &got), KT_OK);
            CHECK_U64(got.ticks, u64_of(stats, "ticks"));
            CHECK_U64(got.missed, u64_of(stats, "missed"));
            CHECK_U64(got.skipped, u64_of(stats, "skipped"));
            CHECK_U64(got.worst_lateness_ns, u64_of(stats, "worst_lateness_ns"));
        } else {
            /* A step kind this replayer does not know: the spec changed. */
            kt_check(0, __FILE__, __LINE__, "known step kind");
        }
    }
    kt_schedule_free(s);
}

void test_spec_ticker_vectors(void) {
    static char names[64][128];
    const char *path = kt_spec_path("vectors/ticker.json");
    const char *error = NULL;
    json *doc = json_parse_file(path, &error);
    const json *cases = json_get(doc, "cases");
    size_t i;
    if (!doc) printf("  cannot read %s: %s\n", path, error ? error : "?");
    CHECK(doc != NULL);
    CHECK(cases && cases->type == JSON_ARRAY && cases->count >= 7);
    if (!cases || cases->type != JSON_ARRAY) {
        json_free(doc);
        return;
    }
    for (i = 0; i < cases->count; i++) {
        const json *name = json_get(cases->items[i], "name");
        char *slot = names[i % 64];
        snprintf(slot, sizeof names[0], "spec_ticker_vectors/%s",
                 name && name->type == JSON_STRING ? name->text : "?");
        kt_case_split(slot);
        replay(cases->items[i]);
    }
    json_free(doc);
}

void test_schedule_saturates_and_never_panics(void) {
    /* Extremes no vector covers: every result must be a status, never an abort. */
    static const uint64_t values[] = {0, 1, 2, 999, UINT64_MAX / 2, UINT64_MAX - 1, UINT64_MAX};
    static const int policies[] = {KT_MISSED_SKIP, KT_MISSED_BURST, KT_MISSED_DELAY};
    size_t a, b, p, k;
    for (p = 0; p < 3; p++)
        for (a = 0; a < sizeof values / sizeof values[0]; a++)
            for (b = 1; b < sizeof values / sizeof values[0]; b++) {
                kt_schedule *s = kt_schedule_new(values[a], values[b], policies[p]);
                CHECK(s != NULL);
                if (!s) continue;
                for (k = 0; k < sizeof values / sizeof values[0]; k++) {
                    kt_step st;
                    kt_tick t;
                    uint64_t next;
                    CHECK_STATUS(kt_schedule_poll(s, values[k], &st), KT_OK);
                    if (st.kind == KT_STEP_WAIT) {
                        CHECK(st.deadline_ns > values[k]);
                        CHECK_STATUS(kt_schedule_woke(s, st.deadline_ns, &t), KT_OK);
                        CHECK_U64(t.lateness_ns, 0);
                    } else {
                        CHECK(st.tick.scheduled_ns <= values[k]);
                    }
                    CHECK_STATUS(kt_schedule_next_deadline_ns(s, &next), KT_OK);
                    CHECK_STATUS(kt_schedule_set_period(s, values[(k + b) % 7] | 1), KT_OK);
                    CHECK_STATUS(kt_schedule_reset(s, values[(a + k) % 7]), KT_OK);
                }
                kt_schedule_free(s);
            }
}
