/* Host profiles: a sleeper's profile written and loaded back, a profile of
 * another machine refused (and loaded when asked to ignore that), bad and
 * truncated files refused with the line, sleepers started from a profile
 * never early, and KEEPTIME_PROFILE reaching the free functions' sleepers
 * (in child processes: it is read once per process). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "tests.h"

#include <keeptime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A fresh temporary file's path in `path` (the file exists, empty). */
static int temp_path(char *path, size_t len) {
    int fd;
    snprintf(path, len, "/tmp/keeptime-c-profile-XXXXXX");
    fd = mkstemp(path);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

/* The file's text (malloc'd, NUL-terminated), or NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    char *text;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) { free(text); text = NULL; }
    if (text) text[n] = '\0';
    fclose(f);
    return text;
}

static void spit(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(text, 1, len, f);
    fclose(f);
}

/* Sleeps `n` times for `d` ns with `s`; returns how many ended early by the
 * caller's own clock. */
static int early_sleeps(kt_sleeper *s, int n, int64_t d) {
    int i, early = 0;
    for (i = 0; i < n; i++) {
        uint64_t deadline = kt_mono_ns() + (uint64_t)d;
        CHECK_STATUS(kt_sleeper_sleep_until_ns(s, deadline, NULL), KT_OK);
        early += kt_mono_ns() < deadline;
    }
    return early;
}

/* Writes a profile of a sleeper that slept a little to `path`. */
static int learned_profile(const char *path) {
    kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
    char *why = NULL;
    int rc;
    if (!s) return -1;
    CHECK_INT(early_sleeps(s, 40, 300000), 0);
    rc = kt_sleeper_write_profile(s, path, &why);
    CHECK_STATUS(rc, KT_OK);
    CHECK(why == NULL);
    kt_sleeper_free(s);
    return rc;
}

/* The profile file at `path`: a profile with samples, loaded on this
 * machine into a new exact sleeper (NULL if any step failed). */
static kt_sleeper *sleeper_from_file(const char *path) {
    kt_profile *p = NULL;
    kt_sleeper *s = NULL;
    char *why = (char *)1;
    char *text = slurp(path);
    CHECK(text != NULL && strncmp(text, "keeptime-profile 1\n", 19) == 0);
    CHECK(text != NULL && strstr(text, "\nbucket ") != NULL);
    free(text);
    CHECK_STATUS(kt_profile_load(path, 0, &p, &why), KT_OK);
    CHECK(p != NULL);
    CHECK(why == NULL);
    CHECK_STATUS(kt_sleeper_create_with_profile(KT_MODE_EXACT, 0, p, &s), KT_OK);
    kt_profile_free(p); /* the sleeper keeps its own copy */
    CHECK(s != NULL);
    return s;
}

void test_profile_loads_and_its_sleepers_are_never_early(void) {
    char path[64];
    kt_sleeper *s;
    if (temp_path(path, sizeof path) != 0 || learned_profile(path) != KT_OK) {
        CHECK(!"a profile was written");
        return;
    }
    s = sleeper_from_file(path);
    if (s) {
        CHECK_INT(early_sleeps(s, 30, 300000), 0);
        CHECK_INT(early_sleeps(s, 10, 1000000), 0);
        CHECK_INT(early_sleeps(s, 30, 20000), 0);
        kt_sleeper_free(s);
    }
    unlink(path);
}

/* Caller-measured early returns of n thread sleeps (kt_sleep_until_ns) of d ns. */
static int early_thread_sleeps(int n, int64_t d) {
    int i, early = 0;
    for (i = 0; i < n; i++) {
        uint64_t deadline = kt_mono_ns() + (uint64_t)d;
        CHECK_STATUS(kt_sleep_until_ns(deadline), KT_OK);
        early += kt_mono_ns() < deadline;
    }
    return early;
}

void test_default_profile_sets_and_clears(void) {
    char path[64];
    kt_profile *p = NULL;
    kt_ticker *t;
    kt_sleeper *s;
    kt_tick tick;
    int i;
    if (temp_path(path, sizeof path) != 0 || learned_profile(path) != KT_OK) {
        CHECK(!"a profile was written");
        return;
    }
    CHECK_INT(early_thread_sleeps(10, 300000), 0);
    CHECK_STATUS(kt_profile_load(path, 0, &p, NULL), KT_OK);
    CHECK_STATUS(kt_set_default_profile(p), KT_OK);
    kt_profile_free(p); /* keeptime keeps its own copy */
    CHECK_INT(early_thread_sleeps(20, 300000), 0);
    /* A ticker made now starts from it: its ticks are never early. */
    t = kt_ticker_new(300000, KT_MISSED_SKIP);
    CHECK(t != NULL);
    for (i = 0; t && i < 20; i++) {
        CHECK_STATUS(kt_ticker_wait(t, &tick), KT_OK);
        CHECK(kt_mono_ns() >= tick.scheduled_ns);
    }
    kt_ticker_free(t);
    /* A sleeper asked for it starts from it; with a profile of its own, the
     * flag is refused. */
    CHECK_STATUS(kt_sleeper_create(KT_MODE_EXACT, KT_SLEEPER_DEFAULT_PROFILE | KT_SLEEPER_KEEP_TIMER_SLACK, &s), KT_OK);
    CHECK(s != NULL);
    if (s) {
        CHECK_INT(early_sleeps(s, 20, 300000), 0);
        kt_sleeper_free(s);
    }
    CHECK_STATUS(kt_profile_load(path, 0, &p, NULL), KT_OK);
    s = (kt_sleeper *)1;
    CHECK_STATUS(kt_sleeper_create_with_profile(KT_MODE_EXACT, KT_SLEEPER_DEFAULT_PROFILE, p, &s), KT_EINVAL);
    CHECK(s == NULL);
    kt_profile_free(p);
    CHECK_STATUS(kt_set_default_profile(NULL), KT_OK);
    CHECK_INT(early_thread_sleeps(10, 300000), 0);
    unlink(path);
}

void test_profile_of_another_machine_is_refused(void) {
    char path[64];
    char *text, *line3, *other;
    kt_profile *p = (kt_profile *)1;
    char *why = NULL;
    if (temp_path(path, sizeof path) != 0 || learned_profile(path) != KT_OK) {
        CHECK(!"a profile was written");
        return;
    }
    text = slurp(path);
    /* Line 2 (cpu_vendor) replaced by another vendor's. */
    line3 = text ? strchr(strchr(text, '\n') + 1, '\n') + 1 : NULL;
    other = malloc(strlen(text ? text : "") + 64);
    if (!text || !line3 || !other) {
        CHECK(!"the profile reads back");
        free(text);
        free(other);
        return;
    }
    sprintf(other, "keeptime-profile 1\ncpu_vendor SomeOtherVendor\n%s", line3);
    spit(path, other, strlen(other));
    CHECK_STATUS(kt_profile_load(path, 0, &p, &why), KT_EPROFILE);
    CHECK(p == NULL);
    CHECK(why != NULL && strstr(why, "line 2") != NULL);
    CHECK(why != NULL && strstr(why, "cpu_vendor") != NULL);
    CHECK(why != NULL && strstr(why, "\"SomeOtherVendor\" in the profile") != NULL);
    CHECK(why != NULL && strstr(why, path) != NULL);
    kt_note("%s", why ? why : "(no message)");
    kt_string_free(why);
    why = NULL;
    CHECK_STATUS(kt_profile_load(path, KT_PROFILE_IGNORE_MACHINE, &p, &why), KT_OK);
    CHECK(p != NULL && why == NULL);
    kt_profile_free(p);
    free(text);
    free(other);
    unlink(path);
}

/* kt_profile_load of `text` fails with KT_EPROFILE and a message holding `needle`. */
static void refused(const char *path, const char *text, size_t len, const char *needle) {
    kt_profile *p = (kt_profile *)1;
    char *why = NULL;
    spit(path, text, len);
    CHECK_STATUS(kt_profile_load(path, KT_PROFILE_IGNORE_MACHINE, &p, &why), KT_EPROFILE);
    CHECK(p == NULL);
    CHECK(why != NULL && strstr(why, needle) != NULL);
    if (why && !strstr(why, needle)) kt_note("%s lacks %s", why, needle);
    kt_string_free(why);
}

void test_profile_bad_files_and_arguments(void) {
    char path[64];
    char *text, *end;
    kt_profile *p = NULL;
    kt_sleeper *s = (kt_sleeper *)1;
    char *why = NULL;
    if (temp_path(path, sizeof path) != 0 || learned_profile(path) != KT_OK) {
        CHECK(!"a profile was written");
        return;
    }
    text = slurp(path);
    end = text ? strstr(text, "\nend\n") : NULL;
    CHECK(end != NULL);
    if (!end) { free(text); return; }
    /* Cut before its last line, and inside a line. */
    refused(path, text, (size_t)(end - text) + 1, "cut short");
    refused(path, text, 30, "cut short");
    refused(path, "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,5000,1,1\n", 56,
            "line 1: not a keeptime profile");
    refused(path, "keeptime-profile 9\n", 19, "version");
    refused(path, "", 0, "line 1");
    {
        /* A bad number on the first sample line. */
        char *bad = malloc(strlen(text) + 8);
        char *first = strstr(text, "\nbucket ");
        if (bad && first) {
            char *sample = strchr(first + 1, '\n') + 1;
            size_t head = (size_t)(sample - text);
            memcpy(bad, text, head);
            sprintf(bad + head, "12x 5\n%s", strchr(sample, '\n') + 1);
            refused(path, bad, strlen(bad), "a whole number");
        }
        free(bad);
    }
    free(text);
    unlink(path);
    refused(path, "", 0, "line 1"); /* recreated empty by refused */
    unlink(path);
    CHECK_STATUS(kt_profile_load(path, 0, &p, &why), KT_EPROFILE);
    CHECK(why != NULL && strstr(why, "cannot read the profile") != NULL);
    kt_string_free(why);
    CHECK_STATUS(kt_profile_load(NULL, 0, &p, NULL), KT_ENULL);
    CHECK_STATUS(kt_profile_load(path, 0, NULL, NULL), KT_ENULL);
    CHECK_STATUS(kt_profile_load(path, 2, &p, NULL), KT_EINVAL);
    CHECK_STATUS(kt_sleeper_create_with_profile(KT_MODE_EXACT, 0, NULL, &s), KT_ENULL);
    CHECK(s == NULL);
    CHECK_STATUS(kt_sleeper_write_profile(NULL, path, NULL), KT_ENULL);
    s = kt_sleeper_new(KT_MODE_EXACT);
    CHECK_STATUS(kt_sleeper_write_profile(s, NULL, NULL), KT_ENULL);
    CHECK_STATUS(kt_sleeper_write_profile(s, "/nonexistent-dir/p.profile", &why), KT_EPROFILE);
    CHECK(why != NULL && strstr(why, "cannot write the profile") != NULL);
    kt_string_free(why);
    kt_sleeper_free(s);
    kt_profile_free(NULL);
    CHECK_INT(KT_EPROFILE, -5);
    CHECK_INT(KT_PROFILE_IGNORE_MACHINE, 1);
}

/* kt_thread_write_profile: what this thread's kt_sleep* sleeper learned, a
 * profile of this machine that loads back and starts a sleeper. */
void test_thread_profile_is_what_the_free_functions_learned(void) {
    char path[64];
    kt_sleeper *s;
    char *why = (char *)1;
    if (temp_path(path, sizeof path) != 0) {
        CHECK(!"a temporary file");
        return;
    }
    CHECK_INT(early_thread_sleeps(30, 300000), 0);
    CHECK_STATUS(kt_thread_write_profile(path, &why), KT_OK);
    CHECK(why == NULL);
    s = sleeper_from_file(path);
    if (s) {
        CHECK_INT(early_sleeps(s, 10, 300000), 0);
        kt_sleeper_free(s);
    }
    unlink(path);
    CHECK_STATUS(kt_thread_write_profile(NULL, NULL), KT_ENULL);
    CHECK_STATUS(kt_thread_write_profile("/nonexistent-dir/p.profile", &why), KT_EPROFILE);
    CHECK(why != NULL && strstr(why, "cannot write the profile") != NULL);
    kt_string_free(why);
}

/* KEEPTIME_PROFILE: the default profile from the environment, read once per
 * process (spec/estimator.md, Default sleepers, From the environment). Each
 * case runs in a child process (kt_run_child) with the variable set before
 * any keeptime call; the child checks what keeptime's own sleepers start
 * from, the parent what it wrote to stderr. */

/* Samples in a profile's text: the sum of N over its "bucket B N" lines. */
static long profile_samples(const char *text) {
    long total = 0;
    while (text && *text) {
        unsigned bucket;
        long n;
        if (sscanf(text, "bucket %u %ld", &bucket, &n) == 2) total += n;
        text = strchr(text, '\n');
        if (text) text++;
    }
    return total;
}

/* Whether profile text `after` has every bucket of `before`, with at least
 * one sample. */
static int keeps_buckets(const char *after, const char *before) {
    const char *line = before;
    while (after && line && (line = strstr(line, "\nbucket ")) != NULL) {
        char head[48];
        const char *section;
        unsigned bucket;
        long n, m;
        line++;
        if (sscanf(line, "bucket %u %ld", &bucket, &n) != 2) return 0;
        snprintf(head, sizeof head, "\nbucket %u ", bucket);
        section = strstr(after, head);
        if (!section || sscanf(section + 1, "bucket %u %ld", &bucket, &m) != 2 || m < 1) return 0;
    }
    return after != NULL;
}

/* What kt_thread_write_profile writes now (malloc'd), or NULL. */
static char *thread_profile_text(void) {
    char path[64];
    char *why = NULL, *text;
    if (temp_path(path, sizeof path) != 0) {
        CHECK(!"a temporary file");
        return NULL;
    }
    CHECK_STATUS(kt_thread_write_profile(path, &why), KT_OK);
    CHECK(why == NULL);
    kt_string_free(why);
    text = slurp(path);
    unlink(path);
    CHECK(text != NULL && strncmp(text, "keeptime-profile 1\n", 19) == 0);
    return text;
}

/* What kt_sleeper_write_profile writes of `s` now (malloc'd), or NULL. */
static char *sleeper_profile_text(const kt_sleeper *s) {
    char path[64];
    char *text;
    if (temp_path(path, sizeof path) != 0) {
        CHECK(!"a temporary file");
        return NULL;
    }
    CHECK_STATUS(kt_sleeper_write_profile(s, path, NULL), KT_OK);
    text = slurp(path);
    unlink(path);
    CHECK(text != NULL && strncmp(text, "keeptime-profile 1\n", 19) == 0);
    return text;
}

/* What a sleeper made with `flags` starts from (malloc'd), or NULL. */
static char *new_sleeper_profile_text(uint32_t flags) {
    kt_sleeper *s = NULL;
    char *text = NULL;
    CHECK_STATUS(kt_sleeper_create(KT_MODE_EXACT, flags, &s), KT_OK);
    if (s) text = sleeper_profile_text(s);
    kt_sleeper_free(s);
    return text;
}

/* Caller-measured early returns of n kt_sleep_ns(d). */
static int early_sleep_ns(int n, int64_t d) {
    int i, early = 0;
    for (i = 0; i < n; i++) {
        uint64_t deadline = kt_mono_ns() + (uint64_t)d;
        CHECK_STATUS(kt_sleep_ns(d), KT_OK);
        early += kt_mono_ns() < deadline;
    }
    return early;
}

/* Child: KEEPTIME_PROFILE names `path`, a good profile, and the first
 * default sleeper is this thread's. */
void child_env_profile_loaded(const char *path) {
    char *file = slurp(path), *before, *asked, *own, *after, *again;
    char after_path[64];
    kt_sleeper *s;
    CHECK(file != NULL && profile_samples(file) > 0);
    /* Before any sleep: the thread's sleeper, made now, is the file's
     * profile as it would start, the same text. */
    before = thread_profile_text();
    CHECK_STR(before, file);
    /* A sleeper that asks for the default starts from it too; one that
     * does not starts fresh. */
    asked = new_sleeper_profile_text(KT_SLEEPER_DEFAULT_PROFILE);
    CHECK_STR(asked, file);
    own = new_sleeper_profile_text(0);
    CHECK(own != NULL && profile_samples(own) == 0);
    /* After sleeps: the file's samples, then what it learned on top (none
     * if the file's margins made every sleep a spin), a profile of this
     * machine that loads back; writing it again changes nothing. */
    CHECK_INT(early_sleep_ns(20, 1000000), 0);
    after = thread_profile_text();
    /* Every bucket of the file is still there: its samples carried, or, if
     * its own wake-ups proved them stale, its own (spec/estimator.md, a
     * stale bucket). */
    CHECK(keeps_buckets(after, file));
    kt_note("samples: %ld in the file, %ld after 20 sleeps", profile_samples(file), profile_samples(after));
    again = thread_profile_text();
    CHECK_STR(again, after);
    if (temp_path(after_path, sizeof after_path) == 0) {
        CHECK_STATUS(kt_thread_write_profile(after_path, NULL), KT_OK);
        s = sleeper_from_file(after_path);
        kt_sleeper_free(s);
        unlink(after_path);
    }
    free(file);
    free(before);
    free(asked);
    free(own);
    free(after);
    free(again);
}

/* Child: KEEPTIME_PROFILE names `path`, a good profile, and the first
 * default sleeper is one that a sleeper made with KT_SLEEPER_DEFAULT_PROFILE
 * asked for. */
void child_env_profile_asked_first(const char *path) {
    char *file = slurp(path), *asked, *thread;
    CHECK(file != NULL && profile_samples(file) > 0);
    asked = new_sleeper_profile_text(KT_SLEEPER_DEFAULT_PROFILE);
    CHECK_STR(asked, file);
    thread = thread_profile_text();
    CHECK_STR(thread, file);
    CHECK_INT(early_sleep_ns(5, 1000000), 0);
    free(file);
    free(asked);
    free(thread);
}

/* Child: the default sleepers start fresh (no profile learned) and sleep
 * never early. */
void child_env_profile_fresh(const char *arg) {
    char *before = thread_profile_text(), *asked;
    (void)arg;
    CHECK(before != NULL && profile_samples(before) == 0);
    CHECK(before != NULL && strstr(before, "\nbucket ") == NULL);
    asked = new_sleeper_profile_text(KT_SLEEPER_DEFAULT_PROFILE);
    CHECK(asked != NULL && profile_samples(asked) == 0);
    CHECK_INT(early_sleep_ns(20, 1000000), 0);
    free(before);
    free(asked);
}

/* Child: the program sets the default before its first sleep, to the
 * profile at `path`, or clears it when `path` is empty. */
void child_env_profile_program_first(const char *path) {
    kt_profile *p = NULL;
    char *want = *path ? slurp(path) : NULL, *before;
    if (*path) {
        CHECK(want != NULL && profile_samples(want) > 0);
        CHECK_STATUS(kt_profile_load(path, 0, &p, NULL), KT_OK);
        CHECK(p != NULL);
    }
    CHECK_STATUS(kt_set_default_profile(p), KT_OK);
    kt_profile_free(p);
    before = thread_profile_text();
    if (*path) {
        CHECK_STR(before, want);
    } else {
        CHECK(before != NULL && profile_samples(before) == 0);
    }
    CHECK_INT(early_sleep_ns(20, 1000000), 0);
    free(want);
    free(before);
}

/* Runs child `name` with KEEPTIME_PROFILE=`value` and `arg`: it passed, and
 * its stderr is `want_err`. Returns its stderr (malloc'd) for more checks. */
static char *env_child(const char *name, const char *value, const char *arg, const char *want_err) {
    char env[256];
    char *err = NULL;
    snprintf(env, sizeof env, "KEEPTIME_PROFILE=%s", value);
    kt_note("child %s, %s", name, env);
    CHECK_INT(kt_run_child(name, env, arg, &err), 0);
    CHECK_STR(err, want_err);
    return err;
}

void test_keeptime_profile_env_reaches_the_free_functions(void) {
    static const char suffix[] = "; keeptime's own sleepers start fresh\n";
    char good[64], cut[64], missing[64], prefix[128];
    const char *bad[2];
    char *text, *end, *err;
    int i;
    if (temp_path(good, sizeof good) != 0 || learned_profile(good) != KT_OK ||
        temp_path(cut, sizeof cut) != 0 || temp_path(missing, sizeof missing) != 0) {
        CHECK(!"a profile was written");
        return;
    }
    unlink(missing);
    text = slurp(good);
    end = text ? strstr(text, "\nend\n") : NULL;
    CHECK(end != NULL);
    if (end) spit(cut, text, (size_t)(end - text) + 1); /* cut before its last line */
    free(text);

    /* A good file: the default sleepers start from it; nothing is said. */
    free(env_child("env_profile_loaded", good, good, ""));
    free(env_child("env_profile_asked_first", good, good, ""));
    /* Empty: as if unset. */
    free(env_child("env_profile_fresh", "", NULL, ""));
    /* The program sets or clears the default first: the variable is never
     * read, good or missing. */
    free(env_child("env_profile_program_first", good, "", ""));
    free(env_child("env_profile_program_first", missing, good, ""));

    /* Missing, cut short: one line on stderr each, the loader's own message
     * in it, and the default sleepers start fresh. */
    bad[0] = missing;
    bad[1] = cut;
    for (i = 0; i < 2; i++) {
        kt_profile *p = (kt_profile *)1;
        char *why = NULL, *want;
        size_t len;
        CHECK_STATUS(kt_profile_load(bad[i], 0, &p, &why), KT_EPROFILE);
        CHECK(p == NULL);
        CHECK(why != NULL);
        want = malloc(strlen(bad[i]) + strlen(why ? why : "") + 128);
        if (!want) {
            CHECK(!"memory");
            kt_string_free(why);
            continue;
        }
        sprintf(want, "keeptime: KEEPTIME_PROFILE=%s: %s%s", bad[i], why ? why : "", suffix);
        err = env_child("env_profile_fresh", bad[i], NULL, want);
        /* The same, as the spec words it: the prefix, the suffix, one line. */
        snprintf(prefix, sizeof prefix, "keeptime: KEEPTIME_PROFILE=%s: ", bad[i]);
        len = err ? strlen(err) : 0;
        CHECK(err != NULL && strncmp(err, prefix, strlen(prefix)) == 0);
        CHECK(len >= sizeof suffix - 1 && strcmp(err + len - (sizeof suffix - 1), suffix) == 0);
        CHECK(len > 0 && strchr(err, '\n') == err + len - 1);
        kt_note("stderr: %.*s", len > 0 ? (int)len - 1 : 0, err ? err : "");
        free(err);
        free(want);
        kt_string_free(why);
    }
    unlink(good);
    unlink(cut);
}
