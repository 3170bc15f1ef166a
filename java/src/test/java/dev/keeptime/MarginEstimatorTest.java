package dev.keeptime;

import static dev.keeptime.MarginEstimator.BUCKETS;
import static dev.keeptime.MarginEstimator.DEFAULT_MARGIN_NS;
import static dev.keeptime.MarginEstimator.HORIZON;
import static dev.keeptime.MarginEstimator.WINDOW;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

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
    void aSteadyOvershootCostsItsSpreadNotItsSize() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        for (int i = 0; i < WINDOW; i++) {
            e.observe(100_000, 54_000 + (i % 4) * 1_000); // 54..57 µs: the default slack
        }
        // q = 57 µs (4th largest), lower median 55 µs: 57 + 2·2 + 1 µs.
        assertEquals(62_000, e.margin(3));
    }

    @Test
    void upToThreeOutliersInAFullWindowAreIgnored() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        for (int i = 0; i < WINDOW - 3; i++) {
            e.observe(100_000, 4_000);
        }
        for (int k = 1; k <= 3; k++) {
            e.observe(100_000, 2_000_000 + k);
        }
        assertEquals(4_000 + 1_000, e.margin(3));
        e.observe(100_000, 2_000_000); // a fourth: the window's 90th percentile moved
        assertEquals(2_000_000 + 2 * (2_000_000 - 4_000) + 1_000, e.margin(3));
        for (int i = 0; i < WINDOW; i++) {
            e.beginSleep();
            e.observe(100_000, 5_000);
        }
        assertEquals(5_000 + 1_000, e.margin(3));
    }

    @Test
    void fewSamplesUseTheirMaximum() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(1_000, 7_000);
        e.observe(1_000, 3_000);
        assertEquals(7_000 + 2 * 4_000 + 1_000, e.margin(0)); // q = 7 µs, lower median 3 µs
    }

    @Test
    void samplesExpireAfterHorizonSleepsEvenUnused() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(100_000, 300_000);
        for (int i = 0; i < HORIZON - 1; i++) {
            e.beginSleep();
        }
        assertEquals(1, e.liveSamples(3));
        e.beginSleep();
        assertEquals(0, e.liveSamples(3));
        assertEquals(DEFAULT_MARGIN_NS, e.margin(3));
        assertEquals(0, e.compensation(3));
    }

    @Test
    void borrowsFromShorterThenLongerBuckets() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(20_000, 8_000); // bucket 1
        assertEquals(8_000 + 1_000, e.margin(5));
        assertEquals(8_000 + 1_000, e.margin(0));
        assertEquals(8_000, e.compensation(7));
    }

    @Test
    void medianIsTheLowerMedian() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        for (long x : new long[] {5, 1, 4, 2}) {
            e.observe(1_000, x);
        }
        assertEquals(2, e.compensation(0));
    }

    @Test
    void hugeSamplesAreClampedAndMarginsSaturateNever() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(U64.MAX, U64.MAX);
        assertEquals(MarginEstimator.MAX_SAMPLE_NS + 1_000, e.margin(BUCKETS - 1));
        assertEquals(MarginEstimator.MAX_SAMPLE_NS, e.compensation(0));
    }

    @Test
    void saturatingArithmetic() {
        assertEquals(U64.MAX, U64.add(U64.MAX, 1));
        assertEquals(U64.MAX, U64.add(Long.MAX_VALUE, Long.MAX_VALUE - 1 + 2));
        assertEquals(0, U64.sub(3, 5));
        assertEquals(U64.MAX, U64.mul(Long.MIN_VALUE, 2)); // 2^63 · 2
        assertEquals(U64.MAX, U64.mul(Long.divideUnsigned(U64.MAX, 2), 3));
        assertEquals(Long.divideUnsigned(U64.MAX, 2) * 2, U64.mul(Long.divideUnsigned(U64.MAX, 2), 2));
        assertEquals(U64.MAX, U64.nanos(java.time.Duration.ofSeconds(Long.MAX_VALUE, 999_999_999)));
        assertEquals(1_500_000_000L, U64.nanos(java.time.Duration.ofMillis(1_500)));
        assertEquals(Long.parseUnsignedLong("18446744073709551615"),
                U64.nanos(java.time.Duration.ofSeconds(18_446_744_073L, 709_551_615)));
        assertEquals(U64.MAX, U64.nanos(java.time.Duration.ofSeconds(18_446_744_073L, 709_551_616)));
    }
}
