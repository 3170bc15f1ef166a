package dev.keeptime;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A precise sleeper with its own learned wake-up model and a stated tail target.
 *
 * <p>Every {@link Mode#EXACT} sleep is planned ({@code spec/sleep.md}): for
 * each sleep the sleeper picks, from what it has learned on this machine, the
 * plan with the least expected thread CPU whose predicted share of late
 * sleeps meets its {@link TailTarget} (default 1 %). The candidates are one
 * OS wait then a spin; a long OS wait, a short one of 50–400 µs, then a
 * spin; or a pure spin. After a two-wait plan's first wait the rest of the
 * sleep plans at half the target and never splits again; a wait cut short to
 * its bucket's longest is only a sleep's first plan, and only when no
 * complete plan meets the target and it costs less than spinning. A bucket
 * with too few samples to place the target (a young window, even pooled with
 * its short neighbours) is never trusted to wake earlier than any longer
 * wait (once it holds half the samples the target needs, than any longer
 * one established at it), so a sleep that {@link #explores(long) explores} (each of a
 * sleeper's first {@value #EXPLORE_YOUNG_SLEEPS}, then every
 * {@value #EXPLORE_EVERY}th) takes a two-wait plan through a short bucket
 * that is not yet established, if it costs at most
 * {@code 1/}{@value #EXPLORE_COST_DIV} of the sleep more than the one-wait
 * plan, so short waits get the samples they need to compete on cost. A sleep
 * planned on such a margin cannot promise the target: it is counted in
 * {@link SleeperStats#unprovenSleeps()}. OS waits are
 * {@link java.util.concurrent.locks.LockSupport#parkNanos(long)}, re-issued
 * toward the same absolute target if they return early; the spin polls
 * {@link System#nanoTime()} with {@link Thread#onSpinWait()}. What the plans
 * rest on ({@link MarginEstimator}, {@code spec/estimator.md}): how late this
 * sleeper's last 1024 OS waits of each length woke, and what an OS wait costs
 * the thread (its CPU clock is read around every 8th OS wait), so they follow
 * the machine and its load. {@link #stats()} says what it all cost. On Linux
 * with JDK 22+ the waiting thread's timer slack is set to 1 ns on first use
 * ({@link TimerSlack}; opt out with {@link Builder#timerSlack(boolean)}); on
 * JDK 17–21 the estimator learns the default 50 µs slack and plans for it.
 *
 * <p><b>Crowds.</b> The final spin pauses with {@link Thread#onSpinWait()}
 * only while the sleeper holds one of the process's {@code max(1, CPUs − 1)}
 * spin slots; a sleeper without one <em>follows</em>: a
 * {@link Thread#yield()} per iteration to the deadline, never an OS wait
 * straight to it. When more sleepers of the process are inside an exact
 * sleep than it has CPUs ({@link Runtime#availableProcessors()}), each sleep
 * is one OS wait whose margin is capped at the sleeper's share of half the
 * CPUs less its OS wait's cost ({@link #crowdSpinCap}), then a spin that
 * pauses only in the last {@value #CROWD_PAUSE_NS} ns: a crowd cannot
 * snowball into everyone spinning, at the price of sleeps that end late
 * when a wake-up comes later than the capped margin (counted in
 * {@link SleeperStats#late()}). {@link Mode#SPIN} is not counted in a crowd.
 *
 * <p>Guarantees ({@link Mode#EXACT}, {@link Mode#SPIN}): never returns before
 * the deadline on {@code System.nanoTime()}; a deadline in the past returns
 * at once. {@link Mode#EFFICIENT} may return early, by design.
 *
 * <p><b>Hand-off.</b> A sleep that ends in a spin does all its bookkeeping
 * (the stats, with the spin counted to the deadline; the spin slot; the crowd
 * count) {@value #HANDOFF_NS} ns before the deadline, and the public method
 * the caller called spins the rest in its own frame: the end of that loop is
 * the return, so nothing the return path would touch cold runs after the
 * deadline ({@code spec/sleep.md}, <em>Hand-off</em>).
 *
 * <p><b>Interrupts</b> behave as in {@link Thread#sleep(long)}: if the thread
 * is interrupted when a sleep starts or while it waits, the interrupt status
 * is cleared and {@link InterruptedException} is thrown. During the final spin
 * the status is checked every 10 ms only once the spin has run for 50 µs
 * (or {@code minSpin}) and while the deadline is more than 20 µs away (a
 * spin without a spin slot: every 10 ms from its start); an interrupt that
 * arrives during a short spin stays set for the next blocking call.
 *
 * <p><b>Not thread-safe:</b> a {@code Sleeper} holds its estimator's state
 * and must be used by one thread at a time (use one per thread; the static
 * methods of {@link KeepTime} keep one per thread for you).
 *
 * <p><b>Idle-latency hint</b> (opt-in, {@link Builder#idleHint(long)}): a
 * sleeper built with it holds a PM QoS CPU latency request on
 * {@code /dev/cpu_dma_latency} <b>until {@link #close()}</b> (shared and
 * reference-counted in the process; see {@link IdleHint}). Price: idle CPUs
 * poll instead of sleeping, machine-wide, while it is held: more power, and a
 * VM's host sees its vCPUs busy. Refused (not root, no device), the sleeper
 * works exactly as without it; {@link #idleHintStatus()} says why. Closing a
 * sleeper only releases its hint: it still sleeps, without the hint.
 *
 * <p>Cost: one clock read for a past deadline; otherwise one or two OS waits
 * plus a spin of the learned margin at the tail target, or a pure spin when
 * that is cheaper (short sleeps, or costly OS waits).
 *
 * <pre>{@code
 * Sleeper sleeper = Sleeper.of(Mode.EXACT);
 * long deadline = System.nanoTime() + 250_000;      // 250 µs from now
 * long woke = sleeper.sleepUntil(deadline);         // never before the deadline
 * assert woke - deadline >= 0;
 * }</pre>
 */
public final class Sleeper implements AutoCloseable {
    /** OS waits shorter than this (ns) are not worth a system call: spin instead. */
    public static final long MIN_OS_WAIT_NS = 5_000;
    /**
     * The lengths (ns) of the short second OS wait a two-wait plan leaves
     * after its long first one: 50, 100, 200 and 400 µs, tried in this order.
     */
    public static final List<Long> SPLITS_NS = List.of(50_000L, 100_000L, 200_000L, 400_000L);
    static final long[] SPLITS = {50_000, 100_000, 200_000, 400_000};
    /**
     * Every this many sleeps (after the first {@link #EXPLORE_YOUNG_SLEEPS}),
     * the first plan of a sleep explores: it takes a two-wait plan that meets
     * the tail target and whose short wait's bucket is not yet established
     * (too few samples to be trusted at half the target, even pooled), so
     * short buckets get the samples that let two-wait plans compete on their
     * merit. Exploring costs at most one extra OS wait on those sleeps and
     * {@code 1/}{@link #EXPLORE_COST_DIV} of the sleep in CPU, never a late
     * share above the target.
     */
    public static final long EXPLORE_EVERY = 8;
    /**
     * The first this many sleeps of a sleeper all explore (when a two-wait
     * plan with a young short bucket meets the target): a fresh sleeper learns
     * its short waits in a few hundred sleeps instead of a few thousand.
     */
    public static final long EXPLORE_YOUNG_SLEEPS = 256;
    /**
     * An exploring plan is taken only when its expected CPU exceeds the
     * one-wait plan's (or the pure spin's) by at most
     * {@code 1 / EXPLORE_COST_DIV} of the time left: exploring costs at most
     * 6.25 % of a sleep in CPU, and a short bucket whose cautious margin is
     * huge is not explored.
     */
    public static final long EXPLORE_COST_DIV = 16;
    /**
     * A spin that has run this long (ns), or the sleeper's {@code minSpin} if
     * longer, yields the CPU on further iterations while the deadline is far.
     */
    public static final long SPIN_YIELD_AFTER_NS = 50_000;
    /** Within this much (ns) of the deadline a spin only pauses, never yields. */
    public static final long SPIN_NEAR_NS = 20_000;
    /** While a long spin yields, the interrupt status is checked this often (ns). */
    public static final long INTERRUPT_POLL_NS = 10_000_000;
    /**
     * In a crowd (more sleepers inside an exact sleep than CPUs), the
     * sleepers' spins may take at most {@code 1 / CROWD_SPIN_DIVISOR} of the
     * CPUs' time, less their OS waits' cost ({@code spec/sleep.md}, <em>Crowds</em>).
     */
    public static final long CROWD_SPIN_DIVISOR = 2;
    /**
     * In a crowd, the spin-slot holder pauses only within this much (ns) of
     * its deadline (and during a {@code minSpin}) and yields before it, like
     * the sleepers without a slot: a pausing spinner holds a CPU that the
     * other sleepers' wake-ups need.
     */
    public static final long CROWD_PAUSE_NS = 5_000;
    /**
     * The last stretch (ns) of a spin-finished sleep, spun by the outermost
     * call, the one that returns to the caller ({@code spec/sleep.md},
     * <em>Hand-off</em>): the sleep does all its bookkeeping (stats, the spin
     * slot, the crowd count) before it, so the end of the spin is the return,
     * and what the return path touches is touched a few µs before the
     * deadline, not after it. At most {@link #CROWD_PAUSE_NS}, so the
     * hand-off never changes whether a step pauses or yields.
     */
    public static final long HANDOFF_NS = 5_000;

    private final Platform platform;
    /** The learned model, the stats and the runs of the sleeps. */
    private final SleepEngine engine;
    private Mode mode;
    private long minSpinNs;
    private TailTarget target;
    private final IdleHintHold idleHint;
    /**
     * Where the last sleep handed off: the deadline its outermost call still
     * spins to, or 0 when nothing is left (unsigned platform ns; set by
     * {@link #toHandoff}, read by the caller before its final spin).
     */
    long handoffUntil;

    private Sleeper(Platform platform, Mode mode, long minSpinNs, TailTarget target, PmQos pmQos, int idleHintUs,
            Profile profile) {
        this.platform = platform;
        this.engine = new SleepEngine(platform, profile != null ? profile.estimator() : new MarginEstimator());
        this.mode = mode;
        this.minSpinNs = minSpinNs;
        this.target = target;
        this.idleHint = idleHintUs < 0 ? IdleHintHold.NONE : IdleHintHold.acquire(pmQos, idleHintUs, this);
    }

    /**
     * A sleeper in {@link Mode#EXACT} on the real clock, timer slack 1 ns
     * where supported.
     *
     * @return a new sleeper
     */
    public static Sleeper create() {
        return builder().build();
    }

    /**
     * A sleeper in the given mode on the real clock, timer slack 1 ns where supported.
     *
     * @param mode the accuracy/CPU preset
     * @return a new sleeper
     * @throws NullPointerException if {@code mode} is null
     */
    public static Sleeper of(Mode mode) {
        return builder().mode(mode).build();
    }

    /**
     * Starts configuring a sleeper.
     *
     * @return a builder with the defaults: {@link Mode#EXACT}, timer slack on, the real platform
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures a {@link Sleeper}. */
    public static final class Builder {
        private Mode mode = Mode.EXACT;
        private boolean timerSlack = true;
        private long minSpinNs;
        private TailTarget target = TailTarget.BALANCED;
        private Platform platform;
        private int idleHintUs = -1;
        private PmQos pmQos; // null: the process's registry, loaded only when the hint is asked for
        private Profile profile;

        private Builder() {}

        /**
         * Starts the sleeper from a host {@link Profile}: its model answers as
         * it would after the profile's wake-ups ({@code spec/estimator.md},
         * <em>Profile</em>), then learns and forgets as any sleeper's (a
         * loaded wait length it does not use within 255 sleeps is forgotten;
         * its first 256 sleeps still explore). A fresh sleeper needs hundreds
         * to thousands of sleeps before its margins settle; a profile written
         * by an earlier run on this machine ({@code keeptime trace --profile
         * FILE}, or {@link Sleeper#writeProfile(Path)}) skips that.
         * {@link Profile#load(Path, Profile.Option...)} has already refused a
         * profile made on another machine. The profile is loaded into each
         * sleeper this builder builds, never into one that has slept.
         *
         * <pre>{@code
         * Profile p = Profile.load(Path.of("host.profile")); // ProfileException if bad or another machine's
         * Sleeper s = Sleeper.builder().profile(p).build();
         * Ticker t = Ticker.builder(Duration.ofMillis(1)).sleeper(s).build(); // starts from it too
         * }</pre>
         *
         * @param profile the profile to start from
         * @return this builder
         * @throws NullPointerException if {@code profile} is null
         */
        public Builder profile(Profile profile) {
            this.profile = Objects.requireNonNull(profile, "profile");
            return this;
        }

        /**
         * The accuracy/CPU preset (default {@link Mode#EXACT}).
         *
         * @param mode the mode
         * @return this builder
         * @throws NullPointerException if {@code mode} is null
         */
        public Builder mode(Mode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * Whether to set the waiting thread's Linux timer slack to 1 ns
         * (default {@code true}; needs JDK 22+, see {@link TimerSlack}). Timer
         * slack is per thread: once a sleep with this on has run on a thread,
         * the thread keeps the 1 ns slack. Off leaves the kernel's default
         * (50 µs); the estimator then learns the larger overshoot and spins for it.
         * Ignored with a custom {@link #platform(Platform)}.
         *
         * @param set1ns whether to lower the slack
         * @return this builder
         */
        public Builder timerSlack(boolean set1ns) {
            this.timerSlack = set1ns;
            return this;
        }

        /**
         * The shortest spin that finishes a {@link Mode#EXACT} sleep (default
         * zero: only the learned margin at the {@link #tailTarget(TailTarget)
         * tail target}): a floor under every margin the planner uses, so the
         * last OS wait ends at least this long before the deadline, at a fixed
         * CPU price of about {@code minSpin} ÷ the sleep's length. Prefer a
         * stricter tail target, which spins only as long as this machine's
         * learned wake-ups need. Negative counts as zero; past
         * {@code 2^64 - 1} ns saturates (a pure spin).
         *
         * @param minSpin the shortest final spin
         * @return this builder
         * @throws NullPointerException if {@code minSpin} is null
         */
        public Builder minSpin(Duration minSpin) {
            this.minSpinNs = U64.nanos(Objects.requireNonNull(minSpin, "minSpin"));
            return this;
        }

        /**
         * The share of {@link Mode#EXACT} sleeps allowed to end late because
         * the OS woke the thread after the deadline (default
         * {@link TailTarget#BALANCED}, 1 %). A stricter target spins longer,
         * on this machine's learned wake-up tail.
         *
         * @param target the tail target
         * @return this builder
         * @throws NullPointerException if {@code target} is null
         */
        public Builder tailTarget(TailTarget target) {
            this.target = Objects.requireNonNull(target, "target");
            return this;
        }

        /**
         * The tail target as a share in {@code (0, 1)}, e.g. {@code 0.001}
         * for 0.1 %; see {@link #tailTarget(TailTarget)} and {@link TailTarget#of(double)}.
         *
         * @param share the share of sleeps allowed to end late
         * @return this builder
         * @throws IllegalArgumentException if {@code share} is NaN,
         *     {@code ≤ 0}, {@code ≥ 1} or below {@code 10^-6} (never clamped)
         */
        public Builder tailTarget(double share) {
            this.target = TailTarget.of(share);
            return this;
        }

        /**
         * Waits on another platform, e.g. a {@link SimPlatform} in tests
         * (default: the real clock).
         *
         * @param platform the clock and waits to use
         * @return this builder
         * @throws NullPointerException if {@code platform} is null
         */
        public Builder platform(Platform platform) {
            this.platform = Objects.requireNonNull(platform, "platform");
            return this;
        }

        /**
         * Asks for the {@link IdleHint idle-latency hint}: while the sleeper
         * is open, CPUs should wake from idle within {@code maxLatencyUs} µs
         * ({@code 0}, cyclictest's value, is the usual choice). The request is
         * made by {@link #build()} and <b>held until {@link Sleeper#close()}</b>;
         * a refusal (not root, no device) is logged once per process and
         * reported by {@link Sleeper#idleHintStatus()}, never thrown.
         *
         * <p><b>Price:</b> while any sleeper holds it, idle CPUs poll instead
         * of sleeping, on the whole machine: more power, and on a virtual
         * machine the host sees the vCPUs as busy. It pays where the cpuidle
         * driver has deep or polling states ({@code haltpoll},
         * {@code intel_idle}, {@code acpi_idle}); with the driver {@code none}
         * it changes little ({@link Clocks#idleLatency()}).
         *
         * @param maxLatencyUs the wake-up latency bound, µs, {@code 0} to {@value IdleHint#MAX_LATENCY_US}
         * @return this builder
         * @throws IllegalArgumentException if {@code maxLatencyUs} is negative or
         *     past {@value IdleHint#MAX_LATENCY_US} (the kernel reads an {@code s32})
         */
        public Builder idleHint(long maxLatencyUs) {
            this.idleHintUs = IdleHint.checkMicros(maxLatencyUs);
            return this;
        }

        /**
         * The {@link #idleHint(long) idle-latency hint} as a duration,
         * truncated to whole µs (a lower value is a stricter bound).
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
         * Builds the sleeper; with {@link #idleHint(long)}, makes the request
         * (refused or not, the sleeper is built).
         *
         * @return a new sleeper with an empty estimator, or the {@link #profile(Profile) profile}'s
         */
        public Sleeper build() {
            Platform p = platform != null ? platform
                    : timerSlack ? SystemPlatform.WITH_TIMER_SLACK : SystemPlatform.WITHOUT_TIMER_SLACK;
            return new Sleeper(p, mode, minSpinNs, target, pmQos, idleHintUs, profile);
        }
    }

    /**
     * This sleeper's mode.
     *
     * @return the mode
     */
    public Mode mode() {
        return mode;
    }

    /**
     * Switches the mode; what was learned is kept.
     *
     * @param mode the new mode
     * @throws NullPointerException if {@code mode} is null
     */
    public void setMode(Mode mode) {
        this.mode = Objects.requireNonNull(mode, "mode");
    }

    /**
     * The shortest spin that finishes an exact sleep, see {@link Builder#minSpin(Duration)}.
     *
     * @return the shortest final spin
     */
    public Duration minSpin() {
        return Duration.ofNanos(U64.lt(minSpinNs, Long.MAX_VALUE) ? minSpinNs : Long.MAX_VALUE);
    }

    /**
     * Changes the shortest final spin, see {@link Builder#minSpin(Duration)}.
     *
     * @param minSpin the shortest final spin
     * @throws NullPointerException if {@code minSpin} is null
     */
    public void setMinSpin(Duration minSpin) {
        this.minSpinNs = U64.nanos(Objects.requireNonNull(minSpin, "minSpin"));
    }

    /**
     * The share of sleeps allowed to end late, see {@link Builder#tailTarget(TailTarget)}.
     *
     * @return the tail target
     */
    public TailTarget tailTarget() {
        return target;
    }

    /**
     * Changes the tail target; what was learned is kept.
     *
     * @param target the new tail target
     * @throws NullPointerException if {@code target} is null
     */
    public void setTailTarget(TailTarget target) {
        this.target = Objects.requireNonNull(target, "target");
    }

    /**
     * What this sleeper has spent so far: sleeps, late sleeps, OS waits,
     * spin time and the estimated thread CPU (a snapshot).
     *
     * <pre>{@code
     * SleeperStats st = sleeper.stats();
     * System.out.printf("late %.2f %%, %.2f OS waits/sleep, CPU %d ns%n",
     *         100 * st.lateShare(), st.osWaitsPerSleep(), st.cpuEstimateNs());
     * }</pre>
     *
     * @return an immutable snapshot of the stats
     */
    public SleeperStats stats() {
        return engine.tally.snapshot();
    }

    /** Starts the stats afresh; what was learned is kept. */
    public void resetStats() {
        engine.tally.reset();
    }

    /**
     * Whether this sleeper's {@link Builder#idleHint(long) idle-latency hint}
     * is held (and the value in force in this process), was refused (and
     * why), released by {@link #close()}, or not requested.
     *
     * @return the status now
     */
    public IdleHintStatus idleHintStatus() {
        return idleHint.status();
    }

    /**
     * Releases this sleeper's {@link Builder#idleHint(long) idle-latency
     * hint}, if it holds one (the last holder in the process closes the
     * device, which ends the request). Idempotent. The sleeper stays usable:
     * it sleeps as before, without the hint. A sleeper without the hint has
     * nothing to release.
     */
    @Override
    public void close() {
        idleHint.close();
    }

    /**
     * The learned wake-up model (live view; do not use from another thread).
     *
     * @return this sleeper's estimator
     */
    public MarginEstimator estimator() {
        return engine.estimator;
    }

    /**
     * A host profile of what this sleeper has learned, made on this machine
     * ({@link Profile.Fingerprint#thisMachine()}): a sleeper built from it
     * ({@link Builder#profile(Profile)}) answers every margin and cost as this
     * one does now, its buckets ageing from its own first sleep.
     *
     * @return the profile of this sleeper's estimator
     */
    public Profile profile() {
        return Profile.of(engine.estimator, Profile.Fingerprint.thisMachine());
    }

    /**
     * Writes {@link #profile()} to {@code path} (created or replaced), for a
     * later run on this machine to start from.
     *
     * <pre>{@code
     * Sleeper s = Sleeper.create();
     * for (int i = 0; i < 3000; i++) {
     *     s.sleep(Duration.ofMillis(1));
     * }
     * s.writeProfile(Path.of("host.profile"));
     * }</pre>
     *
     * @param path where to write it
     * @throws IOException if the file cannot be written
     */
    public void writeProfile(Path path) throws IOException {
        profile().write(path);
    }

    /**
     * The platform this sleeper waits on.
     *
     * @return the platform
     */
    public Platform platform() {
        return platform;
    }

    /**
     * Sleeps for {@code duration} from now: never less (except
     * {@link Mode#EFFICIENT}), typically a fraction of a microsecond more.
     *
     * <p>A negative duration returns at once without looking at the interrupt
     * status, like {@code Thread.sleep(Duration)} (JDK 19+). Durations past
     * {@code 2^64 - 1} ns (584 years) saturate to an effectively unbounded wait.
     *
     * @param duration how long to sleep
     * @throws InterruptedException if the thread is interrupted before or
     *     during the wait; the interrupt status is then cleared
     * @throws NullPointerException if {@code duration} is null
     */
    public void sleep(Duration duration) throws InterruptedException {
        Platform p = platform;
        spinTo(p, toHandoffAfter(duration), handoffUntil);
    }

    /**
     * Sleeps for {@code nanos} nanoseconds from now; see {@link #sleep(Duration)}.
     * A negative value returns at once.
     *
     * @param nanos how long to sleep, ns
     * @throws InterruptedException if the thread is interrupted before or
     *     during the wait; the interrupt status is then cleared
     */
    public void sleepNanos(long nanos) throws InterruptedException {
        Platform p = platform;
        spinTo(p, toHandoffAfterNanos(nanos), handoffUntil);
    }

    /**
     * Sleeps until {@code deadline}, a {@link System#nanoTime()} value
     * (compared by difference, as nanoTime's contract asks), and returns the
     * first clock reading taken after the wait: {@code woke - deadline >= 0}
     * except in {@link Mode#EFFICIENT}. A deadline that has passed returns at
     * once (after the interrupt check, like {@code Thread.sleep(0)}).
     *
     * @param deadline the {@code System.nanoTime()} value to wait for (with a
     *     {@link SimPlatform}: its clock)
     * @return the {@code System.nanoTime()} reading after the wait
     * @throws InterruptedException if the thread is interrupted before or
     *     during the wait; the interrupt status is then cleared
     */
    public long sleepUntil(long deadline) throws InterruptedException {
        Platform p = platform;
        long now = toHandoffUntil(deadline);
        return p.toNanoTime(spinTo(p, now, handoffUntil));
    }

    /**
     * The last stretch of a sleep, in the caller's outermost frame
     * ({@code spec/sleep.md}, <em>Hand-off</em>): pauses until the clock
     * reads {@code until} and returns that reading; {@code now} when it
     * already does (nothing was handed off). Small, so the JIT inlines it
     * into the public method: its loop's exit is the return.
     */
    static long spinTo(Platform p, long now, long until) {
        while (U64.lt(now, until)) {
            p.relax();
            now = p.nowNs();
        }
        return now;
    }

    /**
     * {@link #sleep(Duration)} up to its hand-off: returns the last clock
     * reading (platform ns), with {@link #handoffUntil} the deadline still to
     * spin to. A negative duration does nothing (reading 0, nothing to spin).
     */
    long toHandoffAfter(Duration duration) throws InterruptedException {
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative()) {
            handoffUntil = 0;
            return 0;
        }
        SleepEngine.checkInterrupt();
        return toHandoff(U64.add(platform.nowNs(), U64.nanos(duration)));
    }

    /** {@link #sleepNanos(long)} up to its hand-off, as {@link #toHandoffAfter}. */
    long toHandoffAfterNanos(long nanos) throws InterruptedException {
        if (nanos < 0) {
            handoffUntil = 0;
            return 0;
        }
        SleepEngine.checkInterrupt();
        return toHandoff(U64.add(platform.nowNs(), nanos));
    }

    /** {@link #sleepUntil(long)} up to its hand-off, as {@link #toHandoffAfter}. */
    long toHandoffUntil(long deadline) throws InterruptedException {
        SleepEngine.checkInterrupt();
        return toHandoff(platform.fromNanoTime(deadline));
    }

    /**
     * Everything of a sleep to {@code deadline} (platform ns) but its last
     * {@link #HANDOFF_NS}: the plan, the OS waits, the spin up to the
     * hand-off and all the bookkeeping. Returns the last clock reading; the
     * caller spins the rest, to {@link #handoffUntil}, with {@link #spinTo}.
     */
    long toHandoff(long deadline) throws InterruptedException {
        handoffUntil = 0;
        long now = engine.run(deadline, mode, target, minSpinNs);
        handoffUntil = engine.handoffUntil;
        return now;
    }

    /**
     * Whether the first plan of the sleep numbered {@code seq} (counted from
     * 1, unsigned) explores: each of the first {@link #EXPLORE_YOUNG_SLEEPS},
     * then every {@link #EXPLORE_EVERY}th.
     *
     * <pre>{@code
     * assert Sleeper.explores(256) && !Sleeper.explores(257) && Sleeper.explores(264);
     * }</pre>
     *
     * @param seq the sleep's number, unsigned
     * @return whether its first plan explores
     */
    public static boolean explores(long seq) {
        return Long.compareUnsigned(seq, EXPLORE_YOUNG_SLEEPS) <= 0
                || Long.remainderUnsigned(seq, EXPLORE_EVERY) == 0;
    }

    /**
     * The longest spin a sleeper in a crowd of {@code sleepers} (more than
     * {@code cpus}) may plan for a sleep of {@code lengthNs}: its share of
     * {@code 1 / }{@link #CROWD_SPIN_DIVISOR} of the CPUs' time, less
     * {@code waitCostNs} (the learned cost of its OS wait):
     * {@code (cpus · lengthNs) / (CROWD_SPIN_DIVISOR · sleepers) − waitCostNs},
     * computed exactly (no 64-bit overflow), saturating at {@code 2^64 − 1}
     * and at 0. So {@code n} sleepers of length {@code D} spin at most
     * {@code cpus / CROWD_SPIN_DIVISOR} CPUs on average, whatever their
     * learned margins say.
     *
     * <pre>{@code
     * // 64 threads sleeping 1 ms on 2 CPUs, OS waits costing 5 µs: 10.6 µs of spin each.
     * assert Sleeper.crowdSpinCap(2, 64, 1_000_000, 5_000) == 10_625;
     * }</pre>
     *
     * @param cpus the CPUs available to the process
     * @param sleepers the sleepers inside an exact sleep; 0 counts as 1
     * @param lengthNs the sleep's length, unsigned ns
     * @param waitCostNs the learned thread CPU of its OS wait, unsigned ns
     * @return the cap, unsigned ns
     * @throws IllegalArgumentException if {@code cpus} or {@code sleepers} is negative
     */
    public static long crowdSpinCap(int cpus, int sleepers, long lengthNs, long waitCostNs) {
        if (cpus < 0) {
            throw new IllegalArgumentException("cpus must be at least 0, got " + cpus);
        }
        if (sleepers < 0) {
            throw new IllegalArgumentException("sleepers must be at least 0, got " + sleepers);
        }
        long c = cpus;
        long den = CROWD_SPIN_DIVISOR * Math.max(1, sleepers); // at most 2^32
        // c · D / den = c · q + c · r / den with D = q · den + r (unsigned);
        // c · r < 2^31 · 2^32 fits a long, c · q saturates at 2^64 − 1.
        long q = Long.divideUnsigned(lengthNs, den);
        long r = Long.remainderUnsigned(lengthNs, den);
        long share = U64.add(U64.mul(c, q), c * r / den);
        return U64.sub(share, waitCostNs);
    }

    @Override
    public String toString() {
        return "Sleeper[mode=" + mode.specName() + ", tailTarget=" + target + ", platform=" + platform
                + (idleHint == IdleHintHold.NONE ? "" : ", idleHint=" + idleHint.status()) + "]";
    }
}
