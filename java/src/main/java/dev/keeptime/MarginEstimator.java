package dev.keeptime;

import java.util.Arrays;

/**
 * The wake-up model: how late OS waits of each length wake the thread, and
 * what one costs it, learned from every OS wait.
 *
 * <p>This is {@code spec/estimator.md} (version 5), bit for bit (the JUnit
 * suite replays {@code spec/vectors/estimator.json}):
 * <ul>
 *   <li>OS waits are grouped into {@value #BUCKETS} buckets by length (powers
 *       of two from 16.384 µs), because how late the OS wakes a thread depends
 *       on how long it slept;</li>
 *   <li>each bucket keeps the overshoots of its last {@value #WINDOW} OS waits
 *       as a log-binned histogram ({@value #BINS} bins, eight per power of two
 *       from 1.024 µs, each at most 12.5 % wide): O(1) per observation (one bin
 *       in, the oldest out), enough samples to place a tail target down to
 *       0.1 %;</li>
 *   <li>{@link #margin(int, long) margin(b, share)} is the upper edge of the
 *       bin holding the {@code k}-th largest sample,
 *       {@code k = floor((n + 1) · share)} (the largest when {@code k = 0}):
 *       a further wake-up lands above it with chance
 *       {@code k / (n + 1) ≤ share};</li>
 *   <li><b>young short buckets pool</b>: a bucket up to
 *       {@value #POOL_MAX_BUCKET} (waits below 524 µs) too young for a share
 *       on its own is answered by its live neighbours' samples pooled
 *       ({@code b − 1}, {@code b}, {@code b + 1}), never below its own
 *       samples' quantile;</li>
 *   <li><b>young windows are not optimistic</b>: while a bucket is not
 *       {@link #established(int, long) established} at a share
 *       ({@code (n + 1) · share < 1}, pooled or not: fewer than 99 samples at
 *       1 %, 999 at 0.1 %) its margin is at least every live longer bucket's
 *       at that share up to the nearest one established at it, as the
 *       maximum of a few samples says little about a rare tail (once it
 *       holds half the samples the share needs, that nearest established
 *       one's); a longer
 *       bucket itself too young for the share answers with its samples
 *       pooled with those of the nearest shorter bucket, at most two
 *       shorter, that places it;</li>
 *   <li><b>one outlier</b> counts for exactly {@value #WINDOW} further OS
 *       waits of its length (or until its bucket goes {@value #HORIZON} sleeps
 *       unused); once the bucket holds {@code n} samples with
 *       {@code (n + 1) · share ≥ 2} (199 at 1 %) it moves the margin at that
 *       share by at most one rank of the remembered distribution, whatever
 *       its size;</li>
 *   <li><b>a lasting shift</b> up is followed once {@code max(k, 1)} new
 *       samples lie above the old margin (10 at 1 % with a full window, 1 at
 *       0.1 %); a shift down within {@value #WINDOW} OS waits of that length;</li>
 *   <li><b>a stale profile</b>: a bucket loaded from a {@link Profile} notes
 *       its own margin at {@value #STALE_SHARE_PPM} ppm; once at least
 *       {@value #STALE_MIN} of its own wake-ups since loading landed above it,
 *       and more than one in {@value #STALE_DIV}, it drops the profile's
 *       samples and keeps its own;</li>
 *   <li>the thread-CPU cost of an OS wait ({@link #observeCost}) is sampled on
 *       every {@value #COST_SAMPLE_EVERY}th OS wait and kept per bucket as an
 *       integer moving average of weight 1/4;</li>
 *   <li>a bucket without live samples borrows from the nearest shorter bucket
 *       that has some, then the nearest longer one; with nothing live anywhere
 *       the margin is {@value #DEFAULT_MARGIN_NS} ns, the compensation 0, the
 *       cost {@value #DEFAULT_COST_NS} ns. A bucket unused for
 *       {@value #HORIZON} sleeps is forgotten, so a wait length the planner
 *       avoided is tried again.</li>
 * </ul>
 *
 * <p>All values are unsigned 64-bit nanoseconds held in a {@code long}
 * (as {@link Long#toUnsignedString(long)} prints them); arithmetic saturates.
 *
 * <p>Not thread-safe: one estimator belongs to one {@link Sleeper}. Cost:
 * about 35 KiB; like the Rust core it keeps prefix sums of each bucket's
 * histogram (counts and bin lower edges), so {@link #observe} updates at most
 * 2 × {@value #BINS} sums and every query adds at most three lookups or runs
 * one binary search.
 */
