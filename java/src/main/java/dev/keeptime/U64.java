package dev.keeptime;

import java.time.Duration;

/**
 * Unsigned 64-bit nanoseconds in a {@code long}, with saturating arithmetic:
 * the spec's times are {@code u64} and every operation saturates (no
 * wraparound, no overflow), so {@code -1L} here is {@code 2^64 - 1}.
 */
final class U64 {
    /** {@code 2^64 - 1}. */
    static final long MAX = -1L;

    private U64() {}

    static boolean lt(long a, long b) {
        return Long.compareUnsigned(a, b) < 0;
    }

    static boolean ge(long a, long b) {
        return Long.compareUnsigned(a, b) >= 0;
    }

    static long min(long a, long b) {
        return lt(a, b) ? a : b;
    }

    static long max(long a, long b) {
        return lt(a, b) ? b : a;
    }

    static long add(long a, long b) {
        long r = a + b;
        return lt(r, a) ? MAX : r;
    }

    /** {@code a - b}, 0 when {@code b >= a}. */
    static long sub(long a, long b) {
        return lt(b, a) ? a - b : 0;
    }

    static long mul(long a, long b) {
        if (a == 0 || b == 0) {
            return 0;
        }
        return Long.compareUnsigned(a, Long.divideUnsigned(MAX, b)) > 0 ? MAX : a * b;
    }

    /**
     * The nanoseconds of a non-negative duration as an unsigned value,
     * saturating at {@code 2^64 - 1} (584 years).
     */
    static long nanos(Duration d) {
        long seconds = d.getSeconds();
        if (seconds < 0) {
            return 0;
        }
        return add(mul(seconds, 1_000_000_000L), d.getNano());
    }
}
