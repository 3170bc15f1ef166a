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
    /** Shares the reference scans are checked at, ppm: above {@code PPM} counts as {@code PPM}. */
    static final long[] SHARES = {0, 1, 1_000, 5_000, 10_000, 50_000, 999_999, 1_000_000, U64.MAX};

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
        for (int i = 0; i < 198; i++) {
            e.observe(100_000, 4_000); // bin [3840, 4095]
        }
        e.observe(100_000, 2_000_000);
        // n = 199: at 1 % the margin is the 2nd largest sample's bin
        // (floor(200 · 1 %) = 2), the outlier lies above it.
        assertEquals(4_095, e.margin(3, 10_000));
        // at 0.5 %: the largest (floor(200 · 0.5 %) = 1), the outlier.
        assertEquals(binHi(binOf(2_000_000)), e.margin(3, 5_000));
        // shares above 100 % count as 100 %: every sample may be later.
        assertEquals(1_023, e.margin(3, U64.MAX));
        // at 1 % with one sample fewer, too: floor(199 · 1 %) = 1.
        MarginEstimator y = new MarginEstimator();
        y.beginSleep();
        for (int i = 0; i < 197; i++) {
            y.observe(100_000, 4_000);
        }
        y.observe(100_000, 2_000_000);
        assertEquals(binHi(binOf(2_000_000)), y.margin(3, 10_000));
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
        // Bucket 6: n = 100, (100 + 1) · 1 % ≥ 1: established at 1 %, its
        // margin the largest sample's bin (floor(101 · 1 %) = 1), the 40 µs
        // bin [36864, 40959].
        assertTrue(e.established(6, 10_000));
        assertEquals(40_959, e.margin(6, 10_000));
        // Bucket 2: 21 · 1 % < 1, alone or with its live neighbours (none):
        // too young at 1 %, so never below bucket 6 (its own 3 071 ns plus
        // a young view's headroom, 4 606 ns, is below bucket 6's 40 959).
        assertFalse(e.established(2, 10_000));
        assertEquals(40_959, e.margin(2, 10_000));
        // At 5 %, 21 · 5 % ≥ 1: established, its own 3071.
        assertTrue(e.established(2, 50_000));
        assertEquals(3_071, e.margin(2, 50_000));
        // A young longer bucket is not lifted by shorter ones, nor pooled
        // (bucket 6 > POOL_MAX_BUCKET): at 0.5 % bucket 6 is young too
        // (101 · 0.5 % < 1), nothing longer is live: its own top sample's
        // bin top, 40 959 ns, plus half of it as a young view's headroom:
        // 61 438 ns.
        assertFalse(e.established(6, 5_000));
        assertEquals(61_438, e.margin(6, 5_000));
        // Bucket 3 borrows bucket 2's samples (its pool), and their youth
        // with them: bucket 6's 40 959 ns again, above 4 606 ns.
        assertFalse(e.established(3, 10_000));
        assertEquals(40_959, e.margin(3, 10_000));
        // 80 more samples establish bucket 2 at 1 % (101 · 1 % ≥ 1): it speaks for itself.
        for (int i = 0; i < 80; i++) {
            e.observe(50_000, 3_000);
        }
        assertTrue(e.established(2, 10_000));
        assertEquals(3_071, e.margin(2, 10_000));
        assertFalse(new MarginEstimator().established(2, 10_000), "nothing live: not established");
    }

    @Test
    void aYoungBucketIsAnsweredByItsPooledNeighbours() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        for (int i = 0; i < 150; i++) {
            e.observe(50_000, 3_000); // bucket 2, bin [2816, 3071]
        }
        for (int i = 0; i < 60; i++) {
            e.observe(100_000, 5_000); // bucket 3, bin [4608, 5119]
        }
        // At 1 % bucket 3's own 60 samples are too few (61 · 1 % < 1); with
        // bucket 2's 150 the pool of buckets 2–4 has 210 (211 · 1 % ≥ 1), and
        // its quantile (the 2nd largest, floor(211 · 1 %) = 2) is bucket 3's
        // samples' bin.
        assertEquals(210, e.samples(3, 10_000));
        assertTrue(e.established(3, 10_000));
        assertEquals(5_119, e.margin(3, 10_000));
        // Bucket 4 (not live) borrows bucket 3; its pool (3–5) holds bucket 3 alone.
        assertEquals(60, e.samples(4, 10_000));
        assertFalse(e.established(4, 10_000));
        // At 0.1 % 210 samples are too few even pooled: not established, the
        // margin is their maximum's bin top, 5 119 ns, plus half of it as a
        // young view's headroom: 7 678 ns (nothing longer is live).
        assertFalse(e.established(3, 1_000));
        assertEquals(7_678, e.margin(3, 1_000));
        // Bucket 2 has enough of its own at 1 %: its own samples answer.
        assertEquals(150, e.samples(2, 10_000));
        assertEquals(3_071, e.margin(2, 10_000));
        // A bucket beyond POOL_MAX_BUCKET borrows from its source alone:
        // young at 1 %, bucket 3's 5 119 ns plus half of it as a young view's
        // headroom, 7 678 ns (above bucket 2's 3 071 ns, the nearest shorter
        // bucket established at 1 %).
        assertEquals(60, e.samples(8, 10_000));
        assertFalse(e.established(8, 10_000));
        assertEquals(7_678, e.margin(8, 10_000));
    }

    @Test
    void aPoolNeverAnswersBelowItsSourcesOwnQuantile() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        for (int i = 0; i < 300; i++) {
            e.observe(50_000, 3_000); // bucket 2, bin [2816, 3071]
        }
        for (int i = 0; i < 29; i++) {
            e.observe(100_000, 5_000); // bucket 3, bin [4608, 5119]
        }
        e.observe(100_000, 50_000); // bucket 3, bin [49152, 53247]
        // At 1 % the pool of buckets 2–4 (330 samples) sets two aside
        // (floor(331 · 1 %) = 3: the 3rd largest, in the 5 µs bin), but bucket
        // 3's own 30 samples answer their largest: the 50 µs bin.
        assertEquals(330, e.samples(3, 10_000));
        assertTrue(e.established(3, 10_000));
        assertEquals(53_247, e.margin(3, 10_000));
        // Its tail at that margin reads the pool.
        assertEquals(new MarginEstimator.Tail(330, 0,
                        300 * (53_247 - 2_816) + 29 * (53_247 - 4_608) + (53_247 - 49_152)),
                e.tail(3, 10_000, 53_247));
        // Bucket 2 is established on its own: the 3 µs bin.
        assertEquals(3_071, e.margin(2, 10_000));
    }

    /**
     * A spec-literal reference for the pooled queries (view, quantile,
     * margin, established, samples, tail, split_counts) on random samples in
     * buckets 0–7, each young enough (fewer than 400 samples) that views
     * pool or not depending on the share.
     */
    @Test
    void pooledViewsAnswerWhatTheSpecDefines() {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(7);
        long[] gs = {0, 1_023, 3_071, 3_072, 50_000, 1_073_741_823, U64.MAX};
        for (int round = 0; round < 60; round++) {
            MarginEstimator e = new MarginEstimator();
            e.beginSleep();
            long[][] c = new long[BUCKETS][BINS];
            long[] len = new long[BUCKETS];
            for (int b = 0; b < 8; b++) {
                int n = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(400);
                for (int i = 0; i < n; i++) {
                    long o = rnd.nextInt(20) == 0 ? rnd.nextLong(2_000_000) : rnd.nextLong(1_000, 30_000);
                    e.observe(MarginEstimator.bucketLo(b) + rnd.nextLong(1 << (13 + Math.max(b, 1))), o);
                    c[b][binOf(o)]++;
                    len[b]++;
                }
            }
            for (int b = 0; b < BUCKETS; b++) {
                assertEquals(len[b], e.liveSamples(b));
            }
            for (long p : SHARES) {
                for (int b = 0; b < BUCKETS; b++) {
                    String at = "round " + round + " b" + b + " p " + Long.toUnsignedString(p);
                    int s = refSource(len, b);
                    if (s < 0) {
                        assertEquals(DEFAULT_MARGIN_NS, e.margin(b, p), at);
                        assertFalse(e.established(b, p), at);
                        continue;
                    }
                    // view(b, p)
                    java.util.List<Integer> v = new java.util.ArrayList<>(java.util.List.of(s));
                    boolean est;
                    if (refPlaces(len[s], p)) {
                        est = true;
                    } else if (b > MarginEstimator.POOL_MAX_BUCKET) {
                        est = false;
                    } else {
                        java.util.List<Integer> pool = new java.util.ArrayList<>();
                        for (int k = Math.max(b - 1, 0); k <= b + 1; k++) {
                            if (k <= MarginEstimator.POOL_MAX_BUCKET && len[k] > 0) {
                                pool.add(k);
                            }
                        }
                        if (!pool.isEmpty()) {
                            v = pool;
                        }
                        est = !pool.isEmpty() && refPlaces(v.stream().mapToLong(k -> len[k]).sum(), p);
                    }
                    long n = v.stream().mapToLong(k -> len[k]).sum();
                    assertEquals(n, e.samples(b, p), at);
                    assertEquals(est, e.established(b, p), at);
                    long want = refQuantile(c, v, p);
                    if (est && !(v.size() == 1 && v.get(0) == s)) {
                        want = U64.max(want, refQuantile(c, java.util.List.of(s), p));
                    } else if (!est) {
                        // Young: half of its own quantile again as headroom.
                        want = want + want / 2;
                        // Half grown (places(n, 2p)): only longer buckets
                        // established at p on their own bound it.
                        boolean halfGrown = refPlaces(n, U64.min(p, 1_000_000) * 2);
                        for (int l = b + 1; l < BUCKETS; l++) {
                            if (len[l] > 0 && (!halfGrown || refPlaces(len[l], p))) {
                                // bound(l, p): l alone once it places p; else pooled
                                // with the nearest live s in [l - 2, l) that does.
                                long bound = refQuantile(c, java.util.List.of(l), p);
                                if (!refPlaces(len[l], p)) {
                                    for (int s2 = l - 1; s2 >= Math.max(l - 2, 0); s2--) {
                                        if (len[s2] > 0 && refPlaces(len[s2], p)) {
                                            bound = U64.max(refQuantile(c, java.util.List.of(l, s2), p),
                                                    refQuantile(c, java.util.List.of(s2), p));
                                            break;
                                        }
                                    }
                                }
                                want = U64.max(want, bound);
                            }
                            // Up to the nearest longer bucket established at p on its own.
                            if (len[l] > 0 && refPlaces(len[l], p)) {
                                break;
                            }
                        }
                        // Nor below the nearest shorter bucket established at p on its own.
                        for (int l = b - 1; l >= 0; l--) {
                            if (len[l] > 0 && refPlaces(len[l], p)) {
                                want = U64.max(want, refQuantile(c, java.util.List.of(l), p));
                                break;
                            }
                        }
                    }
                    assertEquals(want, e.margin(b, p), at);
                    long g = rnd.nextBoolean() ? gs[rnd.nextInt(gs.length)] : rnd.nextLong(100_000);
                    long limit = rnd.nextLong(60_000);
                    long late = 0;
                    long spin = 0;
                    long within = 0;
                    long rest = 0;
                    for (int i = 0; i < BINS; i++) {
                        long cnt = 0;
                        for (int k : v) {
                            cnt += c[k][i];
                        }
                        if (cnt == 0) {
                            continue;
                        }
                        if (U64.lt(g, binHi(i))) {
                            late += cnt;
                            continue;
                        }
                        spin = U64.add(spin, U64.mul(cnt, g - binLo(i)));
                        if (U64.ge(limit, binHi(i))) {
                            within += cnt;
                        } else {
                            rest = U64.add(rest, U64.mul(cnt, g - binLo(i)));
                        }
                    }
                    assertEquals(new MarginEstimator.Tail(n, late, spin), e.tail(b, p, g), at + " g " + g);
                    assertArrayEquals(new long[] {within, rest}, e.splitCounts(b, p, limit, g), at + " g " + g);
                }
            }
        }
    }

    static int refSource(long[] len, int b) {
        for (int s = b; s >= 0; s--) {
            if (len[s] > 0) {
                return s;
            }
        }
        for (int s = b + 1; s < BUCKETS; s++) {
            if (len[s] > 0) {
                return s;
            }
        }
        return -1;
    }

    static boolean refPlaces(long n, long p) {
        return (n + 1) * U64.min(p, 1_000_000) >= 1_000_000;
    }

    /** The spec's quantile(V, p): scan the summed bins from the top. */
    static long refQuantile(long[][] c, java.util.List<Integer> v, long p) {
        long n = 0;
        for (int k : v) {
            for (long x : c[k]) {
                n += x;
            }
        }
        long k = (n + 1) * U64.min(p, 1_000_000) / 1_000_000;
        long allowed = Math.min(n, Math.max(k, 1) - 1);
        long above = 0;
        for (int i = BINS - 1; i >= 0; i--) {
            for (int m : v) {
                above += c[m][i];
            }
            if (above > allowed) {
                return binHi(i);
            }
        }
        return binHi(0);
    }

    @Test
    void oneOutlierLeavesAfterWindowObservations() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(100_000, 900_000);
        for (int i = 0; i < WINDOW - 1; i++) {
            e.observe(100_000, 3_000);
        }
        // At share 0 every view is young: its largest sample's bin top plus
        // half of it as a young view's headroom, 917 503 + 458 751 ns.
        assertEquals(1_376_254, e.margin(3, 0));
        e.observe(100_000, 3_000);
        // The outlier gone: 3 071 ns plus half of it, 4 606 ns.
        assertEquals(4_606, e.margin(3, 0));
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
        // One sample, young: its bin's top, 5 119 ns, plus half of it as a
        // young view's headroom: 7 678 ns.
        assertEquals(7_678, e.margin(3, 0));
    }

    @Test
    void borrowsFromShorterThenLongerBuckets() {
        MarginEstimator e = new MarginEstimator();
        e.beginSleep();
        e.observe(20_000, 8_000); // bucket 1
        assertEquals(1, e.source(5));
        assertEquals(1, e.source(0));
        // One sample, young: its bin's top, 8 191 ns, plus half of it as a
        // young view's headroom: 12 286 ns.
        assertEquals(12_286, e.margin(5, 10_000));
        assertEquals(12_286, e.margin(0, 10_000));
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
        assertEquals(new MarginEstimator.Tail(2, 1, 10_000 - 1_920), e.tail(2, 10_000, 10_000));
        // with the second wait's room ending at 5 µs: the first sample fits, nothing else is below g.
        assertArrayEquals(new long[] {1, 0}, e.splitCounts(2, 10_000, 5_000, 10_000));
        // room ends at 1 µs: the first sample leaves its spin to the rest.
        assertArrayEquals(new long[] {0, 10_000 - 1_920}, e.splitCounts(2, 10_000, 1_000, 10_000));
        // a huge margin saturates nothing: both samples spin.
        assertEquals(new MarginEstimator.Tail(2, 0, U64.MAX), e.tail(2, 10_000, U64.MAX));
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
            for (long p : SHARES) {
                long rank = (n + 1) * U64.min(p, 1_000_000) / 1_000_000;
                long allowed = Math.min(n, Math.max(rank, 1) - 1);
                long above = 0;
                long want = binHi(0);
                for (int k = BINS - 1; k >= 0; k--) {
                    above += c[k];
                    if (above > allowed) {
                        want = binHi(k);
                        break;
                    }
                }
                if (rank == 0) {
                    // Young (too few to set one aside): half of its own
                    // quantile again as headroom (nothing else is live).
                    want = want + want / 2;
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
                long p = SHARES[rnd.nextInt(SHARES.length)];
                assertEquals(new MarginEstimator.Tail(n, late, spin), e.tail(3, p, g), at);
                assertArrayEquals(new long[] {within, rest}, e.splitCounts(3, p, limit, g), at);
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
        assertEquals(new MarginEstimator.Tail(0, 0, 0), e.tail(4, 10_000, 1_000));
        assertArrayEquals(new long[] {0, 0}, e.splitCounts(4, 10_000, 1_000, 2_000));
        assertFalse(e.established(4, 10_000));
        assertEquals(0, e.samples(4, 10_000));
    }
}
