package dev.keeptime;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Simulated time for testing code that waits: a clock that moves only when
 * the algorithm waits or spins, OS waits that overshoot by scripted amounts,
 * and a record of every OS wait. This is the platform of
 * {@code spec/vectors/sleep.json}; use it to test your own fixed-rate loops
 * without real time.
 *
 * <ul>
 *   <li>An OS wait issued at {@code now} toward {@code t} wakes at
 *       {@code max(now, t) + o}, {@code o} the next scripted overshoot (else
 *       the default), unless the next scripted interrupt {@code i} satisfies
 *       {@code now + i < t}: then the clock becomes {@code now + i} and the
 *       wait reports interrupted (the sleeper checks the thread's real
 *       interrupt status, then waits again).</li>
 *   <li>{@code relax()} advances the clock by the spin step (default 100 ns),
 *       {@code yieldNow()} by the yield step (default 1 µs); reading the
 *       clock costs nothing.</li>
 *   <li>The simulated thread CPU clock ({@link #threadCpuNs()}) advances by
 *       the wait cost (default 0) per completed OS wait (an interrupted one
 *       costs nothing) and by every spin and yield step.</li>
 *   <li>{@link #cpus()} answers {@link #setCpus(int)} (default
 *       {@link Integer#MAX_VALUE}: never a crowd); {@link #enterSleep()}
 *       counts this world's sleepers inside an exact sleep and returns them
 *       plus {@link #setOtherSleepers(int)} (default 0), the sleepers other
 *       threads would have inside a sleep.</li>
 *   <li>The {@code nanoTime} domain of a simulated sleeper is the simulated
 *       clock itself (unsigned ns).</li>
 * </ul>
 *
 * <pre>{@code
 * SimPlatform sim = new SimPlatform(1_000_000);     // the clock starts at 1 ms
 * sim.scriptOvershoots(4_000, 4_000);               // the OS wakes 4 µs late
 * Sleeper s = Sleeper.builder().platform(sim).build();
 * long woke = s.sleepUntil(1_100_000);              // sleep until 1.1 ms
 * // woke >= 1_100_000 and sim.waits() lists two OS waits, then a spin ran
 * }</pre>
 *
 * <p>Not thread-safe: one simulated world belongs to one test thread.
 */
public final class SimPlatform implements Platform {
    /**
     * One OS wait made on a {@link SimPlatform}.
     *
     * @param issuedNs when the wait was issued
     * @param targetNs the absolute target it asked for
     * @param wokeNs when it woke
     * @param interrupted whether it reported an interruption
     */
    public record Wait(long issuedNs, long targetNs, long wokeNs, boolean interrupted) {}

    /**
     * When a spin slot was given back ({@link #endSpin()}).
     *
     * @param atNs the clock then
     * @param relaxes the count of {@link #relax()} steps then
     */
    public record SlotRelease(long atNs, long relaxes) {}

    private long now;
    private final ArrayDeque<Long> overshoots = new ArrayDeque<>();
    private final ArrayDeque<Long> interrupts = new ArrayDeque<>();
    private long defaultOvershoot;
    private long spinStep = 100;
    private long yieldStep = 1_000;
    private boolean spinSlotsFree = true;
    private boolean spinning;
    private final List<Wait> waits = new ArrayList<>();
    private long relaxes;
    private long yields;
    private long waitCost;
    private long threadCpu;
    private int cpus = Integer.MAX_VALUE;
    private int otherSleepers;
    private int sleepers;
    private SlotRelease released;

    /**
     * A simulated world whose clock reads {@code startNs}.
     *
     * @param startNs the initial clock reading, unsigned ns
     */
    public SimPlatform(long startNs) {
        this.now = startNs;
    }

    /**
     * The simulated clock.
     *
     * @return the current time, unsigned ns
     */
    public long now() {
        return now;
    }

    /**
     * Moves the clock forward (the program "did work"), saturating.
     *
     * @param ns how far, unsigned ns
     */
    public void advance(long ns) {
        now = U64.add(now, ns);
    }

    /**
     * Sets the clock to {@code ns} if that is not in the past.
     *
     * @param ns the new time, unsigned ns
     */
    public void advanceTo(long ns) {
        now = U64.max(now, ns);
    }

    /**
     * Queues overshoots for the next OS waits, in order.
     *
     * @param ns overshoots, unsigned ns
     */
    public void scriptOvershoots(long... ns) {
        for (long o : ns) {
            overshoots.add(o);
        }
    }

    /**
     * The overshoot used once the script is exhausted (default 0).
     *
     * @param ns the overshoot, unsigned ns
     */
    public void setDefaultOvershoot(long ns) {
        defaultOvershoot = ns;
    }

    /**
     * Queues interruptions: the next OS waits report an interruption this many
     * ns after they were issued (if that is before their target), in order.
     *
     * @param afterNs delays, unsigned ns
     */
    public void scriptInterrupts(long... afterNs) {
        for (long i : afterNs) {
            interrupts.add(i);
        }
    }

    /**
     * Nanoseconds one spin iteration takes (at least 1).
     *
     * @param ns the step
     */
    public void setSpinStep(long ns) {
        spinStep = U64.max(ns, 1);
    }

    /**
     * Nanoseconds one yield takes (at least 1).
     *
     * @param ns the step
     */
    public void setYieldStep(long ns) {
        yieldStep = U64.max(ns, 1);
    }

    /**
     * Thread CPU time each completed OS wait costs (default 0); spins cost their steps.
     *
     * @param ns the cost, unsigned ns
     */
    public void setWaitCost(long ns) {
        waitCost = ns;
    }

    /**
     * The simulated thread CPU clock: OS-wait costs plus spin and yield steps.
     *
     * @return thread CPU time, unsigned ns
     */
    public long threadCpu() {
        return threadCpu;
    }

    /**
     * Whether a spin slot is available ({@code false} simulates every CPU
     * already running a spinner).
     *
     * @param free the answer of {@link #tryBeginSpin()}
     */
    public void setSpinSlotsFree(boolean free) {
        spinSlotsFree = free;
    }

    /**
     * The CPUs the simulated process may use (default {@link Integer#MAX_VALUE}:
     * no limit, never a crowd).
     *
     * @param cpus the answer of {@link #cpus()}
     * @throws IllegalArgumentException if {@code cpus} is negative
     */
    public void setCpus(int cpus) {
        if (cpus < 0) {
            throw new IllegalArgumentException("cpus must be at least 0, got " + cpus);
        }
        this.cpus = cpus;
    }

    /**
     * The sleepers of other threads that the simulation says are inside an
     * exact sleep (default 0): with this world's own sleepers inside a
     * sleep, the count {@link #enterSleep()} returns.
     *
     * @param n the other sleepers
     * @throws IllegalArgumentException if {@code n} is negative
     */
    public void setOtherSleepers(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("other sleepers must be at least 0, got " + n);
        }
        this.otherSleepers = n;
    }

    /**
     * The sleepers of this simulated world inside an exact sleep right now.
     *
     * @return how many entered and did not leave yet
     */
    public int sleepers() {
        return sleepers;
    }

    /**
     * Every OS wait so far.
     *
     * @return a copy of the record
     */
    public List<Wait> waits() {
        return List.copyOf(waits);
    }

    /** Forgets the recorded OS waits. */
    public void clearWaits() {
        waits.clear();
    }

    /**
     * Spin iterations so far.
     *
     * @return the count of {@link #relax()} calls
     */
    public long relaxes() {
        return relaxes;
    }

    /**
     * Yields so far.
     *
     * @return the count of {@link #yieldNow()} calls
     */
    public long yields() {
        return yields;
    }

    /**
     * Whether a spin slot is held right now.
     *
     * @return {@code true} between a successful {@link #tryBeginSpin()} and {@link #endSpin()}
     */
    public boolean isSpinning() {
        return spinning;
    }

    /**
     * When the spin slot was last given back: the clock and the count of
     * {@link #relax()} steps at that moment. A sleep's hand-off gives it back
     * before its last steps ({@code spec/sleep.md}, <em>Hand-off</em>).
     *
     * @return the last release, or empty before the first
     */
    public Optional<SlotRelease> spinSlotReleasedAt() {
        return Optional.ofNullable(released);
    }

    @Override
    public long nowNs() {
        return now;
    }

    @Override
    public boolean osWaitUntil(long targetNs) {
        long issued = now;
        Long after = interrupts.poll();
        if (after != null) {
            long at = U64.add(issued, after);
            if (U64.lt(at, targetNs)) {
                now = at;
                waits.add(new Wait(issued, targetNs, at, true));
                return false;
            }
        }
        threadCpu = U64.add(threadCpu, waitCost);
        Long scripted = overshoots.poll();
        long overshoot = scripted != null ? scripted : defaultOvershoot;
        long woke = U64.add(U64.max(issued, targetNs), overshoot);
        now = woke;
        waits.add(new Wait(issued, targetNs, woke, false));
        return true;
    }

    @Override
    public void relax() {
        now = U64.add(now, spinStep);
        threadCpu = U64.add(threadCpu, spinStep);
        relaxes++;
    }

    @Override
    public void yieldNow() {
        now = U64.add(now, yieldStep);
        threadCpu = U64.add(threadCpu, yieldStep);
        yields++;
    }

    @Override
    public long threadCpuNs() {
        return threadCpu;
    }

    @Override
    public boolean tryBeginSpin() {
        if (spinSlotsFree) {
            spinning = true;
        }
        return spinSlotsFree;
    }

    @Override
    public void endSpin() {
        spinning = false;
        released = new SlotRelease(now, relaxes);
    }

    /** Counts one more sleeper of this world; returns them plus the other sleepers (saturating). */
    @Override
    public int enterSleep() {
        sleepers++;
        return (int) Math.min(Integer.MAX_VALUE, (long) sleepers + otherSleepers);
    }

    @Override
    public void leaveSleep() {
        sleepers = Math.max(0, sleepers - 1);
    }

    @Override
    public int cpus() {
        return cpus;
    }

    @Override
    public void prepareThread() {}

    @Override
    public long fromNanoTime(long nanoTime) {
        return nanoTime;
    }

    @Override
    public long toNanoTime(long ns) {
        return ns;
    }

    @Override
    public String toString() {
        return "SimPlatform[now=" + Long.toUnsignedString(now) + " ns, " + waits.size() + " waits recorded]";
    }
}
