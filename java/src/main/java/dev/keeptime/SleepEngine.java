package dev.keeptime;

import static dev.keeptime.Sleeper.CROWD_PAUSE_NS;
import static dev.keeptime.Sleeper.HANDOFF_NS;
import static dev.keeptime.Sleeper.INTERRUPT_POLL_NS;
import static dev.keeptime.Sleeper.MIN_OS_WAIT_NS;
import static dev.keeptime.Sleeper.SPIN_NEAR_NS;
import static dev.keeptime.Sleeper.SPIN_YIELD_AFTER_NS;
import static dev.keeptime.Sleeper.crowdSpinCap;
import static dev.keeptime.Sleeper.explores;

/**
 * How a {@link Sleeper}'s sleeps run ({@code spec/sleep.md}): the mode
 * switch, the planned sleep and the crowd's, the OS waits that teach the
 * estimator, and the final spin up to the hand-off, counting what it all
 * costs in the sleeper's {@link SleepTally}. The sleeper holds the settings
 * and passes them to {@link #run}; the plans come from {@link WaitPlan}.
 */
final class SleepEngine {
    final Platform platform;
    final MarginEstimator estimator;
    final SleepTally tally = new SleepTally();
    /** Planned OS waits over the sleeper's life (unsigned; every 8th is cost-sampled). */
    private long waitsPlanned;
    /**
     * Where the last sleep handed off: the deadline its outermost call still
     * spins to, or 0 when nothing is left (unsigned platform ns; set by
     * {@link #run}, read by the sleeper before its caller's final spin).
     */
    long handoffUntil;

    /** An engine whose sleeps plan on {@code estimator} (fresh, or a profile's). */
    SleepEngine(Platform platform, MarginEstimator estimator) {
        this.platform = platform;
        this.estimator = estimator;
    }

