package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
     * A quiet host (no cpuidle driver): 100 waits of 1 ms (bucket 6) woke 3 µs
     * late (bin [2816, 3071]), one in ten 40 µs late (bin [36864, 40959]);
     * {@code shortWaits} waits of 50 µs (bucket 2) always 3 µs late; every OS
     * wait costs 2 µs of thread CPU. Bucket 2 is established at 0.5 % (half
     * the default target) from 199 samples on ((199 + 1) · 0.5 % ≥ 1).
     */
    static void learnQuietHost(MarginEstimator e, int shortWaits) {
        e.beginSleep();
        for (int i = 0; i < 100; i++) {
            e.observe(1_000_000, i % 10 == 9 ? 40_000 : 3_000);
        }
        for (int i = 0; i < shortWaits; i++) {
            e.observe(50_000, 3_000);
        }
        e.observeCost(1_000_000, 2_000);
        e.observeCost(50_000, 2_000);
    }

    static void learnQuietHost(MarginEstimator e) {
        learnQuietHost(e, 200);
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

    /** A sleep's first plan, not exploring. */
    static final WaitPlan.Step FIRST = new WaitPlan.Step(true, false, false);

    static WaitPlan.Exact plan(MarginEstimator e, long r, long budgetPpm, long minSpin) {
        return WaitPlan.exact(e, r, budgetPpm, minSpin, FIRST);
    }

    @Test
    void aQuietHostPlansTwoWaits() {
        MarginEstimator e = new MarginEstimator();
        learnQuietHost(e);
        // One wait: margin at 1 % = top of bin [36864, 40959] (floor(101 · 1 %)
        // = 1: the largest sample's bin): 40 959 ns, expected CPU 2000 + (90 ·
        // 38 143 + 10 · 4095) / 100 = 2000 + 34 738 ns.
        // Two waits (S = 50 µs): the short wait's margin at 0.5 % is 3071 (bin
        // [2816, 3071]; 200 samples are enough at 0.5 %), the long one ends
        // 53 071 ns early and every first wake leaves room for the second: 2000
        // + (2000 + 255) = 4255 ns: cheaper. Longer splits tie at 4255 and the
        // earlier one is kept. The rest of the sleep plans at half the budget.
        // Both margins are established at their shares: proven.
        assertEquals(new WaitPlan.Exact(946_929, true, 5_000, true), plan(e, 1_000_000, 10_000, 0));
        // A 60 µs min_spin floor makes every spin at least 60 µs: one wait then
        // costs 2000 + 53 779 ns, two waits 2000 + 2000 + 57 184 ns: one wait wins.
        assertEquals(new WaitPlan.Exact(940_000, false, 10_000, true), plan(e, 1_000_000, 10_000, 60_000));
        // After a split's first wait no second split is planned: 50 071 ns to
        // go at 0.5 %: one short wait ending 3071 ns early (2255 ns < spinning).
        WaitPlan.Step afterSplit = new WaitPlan.Step(false, false, true);
        assertEquals(new WaitPlan.Exact(47_000, false, 5_000, true), WaitPlan.exact(e, 50_071, 5_000, 0, afterSplit));
        // With 1 ms to go after a split, a split would be valid but is not
        // considered: one wait ending 61 438 ns early, the top sample's bin's
        // top, 40 959 ns, plus half of it as a young view's headroom;
        // unproven: bucket 6's 100 samples are too few at 0.5 % (101 · 0.5 % <
        // 1), and a bucket that long does not pool.
        assertEquals(new WaitPlan.Exact(938_562, false, 5_000, false),
                WaitPlan.exact(e, 1_000_000, 5_000, 0, afterSplit));
    }

    @Test
    void aYoungShortBucketIsExploredNotTrusted() {
        MarginEstimator e = new MarginEstimator();
        learnQuietHost(e, 40);
        // 40 short samples are too few at 0.5 % (41 · 0.5 % < 1), fewer than
        // half the 199 it needs (41 · 1 % < 1), and bucket 2 has no live
        // neighbour to pool with: it is not established, so its margin is at
        // least bucket 6's at 0.5 %, 40 959 ns (its top sample's bin). Two waits then cost 2000 + 2000 + 38 143 ns, more than one wait
        // (2000 + 34 738): one wait.
        assertFalse(e.established(2, 5_000));
        assertEquals(40_959, e.margin(2, 5_000));
        assertEquals(new WaitPlan.Exact(959_041, false, 10_000, true), plan(e, 1_000_000, 10_000, 0));
        // Exploring, the first plan takes the valid two-wait plan whose short
        // bucket is not established, costs at most R / 16 more than the one
        // wait (42 143 ≤ 36 738 + 62 500 ns) and has the most samples standing
        // for it: every S's short bucket (2…5) is answered by bucket 2's 40
        // young samples, a tie kept by the first: S = 50 µs, with the same
        // conservative margin: the long wait ends 50 000 + 40 959 ns early.
        // Unproven: the short bucket is not established.
        WaitPlan.Step explore = new WaitPlan.Step(true, true, false);
        assertEquals(new WaitPlan.Exact(909_041, true, 5_000, false),
                WaitPlan.exact(e, 1_000_000, 10_000, 0, explore));
        // Once bucket 2 is established nothing is explored: the cheapest plan.
        for (int i = 0; i < 160; i++) {
            e.observe(50_000, 3_000);
        }
        assertTrue(e.established(2, 5_000));
        assertEquals(new WaitPlan.Exact(946_929, true, 5_000, true),
                WaitPlan.exact(e, 1_000_000, 10_000, 0, explore));
    }

    /**
     * Only a wait cut short to its bucket's longest fits: 1 ms waits (bucket
     * 6) wake 900 µs late one time in five, 300 µs waits (bucket 5) 3 µs late
     * (100 samples each, established at 1 %); an OS wait costs 100 µs.
     */
    static void learnChunkHost(MarginEstimator e) {
        e.beginSleep();
        for (int i = 0; i < 100; i++) {
            e.observe(1_000_000, i % 5 == 4 ? 900_000 : 3_000);
            e.observe(300_000, 3_000);
        }
        e.observeCost(300_000, 100_000);
    }

    @Test
    void aCutShortWaitIsAFirstPlanFallbackOnly() {
        MarginEstimator e = new MarginEstimator();
        learnChunkHost(e);
        // Bucket 6's margin at 1 % is the 900 µs bin's top, 917 503 ns (the
        // largest sample's bin: floor(101 · 1 %) = 1): a 1 ms
        // wait would be 82 497 ns, below bucket 6. Bucket 5's own margin is
        // 3071 ns, allowing 996 929 ns, beyond bucket 5: only its longest,
        // 524 287 ns, fits (a chunk, cost(5) = 100 µs). The one two-wait plan
        // that fits (S = 50 µs: the short bucket borrows bucket 5, too young
        // at 0.5 % and with no live neighbour, and takes bucket 6's 917 503 ns)
        // costs 100 000 + 100 000 + 914 687 ns, more than spinning 1 ms. No
        // complete plan: the chunk, as it costs less than the spin (proven:
        // bucket 5 is established at 1 %).
        assertEquals(new WaitPlan.Exact(524_287, false, 10_000, true), plan(e, 1_000_000, 10_000, 0));
        // Not as a later plan of the sleep: spin.
        assertNull(WaitPlan.exact(e, 1_000_000, 10_000, 0, new WaitPlan.Step(false, false, false)));
        // Exploring does not take that two-wait plan either: it costs more
        // than the spin plus R / 16 (1 114 687 > 1 000 000 + 62 500 ns).
        assertEquals(new WaitPlan.Exact(524_287, false, 10_000, true),
                WaitPlan.exact(e, 1_000_000, 10_000, 0, new WaitPlan.Step(true, true, false)));
        // Once an OS wait costs more than the spin (100 000 + (4 000 000 −
        // 100 000) / 4 = 1 075 000 ns), no chunk either.
        e.observeCost(300_000, 4_000_000);
        assertEquals(1_075_000, e.cost(5));
        assertNull(plan(e, 1_000_000, 10_000, 0));
    }

    @Test
    void aSleepTakesAChunkOnlyAsItsFirstWait() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(3_000);
        sim.setWaitCost(100_000);
        Sleeper s = Sleeper.builder().platform(sim).build();
        learnChunkHost(s.estimator());
        assertEquals(1_000_029, s.sleepUntil(1_000_000));
        // The chunk (524 287 ns) wakes 3 µs late with 472 713 ns to go: one
        // bucket-5 wait ending its margin (3071 ns) early, then 71 ns of spin
        // (counted to the deadline: the stats are final at the hand-off). The
        // sleep explores (a young sleeper) but no two-wait plan is cheap
        // enough to explore; both waits are proven (bucket 5, 1 %).
        assertEquals(List.of(
                new SimPlatform.Wait(0, 524_287, 527_287, false),
                new SimPlatform.Wait(527_287, 996_929, 999_929, false)), sim.waits());
        assertEquals(new SleeperStats(1, 0, 2, 71, 200_071, 0), s.stats());
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
        // 0.5 % and without a second split: one short wait ending the bucket-2
        // margin (3071 ns) early, then 71 ns of spin (one 100 ns step).
        assertEquals(List.of(
                new SimPlatform.Wait(0, 946_929, 949_929, false),
                new SimPlatform.Wait(949_929, 996_929, 999_929, false)), sim.waits());
        // Stats: no late sleep, two OS waits of 2 µs each (learned), 71 ns of
        // spin (to the deadline, not to the step that passed it); every short
        // bucket is established at 0.5 %, so the young sleeper explores
        // nothing, and both plans are proven.
        assertEquals(new SleeperStats(1, 0, 2, 71, 4_071, 0), s.stats());
    }

    @Test
    void aHaltpollHostPlansOneWaitAndAStricterTargetSpinsLonger() {
        MarginEstimator e = new MarginEstimator();
        learnHaltpollHost(e);
        // 1 %: 20 samples lie above bin [57344, 61439]'s lower edge, the margin
        // is the 10th largest's bin (floor(1001 · 1 %) = 10): 61 439 ns, expected CPU 20 000 + (980 · 36 863 + 15 ·
        // 4095) / 1000 = 20 000 + 36 187 ns. Every two-wait plan costs a second
        // 20 µs wait and more (≥ 75 874 ns).
        assertEquals(new WaitPlan.Exact(938_561, false, 10_000, true), plan(e, 1_000_000, 10_000, 0));
        // 0.1 %: the largest (floor(1001 · 0.1 %) = 1): the 200 µs wake-ups'
        // bin [196608, 212991] is the margin.
        assertEquals(new WaitPlan.Exact(787_009, false, 1_000, true), plan(e, 1_000_000, 1_000, 0));
        // 5 %: the 50th largest: the 26 µs bin [24576, 26623] is the margin.
        assertEquals(new WaitPlan.Exact(973_377, false, 50_000, true), plan(e, 1_000_000, 50_000, 0));
        // Sleeps shorter than the margin plus a wait's worth spin: no OS wait.
        assertNull(plan(e, 60_000, 10_000, 0));
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
            // Past the young sleeper's exploration: sleep 259 does not explore.
            for (long i = 0; i < Sleeper.EXPLORE_YOUNG_SLEEPS + 1; i++) {
                s.estimator().beginSleep();
            }
            learnHaltpollHost(s.estimator());
            assertFalse(Sleeper.explores(s.estimator().sleeps() + 1));
            long woke = s.sleepUntil(1_000_000);
            assertTrue(woke >= 1_000_000);
            assertEquals(1, sim.waits().size());
            spins[k] = s.stats().spinNs();
            assertEquals(new SleeperStats(1, 0, 1, spins[k], 20_000 + spins[k], 0), s.stats());
        }
        // Balanced: the wait ends 61 439 ns early and wakes 26 µs late: 35 439 ns
        // left, spun in 355 pause steps. Strict: ends 212 991 ns early: 186 991 ns
        // left: 500 pause steps, 117 yields while the deadline is far, 200 pause
        // steps in the last 20 µs. Either spin counts to the deadline (the
        // stats are final at the hand-off, 5 µs before it).
        assertEquals(35_439, spins[0]);
        assertEquals(186_991, spins[1]);
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
        long[] t = {0};
        Runnable sleep100us = () -> {
            t[0] += 200_000;
            sim.advanceTo(t[0]);
            try {
                s.sleepUntil(t[0] + 100_000);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        };
        for (int i = 0; i < 4; i++) {
            sleep100us.run();
        }
        // Exactly 8 planned waits after 4 sleeps: the first waited 50 000 ns
        // (nothing learned: the default 50 µs margin), then 42 394 ns (bucket
        // 2's one sample, a young view: its bin's top, 3 071 ns, plus half of
        // it, 4 606 ns early). Sleeps 2–4 are a young sleeper's: each explores
        // the two-wait plan through bucket 2 (not established at 0.5 %, and it
        // costs 2000 + 3790 ns, at most 100 000 / 16 ns more than one bucket-3
        // wait's 3790: 2000 + 1790 ns of expected spin, 4 606 − 2 816): 45 394
        // ns (ending 50 000 + 4 606 ns early), then 47 000 ns. Only the first
        // wait was sampled (read before and after it).
        assertEquals(8, sim.waits().size());
        for (int w = 2; w < 8; w += 2) {
            assertEquals(45_394, length(sim, w));
            assertEquals(47_000, length(sim, w + 1));
        }
        assertEquals(List.of(0, 1), sampledAt);
        assertEquals(2_000, s.estimator().cost(2));
        assertEquals(2_000, s.estimator().cost(3)); // borrowed from bucket 2
        // OS waits now cost 10 µs. Sleeps 5–13 explore on: waits 8, 16 and 24
        // (bucket 2, the first of sleeps 5, 9 and 13) are sampled, and bucket
        // 2's cost moves a quarter of the way to 10 µs each time: 4000, 5500,
        // 6625 ns.
        sim.setWaitCost(10_000);
        for (int i = 0; i < 9; i++) {
            sleep100us.run();
        }
        assertEquals(26, sim.waits().size());
        assertEquals(List.of(0, 1, 8, 9, 16, 17, 24, 25), sampledAt);
        assertEquals(6_625, s.estimator().cost(2));
        // Sleeps 14–20: the two-wait plan (6625 + 6625 + 1790 = 15 040 ns) now
        // costs more than one bucket-3 wait (6625 + 1790 ns, its cost borrowed)
        // plus 100 000 / 16: not explored, one 95 394 ns wait each (ending the
        // young pool's 3 071 ns plus half of it, 4 606 ns, early). The 33rd
        // wait (index 32, bucket 3) is sampled: bucket 3's first own sample
        // becomes its cost.
        for (int i = 0; i < 7; i++) {
            sleep100us.run();
        }
        assertEquals(33, sim.waits().size());
        for (int w = 26; w < 33; w++) {
            assertEquals(95_394, length(sim, w));
        }
        assertEquals(List.of(0, 1, 8, 9, 16, 17, 24, 25, 32, 33), sampledAt);
        assertEquals(10_000, s.estimator().cost(3));
        assertEquals(6_625, s.estimator().cost(2));
        // One bucket-3 wait now costs 11 790 ns: sleep 21 explores again
        // (15 040 ≤ 11 790 + 6250 ns): 45 394 ns, then 47 000 ns.
        sleep100us.run();
        assertEquals(35, sim.waits().size());
        assertEquals(45_394, length(sim, 33));
        assertEquals(47_000, length(sim, 34));
        // No margin was established at its share (bucket 2 and 3 together
        // hold fewer than 99 samples): every sleep is unproven.
        assertEquals(21, s.stats().unprovenSleeps());
    }

    static long length(SimPlatform sim, int wait) {
        SimPlatform.Wait w = sim.waits().get(wait);
        return w.targetNs() - w.issuedNs();
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
