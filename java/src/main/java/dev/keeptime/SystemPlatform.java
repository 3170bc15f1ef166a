package dev.keeptime;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The real clock and OS: {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux),
 * {@link LockSupport#parkNanos(long)} as the OS wait, {@link Thread#onSpinWait()},
 * {@link Thread#yield()}, at most {@code max(1, CPUs - 1)} threads spinning
 * with the pause hint in the whole process (spec/sleep.md "Spin slots"; the
 * others follow with a yield per iteration), and a process-wide count of the
 * sleepers inside an exact sleep, which tells a crowd (more sleepers than
 * CPUs, whose spins are capped so it cannot snowball into everyone spinning).
 */
final class SystemPlatform implements Platform {
    /** The nanoTime reading that is platform time 0. */
    private static final long ORIGIN = System.nanoTime();
    /** The CPUs the process may use (read once, like the spin slots). */
    private static final int CPUS = Runtime.getRuntime().availableProcessors();
    /** One CPU fewer than the process may use (at least one): a thread woken
     *  from its OS wait always finds a CPU that no pausing spinner holds. */
    private static final int SPIN_SLOTS = Math.max(1, CPUS - 1);
    private static final AtomicInteger SPINNERS = new AtomicInteger();
    /** Sleepers of the process inside an exact sleep. */
    private static final AtomicInteger SLEEPERS = new AtomicInteger();
    private static final ThreadLocal<Boolean> SLACK_SET = ThreadLocal.withInitial(() -> Boolean.FALSE);

    static final SystemPlatform WITH_TIMER_SLACK = new SystemPlatform(true);
    static final SystemPlatform WITHOUT_TIMER_SLACK = new SystemPlatform(false);

    private final boolean timerSlack;

    private SystemPlatform(boolean timerSlack) {
        this.timerSlack = timerSlack && TimerSlack.isSupported();
    }

    @Override
    public long nowNs() {
        // Elapsed since ORIGIN: non-negative for 292 years, so also right as unsigned.
        return System.nanoTime() - ORIGIN;
    }

    /**
     * parkNanos is relative and may return early (spuriously, or at once after
     * an unpark): park again toward the same absolute target until the clock
     * reaches it. An interrupt makes parkNanos return at once without clearing
     * the status: report it so the sleeper throws InterruptedException.
     */
    @Override
    public boolean osWaitUntil(long targetNs) {
        while (true) {
            long now = nowNs();
            if (U64.ge(now, targetNs)) {
                return true;
            }
            long remaining = targetNs - now;
            LockSupport.parkNanos(remaining < 0 ? Long.MAX_VALUE : remaining);
            if (Thread.currentThread().isInterrupted()) {
                return false;
            }
        }
    }

    /**
     * {@link Sleeper#spinTo} on this clock, without an interface call: the
     * last stretch of {@link KeepTime}'s static sleeps, spun in their own
     * frame ({@code spec/sleep.md}, <em>Hand-off</em>).
     */
    static long spinTo(long now, long until) {
        while (U64.lt(now, until)) {
            Thread.onSpinWait();
            now = System.nanoTime() - ORIGIN;
        }
        return now;
    }

    /** {@link #toNanoTime} of a clock reading (below {@code 2^63}), without an instance. */
    static long nanoTimeOf(long ns) {
        return ORIGIN + ns;
    }

    @Override
    public void relax() {
        Thread.onSpinWait();
    }

    @Override
    public void yieldNow() {
        Thread.yield();
    }

    /**
     * {@link java.lang.management.ThreadMXBean#getCurrentThreadCpuTime()}
     * (on Linux HotSpot: {@code clock_gettime} on the thread's CPU clock, a
     * system call of a few hundred ns, paid on every 8th planned OS wait).
     */
    @Override
    public long threadCpuNs() {
        return ThreadCpu.nowNs();
    }

    @Override
    public boolean tryBeginSpin() {
        if (SPINNERS.getAndIncrement() >= SPIN_SLOTS) {
            SPINNERS.getAndDecrement();
            return false;
        }
        return true;
    }

    @Override
    public void endSpin() {
        SPINNERS.getAndDecrement();
    }

    @Override
    public int enterSleep() {
        return SLEEPERS.incrementAndGet();
    }

    @Override
    public void leaveSleep() {
        SLEEPERS.decrementAndGet();
    }

    /** {@link Runtime#availableProcessors()}, read once. */
    @Override
    public int cpus() {
        return CPUS;
    }

    /** Sleepers of the process inside an exact sleep right now (for tests). */
    static int sleepers() {
        return SLEEPERS.get();
    }

    @Override
    public void prepareThread() {
        if (timerSlack && !SLACK_SET.get()) {
            // Best effort: if the kernel refuses, waits stay correct and the
            // estimator learns the larger overshoot.
            TimerSlack.set(1);
            SLACK_SET.set(Boolean.TRUE);
        }
    }

    /**
     * {@code nanoTime - ORIGIN}, by nanoTime's rule that only differences are
     * meaningful; a deadline before the origin has passed (0).
     */
    @Override
    public long fromNanoTime(long nanoTime) {
        long ns = nanoTime - ORIGIN;
        return ns < 0 ? 0 : ns;
    }

    @Override
    public long toNanoTime(long ns) {
        // Platform times past 2^63 - 1 (saturated deadlines) have no nanoTime value; clamp.
        return ORIGIN + (ns < 0 ? Long.MAX_VALUE : ns);
    }

    @Override
    public String toString() {
        return "SystemPlatform[timerSlack=" + (timerSlack ? "1 ns" : "unchanged") + "]";
    }
}