public final class MarginEstimator {
    /** Number of OS-wait length buckets. */
    public static final int BUCKETS = 12;
    /** Overshoot samples remembered per bucket. */
    public static final int WINDOW = 1024;
    /** Overshoot histogram bins per bucket. */
    public static final int BINS = 161;
    /** A bucket with no observation in this many sleeps is forgotten. */
    public static final long HORIZON = 256;
    /** Margin of every bucket while nothing is live anywhere, ns. */
    public static final long DEFAULT_MARGIN_NS = 50_000;
    /** Cost of an OS wait before any was measured, ns. */
    public static final long DEFAULT_COST_NS = 5_000;
    /** The thread CPU clock is read around every this many planned OS waits. */
    public static final long COST_SAMPLE_EVERY = 8;
    /** Overshoot and cost samples are clamped to 1 s, so one suspend/resume cannot poison a bucket. */
    public static final long MAX_SAMPLE_NS = 1_000_000_000;
    /** Shares are integers in parts per million. */
    public static final long PPM = 1_000_000;
    /**
     * The longest bucket that pools with its neighbours (waits below 524 µs,
     * the short waits of two-wait plans): a longer wait's wake-up depends on
     * its length (a deeper idle state, the host's scheduler), so a young long
     * bucket is answered by its own samples alone.
     */
    public static final int POOL_MAX_BUCKET = 5;
    /**
     * A bucket loaded from a profile notes its own margin at this share (ppm)
     * as its reference ({@code spec/estimator.md}, <em>Loading</em>, a stale
     * bucket).
     */
    public static final long STALE_SHARE_PPM = 10_000;
    /** A loaded bucket is stale once at least this many of its own wake-ups landed above its reference margin ... */
    public static final long STALE_MIN = 4;
    /**
     * ... and they are more than one in this many of its own observations
     * since loading: it then drops the profile's samples and keeps its own.
     */
    public static final long STALE_DIV = 25;
    /**
     * A view too young for a share answers its own quantile plus
     * {@code 1 /} this of it (spec/estimator.md, margin): the next wake-up
     * lands above the largest of {@code n} with chance {@code 1 / (n + 1)},
     * more than the share while {@code n} is too small to set one aside.
     */
    public static final long YOUNG_HEADROOM_DIV = 2;
    private static final int BUCKET_SHIFT = 14;
    private static final long NO_COST = -1; // costs are at most MAX_SAMPLE_NS

    private long seq;
    private final byte[][] ring = new byte[BUCKETS][WINDOW]; // bins 0..160, read as unsigned
    /** {@code cum[b][i]}: remembered samples of bucket {@code b} in bins {@code 0..i}. */
    private final int[][] cum = new int[BUCKETS][BINS];
    /** {@code cumLo[b][i]}: Σ {@code binLo(bin)} over those samples (at most 1024 · 2^30). */
    private final long[][] cumLo = new long[BUCKETS][BINS];
    private final int[] len = new int[BUCKETS];
    private final int[] next = new int[BUCKETS];
    private final long[] lastSeq = new long[BUCKETS];
    private final long[] cost = new long[BUCKETS];
    /** Of bucket {@code b}'s remembered samples, how many a profile loaded (the oldest). */
    private final int[] loaded = new int[BUCKETS];
    /** The bin of bucket {@code b}'s own margin at {@link #STALE_SHARE_PPM} when loaded. */
    private final int[] refBin = new int[BUCKETS];
    /**
     * Of bucket {@code b}'s own observations since loading ({@code len[b] - loaded[b]},
     * the newest), how many fell in a bin above {@code refBin[b]}, while {@code loaded[b] > 0}.
     */
    private final long[] over = new long[BUCKETS];

