/* Precise delays (kt_delay_*): the callback hands the poll to a queue served
 * by another thread, as a thread pool or an event loop would. Real time:
 * only what must always hold (never early, no callback after cancel). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "tests.h"

#include <keeptime.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>

/* A queue of delays that asked to be polled (the callback only pushes). */
#define QCAP 4096
struct queue {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    void *items[QCAP];
    size_t head, count;
    long calls;
};

static struct queue q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0};

struct item {
    kt_delay *delay;
    uint64_t deadline;
    uint64_t after; /* the poller's own clock reading once the delay was ready */
    int done;
};

static void on_due(void *user_data) {
    pthread_mutex_lock(&q.lock);
    q.calls++;
    if (q.count < QCAP) {
        q.items[(q.head + q.count) % QCAP] = user_data;
        q.count++;
    }
    pthread_cond_signal(&q.ready);
    pthread_mutex_unlock(&q.lock);
}

static struct item *next_due(void) {
    struct item *it;
    pthread_mutex_lock(&q.lock);
    while (q.count == 0) pthread_cond_wait(&q.ready, &q.lock);
    it = q.items[q.head];
    q.head = (q.head + 1) % QCAP;
    q.count--;
    pthread_mutex_unlock(&q.lock);
    return it;
}

/* Serves the queue until `n` delays are ready; returns the early ones. */
static int serve(size_t n) {
    size_t done = 0;
    int early = 0;
    while (done < n) {
        struct item *it = next_due();
        int state = -1;
        uint64_t now = 0;
        CHECK_STATUS(kt_delay_poll(it->delay, &state, &now), KT_OK);
        if (state == KT_DELAY_READY) {
            it->after = kt_mono_ns();
            CHECK(now >= it->deadline);
            CHECK(!it->done);
            it->done = 1;
            early += it->after < it->deadline;
            done++;
        } else {
            CHECK_INT(state, KT_DELAY_PENDING);
        }
    }
    return early;
}

void test_delay_errors(void) {
    kt_delay *d = (kt_delay *)&q;
    int state;
    uint64_t now, lead;
    CHECK_STATUS(kt_delay_start(0, on_due, NULL, NULL), KT_ENULL);
    CHECK_STATUS(kt_delay_start(0, NULL, NULL, &d), KT_ENULL);
    CHECK(d == NULL);
    CHECK_STATUS(kt_delay_poll(NULL, &state, &now), KT_ENULL);
    CHECK_STATUS(kt_delay_cancel(NULL), KT_ENULL);
    CHECK_STATUS(kt_delay_set_finish_spin_ns(NULL, 4000), KT_ENULL);
    CHECK_STATUS(kt_delay_deadline_ns(NULL, &now), KT_ENULL);
    CHECK_STATUS(kt_delay_lead_ns(-1, &lead), KT_EINVAL);
    CHECK_STATUS(kt_delay_lead_ns(1000000, NULL), KT_ENULL);
    CHECK_STATUS(kt_delay_lead_ns(1000000, &lead), KT_OK);
    CHECK(lead <= 200000);
    CHECK_STATUS(kt_delay_capacity(NULL), KT_ENULL);
    {
        uint64_t capacity = 0;
        CHECK_STATUS(kt_delay_capacity(&capacity), KT_OK);
        CHECK(capacity >= 1);
    }
    kt_delay_free(NULL);

    /* A far deadline: pointers and ranges are checked, nothing fires. */
    CHECK_STATUS(kt_delay_start(kt_mono_ns() + 60000000000u, on_due, NULL, &d), KT_OK);
    CHECK(d != NULL);
    CHECK_STATUS(kt_delay_poll(d, NULL, &now), KT_ENULL);
    CHECK_STATUS(kt_delay_poll(d, &state, NULL), KT_ENULL);
    CHECK_STATUS(kt_delay_set_finish_spin_ns(d, KT_DELAY_FINISH_SPIN_MIN_NS - 1), KT_EINVAL);
    CHECK_STATUS(kt_delay_set_finish_spin_ns(d, KT_DELAY_FINISH_SPIN_MAX_NS + 1), KT_EINVAL);
    CHECK_STATUS(kt_delay_set_finish_spin_ns(d, -5), KT_EINVAL);
    CHECK_STATUS(kt_delay_set_finish_spin_ns(d, KT_DELAY_FINISH_SPIN_MAX_NS), KT_OK);
    CHECK_STATUS(kt_delay_deadline_ns(d, NULL), KT_ENULL);
    kt_delay_free(d);
}

void test_delay_never_early(void) {
    static const uint64_t lengths[] = {0, 1, 1000, 5000, 20000, 100000, 300000, 1000000, 3000000};
    struct item items[sizeof lengths / sizeof lengths[0]];
    size_t i;
    int r, early = 0;
    for (r = 0; r < 4; r++)
        for (i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
            uint64_t got = 0;
            items[i].deadline = kt_mono_ns() + lengths[i];
            items[i].done = 0;
            CHECK_STATUS(kt_delay_start(items[i].deadline, on_due, &items[i], &items[i].delay), KT_OK);
            CHECK_STATUS(kt_delay_deadline_ns(items[i].delay, &got), KT_OK);
            CHECK_U64(got, items[i].deadline);
            early += serve(1);
            /* Ready stays ready. */
            {
                int state = -1;
                uint64_t now = 0;
                CHECK_STATUS(kt_delay_poll(items[i].delay, &state, &now), KT_OK);
                CHECK_INT(state, KT_DELAY_READY);
                CHECK(now >= items[i].deadline);
            }
            kt_delay_free(items[i].delay);
        }
    CHECK_INT(early, 0);
}

void test_delay_cancel_stops_callbacks(void) {
    struct item it = {NULL, 0, 0, 0};
    long calls;
    int state = -1;
    uint64_t now = 0;
    it.deadline = kt_mono_ns() + 2000000;
    CHECK_STATUS(kt_delay_start(it.deadline, on_due, &it, &it.delay), KT_OK);
    pthread_mutex_lock(&q.lock);
    calls = q.calls;
    pthread_mutex_unlock(&q.lock);
    CHECK_STATUS(kt_delay_cancel(it.delay), KT_OK);
    CHECK_STATUS(kt_delay_cancel(it.delay), KT_OK);
    CHECK_STATUS(kt_delay_poll(it.delay, &state, &now), KT_EINTR);
    CHECK_INT(state, -1);
    /* Past the deadline: the cancelled delay's callback never came. */
    CHECK_STATUS(kt_sleep_until_ns(it.deadline + 1000000), KT_OK);
    pthread_mutex_lock(&q.lock);
    CHECK_INT(q.calls, calls);
    CHECK_INT((long long)q.count, 0);
    pthread_mutex_unlock(&q.lock);
    kt_delay_free(it.delay);
}

/* Many delays at once, served by one poller: all ready, none early. */
void test_delay_many_at_once(void) {
    enum { N = 500 };
    static struct item items[N];
    uint64_t start = kt_mono_ns();
    size_t i;
    int early;
    unsigned seed = 12345;
    for (i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        items[i].deadline = start + 1000000 + (seed >> 8) % 20000000;
        items[i].done = 0;
        CHECK_STATUS(kt_delay_start(items[i].deadline, on_due, &items[i], &items[i].delay), KT_OK);
    }
    early = serve(N);
    CHECK_INT(early, 0);
    for (i = 0; i < N; i++) {
        CHECK(items[i].done);
        kt_delay_free(items[i].delay);
    }
    pthread_mutex_lock(&q.lock);
    CHECK_INT((long long)q.count, 0);
    pthread_mutex_unlock(&q.lock);
}
