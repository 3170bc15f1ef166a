/* The test runner: runs every case of tests.h (or those whose name contains
 * argv[1]) and ends with "N passed, N failed". Exit status 0 iff none failed. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "tests.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KT_SPEC_DIR
#define KT_SPEC_DIR "spec"
#endif

static const char *current;
static int current_failed, current_checks, passed, failed, verbose;

static void close_case(void) {
    if (!current) return;
    if (current_failed) {
        failed++;
        printf("FAIL %s\n", current);
    } else {
        passed++;
        printf("ok   %s (%d checks)\n", current, current_checks);
    }
    fflush(stdout);
    current = NULL;
}

void kt_case_split(const char *name) {
    close_case();
    current = name;
    current_failed = 0;
    current_checks = 0;
}

static void fail_line(const char *file, int line, const char *expr, const char *detail) {
    current_failed = 1;
    printf("  %s:%d: check failed: %s%s\n", file, line, expr, detail);
}

void kt_check(int ok, const char *file, int line, const char *expr) {
    current_checks++;
    if (!ok) fail_line(file, line, expr, "");
}

void kt_check_u64(uint64_t got, uint64_t want, const char *file, int line, const char *expr) {
    char detail[96];
    current_checks++;
    if (got == want) return;
    snprintf(detail, sizeof detail, " (got %" PRIu64 ", want %" PRIu64 ")", got, want);
    fail_line(file, line, expr, detail);
}

void kt_check_int(long long got, long long want, const char *file, int line, const char *expr) {
    char detail[96];
    current_checks++;
    if (got == want) return;
    snprintf(detail, sizeof detail, " (got %lld, want %lld)", got, want);
    fail_line(file, line, expr, detail);
}

void kt_note(const char *fmt, ...) {
    va_list ap;
    if (!verbose) return;
    va_start(ap, fmt);
    printf("  note: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

const char *kt_spec_path(const char *name) {
    static char buf[4096];
    const char *dir = getenv("KEEPTIME_SPEC_DIR");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : KT_SPEC_DIR, name);
    return buf;
}

struct test { const char *name; void (*fn)(void); };

#define KT_ENTRY(name) {#name, test_##name},
static const struct test tests[] = { KT_TESTS(KT_ENTRY) };
#undef KT_ENTRY

int main(int argc, char **argv) {
    const char *filter = NULL;
    size_t i;
    for (i = 1; i < (size_t)argc; i++) {
        if (strcmp(argv[i], "-v") == 0) verbose = 1;
        else filter = argv[i];
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (filter && !strstr(tests[i].name, filter)) continue;
        kt_case_split(tests[i].name);
        tests[i].fn();
        close_case();
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

uint64_t kt_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