    static void checkInterrupt() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("sleep interrupted");
        }
    }

    /**
     * A sleep to {@code deadline} (platform ns) up to its hand-off, with the
     * sleeper's settings of the moment: returns the last clock reading, with
     * {@link #handoffUntil} the deadline still to spin to (0: nothing).
     */
    long run(long deadline, Mode mode, TailTarget target, long minSpinNs) throws InterruptedException {
        handoffUntil = 0;
        long now = platform.nowNs();
        if (U64.ge(now, deadline)) {
            return now;
        }
        platform.prepareThread();
        estimator.beginSleep();
        tally.sleeps++;
        switch (mode) {
            case SPIN: // the caller asked for a core: no slot, not counted in a crowd
                return spin(deadline, now, SPIN_YIELD_AFTER_NS, SPIN_NEAR_NS);
            case EFFICIENT: {
                long wait = WaitPlan.efficient(estimator, deadline - now);
                return wait == WaitPlan.NONE ? now : osWaitPlanned(now, wait);
            }
            case EXACT:
            default: {
                int n = platform.enterSleep();
                try {
                    int cpus = platform.cpus();
                    return n > cpus ? crowdSleep(deadline, now, n, cpus, target, minSpinNs)
                            : plannedSleep(deadline, now, target, minSpinNs);
                } finally {
                    platform.leaveSleep(); // on every way out, an interruption included
                }
            }
        }
    }

    /**
     * An exact sleep with a CPU to itself: the cheapest plan that meets the
     * tail target ({@code spec/sleep.md}, <em>planned_sleep</em>).
     */
    private long plannedSleep(long deadline, long now, TailTarget target, long minSpinNs) throws InterruptedException {
        long budget = target.ppm();
        boolean unproven = false;
        WaitPlan.Step step = new WaitPlan.Step(true, explores(estimator.sleeps()), false);
        while (true) {
            WaitPlan.Exact plan = WaitPlan.exact(estimator, deadline - now, budget, minSpinNs, step);
            step = new WaitPlan.Step(false, false, step.afterSplit());
            if (plan == null) {
                return finish(deadline, now, U64.max(SPIN_YIELD_AFTER_NS, minSpinNs), SPIN_NEAR_NS);
            }
            if (!plan.proven() && !unproven) { // counted once per sleep
                unproven = true;
                tally.unprovenSleeps = U64.add(tally.unprovenSleeps, 1);
            }
            now = osWaitPlanned(now, plan.waitNs());
            if (U64.ge(now, deadline)) { // overslept: nothing left to do
                if (now != deadline) {
                    tally.late++;
                }
                return now;
            }
            budget = plan.restBudgetPpm();
            if (plan.split()) {
                step = new WaitPlan.Step(false, false, true);
            }
        }
    }

    /**
     * An exact sleep in a crowd of {@code n} sleepers on {@code cpus} CPUs:
     * one OS wait ending the learned margin before the deadline, the margin
     * capped by {@link Sleeper#crowdSpinCap} (but never below {@code minSpin}), then
     * a spin that pauses only in the last {@link Sleeper#CROWD_PAUSE_NS}
     * ({@code spec/sleep.md}, <em>Crowds</em>). No two-wait plans, no
     * exploration; wake-ups are learned as always.
     */
    private long crowdSleep(long deadline, long now, int n, int cpus, TailTarget target, long minSpinNs) throws InterruptedException {
        long length = deadline - now;
        long cap = crowdSpinCap(cpus, n, length, estimator.cost(MarginEstimator.bucketOf(length)));
        long budget = target.ppm();
        while (true) {
            long rest = deadline - now;
            long g = U64.max(U64.min(estimator.margin(MarginEstimator.bucketOf(rest), budget), cap), minSpinNs);
            if (U64.lt(g, rest) && U64.ge(rest - g, MIN_OS_WAIT_NS)) {
                now = osWaitPlanned(now, rest - g);
                if (U64.ge(now, deadline)) { // woke after the capped margin: late by the difference
                    if (now != deadline) {
                        tally.late++;
                    }
                    return now;
                }
            } else {
                return finish(deadline, now, minSpinNs, CROWD_PAUSE_NS);
            }
        }
    }

    /**
     * One planned OS wait of {@code wait} ns from {@code now}: records its
     * overshoot, and its thread CPU on every {@link MarginEstimator#COST_SAMPLE_EVERY}th wait.
     */
    private long osWaitPlanned(long now, long wait) throws InterruptedException {
        long target = U64.add(now, wait);
        boolean sample = Long.remainderUnsigned(waitsPlanned, MarginEstimator.COST_SAMPLE_EVERY) == 0;
        waitsPlanned++;
        long cpu0 = sample ? platform.threadCpuNs() : -1;
        waitThroughInterrupts(target);
        long woke = platform.nowNs();
        if (cpu0 != -1) {
            long cpu1 = platform.threadCpuNs();
            if (cpu1 != -1) {
                estimator.observeCost(wait, U64.sub(cpu1, cpu0));
            }
        }
        tally.countOsWait(estimator.cost(MarginEstimator.bucketOf(wait)));
        estimator.observe(wait, U64.sub(woke, target));
        return woke;
    }

    /** The spec's os_wait: the same absolute target after every interrupted wait. */
    private void waitThroughInterrupts(long target) throws InterruptedException {
        while (!platform.osWaitUntil(target)) {
            checkInterrupt();
        }
    }

    /**
     * The last phase of an exact sleep, a spin: with a process-wide spin slot
     * it pauses ({@link #spin}); without one it <em>follows</em> ({@link #follow}):
     * a yield per iteration, never late by an OS wake-up and never holding a
     * CPU that a woken thread needs.
     */
    private long finish(long deadline, long now, long pauseFor, long near) throws InterruptedException {
        if (platform.tryBeginSpin()) {
            try {
                return spin(deadline, now, pauseFor, near);
            } finally {
                platform.endSpin();
            }
        }
        return follow(deadline, now);
    }

    /**
     * A spin without a spin slot: {@link Thread#yield()} on every iteration
     * until {@code deadline}, the interrupt status checked every
     * {@link Sleeper#INTERRUPT_POLL_NS}.
     */
    private long follow(long deadline, long start) throws InterruptedException {
        return spin(deadline, start, 0, 0); // no pause at all: a yield per iteration
    }

    /**
     * Spins until {@code deadline}: the pause hint for {@code pauseFor} (the
     * planned length of the spin) and always within {@code near} of the
     * deadline ({@link Sleeper#SPIN_NEAR_NS}; {@link Sleeper#CROWD_PAUSE_NS} in a crowd); a
     * yield per iteration in between, with the interrupt status checked every
     * {@link Sleeper#INTERRUPT_POLL_NS}. A spin that pauses near the deadline
     * ({@code near >= }{@link Sleeper#HANDOFF_NS}) hands off its last
     * {@link Sleeper#HANDOFF_NS} to the outermost call ({@link #handoffUntil}),
     * counted as spin time to the deadline; one that yields to the end (a
     * follower) spins to the deadline here.
     */
    private long spin(long deadline, long start, long pauseFor, long near) throws InterruptedException {
        long now = start;
        long nextPoll = U64.add(U64.add(start, pauseFor), INTERRUPT_POLL_NS);
        long handoffAt = U64.ge(near, HANDOFF_NS) ? U64.sub(deadline, HANDOFF_NS) : deadline;
        while (U64.lt(now, handoffAt)) {
            if (U64.lt(now - start, pauseFor) || U64.ge(near, deadline - now)) {
                platform.relax();
            } else {
                platform.yieldNow();
                if (U64.ge(now, nextPoll)) {
                    if (Thread.interrupted()) {
                        tally.addSpin(now - start);
                        throw new InterruptedException("sleep interrupted");
                    }
                    nextPoll = U64.add(now, INTERRUPT_POLL_NS);
                }
            }
            now = platform.nowNs();
        }
        if (U64.lt(now, deadline)) {
            tally.addSpin(deadline - start);
            handoffUntil = deadline;
            return now;
        }
        tally.addSpin(now - start);
        return now;
    }
}
