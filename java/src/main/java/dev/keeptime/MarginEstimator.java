package dev.keeptime;

import java.util.Arrays;

/**
 * Learns how late OS waits of each length wake up, so that an OS wait can end
 * early enough for a spin to finish the sleep on time.
 *
 * <p>This is {@code spec/estimator.md}, bit for bit (the JUnit suite replays
 * {@code spec/vectors/estimator.json}):
 * <ul>
 *   <li>OS waits are grouped into {@value #BUCKETS} buckets by length (powers
 *       of two from 16.384 µs), because how late the OS wakes a thread depends
 *       on how long it slept;</li>
 *   <li>each bucket remembers its last {@value #WINDOW} overshoots, each
 *       stamped with the number of the sleep that observed it; a sample is
 *       <em>live</em> for {@value #HORIZON} sleeps;</li>
 *   <li>the margin of a bucket ({@link Mode#EXACT}) is
 *       {@code q + 2·(q − median) + }{@value #HEADROOM_NS} ns over its live
 *       samples, {@code q} the largest once the top {@code (n − 1) / }{@value #OUTLIER_SHARE}
 *       are set aside (the 4th largest of 32, about their 90th percentile):
 *       the typical tail plus twice the spread. Up to three outliers in a full
 *       window change nothing, a lasting upward shift is followed within four
 *       samples, a downward one within {@value #WINDOW}, and a steady large
 *       overshoot (the default 50 µs timer slack) costs its spread, not its size;</li>
 *   <li>the compensation ({@link Mode#EFFICIENT}) is the lower median of the
 *       live samples;</li>
 *   <li>a bucket without live samples borrows from the nearest shorter bucket
 *       that has some, then the nearest longer one, else the margin is
 *       {@value #DEFAULT_MARGIN_NS} ns and the compensation 0.</li>
 * </ul>
 *
 * <p>All values are unsigned 64-bit nanoseconds held in a {@code long}
 * (as {@link Long#toUnsignedString(long)} prints them); arithmetic saturates.
 *
 * <p>Not thread-safe: one estimator belongs to one {@link Sleeper}. Cost:
 * about 6 KiB; {@link #observe} is O(1), a margin query scans at most
 * {@value #WINDOW} samples per bucket it consults.
 */
public final class MarginEstimator {
    /** Number of OS-wait length buckets. */
    public static final int BUCKETS = 12;
    /** Overshoot samples remembered per bucket. */
    public static final int WINDOW = 32;
    /** A sample stays live for this many sleeps. */
    public static final long HORIZON = 128;
    /** Margin of every bucket while nothing is live anywhere, ns. */
    public static final long DEFAULT_MARGIN_NS = 50_000;
    /** The top {@code (n - 1) / OUTLIER_SHARE} of {@code n} live samples are set aside as outliers. */
    public static final int OUTLIER_SHARE = 8;
    /** Added to every learned margin, ns. */
    public static final long HEADROOM_NS = 1_000;
    /** Samples are clamped to 1 s, so one suspend/resume cannot poison a bucket. */
    public static final long MAX_SAMPLE_NS = 1_000_000_000;
    private static final int BUCKET_SHIFT = 14;

    private long seq;
    private final long[][] overshoot = new long[BUCKETS][WINDOW];
    private final long[][] stamp = new long[BUCKETS][WINDOW];
    private final int[] len = new int[BUCKETS];
    private final int[] next = new int[BUCKETS];
    private final long[] scratch = new long[WINDOW];

    /** An estimator that has observed nothing. */
    public MarginEstimator() {}

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

    /** Marks the start of a sleep that waits: samples age by one sleep. */
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

    /**
     * Records that an OS wait planned at {@code waitNs} woke {@code overshootNs}
     * after its target.
     *
     * @param waitNs the planned OS wait, unsigned ns
     * @param overshootNs how late it woke, unsigned ns
     */
    public void observe(long waitNs, long overshootNs) {
        int b = bucketOf(waitNs);
        int i = next[b];
        overshoot[b][i] = U64.min(overshootNs, MAX_SAMPLE_NS);
        stamp[b][i] = seq;
        next[b] = (i + 1) % WINDOW;
        len[b] = Math.min(len[b] + 1, WINDOW);
    }

    private boolean isLive(int b, int i) {
        // seq >= stamp always: stamps are past values of seq.
        return U64.lt(seq - stamp[b][i], HORIZON);
    }

    /**
     * Number of live samples in bucket {@code b}.
     *
     * @param b a bucket
     * @return live samples, {@code 0..WINDOW}
     */
    public int liveSamples(int b) {
        int n = 0;
        for (int i = 0; i < len[b]; i++) {
            if (isLive(b, i)) {
                n++;
            }
        }
        return n;
    }

    /** The bucket whose samples stand for {@code b}, or -1. */
    private int source(int b) {
        for (int s = b; s >= 0; s--) {
            if (liveSamples(s) > 0) {
                return s;
            }
        }
        for (int s = b + 1; s < BUCKETS; s++) {
            if (liveSamples(s) > 0) {
                return s;
            }
        }
        return -1;
    }

    /**
     * How long before the deadline an OS wait in bucket {@code b} must end so
     * that a spin can finish the sleep ({@link Mode#EXACT}).
     *
     * @param b a bucket
     * @return the margin, unsigned ns
     */
    public long margin(int b) {
        int s = source(b);
        if (s < 0) {
            return DEFAULT_MARGIN_NS;
        }
        int n = sortLive(s);
        long q = scratch[n - 1 - (n - 1) / OUTLIER_SHARE];
        long median = scratch[(n - 1) / 2];
        return U64.add(U64.add(q, U64.mul(q - median, 2)), HEADROOM_NS);
    }

    /**
     * The lower median overshoot of bucket {@code b}, subtracted from the OS
     * wait of {@link Mode#EFFICIENT}; 0 before anything was observed.
     *
     * @param b a bucket
     * @return the compensation, unsigned ns
     */
    public long compensation(int b) {
        int s = source(b);
        if (s < 0) {
            return 0;
        }
        int n = sortLive(s);
        return scratch[(n - 1) / 2];
    }

    /** Sorts the live samples of bucket {@code b} into {@code scratch}, ascending; returns their count. */
    private int sortLive(int b) {
        int n = 0;
        for (int i = 0; i < len[b]; i++) {
            if (isLive(b, i)) {
                // Samples are at most MAX_SAMPLE_NS, so a signed sort is an unsigned one.
                scratch[n++] = overshoot[b][i];
            }
        }
        Arrays.sort(scratch, 0, n);
        return n;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("MarginEstimator[sleeps=").append(Long.toUnsignedString(seq));
        for (int b = 0; b < BUCKETS; b++) {
            int live = liveSamples(b);
            if (live > 0) {
                sb.append(", b").append(b).append(": ").append(live).append(" live, margin ")
                        .append(Long.toUnsignedString(margin(b))).append(" ns");
            }
        }
        return sb.append(']').toString();
    }
}
