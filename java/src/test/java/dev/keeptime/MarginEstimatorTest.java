package dev.keeptime;

import static dev.keeptime.MarginEstimator.BINS;
import static dev.keeptime.MarginEstimator.BUCKETS;
import static dev.keeptime.MarginEstimator.DEFAULT_COST_NS;
import static dev.keeptime.MarginEstimator.DEFAULT_MARGIN_NS;
import static dev.keeptime.MarginEstimator.HORIZON;
import static dev.keeptime.MarginEstimator.MAX_SAMPLE_NS;
import static dev.keeptime.MarginEstimator.WINDOW;
import static dev.keeptime.MarginEstimator.binHi;
import static dev.keeptime.MarginEstimator.binLo;
import static dev.keeptime.MarginEstimator.binOf;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The wake-up model v5 (spec/estimator.md) on hand-made observations. */
class MarginEstimatorTest {
    @Test
    void bucketsPartitionTheRange() {
        assertEquals(0, MarginEstimator.bucketOf(0));
        assertEquals(0, MarginEstimator.bucketOf(16_383));
        assertEquals(1, MarginEstimator.bucketOf(16_384));
        assertEquals(1, MarginEstimator.bucketOf(32_767));
        assertEquals(2, MarginEstimator.bucketOf(32_768));
        assertEquals(6, MarginEstimator.bucketOf(1_000_000));
        assertEquals(BUCKETS - 1, MarginEstimator.bucketOf(Long.MAX_VALUE));
        assertEquals(BUCKETS - 1, MarginEstimator.bucketOf(U64.MAX));
        for (int b = 0; b < BUCKETS; b++) {
            assertEquals(b, MarginEstimator.bucketOf(MarginEstimator.bucketLo(b)));
            assertEquals(b, MarginEstimator.bucketOf(MarginEstimator.bucketHi(b)));
        }
        assertEquals(U64.MAX, MarginEstimator.bucketHi(BUCKETS - 1));
    }

    @Test
    void binsPartitionTheSampleRange() {
        assertEquals(0, binOf(0));
        assertEquals(0, binOf(1023));
        assertEquals(1, binOf(1024));
        assertEquals(1151, binHi(1));
        assertEquals(2, binOf(1152));
        assertEquals(8, binOf(2047));
        assertEquals(9, binOf(2048));
        assertEquals(16, binOf(4000));
        assertEquals(3_840, binLo(16));
        assertEquals(4_095, binHi(16));
        assertEquals(46, binOf(55_000));
        assertEquals(53_248, binLo(46));
        assertEquals(57_343, binHi(46));
        assertEquals(BINS - 2, binOf(MAX_SAMPLE_NS)); // [939524096, 1006632959]
        assertEquals(939_524_096, binLo(BINS - 2));
        assertEquals(1_006_632_959, binHi(BINS - 2));
        assertEquals(BINS - 1, binOf(binLo(BINS - 1)));
        assertEquals(1_006_632_960, binLo(BINS - 1));
        assertEquals(1_073_741_823, binHi(BINS - 1));
        for (int i = 0; i < BINS; i++) {
            assertEquals(i, binOf(binLo(i)), "lo " + i);
            assertEquals(i, binOf(binHi(i)), "hi " + i);
            if (i > 0) {
                assertEquals(binHi(i - 1) + 1, binLo(i));
                assertTrue((binHi(i) - binLo(i) + 1) * 8 <= binLo(i), "at most 12.5 % wide");
            }
        }
    }

