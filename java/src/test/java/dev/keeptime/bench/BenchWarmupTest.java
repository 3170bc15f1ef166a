package dev.keeptime.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The warm-up counts per method and duration: the rule of every runtime's bench (the Rust bench's default_warmup). */
class BenchWarmupTest {
    private static final long US = 1_000;
    private static final long MS = 1_000_000;

    @Test
    void methodsThatLearnWarmUpAboutASecondTheOthersAboutFiftyMs() {
        // 1 s / (1 ms + the 60 µs planning overhead) = 943 waits.
        assertEquals(943, Bench.defaultWarmup(Method.KEEPTIME, MS));
        assertEquals(943, Bench.defaultWarmup(Method.KEEPTIME_RELAXED, MS));
        assertEquals(390, Bench.defaultWarmup(Method.KEEPTIME_SLEEPER, 2_500 * US)); // 1 s / 2.56 ms
        assertEquals(300, Bench.defaultWarmup(Method.KEEPTIME_STRICT, 10 * MS)); // 1 s is 99: the floor (3 s)
        assertEquals(249, Bench.defaultWarmup(Method.KEEPTIME, 20 * MS)); // 300 would take 6 s: 5 s / 20.06 ms
        assertEquals(49, Bench.defaultWarmup(Method.KEEPTIME, 100 * MS)); // 5 s / 100.06 ms
        assertEquals(3_000, Bench.defaultWarmup(Method.KEEPTIME_SLEEPER, 250 * US)); // 3 225, at most 3 000
        assertEquals(3_000, Bench.defaultWarmup(Method.KEEPTIME_DEFAULT_SLACK, 100 * US));
        assertEquals(3_000, Bench.defaultWarmup(Method.KEEPTIME_EFFICIENT, 10 * US));
        assertEquals(10, Bench.defaultWarmup(Method.KEEPTIME, 20_000 * MS)); // at least 10
        // The others: about 50 ms.
        assertEquals(47, Bench.defaultWarmup(Method.SPIN_PAUSE, MS)); // 50 ms / 1.06 ms
        assertEquals(714, Bench.defaultWarmup(Method.BUSY_LOOP, 10 * US)); // 50 ms / 70 µs
        assertEquals(312, Bench.defaultWarmup(Method.PARK_NANOS, 100 * US));
        assertEquals(10, Bench.defaultWarmup(Method.THREAD_SLEEP, 10 * MS)); // 4, at least 10
    }

    @Test
    void exactlyTheKeeptimeMethodsLearn() {
        for (Method m : Method.values()) {
            assertEquals(m.family().equals("keeptime"), m.learns, m.id);
        }
    }

    @Test
    void theCrowdWarmsUpEveryThreadAsKeeptimesOneMillisecondCells() {
        assertEquals(943, Crowd.WARMUP);
    }
}
