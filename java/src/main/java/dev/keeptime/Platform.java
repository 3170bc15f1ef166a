package dev.keeptime;

/**
 * The clock, OS wait and spin primitives the waiting algorithm talks to, and
 * nothing else: the algorithm never calls the OS directly, so every decision
 * it makes can be replayed on a simulated clock ({@link SimPlatform}).
 *
 * <p>Times are <em>platform nanoseconds</em>: unsigned 64-bit values in a
 * {@code long} on one monotonic clock (compare them with
 * {@link Long#compareUnsigned}). The real platform counts them from a fixed
 * {@link System#nanoTime()} origin; {@link #fromNanoTime} and
 * {@link #toNanoTime} convert to and from the {@code nanoTime} domain that the
 * public API speaks.
 *
 * <p>Implementations must keep {@link #osWaitUntil} honest: when it returns
 * {@code true}, {@link #nowNs()} must be at or after the target.
 */
public interface Platform {
    /**
     * Reads the clock.
     *
     * @return the current time, unsigned platform ns
     */
    long nowNs();

    /**
     * Blocks until {@code targetNs} (absolute); may wake late, never early,
     * except when interrupted.
     *
     * @param targetNs absolute target, unsigned platform ns
     * @return {@code true} when the target was reached; {@code false} when the
     *     wait was interrupted (on the real platform: the thread's interrupt
     *     status is set), after which the caller runs its interrupt check and
     *     waits again toward the same target
     */
    boolean osWaitUntil(long targetNs);

    /** One iteration of a spin loop ({@link Thread#onSpinWait()}). */
    void relax();

    /** Offers the CPU to another runnable thread ({@link Thread#yield()}). */
    void yieldNow();

    /**
     * Asks for one of the process-wide spin slots before a spin that pauses
     * with the CPU's hint.
     *
     * @return {@code false} when every slot has a pausing spinner: the caller
     *     must not add another one (it follows, a yield per iteration, instead)
     */
    boolean tryBeginSpin();

    /** Gives back a slot taken by a successful {@link #tryBeginSpin()}. */
    void endSpin();

    /**
     * Counts the calling sleeper as inside an exact sleep, process-wide, and
     * returns how many are (this one included). More than {@link #cpus()}
     * makes the sleep a crowd's ({@code spec/sleep.md}, <em>Crowds</em>):
     * its final spin is capped by {@link Sleeper#crowdSpinCap}. Every call is
     * matched by one {@link #leaveSleep()}, on every way out of the sleep.
     * The default counts nobody else: never a crowd.
     *
     * @return the sleepers inside an exact sleep, this one included (at least 1)
     */
    default int enterSleep() {
        return 1;
    }

    /** Undoes one {@link #enterSleep()}. The default does nothing. */
    default void leaveSleep() {}

    /**
     * The CPUs available to the process. The default:
     * {@link Integer#MAX_VALUE}, no limit, never a crowd.
     *
     * @return the number of CPUs the process may use (never negative: a
     *     negative count makes a crowd's sleep throw
     *     {@link IllegalArgumentException})
     */
    default int cpus() {
        return Integer.MAX_VALUE;
    }

    /**
     * The calling thread's CPU time, read around every 8th planned OS wait
     * ({@link MarginEstimator#COST_SAMPLE_EVERY}) to learn what an OS wait
     * costs. The default says the clock is unavailable; the estimator's costs
     * then stay {@link MarginEstimator#DEFAULT_COST_NS}.
     *
     * @return thread CPU time in ns (non-negative), or {@code -1} when not available
     */
    default long threadCpuNs() {
        return -1;
    }

    /**
     * Prepares the calling thread for precise waits (on Linux with JDK 22+:
     * timer slack 1 ns, once per thread). Called before every sleep that
     * waits, so it must be cheap after the first call.
     */
    void prepareThread();

    /**
     * Converts a deadline in the {@code System.nanoTime()} domain to platform
     * nanoseconds, erring late, never early.
     *
     * @param nanoTime a {@code System.nanoTime()}-domain value
     * @return the same instant in unsigned platform ns
     */
    long fromNanoTime(long nanoTime);

    /**
     * Converts platform nanoseconds to the {@code System.nanoTime()} domain.
     *
     * @param ns unsigned platform ns
     * @return the same instant as a {@code System.nanoTime()} value
     */
    long toNanoTime(long ns);
}
