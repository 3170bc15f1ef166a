package dev.keeptime;

import static dev.keeptime.MarginEstimator.DEFAULT_MARGIN_NS;
import static dev.keeptime.MarginEstimator.PPM;
import static dev.keeptime.MarginEstimator.bucketHi;
import static dev.keeptime.MarginEstimator.bucketLo;
import static dev.keeptime.MarginEstimator.bucketOf;

/**
 * Planning the OS waits of a sleep (spec/sleep.md "Planning"). All times are
 * unsigned ns in a {@code long}; expected costs are integer ns of thread CPU,
 * divisions truncate.
 */
final class WaitPlan {
    /** No OS wait of an efficient sleep: return at once (a valid wait is {@code ≥ 1}). */
    static final long NONE = 0;
    private static final long[] NO_SPLITS = {};

    /**
     * The next OS wait of an exact sleep.
     *
     * @param waitNs its length from now, unsigned ns ({@code ≥ MIN_OS_WAIT_NS})
     * @param split whether it is the long first wait of a two-wait plan
     * @param restBudgetPpm the late-share budget the rest of the sleep plans
     *     with: half the budget (the short wait's share) after a two-wait
     *     plan's first wait, else the budget unchanged
     * @param proven whether every margin the plan rests on is
     *     {@link MarginEstimator#established(int, long) established} at the
     *     share it is planned at; an unproven plan counts its sleep in
     *     {@link SleeperStats#unprovenSleeps()}
     */
    record Exact(long waitNs, boolean split, long restBudgetPpm, boolean proven) {}

    /**
     * Where in a sleep {@link #exact} is asked (spec {@code PlanStep}).
     *
     * @param first the first plan of a sleep (no OS wait taken yet): only then
     *     may a wait cut short to its bucket's longest (a <i>chunk</i>) be taken
     * @param explore the first plan of a sleep that {@link Sleeper#explores(long)
     *     explores}: prefer a two-wait plan whose short bucket is not yet established
     * @param afterSplit a two-wait plan's first wait has been taken: only its
     *     short wait (one OS wait, then a spin) or a spin may follow
     */
    record Step(boolean first, boolean explore, boolean afterSplit) {}

    private WaitPlan() {}

