package dev.keeptime;

import java.time.Duration;
import java.util.Objects;

/**
 * A fixed-rate loop on an absolute schedule.
 *
 * <p>Slot {@code k} (k = 1, 2, …) is due at {@code start + k·period}, where
 * {@code start} is when the ticker was created (or last {@link #reset()}).
 * {@link #await()} sleeps precisely until the next slot with its own
 * {@link Sleeper} and describes what happened; when the loop body overran a
 * deadline, the {@link MissedTicks} policy decides (default
 * {@link MissedTicks#SKIP}). Deadlines are computed from the start, never
 * accumulated from "now", so the loop does not drift however late its body runs.
 *
 * <pre>{@code
 * Ticker ticker = Ticker.every(Duration.ofMillis(1), MissedTicks.SKIP);   // 1 kHz
 * while (running) {
 *     Tick tick = ticker.await();
 *     control(tick.index());        // tick.latenessNanos(): how late this slot was served
 * }
 * }</pre>
 *
 * <p>Cost per tick: one clock read plus one precise sleep (see {@link Sleeper}).
 * A period too large for the clock saturates to a deadline that never comes.
 *
 * <p><b>Not thread-safe:</b> use a ticker from one thread at a time.
 * Interrupts: {@link #await()} throws {@link InterruptedException} like
 * {@link Thread#sleep(long)}; an interrupted wait consumes no slot.
 */
public final class Ticker {
    private final Sleeper sleeper;
    private final Schedule schedule;

    private Ticker(Duration period, MissedTicks policy, Sleeper sleeper) {
        this.sleeper = sleeper;
        long start = sleeper.platform().nowNs();
        this.schedule = new Schedule(start, periodNanos(period), policy);
    }

    private static long periodNanos(Duration period) {
        Objects.requireNonNull(period, "period");
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive: " + period);
        }
        return U64.nanos(period);
    }

    /**
     * A ticker with the default policy ({@link MissedTicks#SKIP}) and an
     * {@link Mode#EXACT} sleeper, starting now.
     *
     * @param period time between slots, positive
     * @return a new ticker
     * @throws IllegalArgumentException if {@code period} is zero or negative
     * @throws NullPointerException if {@code period} is null
     */
    public static Ticker every(Duration period) {
        return every(period, MissedTicks.SKIP);
    }

    /**
     * A ticker with the given missed-tick policy and an {@link Mode#EXACT}
     * sleeper, starting now.
     *
     * @param period time between slots, positive
     * @param policy what to do with deadlines that passed
     * @return a new ticker
     * @throws IllegalArgumentException if {@code period} is zero or negative
     * @throws NullPointerException if an argument is null
     */
    public static Ticker every(Duration period, MissedTicks policy) {
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(policy, "policy");
        return every(period, policy, Sleeper.create());
    }

    /**
     * A ticker that waits with {@code sleeper} (its mode, platform and
     * learned margins), starting at the sleeper's current clock reading. The
     * ticker takes the sleeper over: do not use it elsewhere meanwhile.
     *
     * @param period time between slots, positive
     * @param policy what to do with deadlines that passed
     * @param sleeper the sleeper to wait with
     * @return a new ticker
     * @throws IllegalArgumentException if {@code period} is zero or negative
     * @throws NullPointerException if an argument is null
     */
    public static Ticker every(Duration period, MissedTicks policy, Sleeper sleeper) {
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(sleeper, "sleeper");
        return new Ticker(period, policy, sleeper);
    }

    /**
     * Waits for the next slot, or returns at once if its deadline already
     * passed (then the policy decides which slot is delivered).
     *
     * @return the slot delivered; {@code scheduledNanos} in the
     *     {@link System#nanoTime()} domain
     * @throws InterruptedException if the thread is interrupted before or
     *     during the wait (the status is cleared; no slot is consumed)
     */
    public Tick await() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("ticker interrupted");
        }
        Platform p = sleeper.platform();
        Tick t = schedule.poll(p.nowNs());
        if (t == null) {
            long due = schedule.nextDeadlineNs();
            long woke = p.fromNanoTime(sleeper.sleepUntil(p.toNanoTime(due)));
            t = schedule.woke(woke);
        }
        return new Tick(t.index(), p.toNanoTime(t.scheduledNanos()), t.latenessNanos(), t.skipped());
    }

    /**
     * Counters since creation.
     *
     * @return a snapshot of the counters
     */
    public TickerStats stats() {
        return schedule.stats();
    }

    /**
     * Restarts the schedule from now: the next slot is due one period from
     * now. Slot numbers continue.
     */
    public void reset() {
        schedule.reset(sleeper.platform().nowNs());
    }

    /**
     * Changes the period: the next slot is due one new period after the last
     * delivered slot's deadline (or after the start if none was delivered).
     *
     * @param period the new period, positive
     * @throws IllegalArgumentException if {@code period} is zero or negative (the ticker is unchanged)
     * @throws NullPointerException if {@code period} is null
     */
    public void setPeriod(Duration period) {
        schedule.setPeriod(periodNanos(period));
    }

    /**
     * The period (saturated periods read back as the saturated nanoseconds).
     *
     * @return the time between slots
     */
    public Duration period() {
        long ns = schedule.periodNs();
        return ns < 0 ? Duration.ofNanos(Long.MAX_VALUE) : Duration.ofNanos(ns);
    }

    /**
     * The missed-tick policy.
     *
     * @return the policy
     */
    public MissedTicks missedTicks() {
        return schedule.policy();
    }

    /**
     * When the next slot is due.
     *
     * @return a {@link System#nanoTime()} value
     */
    public long nextDeadlineNanos() {
        return sleeper.platform().toNanoTime(schedule.nextDeadlineNs());
    }

    /**
     * The sleeper this ticker waits with.
     *
     * @return the sleeper
     */
    public Sleeper sleeper() {
        return sleeper;
    }

    @Override
    public String toString() {
        return "Ticker[period=" + period() + ", policy=" + missedTicks().specName()
                + ", next=" + Long.toUnsignedString(schedule.nextIndex()) + ", " + stats() + "]";
    }
}