    /** An estimator that has observed nothing. */
    public MarginEstimator() {
        Arrays.fill(cost, NO_COST);
    }

    /**
     * The bucket of an OS wait of {@code waitNs} (unsigned) nanoseconds: 0
     * below 16.384 µs, then one per power of two, the last open-ended.
     *
     * @param waitNs the planned OS wait, unsigned ns
     * @return the bucket, {@code 0 ≤ b < BUCKETS}
     */
    public static int bucketOf(long waitNs) {
        int bits = 64 - Long.numberOfLeadingZeros(waitNs >>> BUCKET_SHIFT);
        return Math.min(bits, BUCKETS - 1);
    }

    /**
     * Shortest OS wait in bucket {@code b}.
     *
     * @param b a bucket
     * @return its lower bound, ns
     */
    public static long bucketLo(int b) {
        return b == 0 ? 0 : 1L << (BUCKET_SHIFT - 1 + b);
    }

    /**
     * Longest OS wait in bucket {@code b} ({@code 2^64 - 1} for the last).
     *
     * @param b a bucket
     * @return its upper bound, unsigned ns
     */
    public static long bucketHi(int b) {
        return b + 1 >= BUCKETS ? U64.MAX : bucketLo(b + 1) - 1;
    }

    /**
     * The histogram bin of an overshoot (clamp it to {@link #MAX_SAMPLE_NS} first).
     *
     * @param ns an overshoot, {@code 0 ≤ ns ≤ MAX_SAMPLE_NS}
     * @return its bin, {@code 0 ≤ i < BINS}
     */
    public static int binOf(long ns) {
        if (ns < 1024) {
            return 0;
        }
        int e = 63 - Long.numberOfLeadingZeros(ns); // 2^e <= ns < 2^(e+1), e >= 10
        int sub = (int) ((ns >>> (e - 3)) & 7);
        return Math.min(1 + 8 * (e - 10) + sub, BINS - 1);
    }

    /**
     * Smallest overshoot in bin {@code i}.
     *
     * @param i a bin
     * @return its lower edge, ns
     */
    public static long binLo(int i) {
        if (i == 0) {
            return 0;
        }
        int e = 10 + (i - 1) / 8;
        return (8L + (i - 1) % 8) << (e - 3);
    }

    /**
     * Largest overshoot in bin {@code i}.
     *
     * @param i a bin
     * @return its upper edge, ns
     */
    public static long binHi(int i) {
        if (i == 0) {
            return 1023;
        }
        int e = 10 + (i - 1) / 8;
        return ((9L + (i - 1) % 8) << (e - 3)) - 1;
    }

    /** Marks the start of a sleep that waits: buckets age by one sleep. */
    public void beginSleep() {
        seq = U64.add(seq, 1);
    }

    /**
     * Number of sleeps begun.
     *
     * @return the sleep counter (unsigned)
     */
    public long sleeps() {
        return seq;
    }

    private boolean isLive(int b) {
        // seq >= lastSeq always: lastSeq is a past value of seq.
        return len[b] > 0 && U64.lt(seq - lastSeq[b], HORIZON);
    }

