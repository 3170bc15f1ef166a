/*
 * bench.c: how precisely C can wait on this machine (a benchmark, not a test).
 *
 *   sleep-default-slack  nanosleep(d) with the thread's default timer slack
 *   compensated          time X plain sleeps, TN = their mean overshoot, then
 *                        nanosleep(d - TN); may return early
 *   keeptime             a kt_sleeper in KT_MODE_EXACT at the tail target
 *                        (--tail-target, default KT_TAIL_BALANCED: 1 %), with
 *                        the sleeper's stats
 *   keeptime-sleep       kt_sleep_until_ns: the thread's own sleeper
 *   keeptime-ticker      kt_ticker_wait on a ticker of period d
 *
 * plus, for reference, keeptime-efficient (keeptime's learned version of the
 * compensation) and spin-pause (a pure spin: the accuracy floor of this
 * machine in this run). Error of one wait = first CLOCK_MONOTONIC reading
 * after it returned − its deadline (start + d, start read just before the
 * call; the tick's scheduled_ns for the ticker); return = that reading − the
 * reading the call itself returned (its woke_ns, or the tick's scheduled_ns +
 * lateness_ns): what the way back to the caller costs. CPU % =
 * CLOCK_THREAD_CPUTIME_ID ÷ wall time over the measured waits. Each cell runs
 * on a fresh thread so no method inherits another's timer slack. The
 * keeptime rows also print their sleeper's stats over the measured waits
 * (kt_sleeper_stats): the tail target, the share of waits that ended late
 * from an OS wait, OS waits per wait, and the sleeper's own CPU estimate ÷
 * wall time beside the measured CPU. Then the targets of keeptime's
 * spin-finished rows against the same run's spin-pause (met or MISSED), and
 * the cost of a call into the C library.
 *
 *   cc -O2 bench.c $(pkg-config --cflags --libs keeptime) -lm -o bench
 *   ./bench [--samples N] [--warmup N] [--tail-target T] [--json FILE] [--calls-only]
 *
 * T is relaxed, balanced, strict or a share such as 0.002.
 *
 * --json writes the project's bench result document (spec/bench-result.md);
 * --calls-only measures only the call cost (to alternate with the Rust
 * core's `cargo run --release -p keeptime-c --example core_call`).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, prctl and friends under -std=c99 */
#endif
#include <keeptime.h>

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

enum method {
    SLEEP_DEFAULT_SLACK,
    COMPENSATED,
    KEEPTIME,
    KEEPTIME_SLEEP,
    KEEPTIME_TICKER,
    KEEPTIME_EFFICIENT,
    SPIN_PAUSE,
    N_METHODS
};

static const struct {
    const char *name, *description, *family;
    int may_return_early;
} methods[N_METHODS] = {
    {"sleep-default-slack", "nanosleep(d) with the thread's default timer slack",
     "OS sleep", 0},
    {"compensated",
     "nanosleep(d - TN), TN the mean overshoot of the warm-up's plain nanosleeps, default slack; "
     "may return early",
     "compensated sleep", 1},
    {"keeptime",
     "kt_sleeper in KT_MODE_EXACT (kt_sleep_ns's algorithm, with the sleeper's stats): the cheapest plan of "
     "OS waits then a spin that meets the tail target; never early",
     "keeptime", 0},
    {"keeptime-sleep",
     "kt_sleep_until_ns(start + d): the thread's own sleeper (KT_MODE_EXACT, default tail target); never early",
     "keeptime", 0},
    {"keeptime-ticker",
     "kt_ticker_wait on a kt_ticker of period d (KT_MISSED_SKIP, KT_MODE_EXACT, default tail target): "
     "error = reading after the call - the tick's scheduled_ns; never early",
     "keeptime", 0},
    {"keeptime-efficient",
     "kt_sleeper in KT_MODE_EFFICIENT: one OS wait shortened by the learned median overshoot; may return early",
     "keeptime", 1},
    {"spin-pause", "spin on CLOCK_MONOTONIC with the CPU's pause hint: the pure-spin accuracy baseline", "spin with pause",
     0},
};

static const uint64_t durations_ns[] = {10000, 100000, 1000000};
#define N_DURATIONS (sizeof durations_ns / sizeof durations_ns[0])

