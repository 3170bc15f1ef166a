package dev.keeptime;

import static dev.keeptime.MarginEstimator.bucketHi;
import static dev.keeptime.MarginEstimator.bucketLo;
import static dev.keeptime.MarginEstimator.bucketOf;

/**
 * Planning the OS waits of a sleep (spec/sleep.md "Planning"). Both planners
 * return the OS wait length in unsigned ns, or {@link #NONE}: a valid wait is
 * never 0 ({@code ≥ MIN_OS_WAIT_NS} for exact, {@code ≥ 1} for efficient).
 */
final class WaitPlan {
    /** No OS wait: spin (exact) or return (efficient). */
    static final long NONE = 0;

    private WaitPlan() {}

    /**
     * The next OS wait of a spin-finished sleep with {@code remaining} ns to
     * go: the longest wait whose own bucket's gap (the larger of its margin
     * and {@code minSpin}, plus SPLIT_NS for long buckets) still fits before
     * the deadline.
     */
    static long exact(MarginEstimator est, long remaining, long minSpin) {
        if (U64.lt(remaining, Sleeper.MIN_OS_WAIT_NS)) {
            return NONE;
        }
        for (int b = bucketOf(remaining); b >= 0; b--) {
            long split = b >= Sleeper.LONG_BUCKET ? Sleeper.SPLIT_NS : 0;
            long margin = est.margin(b);
            long gap = U64.add(U64.lt(margin, minSpin) ? minSpin : margin, split);
            if (U64.lt(remaining, gap)) {
                continue;
            }
            long wait = U64.min(remaining - gap, bucketHi(b));
            if (U64.ge(wait, bucketLo(b)) && U64.ge(wait, Sleeper.MIN_OS_WAIT_NS)) {
                return wait;
            }
        }
        return NONE;
    }

    /** The single OS wait of an efficient sleep, compensated by the median overshoot. */
    static long efficient(MarginEstimator est, long remaining) {
        for (int b = bucketOf(remaining); b >= 0; b--) {
            long c = est.compensation(b);
            if (U64.lt(remaining, c)) {
                continue;
            }
            long wait = U64.min(remaining - c, bucketHi(b));
            if (U64.ge(wait, Math.max(bucketLo(b), 1))) {
                return wait;
            }
        }
        return NONE;
    }
}
