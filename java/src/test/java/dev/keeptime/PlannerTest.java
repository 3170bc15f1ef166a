package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The planner, the tail target, the stats and cost sampling on a simulated
 * clock (spec/sleep.md): exact assertions, the arithmetic in the comments.
 */
class PlannerTest {
    /**
     * A quiet host (no cpuidle driver): 1 ms waits (bucket 6) wake 3 µs late,
     * one in ten 40 µs late; short waits (bucket 2) always 3 µs late; every
     * OS wait costs 2 µs of thread CPU.
     */
    static void learnQuietHost(MarginEstimator e) {
        e.beginSleep();
        for (int i = 0; i < 100; i++) {
            e.observe(1_000_000, i % 10 == 9 ? 40_000 : 3_000);
            e.observe(50_000, 3_000);
        }
        e.observeCost(1_000_000, 2_000);
        e.observeCost(50_000, 2_000);
    }

    /**
     * A haltpoll-like host: 1000 wake-ups of 1 ms waits, 98 % 26 µs late,
     * 1.5 % 60 µs, 0.5 % 200 µs; each OS wait costs 20 µs. Short waits borrow
     * this distribution.
     */
    static void learnHaltpollHost(MarginEstimator e) {
        e.beginSleep();
        for (int i = 0; i < 1000; i++) {
            e.observe(1_000_000, i < 980 ? 26_000 : i < 995 ? 60_000 : 200_000);
        }
        e.observeCost(1_000_000, 20_000);
    }

    @Test
    void aQuietHostPlansTwoWaits() {
        MarginEstimator e = new MarginEstimator();
        learnQuietHost(e);
        // One wait: margin at 1 % = top of bin [32768, 40959] (10 of 100 samples
        // lie there, 1 may be later): 40 959 ns, expected CPU 2000 + 35 378 ns.
        // Two waits (S = 50 µs): the short wait's margin at 0.5 % is 3071 (bin
        // [2560, 3071]), the long one ends 53 071 ns early and every first wake
        // leaves room for the second: 2000 + (2000 + 511) = 4511 ns: cheaper.
        // Longer splits tie at 4511 and the earlier one is kept.
        assertEquals(new WaitPlan.Exact(946_929, true), WaitPlan.exact(e, 1_000_000, 10_000, 0));
        // A 60 µs min_spin floor makes every spin at least 60 µs: one wait then
        // costs 2000 + 54 419 ns, two waits 2000 + 2000 + 57 440 ns: one wait wins.
        assertEquals(new WaitPlan.Exact(940_000, false), WaitPlan.exact(e, 1_000_000, 10_000, 60_000));
    }

