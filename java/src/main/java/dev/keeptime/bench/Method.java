package dev.keeptime.bench;

import dev.keeptime.KeepTime;
import dev.keeptime.Mode;
import dev.keeptime.Sleeper;
import dev.keeptime.TailTarget;
import dev.keeptime.TimerSlack;
import java.util.concurrent.locks.LockSupport;

/**
 * Every way of waiting the Java bench compares, named like the Rust CLI's
 * methods where they are the same thing (spec/bench-result.md). Each waits
 * until {@code deadline} ({@code = start + d}, {@code start} read just before
 * the call) and returns its first {@code System.nanoTime()} reading after the
 * wait: the busy loop's last read, keeptime's returned reading, a fresh read
 * after {@code Thread.sleep} and {@code parkNanos}.
 */
enum Method {
    BUSY_LOOP("busy-loop", "System.nanoTime() in a tight loop until the deadline (seed 000's while loop); a whole core", "000", false, false),
    THREAD_SLEEP("thread-sleep", "Thread.sleep(ms, ns) with the thread's default timer slack (seed 000's Thread.Sleep); JDK 17 rounds a sub-millisecond remainder up to 1 ms", "000", false, false),
    PARK_NANOS("park-nanos", "LockSupport.parkNanos(d), once, default timer slack; may return early (spuriously)", null, true, false),
    PARK_NANOS_SLACK_1NS("park-nanos-slack-1ns", "LockSupport.parkNanos(d) with timer slack 1 ns (prctl via FFM, JDK 22+): Linux's timeBeginPeriod(1)", "000", true, true),
    KEEPTIME("keeptime", "KeepTime.sleepUntil(deadline), tail target 1 % (balanced, the default): the cheapest plan of parkNanos waits and a Thread.onSpinWait() spin that keeps at most 1 % of sleeps late; timer slack 1 ns on JDK 22+", null, false, false),
    KEEPTIME_RELAXED("keeptime-relaxed", "keeptime Mode.EXACT, tail target 5 % (TailTarget.RELAXED)", null, false, false),
    KEEPTIME_STRICT("keeptime-strict", "keeptime Mode.EXACT, tail target 0.1 % (TailTarget.STRICT)", null, false, false),
    KEEPTIME_DEFAULT_SLACK("keeptime-default-slack", "keeptime Mode.EXACT with the timer slack left at the default (learns the 50 µs slack and spins for it, as on JDK 17)", null, false, true),
    KEEPTIME_EFFICIENT("keeptime-efficient", "keeptime Mode.EFFICIENT: one parkNanos compensated by the median overshoot, no spin (seed 001); may end early by design", "001", true, false);

    final String id;
    final String description;
    final String seed;
    final boolean mayReturnEarly;
    /** Only meaningful where keeptime can set the timer slack (JDK 22+ on Linux). */
    final boolean needsSlackControl;

    Method(String id, String description, String seed, boolean mayReturnEarly, boolean needsSlackControl) {
        this.id = id;
        this.description = description;
        this.seed = seed;
        this.mayReturnEarly = mayReturnEarly;
        this.needsSlackControl = needsSlackControl;
    }

    /** A waiter for this method, created on (and used only by) the thread that runs it. */
    Waiter newWaiter() {
        switch (this) {
            case BUSY_LOOP:
                return (deadline, d) -> {
                    long now;
                    while ((now = System.nanoTime()) - deadline < 0) {
                        // the seed's empty loop body
                    }
                    return now;
                };
            case THREAD_SLEEP:
                return (deadline, d) -> {
                    Thread.sleep(d / 1_000_000, (int) (d % 1_000_000));
                    return System.nanoTime();
                };
            case PARK_NANOS:
                return Method::park;
            case PARK_NANOS_SLACK_1NS:
                TimerSlack.set(1);
                return Method::park;
            case KEEPTIME:
                return new KeeptimeWaiter(KeepTime.threadSleeper());
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

    private static long park(long deadline, long d) {
        LockSupport.parkNanos(d);
        return System.nanoTime();
    }

    /** One wait until {@code deadline} (a nanoTime value), {@code d} ns after its start. */
    @FunctionalInterface
    interface Waiter {
        /** Waits; returns the first {@code System.nanoTime()} reading after the wait. */
        long waitUntil(long deadline, long d) throws InterruptedException;

        /** The keeptime sleeper behind this waiter (its target and stats), or null. */
        default Sleeper sleeper() {
            return null;
        }
    }

    /** A keeptime sleeper, whose stats the bench reads after each cell. */
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
