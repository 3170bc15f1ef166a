package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The sleep algorithm on a simulated clock: no real time, exact assertions. */
class SleeperSimTest {
    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    static Sleeper sleeper(SimPlatform sim, Mode mode) {
        return Sleeper.builder().mode(mode).platform(sim).build();
    }

    @Test
    void freshSleeperWaitsTwiceThenSpins() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(4_000);
        sim.setWaitCost(2_500);
        Sleeper s = sleeper(sim, Mode.EXACT);
        assertEquals(100_058, s.sleepUntil(100_000));
        // Nothing learned: the 50 µs default margin gives a 50 µs OS wait (bucket 2).
        // Its 4 µs overshoot lands in bin [3584, 4095]: one sample is a young
        // view at 1 %, so the margin is its upper edge, 4095 ns, plus half of it
        // as a young view's headroom: 6 142 ns. A 39 858 ns wait follows (cost
        // 2.5 µs + 2 558 ns of expected spin, far below a 46 µs pure spin); it
        // wakes 2 142 ns before the deadline, which 22 relax steps of 100 ns cover.
        assertEquals(List.of(
                new SimPlatform.Wait(0, 50_000, 54_000, false),
                new SimPlatform.Wait(54_000, 93_858, 97_858, false)), sim.waits());
        assertEquals(22, sim.relaxes());
        assertFalse(sim.isSpinning());
        // Two samples of 4 µs in bucket 2, still young at 1 %: 4 095 + 2 047 ns.
        assertEquals(6_142, s.estimator().margin(2, 10_000));
        // The first OS wait was cost-sampled (2.5 µs); both count that cost.
        assertEquals(2_500, s.estimator().cost(2));
        // The spin is counted to the deadline (2 142 ns): the stats are final
        // at the hand-off, before the step that passes it. Both waits rest on
        // margins no sample established (the default, then one sample): the
        // sleep is counted unproven, once.
        assertEquals(new SleeperStats(1, 0, 2, 2_142, 2 * 2_500 + 2_142, 1), s.stats());
    }

    /** The first reading of a spin in {@code step} ns steps from {@code start} that is at or past {@code t}. */
    static long firstStepAtOrPast(long start, long step, long t) {
        return start + (Math.max(t - start, 0) + step - 1) / step * step;
    }

    @Test
    void aSpinFinishedSleepHandsOffItsLastMicrosecondsWithTheBookkeepingDone() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setWaitCost(1_000);
        AtomicReference<Sleeper> sleeper = new AtomicReference<>();
        List<String> duringTheLastSteps = new ArrayList<>();
        Platform watching = new DelegatingPlatform(sim) {
            @Override
            public void relax() {
                // What a step sees before it moves the clock: the slot, the
                // crowd count and the stats, while the step runs.
                duringTheLastSteps.add(sim.isSpinning() + " " + sim.sleepers() + " " + sleeper.get().stats().spinNs());
                super.relax();
            }
        };
        Sleeper s = Sleeper.builder().platform(watching).build();
        sleeper.set(s);
        sim.scriptOvershoots(10_000, 2_000);
        long deadline = 1_000_000;
        long woke = s.sleepUntil(deadline);
        // The spin starts where the last OS wait woke, in 100 ns steps.
        List<SimPlatform.Wait> waits = sim.waits();
        long start = waits.get(waits.size() - 1).wokeNs();
        assertTrue(start < deadline - Sleeper.HANDOFF_NS, "the plan leaves a spin");
        assertEquals(firstStepAtOrPast(start, 100, deadline), woke);
        // The slot went back (and the stats were final) at the first step
        // within HANDOFF_NS of the deadline: the last steps ran in the
        // outermost call.
        long handoff = firstStepAtOrPast(start, 100, deadline - Sleeper.HANDOFF_NS);
        SimPlatform.SlotRelease released = sim.spinSlotReleasedAt().orElseThrow();
        assertEquals(handoff, released.atNs());
        long lastSteps = (woke - handoff) / 100;
        assertEquals(lastSteps, sim.relaxes() - released.relaxes());
        assertFalse(sim.isSpinning());
        assertEquals(0, sim.sleepers());
        SleeperStats st = s.stats();
        assertEquals(deadline - start, st.spinNs()); // counted to the deadline
        assertEquals(0, st.late());
        // Every one of those steps ran without the slot, outside the crowd
        // count, with the stats already final.
        int n = duringTheLastSteps.size();
        assertEquals(sim.relaxes(), n);
        assertEquals(Collections.nCopies((int) lastSteps, "false 0 " + (deadline - start)),
                duringTheLastSteps.subList(n - (int) lastSteps, n));
        assertEquals("true 1 0", duringTheLastSteps.get(n - (int) lastSteps - 1), "the step before the hand-off");
    }

    @Test
    void aSleepThatWakesWithinTheHandOffOrLateLeavesNothingBehind() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Sleeper s = sleeper(sim, Mode.EXACT);
        // The first sleep knows nothing: one OS wait to 50 µs before the
        // deadline. Woke 47 µs late, 3 µs remain, less than HANDOFF_NS: the
        // slot goes back at once and the outermost call spins all 30 steps.
        sim.scriptOvershoots(47_000);
        assertEquals(1_000_000, s.sleepUntil(1_000_000));
        assertEquals(1, sim.waits().size());
        assertEquals(Optional.of(new SimPlatform.SlotRelease(997_000, 0)), sim.spinSlotReleasedAt());
        assertEquals(30, sim.relaxes());
        assertEquals(3_000, s.stats().spinNs());
        // An OS wait that wakes past the deadline: no spin, no slot, late.
        sim.clearWaits();
        sim.setDefaultOvershoot(900_000);
        long d = sim.now() + 1_000_000;
        long woke = s.sleepUntil(d);
        assertEquals(sim.waits().get(0).wokeNs(), woke);
        assertTrue(Long.compareUnsigned(woke, d) > 0);
        assertEquals(30, sim.relaxes());
        assertEquals(1, s.stats().late());
        assertEquals(0, sim.sleepers());
    }

    /** Every public way in hands off the same: the same steps, the same reading, the same stats. */
    @Test
    void everyEntryPointSpinsTheLastStretchAlike() throws InterruptedException {
        List<Long> ends = new ArrayList<>();
        List<SleeperStats> stats = new ArrayList<>();
        for (int way = 0; way < 3; way++) {
            SimPlatform sim = new SimPlatform(0);
            sim.setWaitCost(1_000);
            sim.scriptOvershoots(47_000);
            Sleeper s = sleeper(sim, Mode.EXACT);
            switch (way) {
                case 0:
                    s.sleepUntil(1_000_000);
                    break;
                case 1:
                    s.sleepNanos(1_000_000);
                    break;
                default:
                    s.sleep(Duration.ofMillis(1));
                    break;
            }
            assertEquals(30, sim.relaxes(), "way " + way);
            ends.add(sim.now());
            stats.add(s.stats());
        }
        assertEquals(List.of(1_000_000L, 1_000_000L, 1_000_000L), ends);
        assertEquals(List.of(stats.get(0), stats.get(0), stats.get(0)), stats);
        // One wait at the default margin (nothing learned): unproven.
        assertEquals(new SleeperStats(1, 0, 1, 3_000, 1_000 + 3_000, 1), stats.get(0));
    }

    @Test
    void pastAndPresentDeadlinesReturnAtOnce() throws InterruptedException {
        SimPlatform sim = new SimPlatform(1_000_000);
        Sleeper s = sleeper(sim, Mode.EXACT);
        assertEquals(1_000_000, s.sleepUntil(999_000));
        assertEquals(1_000_000, s.sleepUntil(1_000_000));
        assertEquals(1_000_000, s.sleepUntil(0));
        assertTrue(sim.waits().isEmpty());
        assertEquals(0, s.estimator().sleeps(), "a sleep that does not wait does not age samples");
    }

    @Test
    void negativeDurationReturnsAtOnceEvenWhenInterrupted() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Sleeper s = sleeper(sim, Mode.EXACT);
        Thread.currentThread().interrupt();
        s.sleep(Duration.ofNanos(-1)); // like Thread.sleep(Duration): a no-op
        s.sleepNanos(-5);
        assertTrue(Thread.interrupted(), "the interrupt status is left alone");
        assertEquals(0, sim.now());
    }

    @Test
    void interruptedBeforeTheSleepThrowsAndClearsTheStatus() {
        SimPlatform sim = new SimPlatform(0);
        Sleeper s = sleeper(sim, Mode.EXACT);
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> s.sleep(Duration.ofMillis(1)));
        assertFalse(Thread.currentThread().isInterrupted());
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> s.sleep(Duration.ZERO), "like Thread.sleep(0)");
        assertFalse(Thread.currentThread().isInterrupted());
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> s.sleepUntil(0), "a past deadline checks too");
        assertEquals(0, sim.now(), "nothing waited");
    }

    @Test
    void aWaitInterruptedWithTheStatusSetThrows() {
        SimPlatform sim = new SimPlatform(0);
        // The OS wait reports an interruption, and the thread's status is set: throw.
        Platform interrupting = new DelegatingPlatform(sim) {
            @Override
            public boolean osWaitUntil(long targetNs) {
                boolean done = super.osWaitUntil(targetNs);
                if (!done) {
                    Thread.currentThread().interrupt();
                }
                return done;
            }
        };
        sim.scriptInterrupts(30_000);
        Sleeper s = Sleeper.builder().platform(interrupting).build();
        assertThrows(InterruptedException.class, () -> s.sleepUntil(1_000_000));
        assertFalse(Thread.currentThread().isInterrupted());
        assertEquals(30_000, sim.now());
        assertEquals(1, sim.waits().size());
    }

    @Test
    void aWaitInterruptedWithoutTheStatusResumesTowardTheSameTarget() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(3_000);
        sim.scriptInterrupts(10_000, 10_000);
        Sleeper s = sleeper(sim, Mode.EXACT);
        // The second completed wait ends the learned margin early: 3 µs's bin
        // top, 3 071 ns, plus half of it as a young view's headroom, 4 606 ns;
        // it wakes 1 606 ns before the deadline: 17 relax steps of 100 ns.
        assertEquals(100_094, s.sleepUntil(100_000));
        List<SimPlatform.Wait> w = sim.waits();
        assertEquals(new SimPlatform.Wait(0, 50_000, 10_000, true), w.get(0));
        assertEquals(new SimPlatform.Wait(10_000, 50_000, 20_000, true), w.get(1));
        assertEquals(new SimPlatform.Wait(20_000, 50_000, 53_000, false), w.get(2));
        // margin: bin [2816, 3071]'s top plus a young view's headroom, 4 606 ns
        assertEquals(new SimPlatform.Wait(53_000, 95_394, 98_394, false), w.get(3));
        assertEquals(4, w.size());
        assertEquals(2, s.estimator().liveSamples(2), "two completed waits; interrupted ones record nothing");
    }

    @Test
    void hugeDurationsSaturate() throws InterruptedException {
        SimPlatform sim = new SimPlatform(5);
        sim.setDefaultOvershoot(1);
        Sleeper s = sleeper(sim, Mode.EXACT);
        s.sleep(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999));
        assertEquals(U64.MAX, sim.now(), "slept until 2^64 - 1 ns, never wrapped");
        SimPlatform sim2 = new SimPlatform(7);
        sleeper(sim2, Mode.EXACT).sleepNanos(Long.MAX_VALUE);
        assertTrue(U64.ge(sim2.now(), 7 + Long.MAX_VALUE));
    }

    @Test
    void efficientModeMayReturnEarlyExactNever() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(56_000);
        Sleeper eff = sleeper(sim, Mode.EFFICIENT);
        boolean early = false;
        for (int i = 0; i < 10; i++) {
            long deadline = sim.now() + 300_000;
            long woke = eff.sleepUntil(deadline);
            early |= U64.lt(woke, deadline);
            assertTrue(sim.relaxes() == 0, "efficient never spins");
        }
        // The compensation is the middle of the median's bin [53248, 57343]: 55 295 ns.
        long deadline = sim.now() + 300_000;
        assertEquals(deadline + 56_000 - 55_295, eff.sleepUntil(deadline));
        assertFalse(early, "a constant overshoot above its bin's middle never ends early");
        sim.scriptOvershoots(40_000);
        deadline = sim.now() + 300_000;
        assertEquals(deadline + 40_000 - 55_295, eff.sleepUntil(deadline), "a shorter wake-up ends early, by design");
        assertEquals(0, eff.stats().late(), "efficient sleeps are never counted late");
        assertEquals(0, eff.stats().spinNs());
    }

    @Test
    void spinModeSpinsThenYields() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Sleeper s = sleeper(sim, Mode.SPIN);
        assertEquals(100_000, s.sleepUntil(100_000));
        assertTrue(sim.waits().isEmpty());
        assertEquals(500 + 200, sim.relaxes()); // 50 µs of 100 ns relax steps, and the last 20 µs
        assertEquals(30, sim.yields());         // 1 µs yields in between
        assertEquals(new SleeperStats(1, 0, 0, 100_000, 100_000, 0), s.stats());
    }

    @Test
    void aLongSpinPausesNearTheDeadline() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Sleeper s = sleeper(sim, Mode.SPIN);
        assertEquals(200_000, s.sleepUntil(200_000));
        // 0–50 µs pause (planned), 50–180 µs yield (the deadline is far), the
        // last SPIN_NEAR_NS = 20 µs pause again: polled at the clock's own speed.
        assertEquals(500 + 200, sim.relaxes());
        assertEquals(130, sim.yields());
    }

    @Test
    void withoutASpinSlotTheSleepFollowsWithAYieldPerIteration() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(3_000);
        sim.setSpinSlotsFree(false);
        Sleeper s = sleeper(sim, Mode.EXACT);
        long woke = s.sleepUntil(500_000);
        // Nothing learned yet: an OS wait ending DEFAULT_MARGIN_NS early, woken
        // 3 µs late; then one ending the learned margin (the upper edge of the
        // 3 µs sample's bin, 3 071 ns, plus half of it: one sample is a young
        // view, 4 606 ns) early, woken 1 606 ns before the deadline; then,
        // with no slot, two yields of 1 µs (the simulated yield step) and no
        // pause. No wait to the deadline.
        assertEquals(50_000, MarginEstimator.DEFAULT_MARGIN_NS);
        long m = MarginEstimator.binHi(MarginEstimator.binOf(3_000)) * 3 / 2;
        assertEquals(4_606, m);
        assertEquals(List.of(450_000L, 500_000 - m), sim.waits().stream().map(SimPlatform.Wait::targetNs).toList());
        assertEquals(500_000 - m + 3_000 + 2_000, woke);
        assertEquals(0, sim.relaxes());
        assertEquals(2, sim.yields());
        assertEquals(0, s.stats().late());
        assertEquals(2_000, s.stats().spinNs());
        assertFalse(sim.isSpinning());
    }

    @Test
    void nullsAreRejectedWithAMessage() {
        Sleeper s = sleeper(new SimPlatform(0), Mode.EXACT);
        NullPointerException e = assertThrows(NullPointerException.class, () -> s.sleep(null));
        assertEquals("duration", e.getMessage());
        assertEquals("mode", assertThrows(NullPointerException.class, () -> Sleeper.of(null)).getMessage());
        assertEquals("mode", assertThrows(NullPointerException.class, () -> s.setMode(null)).getMessage());
        assertEquals("platform", assertThrows(NullPointerException.class,
                () -> Sleeper.builder().platform(null)).getMessage());
        assertEquals("duration", assertThrows(NullPointerException.class, () -> KeepTime.sleep(null)).getMessage());
    }

    @Test
    void modeNames() {
        for (Mode m : Mode.values()) {
            assertEquals(m, Mode.fromSpecName(m.specName().toUpperCase(java.util.Locale.ROOT)));
        }
        assertThrows(IllegalArgumentException.class, () -> Mode.fromSpecName("fast"));
    }

    /** A platform that forwards everything, for tests that intercept one call. */
    static class DelegatingPlatform implements Platform {
        private final Platform p;

        DelegatingPlatform(Platform p) {
            this.p = p;
        }

        @Override
        public long nowNs() {
            return p.nowNs();
        }

        @Override
        public boolean osWaitUntil(long targetNs) {
            return p.osWaitUntil(targetNs);
        }

        @Override
        public void relax() {
            p.relax();
        }

        @Override
        public void yieldNow() {
            p.yieldNow();
        }

        @Override
        public boolean tryBeginSpin() {
            return p.tryBeginSpin();
        }

        @Override
        public void endSpin() {
            p.endSpin();
        }

        @Override
        public int enterSleep() {
            return p.enterSleep();
        }

        @Override
        public void leaveSleep() {
            p.leaveSleep();
        }

        @Override
        public int cpus() {
            return p.cpus();
        }

        @Override
        public void prepareThread() {
            p.prepareThread();
        }

        @Override
        public long threadCpuNs() {
            return p.threadCpuNs();
        }

        @Override
        public long fromNanoTime(long nanoTime) {
            return p.fromNanoTime(nanoTime);
        }

        @Override
        public long toNanoTime(long ns) {
            return p.toNanoTime(ns);
        }
    }
}
