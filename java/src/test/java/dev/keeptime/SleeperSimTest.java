package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
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
        Sleeper s = sleeper(sim, Mode.EXACT);
        assertEquals(100_000, s.sleepUntil(100_000));
        // Nothing learned: the 50 µs default margin gives a 50 µs OS wait (bucket 2);
        // its 4 µs overshoot (no spread yet) gives bucket 2 a margin of 4 + 2·0 + 1
        // = 5 µs: a 41 µs wait; the last 1 µs is below every gap: spun in 100 ns steps.
        assertEquals(List.of(
                new SimPlatform.Wait(0, 50_000, 54_000, false),
                new SimPlatform.Wait(54_000, 95_000, 99_000, false)), sim.waits());
        assertEquals(10, sim.relaxes());
        assertFalse(sim.isSpinning());
        assertEquals(5_000, s.estimator().margin(2));
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
        assertEquals(100_000, s.sleepUntil(100_000));
        List<SimPlatform.Wait> w = sim.waits();
        assertEquals(new SimPlatform.Wait(0, 50_000, 10_000, true), w.get(0));
        assertEquals(new SimPlatform.Wait(10_000, 50_000, 20_000, true), w.get(1));
        assertEquals(new SimPlatform.Wait(20_000, 50_000, 53_000, false), w.get(2));
        assertEquals(new SimPlatform.Wait(53_000, 96_000, 99_000, false), w.get(3)); // margin 3 + 2·0 + 1 µs
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
        sim.setDefaultOvershoot(55_000);
        Sleeper eff = sleeper(sim, Mode.EFFICIENT);
        boolean early = false;
        for (int i = 0; i < 10; i++) {
            long deadline = sim.now() + 300_000;
            long woke = eff.sleepUntil(deadline);
            early |= U64.lt(woke, deadline);
            assertTrue(sim.relaxes() == 0, "efficient never spins");
        }
        // Overshoot is always exactly the median: after learning, it lands on the deadline.
        long deadline = sim.now() + 300_000;
        assertEquals(deadline, eff.sleepUntil(deadline));
        assertFalse(early, "a constant overshoot is compensated exactly");
        sim.scriptOvershoots(40_000);
        deadline = sim.now() + 300_000;
        assertEquals(deadline - 15_000, eff.sleepUntil(deadline), "a shorter wake-up ends early, by design");
    }

    @Test
    void spinModeSpinsThenYields() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Sleeper s = sleeper(sim, Mode.SPIN);
        assertEquals(100_000, s.sleepUntil(100_000));
        assertTrue(sim.waits().isEmpty());
        assertEquals(500, sim.relaxes()); // 50 µs of 100 ns relax steps
        assertEquals(50, sim.yields());   // then 1 µs yields
    }

    @Test
    void withoutASpinSlotTheLastPhaseIsAnOsWaitToTheDeadline() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(4_000);
        sim.setSpinSlotsFree(false);
        Sleeper s = sleeper(sim, Mode.EXACT);
        assertEquals(104_000, s.sleepUntil(100_000));
        List<SimPlatform.Wait> w = sim.waits();
        assertEquals(new SimPlatform.Wait(99_000, 100_000, 104_000, false), w.get(w.size() - 1));
        assertEquals(0, sim.relaxes());
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
        public void prepareThread() {
            p.prepareThread();
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
