package dev.keeptime;

/**
 * One definition of a percentile for every figure the Java code reports (the
 * bench, the clock report): the nearest-rank rule of the project's bench
 * result format ({@code spec/bench-result.md}),
 * {@code sorted[max(ceil(q·n / 1000), 1) − 1]} for a per-mille rank
 * {@code q}, computed in integers.
 *
 * <pre>{@code
 * long[] sorted = {10, 20, 30, 40};
 * assert Percentiles.nearestRank(sorted, 500) == 20;   // ceil(0.5·4) = 2nd
 * assert Percentiles.nearestRank(sorted, 990) == 40;
 * assert Percentiles.nearestRank(sorted, 0) == 10;
 * }</pre>
 */
public final class Percentiles {
    private Percentiles() {}

    /**
     * The index into an ascending array of {@code n} values of the value at
     * per-mille rank {@code qPerMille} (500 = median, 990 = p99, 999 = p99.9):
     * {@code max(ceil(q·n / 1000), 1) − 1}. A rank past 1000 is the maximum.
     *
     * @param n how many values, at least 1
     * @param qPerMille the rank, per mille, at least 0
     * @return an index from {@code 0} to {@code n − 1}
     * @throws IllegalArgumentException if {@code n < 1} or {@code qPerMille < 0}
     */
    public static int index(int n, long qPerMille) {
        if (n < 1) {
            throw new IllegalArgumentException("a percentile needs at least one value, got " + n);
        }
        if (qPerMille < 0) {
            throw new IllegalArgumentException("a per-mille rank must be at least 0, got " + qPerMille);
        }
        long q = Math.min(qPerMille, 1000);
        long rank = Math.max((q * n + 999) / 1000, 1); // q·n < 2^41: no overflow
        return (int) (rank - 1);
    }

    /**
     * The value at per-mille rank {@code qPerMille} of {@code sorted}
     * (ascending), by the nearest-rank rule.
     *
     * @param sorted the values, ascending, at least one
     * @param qPerMille the rank, per mille (500 = median); past 1000 is the maximum
     * @return the value at that rank
     * @throws IllegalArgumentException if {@code sorted} is empty or {@code qPerMille < 0}
     */
    public static long nearestRank(long[] sorted, long qPerMille) {
        return sorted[index(sorted.length, qPerMille)];
    }

    /**
     * {@link #nearestRank(long[], long)} for fractional values.
     *
     * @param sorted the values, ascending, at least one
     * @param qPerMille the rank, per mille (500 = median); past 1000 is the maximum
     * @return the value at that rank
     * @throws IllegalArgumentException if {@code sorted} is empty or {@code qPerMille < 0}
     */
    public static double nearestRank(double[] sorted, long qPerMille) {
        return sorted[index(sorted.length, qPerMille)];
    }
}
