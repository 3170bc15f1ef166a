package dev.keeptime.bench;

import dev.keeptime.KeepTime;
import dev.keeptime.Mode;
import dev.keeptime.Sleeper;
import dev.keeptime.TailTarget;
import dev.keeptime.TimerSlack;
import java.util.concurrent.locks.LockSupport;

/**
 * Every way of waiting the Java bench compares, named like the Rust CLI's
 * methods where they are the same thing ({@code spec/bench-result.md}). Each
 * waits until {@code deadline} ({@code = start + d}, {@code start} read just
 * before the call); the bench reads {@code System.nanoTime()} as soon as the
 * call returns, and that reading is the sample. A method that returns a clock
 * reading of its own (the spins' last read, keeptime's returned reading)
 * also gives the return path: the caller's reading minus that one.
 */
enum Method {
    // id, description, mayReturnEarly, needsSlackControl, learns
    BUSY_LOOP("busy-loop", "System.nanoTime() in a tight loop until the deadline, no pause hint; a whole core", false, false, false),
    SPIN_PAUSE("spin-pause", "System.nanoTime() with Thread.onSpinWait() between reads until the deadline: the pure-spin accuracy baseline; a whole core", false, false, false),
    THREAD_SLEEP("thread-sleep", "Thread.sleep(ms, ns) with the thread's default timer slack; JDK 17 rounds a sub-millisecond remainder up to 1 ms", false, false, false),
    PARK_NANOS("park-nanos", "LockSupport.parkNanos(d), once, default timer slack; may return early (spuriously)", true, false, false),
    PARK_NANOS_SLACK_1NS("park-nanos-slack-1ns", "LockSupport.parkNanos(d) with timer slack 1 ns (prctl via FFM, JDK 22+)", true, true, false),
    KEEPTIME("keeptime", "KeepTime.sleepUntil(deadline), the static method on the thread's sleeper, tail target 1 % (the default): the cheapest plan of parkNanos waits and a Thread.onSpinWait() spin that keeps at most 1 % of sleeps late; timer slack 1 ns on JDK 22+", false, false, true),
    KEEPTIME_SLEEPER("keeptime-sleeper", "an owned Sleeper (Sleeper.create(), tail target 1 %), sleepUntil(deadline)", false, false, true),
    KEEPTIME_RELAXED("keeptime-relaxed", "an owned Sleeper, tail target 5 % (TailTarget.RELAXED)", false, false, true),
    KEEPTIME_STRICT("keeptime-strict", "an owned Sleeper, tail target 0.1 % (TailTarget.STRICT)", false, false, true),
    KEEPTIME_DEFAULT_SLACK("keeptime-default-slack", "an owned Sleeper with the timer slack left at the default (learns the 50 µs slack and spins for it, as on JDK 17)", false, true, true),
    KEEPTIME_EFFICIENT("keeptime-efficient", "an owned Sleeper in Mode.EFFICIENT: one parkNanos compensated by the median overshoot, no spin; may end early by design", true, false, true);

    final String id;
    final String description;
    final boolean mayReturnEarly;
    /** Only meaningful where keeptime can set the timer slack (JDK 22+ on Linux). */
    final boolean needsSlackControl;
    /**
     * The method's sleeper learns from its own waits (keeptime's wake-up
     * model), so its cells warm up longer ({@link Bench#defaultWarmup}).
     */
    final boolean learns;

    /** What kind of wait this is: the {@code family} of spec/bench-result.md. */
    String family() {
        switch (this) {
            case BUSY_LOOP:
                return "busy loop";
            case SPIN_PAUSE:
                return "spin with pause";
            case THREAD_SLEEP:
            case PARK_NANOS:
            case PARK_NANOS_SLACK_1NS:
                return "OS sleep";
            default:
                return "keeptime";
        }
    }

    Method(String id, String description, boolean mayReturnEarly, boolean needsSlackControl, boolean learns) {
        this.id = id;
        this.description = description;
        this.mayReturnEarly = mayReturnEarly;
        this.needsSlackControl = needsSlackControl;
        this.learns = learns;
    }

    /**
     * Whether this method's waiter returns a clock reading of its own (the
     * spins' last read, keeptime's returned reading); the JDK's sleeps do not.
     */
    boolean returnsReading() {
        return this != THREAD_SLEEP && this != PARK_NANOS && this != PARK_NANOS_SLACK_1NS;
    }

