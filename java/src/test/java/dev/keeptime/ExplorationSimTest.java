package dev.keeptime;

import static dev.keeptime.MarginEstimator.binHi;
import static dev.keeptime.MarginEstimator.binOf;
import static dev.keeptime.MarginEstimator.bucketOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How a sleeper learns its short waits (spec/sleep.md, <em>Exploration</em>
 * and <em>Unproven sleeps</em>; spec/estimator.md, <em>view</em>) on a
 * simulated clock: exact assertions.
 */
class ExplorationSimTest {
    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    static Sleeper exact(SimPlatform sim) {
        return Sleeper.builder().mode(Mode.EXACT).platform(sim).build();
    }

    static Sleeper withTarget(SimPlatform sim, TailTarget target) {
        return Sleeper.builder().mode(Mode.EXACT).platform(sim).tailTarget(target).build();
    }

    /** Sleeps {@code ns} from the simulated now; returns the deadline. */
    static long sleepFor(Sleeper s, SimPlatform sim, long ns) throws InterruptedException {
        long deadline = sim.now() + ns;
        s.sleepUntil(deadline);
        return deadline;
    }

    /** How far before {@code deadline} each OS wait of the last sleep was to end. */
    static List<Long> earlyBy(SimPlatform sim, long deadline) {
        List<Long> out = new ArrayList<>();
        for (SimPlatform.Wait w : sim.waits()) {
            out.add(deadline - w.targetNs());
        }
        return out;
    }

    @Test
    void aYoungSleeperExploresEverySleepThenEveryEighth() {
        for (long seq = 1; seq <= Sleeper.EXPLORE_YOUNG_SLEEPS; seq++) {
            assertTrue(Sleeper.explores(seq), "sleep " + seq);
        }
        List<Long> later = new ArrayList<>();
        for (long seq = Sleeper.EXPLORE_YOUNG_SLEEPS + 1;
                seq <= Sleeper.EXPLORE_YOUNG_SLEEPS + 3 * Sleeper.EXPLORE_EVERY; seq++) {
            if (Sleeper.explores(seq)) {
                later.add(seq);
            }
        }
        assertEquals(List.of(264L, 272L, 280L), later);
        // Sleep numbers are unsigned: the largest is a multiple of 8 less one.
        assertFalse(Sleeper.explores(U64.MAX));
        assertTrue(Sleeper.explores(U64.MAX - 7));
    }

    @Test
    void aFreshSleeperTakesTwoWaitPlansWithinItsFirstFewHundredSleeps() throws InterruptedException {
        // Every OS wait wakes 3 µs late and costs 2 µs, except the long wait of
        // every 10th sleep, 40 µs late: one wait, then a 41 µs spin, meets 1 %;
        // a long wait and a short one ending 3 µs before the deadline is
        // cheaper, once the short wait's bucket can be trusted at 0.5 %.
        SimPlatform sim = new SimPlatform(0);
        sim.setWaitCost(2_000);
        sim.setDefaultOvershoot(3_000);
        Sleeper s = exact(sim);
        long lastOther = -1;
        for (long i = 1; i <= 400; i++) {
            if (i % 10 == 0) {
                sim.scriptOvershoots(40_000);
            }
            sim.clearWaits();
            long deadline = sleepFor(s, sim, 1_000_000);
            List<Long> early = earlyBy(sim, deadline);
            // The sleeps whose long wait woke 40 µs late plan their short
            // wait from a shorter bucket: left out.
            if (i % 10 != 0 && !(early.size() == 2 && early.get(1) == 3_071)) {
                lastOther = i;
            }
        }
        // The young sleeper explores on every sleep; each short wait adds a
        // sample to its bucket, and a pool of neighbouring short buckets is
        // trusted at 0.5 % once it holds 199 samples together (the largest is
        // then the margin). After sleep 221, every sleep is a two-wait plan
        // whose short wait ends at the learned 3 µs margin's bin edge,
        // 3071 ns before the deadline.
        assertEquals(221, lastOther);
        assertTrue(s.estimator().established(bucketOf(200_000), 5_000));
    }