struct stats {
    uint64_t samples, early, wall_ns, cpu_ns;
    int64_t min, max, p50, p90, p99, p999;
    double mean, stddev, cpu_percent;
    int64_t *sorted; /* kept for the histogram */
};

struct cell {
    enum method method;
    int has_return; /* the method returns its own last reading: the return column */
    int64_t return_p50, return_p90; /* caller's reading - the method's returned reading */
    uint64_t late_2us; /* samples more than 2 µs late */
    uint64_t duration_ns, samples, warmup;
    long timer_slack_ns;
    uint64_t tn_ns; /* compensated: the estimated TN */
    double tail_target;
    int has_sleeper; /* keeptime rows: the sleeper's stats over the measured waits */
    kt_sleep_stats sleeper;
    struct stats stats;
};

static uint64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static void nanosleep_ns(uint64_t ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    nanosleep(&ts, NULL); /* an interrupted sleep is just a sample that ended early */
}

/* ------------------------------------------------------------ statistics */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: sorted[max(ceil(q·n/1000), 1) − 1] (spec/bench-result.md). */
static int64_t percentile(const int64_t *sorted, uint64_t n, uint64_t q_per_mille) {
    uint64_t rank = (q_per_mille * n + 999) / 1000;
    return sorted[(rank ? rank : 1) - 1];
}

static void compute_stats(struct stats *s, int64_t *errors, uint64_t n, uint64_t wall_ns, uint64_t cpu_ns) {
    uint64_t i;
    double sum = 0, ss = 0;
    qsort(errors, n, sizeof *errors, cmp_i64);
    for (i = 0; i < n; i++) sum += (double)errors[i];
    s->mean = sum / (double)n;
    for (i = 0; i < n; i++) ss += ((double)errors[i] - s->mean) * ((double)errors[i] - s->mean);
    s->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    s->samples = n;
    s->min = errors[0];
    s->max = errors[n - 1];
    s->p50 = percentile(errors, n, 500);
    s->p90 = percentile(errors, n, 900);
    s->p99 = percentile(errors, n, 990);
    s->p999 = percentile(errors, n, 999);
    for (s->early = 0; s->early < n && errors[s->early] < 0; s->early++) {}
    s->wall_ns = wall_ns;
    s->cpu_ns = cpu_ns;
    s->cpu_percent = wall_ns ? 100.0 * (double)cpu_ns / (double)wall_ns : 0;
    s->sorted = errors;
}

/* Histogram edges keep 4 significant bits (spec/bench-result.md). */
static uint64_t low_mask(uint64_t v) {
    int bits = 0;
    while (bits < 64 && (v >> bits)) bits++;
    return bits <= 4 ? 0 : (UINT64_C(1) << (bits - 4)) - 1;
}
static uint64_t round_down_sig(uint64_t v) { return v & ~low_mask(v); }
static uint64_t round_up_sig(uint64_t v) {
    uint64_t m = low_mask(v);
    return (v & m) == 0 ? v : ((v | m) == UINT64_MAX ? UINT64_MAX : (v | m) + 1);
}
static int64_t to_i64(uint64_t v) { return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v; }
static uint64_t magnitude(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }
static int64_t upper_edge(int64_t v) {
    if (v == 0) return 0;
    return v > 0 ? to_i64(round_up_sig((uint64_t)v)) : -to_i64(round_down_sig(magnitude(v)));
}
static int64_t lower_edge(int64_t le) {
    if (le == 0) return -1;
    if (le > 0) return to_i64(round_down_sig((uint64_t)le - 1));
    return -to_i64(round_up_sig(magnitude(le) + 1));
}

/* ------------------------------------------------------------ one cell */

static uint64_t spin_until(uint64_t deadline) {
    uint64_t now;
    while ((now = mono_ns()) < deadline) CPU_RELAX();
    return now;
}