    @Test
    void aSplitPlanHalvesTheBudgetForTheRestOfTheSleep() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(3_000);
        sim.setWaitCost(2_000);
        Sleeper s = Sleeper.builder().platform(sim).build();
        learnQuietHost(s.estimator());
        assertEquals(1_000_029, s.sleepUntil(1_000_000));
        // The long wait wakes 3 µs late with 50 071 ns to go; the rest plans at
        // 0.5 %: one short wait ending the bucket-2 margin (3071 ns) early,
        // then 71 ns of spin (one 100 ns step).
        assertEquals(List.of(
                new SimPlatform.Wait(0, 946_929, 949_929, false),
                new SimPlatform.Wait(949_929, 996_929, 999_929, false)), sim.waits());
        // Stats: no late sleep, two OS waits of 2 µs each (learned), 100 ns of spin.
        assertEquals(new SleeperStats(1, 0, 2, 100, 4_100), s.stats());
    }

    @Test
    void aHaltpollHostPlansOneWaitAndAStricterTargetSpinsLonger() {
        MarginEstimator e = new MarginEstimator();
        learnHaltpollHost(e);
        // 1 %: 20 samples lie above bin [57344, 65535]'s lower edge, 10 may be
        // later: margin 65 535 ns, expected CPU 20 000 + 40 262 ns. Every
        // two-wait plan costs a second 20 µs wait and more (≥ 79 929 ns).
        assertEquals(new WaitPlan.Exact(934_465, false), WaitPlan.exact(e, 1_000_000, 10_000, 0));
        // 0.1 %: only one may be later: the 200 µs wake-ups' bin [196608, 229375] is the margin.
        assertEquals(new WaitPlan.Exact(770_625, false), WaitPlan.exact(e, 1_000_000, 1_000, 0));
        // 5 %: 50 may be later: the 26 µs bin [24576, 28671] is the margin.
        assertEquals(new WaitPlan.Exact(971_329, false), WaitPlan.exact(e, 1_000_000, 50_000, 0));
        // Sleeps shorter than the margin plus a wait's worth spin: no OS wait.
        assertNull(WaitPlan.exact(e, 60_000, 10_000, 0));
    }

    @Test
    void aStricterTargetSpinsLongerOnTheSameHost() throws InterruptedException {
        long[] spins = new long[2];
        TailTarget[] targets = {TailTarget.BALANCED, TailTarget.STRICT};
        for (int k = 0; k < 2; k++) {
            SimPlatform sim = new SimPlatform(0);
            sim.setDefaultOvershoot(26_000);
            sim.setWaitCost(20_000);
            Sleeper s = Sleeper.builder().platform(sim).tailTarget(targets[k]).build();
            learnHaltpollHost(s.estimator());
            long woke = s.sleepUntil(1_000_000);
            assertTrue(woke >= 1_000_000);
            assertEquals(1, sim.waits().size());
            spins[k] = s.stats().spinNs();
            assertEquals(new SleeperStats(1, 0, 1, spins[k], 20_000 + spins[k]), s.stats());
        }
        // Balanced: the wait ends 65 535 ns early and wakes 26 µs late: 39 535 ns
        // left, spun in 396 pause steps. Strict: ends 229 375 ns early: 203 375 ns
        // left: 500 pause steps, 134 yields while the deadline is far, 194 pause
        // steps in the last 20 µs.
        assertEquals(39_600, spins[0]);
        assertEquals(203_400, spins[1]);
    }

    @Test
    void theThreadCpuClockIsReadAroundEveryEighthPlannedWait() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(3_000);
        sim.setWaitCost(2_000);
        List<Integer> sampledAt = new ArrayList<>();
        Platform counting = new SleeperSimTest.DelegatingPlatform(sim) {
            @Override
            public long threadCpuNs() {
                sampledAt.add(sim.waits().size());
                return super.threadCpuNs();
            }
        };
        Sleeper s = Sleeper.builder().platform(counting).build();
        long t = 0;
        while (sim.waits().size() < 8) {
            t += 200_000;
            sim.advanceTo(t);
            s.sleepUntil(t + 100_000);
        }
        // Exactly 8 planned waits so far: only the first was sampled (read before and after it).
        assertEquals(8, sim.waits().size());
        assertEquals(List.of(0, 1), sampledAt);
        assertEquals(2_000, s.estimator().cost(3));
        sim.setWaitCost(10_000);
        t += 200_000;
        sim.advanceTo(t);
        s.sleepUntil(t + 100_000);
        // The 9th wait (index 8, a 96 929 ns wait of bucket 3) is sampled. Bucket 3
        // had borrowed bucket 2's cost; its first own sample becomes its cost.
        assertEquals(List.of(0, 1, 8, 9), sampledAt);
        assertEquals(96_929, sim.waits().get(8).targetNs() - sim.waits().get(8).issuedNs());
        assertEquals(10_000, s.estimator().cost(3));
        assertEquals(2_000, s.estimator().cost(2));
        // Bucket 3's waits now cost 10 µs: two bucket-2 waits (46 929 + 47 000 ns,
        // 2 µs each) are cheaper than one 96 929 ns wait, so each sleep waits twice.
        for (int i = 0; i < 4; i++) {
            t += 200_000;
            sim.advanceTo(t);
            s.sleepUntil(t + 100_000);
        }
        assertEquals(17, sim.waits().size());
        assertEquals(47_000, sim.waits().get(16).targetNs() - sim.waits().get(16).issuedNs());
        // The 17th wait (index 16, bucket 2) is sampled: bucket 2 moves a quarter of the way.
        assertEquals(List.of(0, 1, 8, 9, 16, 17), sampledAt);
        assertEquals(2_000 + (10_000 - 2_000) / 4, s.estimator().cost(2));
    }

    @Test
    void statsCountAndResetKeepsWhatWasLearned() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(3_000);
        Sleeper s = Sleeper.builder().platform(sim).build();
        assertEquals(SleeperStats.ZERO, s.stats());
        s.sleepUntil(100_000);
        s.sleepUntil(50_000); // past: not a sleep
        sim.scriptOvershoots(80_000); // the next OS wait wakes past the deadline
        s.sleepUntil(sim.now() + 100_000);
        SleeperStats st = s.stats();
        assertEquals(2, st.sleeps());
        assertEquals(1, st.late());
        assertEquals(0.5, st.lateShare());
        assertEquals(sim.waits().size(), st.osWaits());
        assertTrue(st.cpuEstimateNs() >= st.spinNs());
        int live = s.estimator().liveSamples(2) + s.estimator().liveSamples(3);
        s.resetStats();
        assertEquals(SleeperStats.ZERO, s.stats());
        assertEquals(live, s.estimator().liveSamples(2) + s.estimator().liveSamples(3), "learning is kept");
    }

    @Test
    void tailTargets() {
        assertEquals(50_000, TailTarget.RELAXED.ppm());
        assertEquals(10_000, TailTarget.BALANCED.ppm());
        assertEquals(1_000, TailTarget.STRICT.ppm());
        assertSame(TailTarget.BALANCED, TailTarget.of(0.01));
        assertEquals(2_000, TailTarget.of(0.002).ppm());
        assertEquals(1, TailTarget.of(1e-6).ppm());
        assertEquals(999_999, TailTarget.of(0.999999).ppm());
        assertEquals(0.001, TailTarget.STRICT.share());
        assertEquals("1 %", TailTarget.BALANCED.toString());
        assertEquals("0.1 %", TailTarget.STRICT.toString());
        assertEquals("0.0001 %", TailTarget.ofPpm(1).toString());
        assertSame(TailTarget.STRICT, TailTarget.parse(" Strict "));
        assertEquals(TailTarget.of(0.025), TailTarget.parse("2.5%"));
        assertEquals(TailTarget.of(0.02), TailTarget.parse("0.02"));
        assertNotEquals(TailTarget.RELAXED, TailTarget.STRICT);
        for (double bad : new double[] {Double.NaN, 0, -0.01, 1, 1.5, 9.9e-7, 0.9999996,
                Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}) {
            assertThrows(IllegalArgumentException.class, () -> TailTarget.of(bad), "share " + bad);
            assertThrows(IllegalArgumentException.class, () -> Sleeper.builder().tailTarget(bad), "share " + bad);
        }
        assertThrows(IllegalArgumentException.class, () -> TailTarget.ofPpm(0));
        assertThrows(IllegalArgumentException.class, () -> TailTarget.ofPpm(1_000_000));
        assertThrows(IllegalArgumentException.class, () -> TailTarget.parse("tight"));
        assertThrows(IllegalArgumentException.class, () -> TailTarget.parse("150%"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TailTarget.of(Double.NaN));
        assertTrue(e.getMessage().contains("NaN"), e.getMessage());
        assertEquals(TailTarget.BALANCED, Sleeper.builder().platform(new SimPlatform(0)).build().tailTarget());
        Sleeper s = Sleeper.builder().platform(new SimPlatform(0)).tailTarget(0.05).build();
        assertSame(TailTarget.RELAXED, s.tailTarget());
        s.setTailTarget(TailTarget.STRICT);
        assertSame(TailTarget.STRICT, s.tailTarget());
        assertThrows(NullPointerException.class, () -> s.setTailTarget(null));
    }
}