    /**
     * The next OS wait of a spin-finished sleep with {@code r} ns to go, or
     * {@code null} to spin the rest: the plan with the least expected thread
     * CPU whose predicted late share is at most {@code budgetPpm}. Candidates:
     * one OS wait then a spin; a long wait, a short one of about each
     * {@link Sleeper#SPLITS_NS} then a spin (not after a split, and only while
     * half the budget is above 0; a long wait whose bucket is not established
     * at the budget must end at least that bucket's margin before the short
     * one); a pure spin (cost {@code r}). Ties keep the
     * earlier candidate. When only a wait cut short to its bucket's longest
     * fits (a chunk, first plan of a sleep only), it is taken when no complete
     * plan meets the budget and one wait costs less than spinning. With
     * {@code step.explore}, among the two-wait plans meeting the budget whose
     * short bucket is not established at half the budget and whose cost
     * exceeds the one-wait plan's (or the pure spin's) by at most
     * {@code r / }{@link Sleeper#EXPLORE_COST_DIV}, the one with the most
     * samples standing for its short bucket (ties: the earlier), among those
     * whose short wait follows at least half of the long waits, is taken
     * before anything else.
     */
    static Exact exact(MarginEstimator est, long r, long budgetPpm, long minSpin, Step step) {
        if (U64.lt(r, Sleeper.MIN_OS_WAIT_NS)) {
            return null;
        }
        if (est.isEmpty()) { // nothing learned yet
            long g = U64.max(DEFAULT_MARGIN_NS, minSpin);
            return U64.ge(r, g) && U64.ge(r - g, Sleeper.MIN_OS_WAIT_NS) ? new Exact(r - g, false, budgetPpm, false) : null;
        }
        Exact best = null;
        long bestCost = r; // a pure spin

        // one OS wait, then a spin
        // A wait cut to its bucket's longest (its own margin would allow a
        // longer one, the longer bucket's does not) is not the last OS wait:
        // its full cost is unknown here, so it is only a fallback.
        Exact chunk = null;
        long chunkCost = 0;
        for (int b = bucketOf(r); b >= 0; b--) {
            long g = U64.max(est.margin(b, budgetPpm), minSpin);
            if (U64.lt(r, g)) {
                continue;
            }
            long wait = r - g;
            if (U64.lt(bucketHi(b), wait)) {
                if (U64.ge(bucketHi(b), Sleeper.MIN_OS_WAIT_NS) && step.first()) {
                    chunk = new Exact(bucketHi(b), false, budgetPpm, est.established(b, budgetPpm));
                    chunkCost = est.cost(b);
                }
                break;
            }
            if (U64.ge(wait, bucketLo(b)) && U64.ge(wait, Sleeper.MIN_OS_WAIT_NS)) {
                MarginEstimator.Tail t = est.tail(b, budgetPpm, g);
                long cost = U64.add(est.cost(b), Long.divideUnsigned(t.spinSumNs(), t.samples()));
                if (U64.lt(cost, bestCost)) {
                    best = new Exact(wait, false, budgetPpm, est.established(b, budgetPpm));
                    bestCost = cost;
                }
                break;
            }
        }

        // a long OS wait, a short one of about S, then a spin
        long oneCost = bestCost; // the cheapest one-wait plan's, or a pure spin's
        Exact explored = null;
        long exploredN = 0;
        long q = Long.divideUnsigned(budgetPpm, 2);
        for (long s : q != 0 && !step.afterSplit() ? Sleeper.SPLITS : NO_SPLITS) {
            int bs = bucketOf(s);
            long gs = U64.max(est.margin(bs, q), minSpin);
            long g = U64.add(s, gs);
            if (U64.lt(r, g) || U64.lt(r - g, Sleeper.MIN_OS_WAIT_NS)) {
                continue;
            }
            long wait = r - g;
            int b1 = bucketOf(wait);
            // A long wait too young for the budget is held to its margin, like
            // a one-wait plan's: a young view's tail says nothing of a rare
            // late wake-up, and longer waits bound it.
            boolean longEstablished = est.established(b1, budgetPpm);
            if (!longEstablished && U64.lt(g, est.margin(b1, budgetPpm))) {
                continue;
            }
            MarginEstimator.Tail t1 = est.tail(b1, budgetPpm, g);
            long[] split = est.splitCounts(b1, budgetPpm, s - Sleeper.MIN_OS_WAIT_NS, g);
            long room = split[0];
            long restSpin = split[1];
            MarginEstimator.Tail ts = est.tail(bs, q, gs);
            // Counts are at most 3 · WINDOW each: these products cannot overflow.
            long late = U64.mul(t1.late() * ts.samples() + room * ts.late(), PPM);
            if (U64.lt(U64.mul(budgetPpm, t1.samples() * ts.samples()), late)) {
                continue;
            }
            long second = U64.add(est.cost(bs), Long.divideUnsigned(ts.spinSumNs(), ts.samples()));
            long cost = U64.add(est.cost(b1),
                    Long.divideUnsigned(U64.add(U64.mul(room, second), restSpin), t1.samples()));
            boolean shortEstablished = est.established(bs, q);
            Exact plan = new Exact(wait, true, q, shortEstablished && longEstablished);
            // Exploring observes the short wait only when one follows: after
            // at least half of the long waits (room), not a split that the long
            // wait's usual lateness leaves too short for a second wait.
            if (step.explore() && !shortEstablished
                    && U64.ge(U64.mul(room, 2), t1.samples())
                    && U64.ge(U64.add(oneCost, Long.divideUnsigned(r, Sleeper.EXPLORE_COST_DIV)), cost)) {
                long n = est.samples(bs, q);
                if (explored == null || n > exploredN) {
                    explored = plan;
                    exploredN = n;
                }
            }
            if (U64.lt(cost, bestCost)) {
                best = plan;
                bestCost = cost;
            }
        }
        if (explored != null) {
            return explored;
        }
        if (best == null && chunk != null && U64.lt(chunkCost, r)) {
            return chunk;
        }
        return best;
    }

    /**
     * The single OS wait of an efficient sleep: the longest wait {@code L ≥ 1}
     * with {@code L + compensation(bucket(L)) ≤ remaining}, or {@link #NONE}.
     */
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
