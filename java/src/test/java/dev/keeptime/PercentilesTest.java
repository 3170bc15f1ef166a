package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The one percentile rule of the Java code: the bench result format's nearest rank. */
class PercentilesTest {
    @Test
    void nearestRankFollowsTheBenchResultRule() {
        long[] v = LongStream.rangeClosed(1, 1000).toArray();
        assertEquals(500, Percentiles.nearestRank(v, 500));
        assertEquals(900, Percentiles.nearestRank(v, 900));
        assertEquals(990, Percentiles.nearestRank(v, 990));
        assertEquals(999, Percentiles.nearestRank(v, 999));
        assertEquals(1000, Percentiles.nearestRank(v, 1000));
        assertEquals(1000, Percentiles.nearestRank(v, 5000));
        // n = 3: the median is the 2nd (ceil 1.5), p99 the 3rd (ceil 2.97).
        assertEquals(8, Percentiles.nearestRank(new long[] {7, 8, 9}, 500));
        assertEquals(9, Percentiles.nearestRank(new long[] {7, 8, 9}, 990));
        // n = 4: the median is the 2nd (ceil 2), not the mean of two.
        assertEquals(20, Percentiles.nearestRank(new long[] {10, 20, 30, 40}, 500));
        assertEquals(10, Percentiles.nearestRank(new long[] {10, 20, 30, 40}, 0));
        // n = 1: every rank is the one value.
        assertEquals(42, Percentiles.nearestRank(new long[] {42}, 1));
        assertEquals(2.5, Percentiles.nearestRank(new double[] {1.5, 2.5, 3.5}, 500));
    }

    @Test
    void badInputIsAnError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Percentiles.nearestRank(new long[0], 500));
        assertEquals("a percentile needs at least one value, got 0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Percentiles.nearestRank(new long[] {1}, -1));
        assertEquals("a per-mille rank must be at least 0, got -1", e.getMessage());
    }
}
