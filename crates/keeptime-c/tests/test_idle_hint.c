/* The opt-in idle-latency hint (spec/idle-hint.md): bad values are
 * KT_EINVAL and request nothing; a held request writes the strictest live
 * value and ends with its last holder; a refusal is KT_OK, warns once per
 * process on stderr, and the sleeper still never wakes early.
 *
 * The real /dev/cpu_dma_latency is never touched: kt_testing_set_idle_hint_device
 * points the process's requests at a temporary file (held) or a path that
 * does not exist (refused). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "tests.h"

#include <keeptime.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A fresh empty file standing in for the device; its path in `path`. */
static int fake_device(char *path, size_t len) {
    int fd;
    snprintf(path, len, "/tmp/keeptime-c-idle-hint-XXXXXX");
    fd = mkstemp(path);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* The last value written to the fake device (native-endian s32), or -1. */
static long long last_written(const char *path) {
    FILE *f = fopen(path, "rb");
    int32_t v;
    long long out = -1;
    if (!f) return -1;
    if (fseek(f, -4, SEEK_END) == 0 && fread(&v, sizeof v, 1, f) == 1) out = v;
    fclose(f);
    return out;
}

static void check_status(const kt_idle_hint_status *h, int state, int refusal, long long asked,
                         long long in_force) {
    CHECK_INT(h->state, state);
    CHECK_INT(h->refusal, refusal);
    CHECK_INT(h->asked_us, asked);
    CHECK_INT(h->in_force_us, in_force);
}

void test_idle_hint_abi_and_bad_values(void) {
    static const int64_t bad[] = {-2, -100, INT64_MIN, KT_IDLE_HINT_MAX_US + 1, 4294967296LL, INT64_MAX};
    char dev[64];
    kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
    kt_ticker *t = kt_ticker_new(1000000, KT_MISSED_SKIP);
    kt_idle_hint_status h;
    size_t i;

    CHECK_INT(KT_IDLE_HINT_NONE, -1);
    CHECK(KT_IDLE_HINT_MAX_US == 2147483647LL);
    CHECK_INT(KT_IDLE_HINT_NOT_ASKED, 0);
    CHECK_INT(KT_IDLE_HINT_HELD, 1);
    CHECK_INT(KT_IDLE_HINT_REFUSED, 2);
    CHECK_INT(KT_IDLE_REFUSED_NONE, 0);
    CHECK_INT(KT_IDLE_REFUSED_NO_DEVICE, 1);
    CHECK_INT(KT_IDLE_REFUSED_NOT_PERMITTED, 2);
    CHECK_INT(KT_IDLE_REFUSED_OTHER, 3);
    CHECK_INT(sizeof(kt_idle_hint_status), 24);
    CHECK_INT(offsetof(kt_idle_hint_status, asked_us), 8);
    CHECK(s != NULL && t != NULL);
    CHECK(fake_device(dev, sizeof dev) == 0);
    if (!s || !t) return;
    CHECK_STATUS(kt_testing_set_idle_hint_device(dev), KT_OK);

    CHECK_STATUS(kt_sleeper_set_idle_hint(NULL, 0), KT_ENULL);
    CHECK_STATUS(kt_sleeper_idle_hint(NULL, &h), KT_ENULL);
    CHECK_STATUS(kt_sleeper_idle_hint(s, NULL), KT_ENULL);
    CHECK_STATUS(kt_ticker_set_idle_hint(NULL, 0), KT_ENULL);
    CHECK_STATUS(kt_ticker_idle_hint(NULL, &h), KT_ENULL);
    CHECK_STATUS(kt_ticker_idle_hint(t, NULL), KT_ENULL);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kt_note("value %lld", (long long)bad[i]);
        CHECK_STATUS(kt_sleeper_set_idle_hint(s, bad[i]), KT_EINVAL);
        CHECK_STATUS(kt_ticker_set_idle_hint(t, bad[i]), KT_EINVAL);
    }
    CHECK_STATUS(kt_sleeper_idle_hint(s, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_NOT_ASKED, KT_IDLE_REFUSED_NONE, -1, -1);
    CHECK_STATUS(kt_ticker_idle_hint(t, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_NOT_ASKED, KT_IDLE_REFUSED_NONE, -1, -1);
    CHECK_INT(file_size(dev), 0); /* nothing was requested */

    /* The top of the range is accepted. */
    CHECK_STATUS(kt_sleeper_set_idle_hint(s, KT_IDLE_HINT_MAX_US), KT_OK);
    CHECK_STATUS(kt_sleeper_idle_hint(s, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_HELD, KT_IDLE_REFUSED_NONE, 2147483647LL, 2147483647LL);
    CHECK(last_written(dev) == 2147483647LL);
    /* A rejected value leaves the held hint as it was. */
    CHECK_STATUS(kt_sleeper_set_idle_hint(s, -2), KT_EINVAL);
    CHECK_STATUS(kt_sleeper_idle_hint(s, &h), KT_OK);
    CHECK_INT(h.state, KT_IDLE_HINT_HELD);

    kt_sleeper_free(s);
    kt_ticker_free(t);
    CHECK_STATUS(kt_testing_set_idle_hint_device(NULL), KT_OK);
    remove(dev);
}

void test_idle_hint_strictest_live_value_is_in_force(void) {
    char dev[64];
    kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
    kt_ticker *t = kt_ticker_new(200000, KT_MISSED_SKIP);
    kt_idle_hint_status h;
    kt_tick tick;
    int i, early = 0;
    CHECK(s != NULL && t != NULL);
    CHECK(fake_device(dev, sizeof dev) == 0);
    if (!s || !t) return;
    CHECK_STATUS(kt_testing_set_idle_hint_device(dev), KT_OK);

    CHECK_STATUS(kt_sleeper_set_idle_hint(s, 50), KT_OK);
    CHECK_STATUS(kt_sleeper_idle_hint(s, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_HELD, KT_IDLE_REFUSED_NONE, 50, 50);
    CHECK_INT(last_written(dev), 50);

    CHECK_STATUS(kt_ticker_set_idle_hint(t, 0), KT_OK); /* stricter: written */
    CHECK_INT(last_written(dev), 0);
    CHECK_STATUS(kt_sleeper_idle_hint(s, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_HELD, KT_IDLE_REFUSED_NONE, 50, 0);
    CHECK_STATUS(kt_ticker_idle_hint(t, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_HELD, KT_IDLE_REFUSED_NONE, 0, 0);

    /* Both still wait as ever: never early. */
    for (i = 0; i < 20; i++) {
        uint64_t deadline = kt_mono_ns() + 100000;
        CHECK_STATUS(kt_sleeper_sleep_until_ns(s, deadline, NULL), KT_OK);
        early += kt_mono_ns() < deadline;
        CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
        early += kt_mono_ns() < tick.scheduled_ns;
    }
    CHECK_INT(early, 0);

    kt_ticker_free(t); /* the strictest goes: relaxed to the sleeper's 50 */
    CHECK_INT(last_written(dev), 50);
    CHECK_STATUS(kt_sleeper_idle_hint(s, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_HELD, KT_IDLE_REFUSED_NONE, 50, 50);
    CHECK_STATUS(kt_sleeper_set_idle_hint(s, KT_IDLE_HINT_NONE), KT_OK);
    CHECK_STATUS(kt_sleeper_idle_hint(s, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_NOT_ASKED, KT_IDLE_REFUSED_NONE, -1, -1);
    CHECK_INT(file_size(dev), 12); /* 50, 0, 50: nothing else was written */
    kt_sleeper_free(s);
    CHECK_STATUS(kt_testing_set_idle_hint_device(NULL), KT_OK);
    remove(dev);
}

void test_idle_hint_refused_warns_once(void) {
    char log_path[64], line[512], extra[512];
    const char *missing = "/nonexistent-keeptime-test/cpu_dma_latency";
    kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
    kt_ticker *t = kt_ticker_new(100000, KT_MISSED_SKIP);
    kt_idle_hint_status h;
    int saved, i, early = 0, lines = 0;
    FILE *log;
    CHECK(s != NULL && t != NULL);
    CHECK(fake_device(log_path, sizeof log_path) == 0);
    if (!s || !t) return;
    CHECK_STATUS(kt_testing_set_idle_hint_device(missing), KT_OK);

    /* Catch what keeptime writes to stderr (fd 2) meanwhile. */
    fflush(stderr);
    saved = dup(2);
    log = fopen(log_path, "w");
    CHECK(saved >= 0 && log != NULL);
    if (saved < 0 || !log) return;
    dup2(fileno(log), 2);
    CHECK_STATUS(kt_sleeper_set_idle_hint(s, 0), KT_OK);   /* refused: not an error */
    CHECK_STATUS(kt_ticker_set_idle_hint(t, 10), KT_OK);   /* refused again: no second line */
    CHECK_STATUS(kt_sleeper_set_idle_hint(s, 5), KT_OK);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(log);

    CHECK_STATUS(kt_sleeper_idle_hint(s, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_REFUSED, KT_IDLE_REFUSED_NO_DEVICE, 5, -1);
    CHECK_STATUS(kt_ticker_idle_hint(t, &h), KT_OK);
    check_status(&h, KT_IDLE_HINT_REFUSED, KT_IDLE_REFUSED_NO_DEVICE, 10, -1);

    log = fopen(log_path, "r");
    CHECK(log != NULL);
    if (log) {
        line[0] = '\0';
        if (fgets(line, sizeof line, log)) lines++;
        while (fgets(extra, sizeof extra, log)) lines++;
        fclose(log);
    }
    kt_note("stderr: %s", line);
    CHECK_INT(lines, 1);
    CHECK(strncmp(line, "keeptime: warning: ", 19) == 0);
    CHECK(strstr(line, missing) != NULL);
    CHECK(strstr(line, "no such device") != NULL);
    CHECK(strstr(line, "; sleeping without the idle-latency hint\n") != NULL);

    /* The refused sleeper and ticker wait exactly as without the hint. */
    for (i = 0; i < 20; i++) {
        uint64_t deadline = kt_mono_ns() + 100000;
        kt_tick tick;
        CHECK_STATUS(kt_sleeper_sleep_until_ns(s, deadline, NULL), KT_OK);
        early += kt_mono_ns() < deadline;
        CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
        early += kt_mono_ns() < tick.scheduled_ns;
    }
    CHECK_INT(early, 0);

    kt_sleeper_free(s);
    kt_ticker_free(t);
    CHECK_STATUS(kt_testing_set_idle_hint_device(NULL), KT_OK);
    remove(log_path);
}