static void *run_cell(void *arg) {
    struct cell *c = arg;
    const uint64_t d = c->duration_ns;
    int64_t *errors = malloc(c->samples * sizeof *errors);
    int64_t *returns = malloc(c->samples * sizeof *returns);
    kt_sleeper *sleeper = NULL;
    kt_ticker *ticker = NULL;
    uint64_t i, wall0 = 0, cpu0 = 0, last = 0;
    int64_t tn_sum = 0;

    if (!errors || !returns) {
        free(errors);
        free(returns);
        return NULL;
    }
    if (c->method == KEEPTIME || c->method == KEEPTIME_EFFICIENT) {
        sleeper = kt_sleeper_new(c->method == KEEPTIME ? KT_MODE_EXACT : KT_MODE_EFFICIENT);
        if (!sleeper || kt_sleeper_set_tail_target(sleeper, c->tail_target) != KT_OK) {
            free(errors);
            free(returns);
            kt_sleeper_free(sleeper);
            return NULL;
        }
    }
    c->has_return = c->method == KEEPTIME || c->method == KEEPTIME_TICKER || c->method == KEEPTIME_EFFICIENT;

    for (i = 0; i < c->warmup + c->samples; i++) {
        uint64_t start, deadline, woke, returned = 0;
        kt_tick tick;
        if (i == c->warmup) {
            if (c->method == COMPENSATED && c->warmup)
                c->tn_ns = tn_sum > 0 ? (uint64_t)tn_sum / c->warmup : 0;
            if (sleeper) kt_sleeper_reset_stats(sleeper); /* keeps what it learned */
            cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
            wall0 = mono_ns();
        }
        if (c->method == KEEPTIME_TICKER && ticker == NULL) ticker = kt_ticker_new((int64_t)d, KT_MISSED_SKIP);
        start = mono_ns();
        deadline = start + d;
        switch (c->method) {
        case SLEEP_DEFAULT_SLACK: nanosleep_ns(d); break;
        case COMPENSATED:
            if (d > c->tn_ns) nanosleep_ns(d - c->tn_ns);
            break;
        case KEEPTIME:
        case KEEPTIME_EFFICIENT: kt_sleeper_sleep_until_ns(sleeper, deadline, &returned); break;
        case KEEPTIME_SLEEP: kt_sleep_until_ns(deadline); break;
        case KEEPTIME_TICKER:
            kt_ticker_wait(ticker, &tick);
            deadline = tick.scheduled_ns;
            returned = tick.scheduled_ns + tick.lateness_ns;
            break;
        case SPIN_PAUSE: spin_until(deadline); break;
        default: break;
        }
        woke = mono_ns();
        if (i < c->warmup) tn_sum += (int64_t)(woke - deadline);
        else {
            errors[i - c->warmup] = (int64_t)(woke - deadline);
            returns[i - c->warmup] = (int64_t)(woke - returned);
        }
        last = woke;
    }
    compute_stats(&c->stats, errors, c->samples, last - wall0, clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
    for (i = 0; i < c->samples; i++) c->late_2us += errors[i] > 2000;
    if (c->has_return) {
        qsort(returns, c->samples, sizeof *returns, cmp_i64);
        c->return_p50 = percentile(returns, c->samples, 500);
        c->return_p90 = percentile(returns, c->samples, 900);
    }
    free(returns);
    c->has_sleeper = sleeper && kt_sleeper_stats(sleeper, &c->sleeper) == KT_OK;
    /* In force during the cell: keeptime set 1 ns on its first sleep. */
    c->timer_slack_ns = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    kt_sleeper_free(sleeper);
    kt_ticker_free(ticker);
    return NULL;
}

/* The targets of keeptime's spin-finished rows against the same run's pure
 * spin at the same duration: p50 within 150 ns of it, the return (caller's
 * reading - the call's own) p90 within 100 ns, the share of waits more than
 * 2 µs late at most 1.5 points above it, none early. Prints one line per
 * row; returns how many targets were missed. */
static int print_targets(const struct cell *cells, size_t n) {
    size_t i, j;
    int missed = 0;
    printf("\ntargets (vs spin-pause in the same run, same duration):\n");
    for (i = 0; i < n; i++) {
        const struct cell *c = &cells[i], *spin = NULL;
        double late, spin_late;
        int ok_p50, ok_ret, ok_late, ok_early;
        if (c->method != KEEPTIME && c->method != KEEPTIME_SLEEP && c->method != KEEPTIME_TICKER) continue;
        for (j = 0; j < n; j++)
            if (cells[j].method == SPIN_PAUSE && cells[j].duration_ns == c->duration_ns) spin = &cells[j];
        if (!spin) continue;
        late = 100.0 * (double)c->late_2us / (double)c->stats.samples;
        spin_late = 100.0 * (double)spin->late_2us / (double)spin->stats.samples;
        ok_p50 = c->stats.p50 <= spin->stats.p50 + 150;
        ok_ret = !c->has_return || c->return_p90 <= 100;
        ok_late = late <= spin_late + 1.5;
        ok_early = c->stats.early == 0;
        missed += !ok_p50 + !ok_ret + !ok_late + !ok_early;
        printf("%6" PRIu64 " us %-16s p50 %5" PRId64 " ns <= %5" PRId64 " + 150 %-6s", c->duration_ns / 1000,
               methods[c->method].name, c->stats.p50, spin->stats.p50, ok_p50 ? "met" : "MISSED");
        if (c->has_return)
            printf("  return p90 %4" PRId64 " ns <= 100 %-6s", c->return_p90, ok_ret ? "met" : "MISSED");
        else
            printf("  %-25s", "");
        printf("  >2 us late %5.2f%% <= %.2f%% + 1.5 %-6s  early %" PRIu64 " %s\n", late, spin_late,
               ok_late ? "met" : "MISSED", c->stats.early, ok_early ? "met" : "MISSED");
    }
    return missed;
}

/* ------------------------------------------------------------ call cost */

struct call_cost {
    double sleep_until_past_ns, now_ns, clock_gettime_ns;
};

static double ns_per_call(int which, long calls) {
    volatile uint64_t sink = 0;
    uint64_t t0 = mono_ns();
    long i;
    switch (which) {
    case 0: for (i = 0; i < calls; i++) sink += (uint64_t)kt_sleep_until_ns(0); break;
    case 1: for (i = 0; i < calls; i++) sink += kt_now_ns(); break;
    default: for (i = 0; i < calls; i++) sink += mono_ns(); break;
    }
    (void)sink;
    return (double)(mono_ns() - t0) / (double)calls;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of 7 rounds of 2 M calls each, measurements interleaved. */
static void *measure_call_cost(void *arg) {
    struct call_cost *cc = arg;
    double r[3][7];
    int round, k;
    kt_sleep_until_ns(0); /* creates this thread's sleeper outside the timing */
    for (round = 0; round < 7; round++)
        for (k = 0; k < 3; k++) r[k][round] = ns_per_call(k, 2000000);
    for (k = 0; k < 3; k++) qsort(r[k], 7, sizeof r[k][0], cmp_double);
    cc->sleep_until_past_ns = r[0][3];
    cc->now_ns = r[1][3];
    cc->clock_gettime_ns = r[2][3];
    return NULL;
}

/* ------------------------------------------------------------ machine */

static void read_line(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (!f) return;
    if (fgets(buf, (int)n, f)) buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static void cpu_model(char *buf, size_t n) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    buf[0] = '\0';
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(buf, n, "%s", colon + 2);
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
}

/* A string member of the clock report, found by name (the report's JSON is
 * compact and its string values have no escaped quotes in these fields). */
static void report_string(const char *json, const char *key, char *buf, size_t n) {
    char pattern[64];
    const char *p, *end;
    buf[0] = '\0';
    if (!json) return;
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    if (!(p = strstr(json, pattern))) return;
    p += strlen(pattern);
    if (!(end = strchr(p, '"'))) return;
    snprintf(buf, n, "%.*s", (int)(end - p), p);
}

/* The clock report's preemption model, in the words the Rust bench uses. */
static void describe_preemption(char *buf, size_t n, const char *report) {
    static const char *const names[][2] = {{"rt", "PREEMPT_RT"},
                                           {"full", "PREEMPT (full)"},
                                           {"dynamic", "PREEMPT_DYNAMIC"},
                                           {"none_or_voluntary", "none or voluntary"}};
    char mode[48];
    size_t i;
    const char *name = NULL;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(buf, names[i][0]) == 0) name = names[i][1];
    if (!name) {
        buf[0] = '\0'; /* unknown: null in the result */
        return;
    }
    report_string(report, "preemption_mode", mode, sizeof mode);
    if (mode[0]) snprintf(buf, n, "%s (%s)", name, mode);
    else snprintf(buf, n, "%s", name);
}

static void json_str(FILE *f, const char *s) {
    if (!s || !*s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv) {
    uint64_t samples = 1000, warmup = 100;
    double tail_target = KT_TAIL_BALANCED;
    int calls_only = 0, samples_given = 0, warmup_given = 0;
    const char *json_path = NULL;
    struct cell cells[N_DURATIONS * N_METHODS];
    struct call_cost cc;
    struct utsname un;
    char model[256], clocksource[64], hypervisor[64], preemption[128], created[32];
    char *report = NULL;
    long slack0 = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    time_t now = time(NULL);
    size_t i, n = 0;
    int a;

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--samples") == 0 && a + 1 < argc) {
            samples = strtoull(argv[++a], NULL, 10);
            samples_given = 1;
        } else if (strcmp(argv[a], "--warmup") == 0 && a + 1 < argc) {
            warmup = strtoull(argv[++a], NULL, 10);
            warmup_given = 1;
        } else if (strcmp(argv[a], "--tail-target") == 0 && a + 1 < argc) {
            const char *t = argv[++a];
            char *end = NULL;
            kt_sleeper *check = kt_sleeper_new(KT_MODE_EXACT);
            if (strcmp(t, "relaxed") == 0) tail_target = KT_TAIL_RELAXED;
            else if (strcmp(t, "balanced") == 0) tail_target = KT_TAIL_BALANCED;
            else if (strcmp(t, "strict") == 0) tail_target = KT_TAIL_STRICT;
            else {
                tail_target = strtod(t, &end);
                if (end == t || *end) tail_target = NAN;
            }
            /* The library decides what is a valid target, and holds it in ppm. */
            if (!check || kt_sleeper_set_tail_target(check, tail_target) != KT_OK ||
                kt_sleeper_tail_target(check, &tail_target) != KT_OK) {
                fprintf(stderr,
                        "%s: invalid tail target '%s': expected relaxed, balanced, strict or a share strictly "
                        "between 0 and 1 (at least 0.000001), e.g. 0.01\n",
                        argv[0], t);
                kt_sleeper_free(check);
                return 2;
            }
            kt_sleeper_free(check);
        } else if (strcmp(argv[a], "--json") == 0 && a + 1 < argc) json_path = argv[++a];
        else if (strcmp(argv[a], "--calls-only") == 0) calls_only = 1;
        else {
            fprintf(stderr, "usage: %s [--samples N] [--warmup N] [--tail-target T] [--json FILE] [--calls-only]\n",
                    argv[0]);
            return 2;
        }
    }
    if (samples == 0) samples = 1;
    if (calls_only) {
        pthread_t t;
        pthread_create(&t, NULL, measure_call_cost, &cc);
        pthread_join(t, NULL);
        printf("C library: kt_sleep_until_ns(past) %.1f ns/call, kt_now_ns() %.1f ns/call, "
               "clock_gettime %.1f ns/call\n",
               cc.sleep_until_past_ns, cc.now_ns, cc.clock_gettime_ns);
        return 0;
    }

    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    uname(&un);
    cpu_model(model, sizeof model);
    read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", clocksource,
              sizeof clocksource);
    /* The clock report, read on a thread that keeps its default slack. */
    kt_clocks_json(&report);
    report_string(report, "hypervisor", hypervisor, sizeof hypervisor);
    report_string(report, "preemption", preemption, sizeof preemption);
    describe_preemption(preemption, sizeof preemption, report);
    kt_string_free(report);

    printf("keeptime C bench: libkeeptime %s, %s %s, clocksource %s, timer slack %ld ns, %" PRIu64
           " samples per cell after %" PRIu64 " warm-up\n",
           kt_version(), un.sysname, un.release, clocksource, slack0, samples, warmup);
    printf("error = first CLOCK_MONOTONIC reading after return - deadline; a shared machine is noisy\n");
    printf("keeptime rows: tail target %g %%; their sleeper's stats over the measured waits: late = ended after the\n"
           "deadline from an OS wait, OS waits per wait, CPU est. = the sleeper's CPU estimate / wall time\n\n",
           100 * tail_target);
    printf("return = first CLOCK_MONOTONIC reading after return - the reading the call returned\n\n");
    printf("%-9s %-20s %10s %10s %10s %7s %7s %16s\n", "duration", "method", "p50", "p99", "max", "early",
           "CPU %", "return p50/p90");

    for (i = 0; i < N_DURATIONS; i++) {
        int m;
        for (m = 0; m < N_METHODS; m++) {
            struct cell *c = &cells[n++];
            pthread_t t;
            memset(c, 0, sizeof *c);
            c->method = (enum method)m;
            c->duration_ns = durations_ns[i];
            c->samples = samples;
            c->warmup = warmup;
            c->tail_target = tail_target;
            /* A fresh thread inherits main's (default) timer slack, never one a
             * keeptime cell set to 1 ns. */
            pthread_create(&t, NULL, run_cell, c);
            pthread_join(t, NULL);
            if (!c->stats.sorted) return 1;
            printf("%6" PRIu64 " us %-20s %8.1f us %7.1f us %7.1f us %7" PRIu64 " %6.1f%%", c->duration_ns / 1000,
                   methods[m].name, c->stats.p50 / 1e3, c->stats.p99 / 1e3, c->stats.max / 1e3, c->stats.early,
                   c->stats.cpu_percent);
            if (c->has_return) printf(" %6" PRId64 "/%" PRId64 " ns", c->return_p50, c->return_p90);
            else printf(" %16s", "—");
            if (m == COMPENSATED) printf("  (TN %.1f us)", c->tn_ns / 1e3);
            if (c->has_sleeper) {
                double waits = c->sleeper.sleeps ? (double)c->sleeper.sleeps : 1.0;
                printf("  late %.2f%%, %.2f OS waits/wait, CPU est. %.1f%%", 100.0 * (double)c->sleeper.late / waits,
                       (double)c->sleeper.os_waits / waits,
                       c->stats.wall_ns ? 100.0 * (double)c->sleeper.cpu_estimate_ns / (double)c->stats.wall_ns : 0);
            }
            printf("\n");
        }
    }

    print_targets(cells, n);

    {
        pthread_t t;
        pthread_create(&t, NULL, measure_call_cost, &cc);
        pthread_join(t, NULL);
    }
    printf("\ncall cost (median of 7 rounds of 2M calls):\n");
    printf("  kt_sleep_until_ns(past deadline)  %6.1f ns/call\n", cc.sleep_until_past_ns);
    printf("  kt_now_ns()                       %6.1f ns/call\n", cc.now_ns);
    printf("  clock_gettime(CLOCK_MONOTONIC)    %6.1f ns/call\n", cc.clock_gettime_ns);

    if (json_path) {
        FILE *f = fopen(json_path, "w");
        if (!f) {
            perror(json_path);
            return 1;
        }
        fprintf(f, "{\n  \"format\": \"keeptime-bench\",\n  \"version\": 2,\n  \"created\": \"%s\",\n", created);
        fprintf(f, "  \"tool\": {\"name\": \"keeptime-c-bench\", \"version\": \"%s\"},\n", kt_version());
#if defined(__clang__)
        fprintf(f, "  \"runtime\": {\"language\": \"c\", \"name\": \"clang\", \"version\": \"%d.%d.%d\"},\n",
                __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
        fprintf(f, "  \"runtime\": {\"language\": \"c\", \"name\": \"gcc\", \"version\": \"%d.%d.%d\"},\n",
                __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
        fprintf(f, "  \"runtime\": {\"language\": \"c\", \"name\": \"cc\", \"version\": \"unknown\"},\n");
#endif
        fprintf(f, "  \"machine\": {\"os\": \"linux\", \"arch\": ");
        json_str(f, un.machine);
        fprintf(f, ", \"kernel\": ");
        json_str(f, un.release);
        fprintf(f, ", \"cpu_model\": ");
        json_str(f, model);
        fprintf(f, ", \"cpus\": %ld, \"clocksource\": ", sysconf(_SC_NPROCESSORS_ONLN));
        json_str(f, clocksource);
        fprintf(f, ", \"timer_slack_ns\": %ld, \"virtualization\": ", slack0);
        json_str(f, hypervisor);
        fprintf(f, ", \"preemption\": ");
        json_str(f, preemption);
        fprintf(f, "},\n  \"parameters\": {\"schedule\": \"sleep\", \"cpu_clock\": \"thread\", \"durations_ns\": [");
        for (i = 0; i < N_DURATIONS; i++) fprintf(f, "%s%" PRIu64, i ? ", " : "", durations_ns[i]);
        fprintf(f, "], \"methods\": [");
        for (i = 0; i < N_METHODS; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", methods[i].name);
        fprintf(f, "], \"samples\": ");
        if (samples_given) fprintf(f, "%" PRIu64, samples);
        else fputs("null", f);
        fprintf(f, ", \"warmup\": ");
        if (warmup_given) fprintf(f, "%" PRIu64, warmup);
        else fputs("null", f);
        fprintf(f, ", \"budget_ns\": null, \"pin_cpu\": null, \"priority\": null},\n  \"methods\": [\n");
        for (i = 0; i < N_METHODS; i++) {
            fprintf(f, "    {\"name\": \"%s\", \"description\": ", methods[i].name);
            json_str(f, methods[i].description);
            fprintf(f, ", \"family\": ");
            json_str(f, methods[i].family);
            fprintf(f, ", \"may_return_early\": %s}%s\n", methods[i].may_return_early ? "true" : "false",
                    i + 1 < N_METHODS ? "," : "");
        }
        fprintf(f, "  ],\n  \"results\": [\n");
        for (i = 0; i < n; i++) {
            const struct stats *s = &cells[i].stats;
            uint64_t k = 0;
            int first = 1;
            fprintf(f,
                    "    {\"method\": \"%s\", \"duration_ns\": %" PRIu64 ", \"warmup\": %" PRIu64
                    ", \"timer_slack_ns\": %ld, \"samples\": %" PRIu64 ", \"min_ns\": %" PRId64
                    ", \"mean_ns\": %.3f, \"stddev_ns\": %.3f, \"p50_ns\": %" PRId64 ", \"p90_ns\": %" PRId64
                    ", \"p99_ns\": %" PRId64 ", \"p999_ns\": %" PRId64 ", \"max_ns\": %" PRId64
                    ", \"early\": %" PRIu64 ", \"cpu_percent\": %.3f, \"wall_ns\": %" PRIu64
                    ", \"cpu_ns\": %" PRIu64 ", ",
                    methods[cells[i].method].name, cells[i].duration_ns, cells[i].warmup,
                    cells[i].timer_slack_ns, s->samples, s->min, s->mean, s->stddev, s->p50, s->p90, s->p99,
                    s->p999, s->max, s->early, s->cpu_percent, s->wall_ns, s->cpu_ns);
            if (cells[i].has_return)
                fprintf(f, "\"return_p50_ns\": %" PRId64 ", \"return_p90_ns\": %" PRId64 ", ", cells[i].return_p50,
                        cells[i].return_p90);
            if (cells[i].has_sleeper) {
                const kt_sleep_stats *st = &cells[i].sleeper;
                fprintf(f,
                        "\"sleeper\": {\"tail_target_ppm\": %ld, \"sleeps\": %" PRIu64 ", \"late\": %" PRIu64
                        ", \"os_waits\": %" PRIu64 ", \"spin_ns\": %" PRIu64 ", \"cpu_estimate_ns\": %" PRIu64 "}, ",
                        lround(cells[i].tail_target * 1e6), st->sleeps, st->late, st->os_waits, st->spin_ns,
                        st->cpu_estimate_ns);
            }
            fprintf(f, "\"histogram\": [");
            while (k < s->samples) {
                int64_t le = upper_edge(s->sorted[k]);
                uint64_t count = 0;
                while (k < s->samples && upper_edge(s->sorted[k]) == le) count++, k++;
                fprintf(f, "%s{\"gt_ns\": %" PRId64 ", \"le_ns\": %" PRId64 ", \"count\": %" PRIu64 "}",
                        first ? "" : ", ", lower_edge(le), le, count);
                first = 0;
            }
            fprintf(f, "]}%s\n", i + 1 < n ? "," : "");
        }
        fprintf(f, "  ]\n}\n");
        fclose(f);
        printf("\nwrote %s\n", json_path);
    }
    for (i = 0; i < n; i++) free(cells[i].stats.sorted);
    return 0;
}