    /**
     * Records that an OS wait planned at {@code waitNs} woke {@code overshootNs}
     * after its target.
     *
     * @param waitNs the planned OS wait, unsigned ns
     * @param overshootNs how late it woke, unsigned ns
     */
    public void observe(long waitNs, long overshootNs) {
        int b = bucketOf(waitNs);
        if (!isLive(b)) {
            clear(b);
        }
        int bin = binOf(U64.min(overshootNs, MAX_SAMPLE_NS));
        push(b, bin);
        lastSeq[b] = seq;
        if (loaded[b] > 0) {
            // A profile's samples are still here: is the profile stale
            // (spec/estimator.md, Loading, a stale bucket)?
            // The loaded samples are the oldest: the other len - loaded are the own ones.
            int own = len[b] - loaded[b];
            if (bin > refBin[b]) {
                over[b]++;
            }
            if (over[b] >= STALE_MIN && over[b] * STALE_DIV > own) {
                // Keep only the own samples, the newest own, in order (own < WINDOW).
                int keepN = own;
                int start = (next[b] + WINDOW - keepN) % WINDOW;
                int[] keep = new int[keepN];
                for (int i = 0; i < keepN; i++) {
                    keep[i] = ring[b][(start + i) % WINDOW] & 0xFF;
                }
                clear(b);
                for (int j : keep) {
                    push(b, j);
                }
            }
        }
    }

    /** Forgets every sample of bucket {@code b} (not its cost). */
    private void clear(int b) {
        Arrays.fill(cum[b], 0);
        Arrays.fill(cumLo[b], 0);
        len[b] = 0;
        next[b] = 0;
        loaded[b] = 0;
    }

    /** Appends a sample in {@code bin} to bucket {@code b}, the oldest (a loaded one first) leaving a full window. */
    private void push(int b, int bin) {
        int n = next[b];
        if (len[b] == WINDOW) {
            addToPrefix(b, ring[b][n] & 0xFF, -1);
            if (loaded[b] > 0) {
                loaded[b]--;
            }
        } else {
            len[b]++;
        }
        ring[b][n] = (byte) bin;
        addToPrefix(b, bin, 1);
        next[b] = (n + 1) % WINDOW;
    }

    /**
     * Marks every remembered sample as loaded from a profile, right after
     * the profile's samples were observed ({@code spec/estimator.md},
     * <em>Loading</em>): each bucket notes its own margin at
     * {@link #STALE_SHARE_PPM} (over its samples alone, not its view) as its
     * reference, and drops the loaded samples once its own wake-ups prove
     * them stale ({@link #STALE_MIN}, {@link #STALE_DIV}).
     */
    void markLoaded() {
        for (int b = 0; b < BUCKETS; b++) {
            int n = len[b];
            if (n == 0) {
                continue;
            }
            refBin[b] = binOf(quantile(View.one(b, n, true), STALE_SHARE_PPM));
            loaded[b] = n;
            over[b] = 0;
        }
    }

    /** Adds {@code delta} (±1) samples in {@code bin} to bucket {@code b}'s prefix sums. */
    private void addToPrefix(int b, int bin, int delta) {
        int[] c = cum[b];
        long[] lo = cumLo[b];
        long d = delta * binLo(bin);
        for (int j = bin; j < BINS; j++) {
            c[j] += delta;
            lo[j] += d;
        }
    }

    /** The last bin whose every sample is at most {@code g} ({@code binHi(k) ≤ g}), or -1. */
    private static int lastBinWithin(long g) {
        if (U64.ge(g, binHi(BINS - 1))) {
            return BINS - 1;
        }
        int j = binOf(g); // g < 2^30 here
        return binHi(j) <= g ? j : j - 1;
    }

    /**
     * {@code Σ (g − binLo)} over {@code count} samples whose bin lower edges
     * sum to {@code loSum} (each {@code ≤ g}): {@code g · count − loSum},
     * saturating at {@code 2^64 − 1} exactly when the spec's term-by-term
     * saturating sum does (when the true sum reaches {@code 2^64}).
     */
    private static long spinSum(long g, long count, long loSum) {
        // 128-bit g · count (count ≥ 0, so only g's sign bit needs the unsigned fix-up).
        long hi = Math.multiplyHigh(g, count) + ((g >> 63) & count);
        long lo = g * count;
        if (U64.lt(lo, loSum)) {
            hi--;
        }
        return hi != 0 ? U64.MAX : lo - loSum;
    }

