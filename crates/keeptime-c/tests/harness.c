/* The test runner: runs every case of tests.h (or those whose name contains
 * argv[1]) and ends with "N passed, N failed". Exit status 0 iff none failed.
 * Run as "--child NAME ENV ARG" (by kt_run_child) it is one child case's
 * process instead. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "tests.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef KT_SPEC_DIR
#define KT_SPEC_DIR "spec"
#endif

static const char *current;
static int current_failed, current_checks, passed, failed, verbose;
static const char *argv0;

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

/* `s` in quotes, its line breaks, tabs, quotes and backslashes escaped. */
static void print_quoted(const char *s) {
    if (!s) {
        printf("NULL");
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '\n') printf("\\n");
        else if (*s == '\t') printf("\\t");
        else if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else putchar(*s);
    }
    putchar('"');
}

void kt_check_str(const char *got, const char *want, const char *file, int line, const char *expr) {
    current_checks++;
    if (got == want || (got && want && strcmp(got, want) == 0)) return;
    fail_line(file, line, expr, "");
    printf("    got:  ");
    print_quoted(got);
    printf("\n    want: ");
    print_quoted(want);
    printf("\n");
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

struct child { const char *name; void (*fn)(const char *arg); };

#define KT_CHILD_ENTRY(name) {#name, child_##name},
static const struct child children[] = { KT_CHILDREN(KT_CHILD_ENTRY) };
#undef KT_CHILD_ENTRY

/* The file's text (malloc'd, NUL-terminated), or NULL. */
static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    if (!f) return NULL;
    do {
        if (cap - len < 4096) {
            char *more = realloc(text, cap + 4096 + 1);
            if (!more) { free(text); fclose(f); return NULL; }
            text = more;
            cap += 4096;
        }
        n = fread(text + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    text[len] = '\0';
    fclose(f);
    return text;
}

int kt_run_child(const char *name, const char *env, const char *arg, char **err) {
    char self[4096], err_path[64];
    char *args[6];
    ssize_t n;
    pid_t pid;
    int fd, status = 0, waited;
    if (err) *err = NULL;
    n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) self[n] = '\0';
    else if (argv0) snprintf(self, sizeof self, "%s", argv0);
    else return -1;
    snprintf(err_path, sizeof err_path, "/tmp/keeptime-c-child-XXXXXX");
    fd = mkstemp(err_path);
    if (fd < 0) return -1;
    /* Everything the child needs is ready before fork: between fork and
     * exec it only redirects its stderr. */
    args[0] = self;
    args[1] = (char *)"--child";
    args[2] = (char *)name;
    args[3] = (char *)(env ? env : "");
    args[4] = (char *)(arg ? arg : "");
    args[5] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        if (dup2(fd, STDERR_FILENO) < 0) _exit(127);
        close(fd);
        execv(self, args);
        _exit(127);
    }
    close(fd);
    if (pid < 0) {
        unlink(err_path);
        return -1;
    }
    while ((waited = (int)waitpid(pid, &status, 0)) < 0 && errno == EINTR) {}
    if (err) *err = read_text(err_path);
    unlink(err_path);
    if (waited < 0) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

/* The child's side of kt_run_child: `env` set, then one child case; exit
 * status 0 iff its checks passed. */
static int child_main(const char *name, const char *env, const char *arg) {
    size_t i;
    if (*env) {
        char var[256];
        const char *eq = strchr(env, '=');
        if (!eq || (size_t)(eq - env) >= sizeof var) {
            printf("  child %s: bad environment entry %s\n", name, env);
            return 2;
        }
        memcpy(var, env, (size_t)(eq - env));
        var[eq - env] = '\0';
        if (setenv(var, eq + 1, 1) != 0) return 2;
    }
    for (i = 0; i < sizeof children / sizeof children[0]; i++) {
        if (strcmp(children[i].name, name) != 0) continue;
        current = name;
        children[i].fn(arg);
        if (current_failed) printf("  (in child %s, environment \"%s\")\n", name, env);
        fflush(stdout);
        return current_failed ? 1 : 0;
    }
    printf("  no child case %s\n", name);
    return 2;
}

int main(int argc, char **argv) {
    const char *filter = NULL;
    size_t i;
    argv0 = argv[0];
    if (argc == 5 && strcmp(argv[1], "--child") == 0) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        return child_main(argv[2], argv[3], argv[4]);
    }
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