    @Test
    void marginIsTheBinAboveTheAllowedTail() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        for (int i = 0; i < 99; i++) {
            e.observe(100_000, 4_000); // bin [3840, 4095]
        }
        e.observe(100_000, 2_000_000);
        // n = 100: at 1 % one sample may be later than the margin.
        assertEquals(4_095, e.margin(3, 10_000));
        // at 0.5 % none may (not established, and no longer bucket is live),
        // so the outlier is the margin.
        assertEquals(binHi(binOf(2_000_000)), e.margin(3, 5_000));
        // shares above 100 % count as 100 %: every sample may be later.
        assertEquals(1_023, e.margin(3, U64.MAX));
    }

    @Test
    void aYoungBucketIsNeverTrustedBelowALongerOne() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        for (int i = 0; i < 100; i++) {
            e.observe(1_000_000, i % 10 == 9 ? 40_000 : 3_000); // bucket 6
        }
        for (int i = 0; i < 20; i++) {
            e.observe(50_000, 3_000); // bucket 2: bin [2816, 3071]
        }
        // Bucket 6: n = 100, 100 · 1 % = 1 sample set aside: established at
        // 1 %, its margin the 40 µs bin [36864, 40959].
        assertTrue(e.established(6, 10_000));
        assertEquals(40_959, e.margin(6, 10_000));
        // Bucket 2: 20 · 1 % < 1: too young at 1 %, so never below bucket 6.
        assertFalse(e.established(2, 10_000));
        assertEquals(40_959, e.margin(2, 10_000));
        // At 5 % one of its 20 samples may be later: established, its own 3071.
        assertTrue(e.established(2, 50_000));
        assertEquals(3_071, e.margin(2, 50_000));
        // A young longer bucket is not lifted by shorter ones: at 0.5 % bucket
        // 6 is young too, nothing longer is live, its own top sample stands.
        assertFalse(e.established(6, 5_000));
        assertEquals(40_959, e.margin(6, 5_000));
        // Bucket 3 borrows bucket 2's samples, and bucket 2's youth with them.
        assertFalse(e.established(3, 10_000));
        assertEquals(40_959, e.margin(3, 10_000));
        // 80 more samples establish bucket 2 at 1 %: it speaks for itself.
        for (int i = 0; i < 80; i++) {
            e.observe(50_000, 3_000);
        }
        assertTrue(e.established(2, 10_000));
        assertEquals(3_071, e.margin(2, 10_000));
        assertFalse(new MarginEstimator().established(2, 10_000), "nothing live: not established");
    }

    @Test
    void oneOutlierLeavesAfterWindowObservations() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(100_000, 900_000);
        for (int i = 0; i < WINDOW - 1; i++) {
            e.observe(100_000, 3_000);
        }
        assertEquals(binHi(binOf(900_000)), e.margin(3, 0));
        e.observe(100_000, 3_000);
        assertEquals(binHi(binOf(3_000)), e.margin(3, 0));
    }

    @Test
    void unusedBucketsAreForgottenAfterHorizonSleeps() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(100_000, 300_000);
        for (long i = 0; i < HORIZON - 1; i++) {
            e.beginSleep();
        }
        assertEquals(1, e.liveSamples(3));
        e.beginSleep();
        assertEquals(0, e.liveSamples(3));
        assertTrue(e.isEmpty());
        assertEquals(DEFAULT_MARGIN_NS, e.margin(3, 10_000));
        e.observe(100_000, 5_000); // starts the bucket afresh
        assertEquals(1, e.liveSamples(3));
        assertEquals(binHi(binOf(5_000)), e.margin(3, 0));
    }

    @Test
    void borrowsFromShorterThenLongerBuckets() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(20_000, 8_000); // bucket 1
        assertEquals(1, e.source(5));
        assertEquals(1, e.source(0));
        assertEquals(binHi(binOf(8_000)), e.margin(5, 10_000));
        assertEquals(binHi(binOf(8_000)), e.margin(0, 10_000));
        assertEquals(7_935, e.compensation(7)); // middle of [7680, 8191]
    }

    @Test
    void medianIsTheLowerMedianBin() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        for (long x : new long[] {5_000, 1_100, 4_000, 2_100}) {
            e.observe(1_000, x);
        }
        assertEquals(2_175, e.compensation(0)); // middle of [2048, 2303]
    }

    @Test
    void costIsAQuarterWeightAverageBorrowedWhenMissing() {
        MarginEstimator e = new MarginEstimator();
        assertEquals(DEFAULT_COST_NS, e.cost(4));
        e.observeCost(100_000, 20_000);
        assertEquals(20_000, e.cost(3));
        assertEquals(20_000, e.cost(9));
        e.observeCost(100_000, 10_000);
        assertEquals(17_500, e.cost(3));
        e.observeCost(100_000, 17_501);
        assertEquals(17_500, e.cost(3)); // 1 / 4 truncates toward zero
        e.observeCost(100_000, 17_497);
        assertEquals(17_500, e.cost(3)); // -3 / 4 truncates to 0
        e.observeCost(100_000, U64.MAX);  // clamped to 1 s
        assertEquals(17_500 + (MAX_SAMPLE_NS - 17_500) / 4, e.cost(3));
    }

    @Test
    void tailCountsLateAndSpin() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(50_000, 2_000);  // bin [1920, 2047]
        e.observe(50_000, 30_000); // bin [28672, 30719]
        assertEquals(new MarginEstimator.Tail(2, 1, 10_000 - 1_920), e.tail(2, 10_000));
        // with the second wait's room ending at 5 µs: the first sample fits, nothing else is below g.
        assertArrayEquals(new long[] {1, 0}, e.splitCounts(2, 5_000, 10_000));
        // room ends at 1 µs: the first sample leaves its spin to the rest.
        assertArrayEquals(new long[] {0, 10_000 - 1_920}, e.splitCounts(2, 1_000, 10_000));
        // a huge margin saturates nothing: both samples spin.
        assertEquals(new MarginEstimator.Tail(2, 0, U64.MAX), e.tail(2, U64.MAX));
    }

    /**
     * The prefix sums answer what the spec's bin-by-bin scans define: a
     * reference histogram of one bucket's last WINDOW samples, scanned as
     * {@code spec/estimator.md} says, against every query, over random
     * overshoots (the window full and wrapping), shares and margins up to
     * {@code 2^64 − 1}.
     */
    @Test
    void prefixSumsAnswerWhatTheScansDefine() {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(42);
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        java.util.ArrayDeque<Integer> window = new java.util.ArrayDeque<>();
        long[] gs = {0, 1_023, 1_024, 3_071, 3_072, 50_000, 1_073_741_823, 1_073_741_824, Long.MAX_VALUE, U64.MAX};
        for (int i = 0; i < 3 * WINDOW; i++) {
            long o = rnd.nextInt(8) == 0 ? rnd.nextLong(2_000_000_000L) : rnd.nextLong(200_000);
            e.observe(100_000, o);
            window.addLast(binOf(Math.min(o, MAX_SAMPLE_NS)));
            if (window.size() > WINDOW) {
                window.removeFirst();
            }
            if (i % 97 != 0 && i != 3 * WINDOW - 1) {
                continue;
            }
            long[] c = new long[BINS];
            for (int bin : window) {
                c[bin]++;
            }
            long n = window.size();
            for (long p : new long[] {0, 1, 1_000, 5_000, 10_000, 50_000, 999_999, 1_000_000, U64.MAX}) {
                long allowed = n * U64.min(p, 1_000_000) / 1_000_000;
                long above = 0;
                long want = binHi(0);
                for (int k = BINS - 1; k >= 0; k--) {
                    above += c[k];
                    if (above > allowed) {
                        want = binHi(k);
                        break;
                    }
                }
                assertEquals(want, e.margin(3, p), "margin at " + p + " after " + i);
            }
            long rank = (n - 1) / 2;
            long below = 0;
            for (int k = 0; k < BINS; k++) {
                below += c[k];
                if (below > rank) {
                    assertEquals(binLo(k) + (binHi(k) - binLo(k)) / 2, e.compensation(3), "compensation");
                    break;
                }
            }
            for (int t = 0; t < 40; t++) {
                long g = t < gs.length ? gs[t] : rnd.nextLong(1_200_000_000L);
                long limit = rnd.nextBoolean() ? rnd.nextLong(1_200_000_000L) : gs[rnd.nextInt(gs.length)];
                long late = 0;
                long spin = 0;
                long within = 0;
                long rest = 0;
                for (int k = 0; k < BINS; k++) {
                    if (c[k] == 0) {
                        continue;
                    }
                    if (U64.lt(g, binHi(k))) {
                        late += c[k];
                        continue;
                    }
                    spin = U64.add(spin, U64.mul(c[k], g - binLo(k)));
                    if (U64.ge(limit, binHi(k))) {
                        within += c[k];
                    } else {
                        rest = U64.add(rest, U64.mul(c[k], g - binLo(k)));
                    }
                }
                String at = "g " + Long.toUnsignedString(g) + " limit " + Long.toUnsignedString(limit);
                assertEquals(new MarginEstimator.Tail(n, late, spin), e.tail(3, g), at);
                assertArrayEquals(new long[] {within, rest}, e.splitCounts(3, limit, g), at);
            }
        }
    }

    @Test
    void emptyEstimatorAnswersTheDefaults() {
        MarginEstimator e = new MarginEstimator();
        assertTrue(e.isEmpty());
        assertEquals(-1, e.source(4));
        assertEquals(DEFAULT_MARGIN_NS, e.margin(4, 10_000));
        assertEquals(0, e.compensation(4));
        assertEquals(new MarginEstimator.Tail(0, 0, 0), e.tail(4, 1_000));
        assertArrayEquals(new long[] {0, 0}, e.splitCounts(4, 1_000, 2_000));
    }
}
