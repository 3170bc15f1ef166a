package dev.keeptime.bench;

import dev.keeptime.Percentiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The statistics of one cell (one method at one duration), with the
 * definitions of the project's bench result format
 * ({@code spec/bench-result.md}): nearest-rank percentiles
 * ({@link Percentiles}), sample standard deviation, a log-linear histogram
 * with 4 significant bits per edge. Errors are signed ns: the caller's first
 * clock reading after the call returned minus the deadline.
 */
final class Stats {
    /** Per-mille ranks of the reported percentiles: p50, p90, p99, p99.9. */
    static final int[] PERCENTILES_PER_MILLE = {500, 900, 990, 999};
    /** Histogram edges keep this many significant bits. */
    static final int SIGNIFICANT_BITS = 4;
    /** A sample this much (ns) or less after its deadline is on time. */
    static final long LATE_NS = 2_000;

    final long samples;
    final long minNs;
    final double meanNs;
    final double stddevNs;
    final long p50Ns;
    final long p90Ns;
    final long p99Ns;
    final long p999Ns;
    final long maxNs;
    final long early;
    /** Samples more than {@link #LATE_NS} after the deadline. */
    final long late;
    /**
     * The return path: the caller's reading minus the method's own last
     * reading, p50 and p90 (ns), or null for a method that returns none.
     */
    final Long returnP50Ns;
    final Long returnP90Ns;
    final double cpuPercent;
    final long wallNs;
    final long cpuNs;
    /** {gt_ns, le_ns, count} per non-empty bucket, increasing. */
    final List<long[]> histogram;

    /** Statistics of {@code errors} (sorted in place, at least one). */
    Stats(long[] errors, long wallNs, long cpuNs) {
        this(errors, null, wallNs, cpuNs);
    }

    /**
     * Statistics of {@code errors} and, unless null, of the return-path
     * samples {@code returns} (both sorted in place; at least one error).
     */
    Stats(long[] errors, long[] returns, long wallNs, long cpuNs) {
        if (errors.length == 0) {
            throw new IllegalArgumentException("a cell records at least one sample");
        }
        Arrays.sort(errors);
        int n = errors.length;
        long sum = 0; // |errors| < 2^40 and n < 2^20 here: no overflow
        for (long e : errors) {
            sum += e;
        }
        double mean = (double) sum / n;
        double ss = 0;
        for (long e : errors) {
            ss += (e - mean) * (e - mean);
        }
        this.samples = n;
        this.minNs = errors[0];
        this.meanNs = mean;
        this.stddevNs = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
        this.p50Ns = Percentiles.nearestRank(errors, 500);
        this.p90Ns = Percentiles.nearestRank(errors, 900);
        this.p99Ns = Percentiles.nearestRank(errors, 990);
        this.p999Ns = Percentiles.nearestRank(errors, 999);
        this.maxNs = errors[n - 1];
        long e = 0;
        while (e < n && errors[(int) e] < 0) {
            e++;
        }
        this.early = e;
        long l = 0;
        while (l < n && errors[n - 1 - (int) l] > LATE_NS) {
            l++;
        }
        this.late = l;
        if (returns != null && returns.length > 0) {
            Arrays.sort(returns);
            this.returnP50Ns = Percentiles.nearestRank(returns, 500);
            this.returnP90Ns = Percentiles.nearestRank(returns, 900);
        } else {
            this.returnP50Ns = null;
            this.returnP90Ns = null;
        }
        this.cpuPercent = wallNs == 0 ? 0 : 100.0 * cpuNs / wallNs;
        this.wallNs = wallNs;
        this.cpuNs = cpuNs;
        this.histogram = histogram(errors);
    }

    /** The share of samples more than {@link #LATE_NS} late, in percent. */
    double latePercent() {
        return 100.0 * late / samples;
    }

    private static long lowMask(long v) {
        int bits = 64 - Long.numberOfLeadingZeros(v);
        return bits <= SIGNIFICANT_BITS ? 0 : (1L << (bits - SIGNIFICANT_BITS)) - 1;
    }

    private static long roundDownSig(long v) {
        return v & ~lowMask(v);
    }

    private static long roundUpSig(long v) {
        long mask = lowMask(v);
        return (v & mask) == 0 ? v : (v | mask) + 1;
    }

    /** The smallest edge ≥ v: 0 and ±e for every e ≥ 1 with at most 4 significant bits. */
    static long upperEdge(long v) {
        if (v == 0) {
            return 0;
        }
        return v > 0 ? roundUpSig(v) : -roundDownSig(-v);
    }

    /** The edge just below edge {@code le} (a bucket's exclusive lower edge). */
    static long lowerEdge(long le) {
        if (le == 0) {
            return -1;
        }
        return le > 0 ? roundDownSig(le - 1) : -roundUpSig(-le + 1);
    }

    static List<long[]> histogram(long[] sorted) {
        List<long[]> out = new ArrayList<>();
        for (long e : sorted) {
            long le = upperEdge(e);
            long[] last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last[1] == le) {
                last[2]++;
            } else {
                out.add(new long[] {lowerEdge(le), le, 1});
            }
        }
        return out;
    }
}
