/*
 * A very small test harness for libkeeptime's C tests: named cases, checks
 * that report file:line and the values involved, and a closing line
 * "N passed, N failed".
 */
#ifndef KT_TEST_HARNESS_H
#define KT_TEST_HARNESS_H

#include <stdint.h>

/* Records one check; a failed one is printed and fails the current case. */
void kt_check(int ok, const char *file, int line, const char *expr);
void kt_check_u64(uint64_t got, uint64_t want, const char *file, int line, const char *expr);
void kt_check_int(long long got, long long want, const char *file, int line, const char *expr);
/* Strings equal (NULL equals only NULL); a failure shows both, escaped. */
void kt_check_str(const char *got, const char *want, const char *file, int line, const char *expr);

/* Closes the current case (counting it) and opens a new one called `name`:
 * how a test that replays many vectors reports each as its own case. */
void kt_case_split(const char *name);

/* Prints a note under the current case (shown with -v, and on failure). */
void kt_note(const char *fmt, ...);

#define CHECK(cond) kt_check(!!(cond), __FILE__, __LINE__, #cond)
#define CHECK_U64(got, want) kt_check_u64((got), (want), __FILE__, __LINE__, #got " == " #want)
#define CHECK_INT(got, want) kt_check_int((got), (want), __FILE__, __LINE__, #got " == " #want)
#define CHECK_STR(got, want) kt_check_str((got), (want), __FILE__, __LINE__, #got " == " #want)
/* A keeptime call must return the given status. */
#define CHECK_STATUS(call, want) kt_check_int((call), (want), __FILE__, __LINE__, #call " -> " #want)

/* Runs child case `name` (tests.h, KT_CHILDREN) in a process of its own:
 * this test binary again, which puts `env` ("NAME=VALUE", or NULL for
 * none) in its environment before anything else runs, then calls
 * child_<name>(arg). For what a process does once, such as reading
 * KEEPTIME_PROFILE. The child's failed checks are printed as the parent's
 * are; its stderr goes to a file, returned in `*err` (malloc'd, NUL-
 * terminated; NULL if it could not be read). Returns the child's exit
 * status: 0 when all its checks passed, 1 when one failed, 128 + N when
 * signal N ended it, -1 when it could not be started. */
int kt_run_child(const char *name, const char *env, const char *arg, char **err);

/* CLOCK_MONOTONIC now, in ns: the caller's own reading in never-early checks. */
uint64_t kt_mono_ns(void);

/* The path of a file under the repository's spec/ directory (KEEPTIME_SPEC_DIR
 * in the environment, else the directory compiled in). Static buffer. */
const char *kt_spec_path(const char *name);

#endif