    @Test
    void aWarmedUpSleeperFinishesWithAShortSpin() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(4_000);
        sim.setWaitCost(2_000);
        Sleeper s = exact(sim);
        // Past the young sleeper's exploration (every sleep explores until then).
        for (long i = 0; i < Sleeper.EXPLORE_YOUNG_SLEEPS; i++) {
            sleepFor(s, sim, 1_000_000);
        }
        sim.clearWaits();
        long relaxes = sim.relaxes();
        long deadline = sim.now() + 1_000_000;
        long woke = s.sleepUntil(deadline);
        // A steady 4 µs overshoot lies in the bin [3584, 4095]: one OS wait
        // ends 4095 ns before the deadline (a second wait would only add its
        // 2 µs cost), then a spin of 95 ns = one 100 ns step.
        assertEquals(List.of(4_095L), earlyBy(sim, deadline));
        assertEquals(1, sim.relaxes() - relaxes);
        assertEquals(deadline + 5, woke);
    }

    @Test
    void cheapShortWaitsMakeTwoWaitPlans() throws InterruptedException {
        // A quiet host: a 1 ms wait wakes up to 40 µs late, a ~50 µs one 3 µs
        // late, and a wait costs 2 µs. Waking early and taking a second short
        // wait is cheaper than spinning the long wait's tail.
        SimPlatform sim = new SimPlatform(0);
        sim.setWaitCost(2_000);
        Sleeper s = exact(sim);
        sim.setDefaultOvershoot(3_000);
        // Until the short waits' buckets have 199 samples together (enough to
        // set a margin at half the 1 % budget) their margin is the long
        // bucket's; each of a young sleeper's sleeps explores a two-wait plan
        // and adds one.
        for (long i = 0; i < Sleeper.EXPLORE_YOUNG_SLEEPS; i++) {
            // The first (long) wait of every 10th sleep wakes 40 µs late.
            if (i % 10 == 9) {
                sim.scriptOvershoots(40_000);
            }
            sleepFor(s, sim, 1_000_000);
        }
        assertTrue(s.estimator().established(bucketOf(200_000), 5_000));
        sim.clearWaits();
        long deadline = sim.now() + 1_000_000;
        long woke = s.sleepUntil(deadline);
        // The short wait's margin at half the budget: the bin of 3 µs, [2816,
        // 3071]; the long wait ends 50 µs before it; the short one wakes 71 ns
        // early, one 100 ns spin step.
        assertEquals(List.of(50_000L + 3_071, 3_071L), earlyBy(sim, deadline));
        assertEquals(deadline + 29, woke);
        assertEquals(0, s.stats().late());
    }

    @Test
    void aLoneOutlierDoesNotMoveALearnedMargin() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(3_000);
        Sleeper s = exact(sim);
        for (int i = 0; i < 400; i++) {
            sleepFor(s, sim, 100_000);
        }
        int b = bucketOf(96_000);
        assertTrue(s.estimator().liveSamples(b) >= 199, "live " + s.estimator().liveSamples(b));
        long normal = binHi(binOf(3_000));
        assertEquals(normal, s.estimator().margin(b, 10_000));
        // One 2 ms preemption in the OS wait: late, but the 1 % margin holds
        // (n ≥ 199, so the margin is the 2nd largest sample or below).
        sim.scriptOvershoots(2_000_000);
        sleepFor(s, sim, 100_000);
        assertEquals(normal, s.estimator().margin(b, 10_000));
        assertEquals(1, s.stats().late());
        // At 0.1 % it is the margin until WINDOW more waits of that length
        // pushed it out: its bin's top, 2 097 151 ns, plus half of it as a
        // young view's headroom (too few samples for 0.1 %): 3 145 726 ns.
        assertEquals(3_145_726, s.estimator().margin(b, 1_000));
    }

    /** The waits' distances to the deadline of one 1 ms sleep after 500 learned ones. */
    static List<Long> stricterTargetRun(TailTarget target) throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setWaitCost(20_000);
        Sleeper s = withTarget(sim, target);
        // 2 % of wakes are 60 µs late, the rest 26 µs.
        for (int i = 0; i < 500; i++) {
            sim.setDefaultOvershoot(i % 50 == 49 ? 60_000 : 26_000);
            sleepFor(s, sim, 1_000_000);
        }
        sim.setDefaultOvershoot(26_000);
        sim.clearWaits();
        long deadline = sleepFor(s, sim, 1_000_000);
        return earlyBy(sim, deadline);
    }

    @Test
    void aStricterTargetBuysItsTailWithASecondWaitOrALongerSpin() throws InterruptedException {
        long wake = binHi(binOf(26_000));
        long tail = binHi(binOf(60_000));
        // 5 %: one wait ending at the 26 µs bin (the 2 % of 60 µs wakes may be late).
        assertEquals(List.of(wake), stricterTargetRun(TailTarget.RELAXED));
        // 1 %: the 60 µs wakes must be covered: a two-wait plan, a long wait
        // ending 76.6 µs early (the 50 µs split plus the short wait's margin
        // at 0.5 %, the 26 µs bin), then the short wait ending at the 26 µs
        // bin; a long wait woken 60 µs late leaves no room for it, and spins
        // the rest. (Before a young view's headroom the young sleeper's
        // exploring left the short waits' bucket with a 60 µs wake, and the
        // plan was one wait at the 60 µs bin, then a second of the ~9 µs
        // left.)
        assertEquals(List.of(50_000 + wake, wake), stricterTargetRun(TailTarget.BALANCED));
        // 0.1 %: 500 samples are too few for 0.1 %: one wait would end the
        // 60 µs bin plus half of it (a young view's headroom, 92 µs) early.
        // A split is cheaper: a long wait ending 111 µs early (the 50 µs
        // split plus the short wait's margin at 0.05 %, held to the long
        // waits' 60 µs bin), then the short wait ending at that bin. (Before
        // the headroom: one wait at the 60 µs bin.)
        assertEquals(List.of(50_000 + tail, tail), stricterTargetRun(TailTarget.STRICT));
    }

    @Test
    void sleepsOnUnestablishedMarginsAreCountedUnproven() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setWaitCost(2_000);
        sim.setDefaultOvershoot(3_000);
        Sleeper strict = withTarget(sim, TailTarget.STRICT);
        // At 0.1 % a margin needs 999 samples.
        long k = 0;
        while (!strict.estimator().established(bucketOf(990_000), 1_000)) {
            sleepFor(strict, sim, 1_000_000);
            k++;
        }
        // Each sleep takes one long wait (bucket 6, which does not pool): its
        // own 999 samples take 999 sleeps. Every sleep planned before that is
        // unproven; none after it.
        assertEquals(999, k);
        assertEquals(999, strict.estimator().liveSamples(bucketOf(990_000)));
        assertEquals(k, strict.stats().unprovenSleeps());
        // Later, only a sleep that explores a young short bucket's two-wait
        // plan (every 8th) rests on an unproven margin.
        for (int i = 0; i < 16; i++) {
            sleepFor(strict, sim, 1_000_000);
        }
        long explored = 0;
        for (long q = k + 1; q <= k + 16; q++) {
            if (Sleeper.explores(q)) {
                explored++;
            }
        }
        assertEquals(2, explored);
        assertEquals(k + explored, strict.stats().unprovenSleeps());
        assertEquals(0, strict.stats().late());
        // Resetting the stats starts the count afresh.
        strict.resetStats();
        assertEquals(SleeperStats.ZERO, strict.stats());
    }
}