    /**
     * Records that an OS wait of {@code waitNs} cost the thread {@code cpuNs}
     * of CPU time: the bucket's cost moves a quarter of the way toward it.
     *
     * @param waitNs the planned OS wait, unsigned ns
     * @param cpuNs the thread CPU time it cost, unsigned ns
     */
    public void observeCost(long waitNs, long cpuNs) {
        long x = U64.min(cpuNs, MAX_SAMPLE_NS);
        int b = bucketOf(waitNs);
        long c = cost[b];
        // Signed arithmetic, division truncating toward zero, as the spec says.
        cost[b] = c == NO_COST ? x : c + (x - c) / 4;
    }

    /**
     * Number of live samples in bucket {@code b} (0 once it is forgotten).
     *
     * @param b a bucket
     * @return live samples, {@code 0..WINDOW}
     */
    public int liveSamples(int b) {
        return isLive(b) ? len[b] : 0;
    }

    /**
     * Whether nothing is live in any bucket (nothing learned, or all forgotten).
     *
     * @return {@code true} when no bucket is live
     */
    public boolean isEmpty() {
        for (int b = 0; b < BUCKETS; b++) {
            if (isLive(b)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The bucket whose samples stand for {@code b}: {@code b}, then
     * {@code b-1 … 0}, then {@code b+1 … BUCKETS-1}, the first that is live.
     *
     * @param b a bucket
     * @return the source bucket, or -1 when none is live
     */
    public int source(int b) {
        for (int s = b; s >= 0; s--) {
            if (isLive(s)) {
                return s;
            }
        }
        for (int s = b + 1; s < BUCKETS; s++) {
            if (isLive(s)) {
                return s;
            }
        }
        return -1;
    }

    /**
     * The samples that stand for a bucket at a share ({@code spec/estimator.md},
     * <em>view</em>): up to three buckets, their summed count, and whether
     * they are enough to place a margin at that share.
     */
    private static final class View {
        final int[] members = new int[3];
        int len;
        long n;
        boolean established;

        static View one(int b, long n, boolean established) {
            View v = new View();
            v.members[0] = b;
            v.len = 1;
            v.n = n;
            v.established = established;
            return v;
        }
    }

    /**
     * The samples that stand for bucket {@code b} at {@code sharePpm}: the
     * source's own when they are enough for that share; else (a bucket up to
     * {@link #POOL_MAX_BUCKET}) the live buckets among {@code b − 1},
     * {@code b}, {@code b + 1} that are at most {@link #POOL_MAX_BUCKET},
     * pooled; else the source's own, not established. {@code null} when
     * nothing is live.
     */
    private View view(int b, long sharePpm) {
        int s = source(b);
        if (s < 0) {
            return null;
        }
        if (places(len[s], sharePpm)) {
            return View.one(s, len[s], true);
        }
        if (b > POOL_MAX_BUCKET) {
            return View.one(s, len[s], false);
        }
        View v = new View();
        for (int k = Math.max(b - 1, 0); k <= Math.min(b + 1, POOL_MAX_BUCKET); k++) {
            if (isLive(k)) {
                v.members[v.len++] = k;
                v.n += len[k];
            }
        }
        if (v.len == 0) {
            return View.one(s, len[s], false);
        }
        v.established = places(v.n, sharePpm);
        return v;
    }

    /**
     * The margin at which, over the {@code n} samples that stand for bucket
     * {@code b} at {@code sharePpm} ({@link #samples(int, long)}), a further
     * wake-up comes later with a chance of at most that share: the upper edge
     * of the bin holding the {@code k}-th largest sample,
     * {@code k = floor((n + 1) · sharePpm / 10^6)} (a new sample lands above
     * the {@code k}-th largest of {@code n} alike ones with chance
     * {@code k / (n + 1)}). A short bucket too young for the share on its own
     * is answered by its live neighbours pooled, never below its source's own
     * quantile. Samples too few for the share (not
     * {@link #established(int, long) established}, {@code k = 0}) answer
     * their largest plus half of it ({@link #YOUNG_HEADROOM_DIV}), and at
     * least the same quantile of every live bucket
     * longer than {@code b} up to the nearest one established at the share
     * on its own (once they are half what the share needs,
     * {@code places(n, 2 · share)}, of that one only; a longer bucket too young for the share
     * counts with its samples pooled with the nearest shorter one, at most
     * two shorter, that places it): a young bucket is never trusted to wake
     * earlier than any longer wait; nor than the nearest live shorter
     * bucket established at the share on its own. {@value #DEFAULT_MARGIN_NS} ns when nothing is live.
     *
     * @param b a bucket
     * @param sharePpm the share allowed later than the margin, unsigned ppm
     *     (above {@link #PPM} counts as {@code PPM})
     * @return the margin, ns
     */
    public long margin(int b, long sharePpm) {
        View v = view(b, sharePpm);
        if (v == null) {
            return DEFAULT_MARGIN_NS;
        }
        long own = quantile(v, sharePpm);
        if (v.established) {
            // A pool never answers below the source's own samples: a
            // neighbour's tighter wake-ups do not make this length's
            // observed tail shorter.
            int s = source(b);
            if (v.len > 1 || v.members[0] != s) {
                own = U64.max(own, ownQuantile(s, sharePpm));
            }
            return own;
        }
        // Too young to set a sample aside: headroom above its largest.
        own = U64.add(own, Long.divideUnsigned(own, YOUNG_HEADROOM_DIV));
        // Once the view holds half the samples the share needs, only a
        // longer bucket established at the share on its own bounds it: a
        // young longer bucket's largest sample is no better evidence of the
        // rare tail. min(share, PPM) · 2 is min(2 · share, PPM) once places
        // clamps it.
        boolean halfGrown = places(v.n, U64.min(sharePpm, PPM) * 2);
        // Only up to the nearest longer bucket that knows its tail: longer
        // waits wake no earlier, so its established tail is the most this
        // view can need, and a younger bucket beyond it would raise it past
        // that on a few largest samples.
        for (int l = b + 1; l < BUCKETS; l++) {
            if (isLive(l) && (!halfGrown || places(len[l], sharePpm))) {
                own = U64.max(own, bound(l, sharePpm));
            }
            if (isLive(l) && places(len[l], sharePpm)) {
                break;
            }
        }
        // Nor earlier than the nearest shorter wait that knows its tail
        // (places the share on its own): longer waits wake no earlier.
        int shorter = nearestKnownBelow(b, 0, sharePpm);
        if (shorter >= 0) {
            own = U64.max(own, ownQuantile(shorter, sharePpm));
        }
        return own;
    }

    /**
     * The largest live bucket in {@code [lowest, b)} that places
     * {@code sharePpm} on its own samples (knows its tail at that share), or
     * −1.
     */
    private int nearestKnownBelow(int b, int lowest, long sharePpm) {
        for (int l = b - 1; l >= lowest; l--) {
            if (isLive(l) && places(len[l], sharePpm)) {
                return l;
            }
        }
        return -1;
    }

    /** The quantile of bucket {@code l}'s own samples alone. */
    private long ownQuantile(int l, long sharePpm) {
        return quantile(View.one(l, len[l], false), sharePpm);
    }

    /**
     * What the longer bucket {@code l} says of a younger, shorter view at
     * {@code sharePpm} (spec/estimator.md, bound): its own quantile once it
     * places the share on its own; before that, its samples pooled with those
     * of the nearest shorter bucket that does, at most two buckets shorter
     * (and at least that bucket's own quantile), so that one stall among its
     * first wake-ups counts as one among hundreds rather than as the tail of
     * every shorter wait.
     */
    private long bound(int l, long sharePpm) {
        if (places(len[l], sharePpm)) {
            return ownQuantile(l, sharePpm);
        }
        int s = nearestKnownBelow(l, Math.max(l - 2, 0), sharePpm);
        if (s < 0) {
            return ownQuantile(l, sharePpm);
        }
        View pool = View.one(l, len[l] + len[s], false);
        pool.members[1] = s;
        pool.len = 2;
        return U64.max(quantile(pool, sharePpm), ownQuantile(s, sharePpm));
    }

    /**
     * Whether the samples that stand for bucket {@code b} at {@code sharePpm}
     * (its source's own, or the pool of its neighbours) are enough to place a
     * margin at that share: {@code (n + 1) · min(sharePpm, PPM) ≥ PPM}.
     *
     * @param b a bucket
     * @param sharePpm the share, unsigned ppm
     * @return whether {@code b} is established at that share
     */
    public boolean established(int b, long sharePpm) {
        View v = view(b, sharePpm);
        return v != null && v.established;
    }

    /**
     * How many samples stand for bucket {@code b} at {@code sharePpm}: its
     * source's, or its pooled neighbours' (see {@link #margin(int, long)}).
     *
     * @param b a bucket
     * @param sharePpm the share, unsigned ppm
     * @return the samples, 0 when nothing is live
     */
    public long samples(int b, long sharePpm) {
        View v = view(b, sharePpm);
        return v == null ? 0 : v.n;
    }

    /** Whether {@code n} samples are enough for a margin at {@code sharePpm}: {@code (n + 1) · share ≥ PPM}. */
    private static boolean places(long n, long sharePpm) {
        // n <= 3 · WINDOW and the share <= PPM: the product cannot overflow.
        return (n + 1) * U64.min(sharePpm, PPM) >= PPM;
    }

    /** Samples of the view in bins {@code 0..i}. */
    private long viewCum(View v, int i) {
        long c = 0;
        for (int m = 0; m < v.len; m++) {
            c += cum[v.members[m]][i];
        }
        return c;
    }

    /** Samples of the view in bins {@code 0..i} ({@code [0]}) and Σ of their bins' lower edges ({@code [1]}); zeros for {@code i < 0}. */
    private long[] viewPrefix(View v, int i) {
        long n = 0;
        long lo = 0;
        if (i >= 0) {
            for (int m = 0; m < v.len; m++) {
                n += cum[v.members[m]][i];
                lo += cumLo[v.members[m]][i];
            }
        }
        return new long[] {n, lo};
    }

    /**
     * The upper edge of the bin holding the view's {@code k}-th largest
     * sample, {@code k = floor((n + 1) · sharePpm / 10^6)}, the largest when
     * {@code k = 0} ({@code binHi(0)} when every sample may be later).
     */
    private long quantile(View v, long sharePpm) {
        long n = v.n;
        long k = (n + 1) * U64.min(sharePpm, PPM) / PPM;
        long allowed = Math.min(n, Math.max(k, 1) - 1);
        // The highest bin i with (samples in bins >= i) > allowed: the lowest
        // i with cum[i] >= n - allowed (cum is non-decreasing, cum[BINS-1] = n).
        long need = n - allowed;
        int lo = 0;
        int hi = BINS - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (viewCum(v, mid) >= need) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return binHi(lo);
    }

    /** The lowest {@code i} with {@code c[i] ≥ need}, else {@code BINS - 1}. */
    private static int firstAtLeast(int[] c, long need) {
        int lo = 0;
        int hi = BINS - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (c[mid] >= need) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /**
     * What the samples that stand for a bucket say about an OS wait ending
     * {@code gNs} before the deadline (spec {@code tail(b, p, g)}).
     *
     * @param samples the samples behind the answer (0 when nothing is live)
     * @param late samples whose bin reaches past {@code g}
     * @param spinSumNs {@code Σ (g − binLo)} over the other samples, unsigned, saturating
     */
    public record Tail(long samples, long late, long spinSumNs) {}

    /**
     * Late count and summed spin for an OS wait of bucket {@code b} that ends
     * {@code gNs} before the deadline, over the samples that stand for
     * {@code b} at {@code sharePpm}: a whole bin counts as late as soon as
     * any of it could be.
     *
     * @param b a bucket
     * @param sharePpm the share the wait is planned at, unsigned ppm
     * @param gNs the margin, unsigned ns
     * @return the tail; all zero when nothing is live
     */
    public Tail tail(int b, long sharePpm, long gNs) {
        View v = view(b, sharePpm);
        if (v == null) {
            return new Tail(0, 0, 0);
        }
        long[] within = viewPrefix(v, lastBinWithin(gNs));
        return new Tail(v.n, v.n - within[0], spinSum(gNs, within[0], within[1]));
    }

    /**
     * Over the samples that stand for bucket {@code b} at {@code sharePpm},
     * bins with {@code binHi ≤ g} only: how many have {@code binHi ≤ limit}
     * ({@code [0]}), and {@code Σ (g − binLo)} over those with
     * {@code limit < binHi} ({@code [1]}).
     *
     * @param b a bucket
     * @param sharePpm the share the wait is planned at, unsigned ppm
     * @param limitNs the latest first wake-up that leaves room for a second wait, unsigned ns
     * @param gNs the margin of the first wait, unsigned ns
     * @return {@code {within, restSpin}}; both 0 when nothing is live
     */
    public long[] splitCounts(int b, long sharePpm, long limitNs, long gNs) {
        View v = view(b, sharePpm);
        if (v == null) {
            return new long[] {0, 0};
        }
        long[] g = viewPrefix(v, lastBinWithin(gNs));
        long[] l = viewPrefix(v, lastBinWithin(U64.min(limitNs, gNs)));
        return new long[] {l[0], spinSum(gNs, g[0] - l[0], g[1] - l[1])};
    }

    /**
     * The lower median overshoot of bucket {@code b}, as the middle of its bin
     * (within 6.25 % of the true median), subtracted from the OS wait of
     * {@link Mode#EFFICIENT}; 0 before anything was observed.
     *
     * @param b a bucket
     * @return the compensation, ns
     */
    public long compensation(int b) {
        int s = source(b);
        if (s < 0) {
            return 0;
        }
        long rank = (len[s] - 1) / 2; // 0-based from the bottom
        int i = firstAtLeast(cum[s], rank + 1); // the lowest i with cum[i] > rank
        return binLo(i) + (binHi(i) - binLo(i)) / 2;
    }

    /**
     * The learned thread-CPU cost of one OS wait of bucket {@code b}: its own
     * average, else the nearest bucket's in the borrowing order ({@code b},
     * {@code b-1 … 0}, {@code b+1 …}), else {@value #DEFAULT_COST_NS} ns.
     * Costs are not forgotten with the samples.
     *
     * @param b a bucket
     * @return the cost, ns
     */
    public long cost(int b) {
        for (int s = b; s >= 0; s--) {
            if (cost[s] != NO_COST) {
                return cost[s];
            }
        }
        for (int s = b + 1; s < BUCKETS; s++) {
            if (cost[s] != NO_COST) {
                return cost[s];
            }
        }
        return DEFAULT_COST_NS;
    }

    /**
     * The bins of bucket {@code b}'s live samples, oldest first (none once
     * it is forgotten): what a {@link Profile} of this estimator writes.
     */
    int[] rememberedBins(int b) {
        int n = liveSamples(b);
        int start = n == WINDOW ? next[b] : 0; // a full ring's oldest sample is overwritten next
        int[] bins = new int[n];
        for (int i = 0; i < n; i++) {
            bins[i] = ring[b][(start + i) % WINDOW] & 0xFF;
        }
        return bins;
    }

    /** Bucket {@code b}'s own learned cost, not borrowed; -1 before any. */
    long ownCost(int b) {
        return cost[b];
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("MarginEstimator[sleeps=").append(Long.toUnsignedString(seq));
        for (int b = 0; b < BUCKETS; b++) {
            int live = liveSamples(b);
            if (live > 0) {
                sb.append(", b").append(b).append(": ").append(live).append(" live, margin@1% ")
                        .append(margin(b, 10_000)).append(" ns");
            }
            if (cost[b] != NO_COST) {
                sb.append(", b").append(b).append(" cost ").append(cost[b]).append(" ns");
            }
        }
        return sb.append(']').toString();
    }
}