    /**
     * A new waiter for this method, created on (and used only by) the thread
     * that runs it. Every call returns a new object, with its own state where
     * the method has any (a keeptime sleeper and what it learns): the bench
     * calls this once per (method, duration) cell ({@link Bench.CellWorker}),
     * and once more for the JIT warm-up, whose waiter is thrown away.
     */
    Waiter newWaiter() {
        switch (this) {
            case BUSY_LOOP:
                return new BusyLoop();
            case SPIN_PAUSE:
                return new SpinPause();
            case THREAD_SLEEP:
                return new ThreadSleep();
            case PARK_NANOS:
                return new Park();
            case PARK_NANOS_SLACK_1NS:
                TimerSlack.set(1);
                return new Park();
            case KEEPTIME:
                return new StaticKeeptime();
            case KEEPTIME_SLEEPER:
                return new KeeptimeWaiter(Sleeper.create());
            case KEEPTIME_RELAXED:
                return new KeeptimeWaiter(Sleeper.builder().tailTarget(TailTarget.RELAXED).build());
            case KEEPTIME_STRICT:
                return new KeeptimeWaiter(Sleeper.builder().tailTarget(TailTarget.STRICT).build());
            case KEEPTIME_DEFAULT_SLACK:
                return new KeeptimeWaiter(Sleeper.builder().timerSlack(false).build());
            case KEEPTIME_EFFICIENT:
                return new KeeptimeWaiter(Sleeper.of(Mode.EFFICIENT));
            default:
                throw new AssertionError(this);
        }
    }

    /** {@code System.nanoTime()} in a tight loop, no pause hint. */
    static final class BusyLoop implements Waiter {
        @Override
        public long waitUntil(long deadline, long d) {
            long now;
            while ((now = System.nanoTime()) - deadline < 0) {
                // no pause hint: the tightest loop
            }
            return now;
        }
    }

    /** {@code System.nanoTime()} with {@code Thread.onSpinWait()} between reads. */
    static final class SpinPause implements Waiter {
        @Override
        public long waitUntil(long deadline, long d) {
            long now = System.nanoTime();
            while (now - deadline < 0) {
                Thread.onSpinWait();
                now = System.nanoTime();
            }
            return now;
        }
    }

    /** {@code Thread.sleep(ms, ns)}. */
    static final class ThreadSleep implements Waiter {
        @Override
        public long waitUntil(long deadline, long d) throws InterruptedException {
            Thread.sleep(d / 1_000_000, (int) (d % 1_000_000));
            return 0;
        }
    }

    /** One {@code LockSupport.parkNanos(d)}, with the thread's timer slack. */
    static final class Park implements Waiter {
        @Override
        public long waitUntil(long deadline, long d) {
            LockSupport.parkNanos(d);
            return 0;
        }
    }

    /** One wait until {@code deadline} (a nanoTime value), {@code d} ns after its start. */
    @FunctionalInterface
    interface Waiter {
        /**
         * Waits; returns the method's own last {@code System.nanoTime()}
         * reading if it {@link Method#returnsReading() has one}, else 0.
         */
        long waitUntil(long deadline, long d) throws InterruptedException;

        /** The keeptime sleeper behind this waiter (its target and stats), or null. */
        default Sleeper sleeper() {
            return null;
        }
    }

    /** {@link KeepTime#sleepUntil(long)}: the thread's sleeper, whose stats the bench reads after each cell. */
    static final class StaticKeeptime implements Waiter {
        @Override
        public long waitUntil(long deadline, long d) throws InterruptedException {
            return KeepTime.sleepUntil(deadline);
        }

        @Override
        public Sleeper sleeper() {
            return KeepTime.threadSleeper();
        }
    }

    /** An owned keeptime sleeper, whose stats the bench reads after each cell. */
    static final class KeeptimeWaiter implements Waiter {
        private final Sleeper sleeper;

        KeeptimeWaiter(Sleeper sleeper) {
            this.sleeper = sleeper;
        }

        @Override
        public long waitUntil(long deadline, long d) throws InterruptedException {
            return sleeper.sleepUntil(deadline);
        }

        @Override
        public Sleeper sleeper() {
            return sleeper;
        }
    }
}
