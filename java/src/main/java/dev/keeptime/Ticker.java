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
 * <p><b>Idle-latency hint</b> (opt-in, {@link Builder#idleHint(long)}): a
 * ticker built with it holds a PM QoS CPU latency request on
 * {@code /dev/cpu_dma_latency} <b>until {@link #close()}</b> (shared and
 * reference-counted in the process; see {@link IdleHint}). Price: idle CPUs
 * poll instead of sleeping, machine-wide, while it is held: more power, and a
 * VM's host sees its vCPUs busy. Refused (not root, no device), the ticker
 * works exactly as without it; {@link #idleHintStatus()} says why.
 *
 * <pre>{@code
 * try (Ticker ticker = Ticker.builder(Duration.ofMillis(1)).idleHint(0).build()) {
 *     while (running) {
 *         control(ticker.await().index());
 *     }
 * }                                 // the hint is released here
 * }</pre>
 *
 * <p><b>Not thread-safe:</b> use a ticker from one thread at a time.
 * Interrupts: {@link #await()} throws {@link InterruptedException} like
 * {@link Thread#sleep(long)}; an interrupted wait consumes no slot.
 */
public final class Ticker implements AutoCloseable {
    private final Sleeper sleeper;
    private final Schedule schedule;
    private final IdleHintHold idleHint;

    private Ticker(Duration period, MissedTicks policy, Sleeper sleeper, PmQos pmQos, int idleHintUs) {
        long periodNs = periodNanos(period);
        this.sleeper = sleeper;
        // The request first: the schedule starts once it is in force (or refused).
        this.idleHint = idleHintUs < 0 ? IdleHintHold.NONE : IdleHintHold.acquire(pmQos, idleHintUs, this);
        long start = sleeper.platform().nowNs();
        this.schedule = new Schedule(start, periodNs, policy);
    }

    private static long periodNanos(Duration period) {
        Objects.requireNonNull(period, "period");
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive: " + period);
        }
        return U64.nanos(period);
    }

    /**
     * A ticker with the default policy ({@link MissedTicks#SKIP}) and a new
     * {@link Mode#EXACT} sleeper, starting now. The sleeper starts from the
     * {@link KeepTime#setDefaultProfile(Profile) default profile} in force
     * now (fresh if none), as {@link Sleeper.Builder#profile(Profile)} starts
     * one; a later change of the default does not touch this ticker.
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
     * A ticker with the given missed-tick policy and a new {@link Mode#EXACT}
     * sleeper, starting now. The sleeper starts from the
     * {@link KeepTime#setDefaultProfile(Profile) default profile} in force
     * now (fresh if none), as {@link Sleeper.Builder#profile(Profile)} starts
     * one; a later change of the default does not touch this ticker.
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
        return every(period, policy, KeepTime.defaultSleeper());
    }

    /**
     * A ticker that waits with {@code sleeper} (its mode, platform and
     * learned margins), starting at the sleeper's current clock reading. The
     * ticker takes the sleeper over: do not use it elsewhere meanwhile. The
     * {@link KeepTime#setDefaultProfile(Profile) default profile} plays no part.
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
        return new Ticker(period, policy, sleeper, null, -1);
    }

    /**
     * Starts configuring a ticker with the given period (for the
     * {@link Builder#idleHint(long) idle-latency hint}; the {@code every}
     * factories cover the rest).
     *
     * @param period time between slots, positive
     * @return a builder with the defaults: {@link MissedTicks#SKIP}, a new
     *     {@link Mode#EXACT} sleeper started from the
     *     {@link KeepTime#setDefaultProfile(Profile) default profile} in force
     *     at {@link Builder#build()}, no idle hint
     * @throws IllegalArgumentException if {@code period} is zero or negative
     * @throws NullPointerException if {@code period} is null
     */
    public static Builder builder(Duration period) {
        periodNanos(period);
        return new Builder(period);
    }

    /** Configures a {@link Ticker}; the schedule starts when {@link #build()} is called. */
    public static final class Builder {
        private final Duration period;
        private MissedTicks policy = MissedTicks.SKIP;
        private Sleeper sleeper;
        private int idleHintUs = -1;
        private PmQos pmQos; // null: the process's registry, loaded only when the hint is asked for

        private Builder(Duration period) {
            this.period = period;
        }

        /**
         * What to do with deadlines that passed (default {@link MissedTicks#SKIP}).
         *
         * @param policy the policy
         * @return this builder
         * @throws NullPointerException if {@code policy} is null
         */
        public Builder missedTicks(MissedTicks policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * The sleeper to wait with, as it is. Default: a new
         * {@link Mode#EXACT} one, made by {@link #build()} and started from
         * the {@link KeepTime#setDefaultProfile(Profile) default profile} in
         * force then (fresh if none), as {@link Sleeper.Builder#profile(Profile)}
         * starts one; a later change of the default does not touch it. The
         * ticker takes the sleeper over, and {@link Ticker#close()} closes it.
         *
         * @param sleeper the sleeper
         * @return this builder
         * @throws NullPointerException if {@code sleeper} is null
         */
        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
            return this;
        }

        /**
         * Asks for the {@link IdleHint idle-latency hint}, held by the ticker
         * <b>until {@link Ticker#close()}</b>; see
         * {@link Sleeper.Builder#idleHint(long)} for what it does and its
         * <b>price</b> (idle CPUs poll: more power; a VM's host sees busy
         * vCPUs). A refusal is logged once per process and reported by
         * {@link Ticker#idleHintStatus()}, never thrown.
         *
         * @param maxLatencyUs the wake-up latency bound, µs, {@code 0} to {@value IdleHint#MAX_LATENCY_US}
         * @return this builder
         * @throws IllegalArgumentException if {@code maxLatencyUs} is negative or
         *     past {@value IdleHint#MAX_LATENCY_US}
         */
        public Builder idleHint(long maxLatencyUs) {
            this.idleHintUs = IdleHint.checkMicros(maxLatencyUs);
            return this;
        }

        /**
         * The {@link #idleHint(long) idle-latency hint} as a duration,
         * truncated to whole µs.
         *
         * @param maxLatency the wake-up latency bound
         * @return this builder
         * @throws IllegalArgumentException if {@code maxLatency} is negative or
         *     {@value IdleHint#MAX_LATENCY_US} µs + 1 or more
         * @throws NullPointerException if {@code maxLatency} is null
         */
        public Builder idleHint(Duration maxLatency) {
            this.idleHintUs = IdleHint.micros(maxLatency);
            return this;
        }

        /** The hint's registry (tests: a fake device); default the process's one. */
        Builder pmQos(PmQos registry) {
            this.pmQos = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Builds the ticker, starting its schedule now; with
         * {@link #idleHint(long)}, makes the request (refused or not, the
         * ticker is built). Given no {@link #sleeper(Sleeper) sleeper}, the
         * ticker waits with a new one started from the
         * {@link KeepTime#setDefaultProfile(Profile) default profile} in
         * force now.
         *
         * @return a new ticker
         */
        public Ticker build() {
            return new Ticker(period, policy, sleeper != null ? sleeper : KeepTime.defaultSleeper(), pmQos, idleHintUs);
        }
    }

    /**
     * Waits for the next slot, or returns at once if its deadline already
     * passed (then the policy decides which slot is delivered). A wait that
     * ends in a spin records the slot in {@link #stats()} as served at its
     * deadline, before the last few µs of the spin; the tick returned carries
     * the lateness of the spin's final reading ({@code spec/ticker.md}).
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
        if (t != null) {
            return new Tick(t.index(), p.toNanoTime(t.scheduledNanos()), t.latenessNanos(), t.skipped());
        }
        // The slot is recorded at the sleep's hand-off, before its last
        // stretch (spec/ticker.md): a wait that ends in a spin counts as woken
        // at the deadline, and the tick carries where that spin ended.
        long now = sleeper.toHandoff(schedule.nextDeadlineNs());
        long until = sleeper.handoffUntil;
        if (!U64.lt(now, until)) {
            t = schedule.woke(now);
            return new Tick(t.index(), p.toNanoTime(t.scheduledNanos()), t.latenessNanos(), 0);
        }
        t = schedule.woke(until);
        long index = t.index();
        long scheduled = p.toNanoTime(t.scheduledNanos());
        long woke = Sleeper.spinTo(p, now, until);
        return new Tick(index, scheduled, woke - until, 0);
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
     * Whether this ticker's {@link Builder#idleHint(long) idle-latency hint}
     * is held (and the value in force in this process), was refused (and
     * why), released by {@link #close()}, or not requested. A hint the
     * ticker's sleeper was built with is the sleeper's:
     * {@code sleeper().idleHintStatus()}.
     *
     * @return the status now
     */
    public IdleHintStatus idleHintStatus() {
        return idleHint.status();
    }

    /**
     * Releases this ticker's idle-latency hint and closes its sleeper
     * (releasing the sleeper's hint, if it has one). Idempotent; the ticker
     * stays usable, without the hint.
     */
    @Override
    public void close() {
        idleHint.close();
        sleeper.close();
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
