package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Crowds: more sleepers inside an exact sleep than CPUs ({@code spec/sleep.md},
 * <em>Crowds</em>), on a simulated clock with exact assertions. The same cases
 * and numbers as the Crowds section of the Rust core's
 * {@code crates/keeptime/tests/simulated.rs}.
 */
class CrowdSimTest {
    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    /** A world of {@code cpus} CPUs where {@code others} other sleepers are inside a sleep. */
    static SimPlatform crowdWorld(int cpus, int others) {
        SimPlatform sim = new SimPlatform(0);
        sim.setCpus(cpus);
        sim.setOtherSleepers(others);
        sim.setDefaultOvershoot(3_000);
        return sim;
    }

    static Sleeper exact(Platform p) {
        return Sleeper.builder().mode(Mode.EXACT).platform(p).build();
    }

    static final long M3US = MarginEstimator.binHi(MarginEstimator.binOf(3_000)); // 3 071 ns

    @Test
    void crowdSpinCapIsTheSleepersShareOfHalfTheCpusLessTheWaitCost() {
        assertEquals(2, Sleeper.CROWD_SPIN_DIVISOR);
        // 64 × 1 ms on 2 CPUs: 2 · 1 ms / (2 · 64) = 15.625 µs, less 5 µs.
        assertEquals(10_625, Sleeper.crowdSpinCap(2, 64, 1_000_000, 5_000));
        // 16 × 1 ms: 62.5 µs less 5 µs; 16 × 250 µs: the same as 64 × 1 ms.
        assertEquals(57_500, Sleeper.crowdSpinCap(16 / 8, 16, 1_000_000, 5_000));
        assertEquals(10_625, Sleeper.crowdSpinCap(2, 16, 250_000, 5_000));
        // A wait dearer than the share: no spin at all (saturating at 0).
        assertEquals(0, Sleeper.crowdSpinCap(2, 64, 1_000_000, 20_000));
        // Huge lengths and CPU counts are exact, then saturate; never wrap.
        assertEquals(U64.MAX, Sleeper.crowdSpinCap(Integer.MAX_VALUE, 1, U64.MAX, 0));
        assertEquals(2_000, Sleeper.crowdSpinCap(4, 0, 1_000, 0), "0 sleepers counts as 1");
        // u64 lengths past 2^63: (3 · (2^64 − 1)) / (2 · 4) = 6 917 529 027 641 081 855, exact.
        assertEquals("6917529027641081855", Long.toUnsignedString(Sleeper.crowdSpinCap(3, 4, U64.MAX, 0)));
        assertThrows(IllegalArgumentException.class, () -> Sleeper.crowdSpinCap(-1, 4, 1_000, 0));
        assertThrows(IllegalArgumentException.class, () -> Sleeper.crowdSpinCap(2, -1, 1_000, 0));
        // The bound the cap exists for: n sleepers of length D spin at most
        // C / CROWD_SPIN_DIVISOR CPUs in total, whatever the margins say; and
        // the cap is exactly the 128-bit formula.
        SplittableRandom rng = new SplittableRandom(0xc0de);
        BigInteger two64 = BigInteger.ONE.shiftLeft(64);
        for (int i = 0; i < 10_000; i++) {
            int c = 1 + rng.nextInt(64);
            int n = c + 1 + rng.nextInt(500);
            long d = i % 2 == 0 ? 1 + rng.nextLong(100_000_000) : rng.nextLong(); // every 2nd: any u64
            long cost = rng.nextLong(50_000);
            long cap = Sleeper.crowdSpinCap(c, n, d, cost);
            BigInteger bd = new BigInteger(Long.toUnsignedString(d));
            BigInteger share = bd.multiply(BigInteger.valueOf(c)).divide(BigInteger.valueOf(2L * n));
            BigInteger want = share.min(two64.subtract(BigInteger.ONE)).subtract(BigInteger.valueOf(cost))
                    .max(BigInteger.ZERO);
            String where = "c " + c + " n " + n + " d " + Long.toUnsignedString(d) + " cost " + cost;
            assertEquals(want.toString(), Long.toUnsignedString(cap), where);
            assertTrue(new BigInteger(Long.toUnsignedString(cap)).multiply(BigInteger.valueOf(2L * n))
                    .compareTo(bd.multiply(BigInteger.valueOf(c))) <= 0, where);
        }
    }

    @Test
    void aCrowdSleepCapsItsMarginAndPausesOnlyAtTheEnd() throws InterruptedException {
        // 64 sleepers on 2 CPUs: nothing learned yet, so the margin would be
        // DEFAULT_MARGIN_NS (50 µs); the crowd cap (10.625 µs) wins.
        SimPlatform sim = crowdWorld(2, 63);
        Sleeper s = exact(sim);
        long woke = s.sleepUntil(1_000_000);
        assertEquals(1, sim.waits().size());
        assertEquals(1_000_000 - 10_625, sim.waits().get(0).targetNs());
        // Woken at 992 375: yields (1 µs) while more than CROWD_PAUSE_NS (5 µs)
        // remain, then the pause hint (100 ns steps) to the deadline.
        assertEquals(5_000, Sleeper.CROWD_PAUSE_NS);
        assertEquals(3, sim.yields());
        assertEquals(47, sim.relaxes());
        assertEquals(1_000_075, woke);
        assertEquals(0, sim.sleepers(), "left the crowd count");
        assertTrue(!sim.isSpinning(), "spin slot leaked");
        // It learned the wait as always.
        assertEquals(1, s.estimator().liveSamples(MarginEstimator.bucketOf(989_375)));
    }

    @Test
    void theSameSleepWithoutACrowdPlansAsUsual() throws InterruptedException {
        // Two sleepers on 2 CPUs are not a crowd: the usual plan, the whole
        // default margin, and the slot holder pauses for its planned spin.
        SimPlatform sim = crowdWorld(2, 1);
        Sleeper s = exact(sim);
        long woke = s.sleepUntil(1_000_000);
        assertEquals(1_000_000 - MarginEstimator.DEFAULT_MARGIN_NS, sim.waits().get(0).targetNs());
        assertEquals(0, sim.yields());
        // Then the learned margin (3 071 ns plus half of it, a young view's
        // headroom: 4 606 ns), and 1 606 ns of pause: 17 steps of 100 ns.
        assertEquals(1_000_000 - 4_606, sim.waits().get(1).targetNs());
        assertEquals(1_000_094, woke);
    }

    @Test
    void inACrowdALearnedMarginBelowTheCapIsUsedAndMinSpinIsKept() throws InterruptedException {
        SimPlatform sim = crowdWorld(2, 15); // 16 × 1 ms: cap 62.5 µs − cost
        Sleeper s = exact(sim);
        sim.setWaitCost(5_000);
        for (long k = 1; k <= 300; k++) {
            s.sleepUntil(k * 1_000_000);
        }
        // Every wake-up came 3 µs late: the 1 % margin is that bin's upper edge.
        int b = MarginEstimator.bucketOf(1_000_000);
        long m = s.estimator().margin(b, 10_000);
        assertEquals(M3US, m);
        sim.clearWaits();
        s.sleepUntil(301_000_000);
        assertEquals(301_000_000 - m, sim.waits().get(0).targetNs());
        // A minSpin above the cap is the caller's explicit request: kept.
        Sleeper t = Sleeper.builder().minSpin(Duration.ofNanos(100_000)).platform(sim).build();
        sim.clearWaits();
        long start = sim.now();
        t.sleepUntil(start + 1_000_000);
        assertEquals(start + 1_000_000 - 100_000, sim.waits().get(0).targetNs());
    }

    @Test
    void aCrowdFollowerWithoutASlotYieldsToItsDeadline() throws InterruptedException {
        SimPlatform sim = crowdWorld(2, 63);
        sim.setSpinSlotsFree(false);
        Sleeper s = exact(sim);
        long woke = s.sleepUntil(1_000_000);
        assertEquals(1, sim.waits().size(), "no OS wait to the deadline");
        assertEquals(0, sim.relaxes(), "no pause without a slot");
        assertEquals(8, sim.yields()); // 992 375 → 1 000 375 in 1 µs steps
        assertEquals(1_000_375, woke);
        assertEquals(0, s.stats().late());
    }

    @Test
    void severalSleepersInOneWorldCountThemselvesIntoTheCrowd() throws InterruptedException {
        // One CPU; each sleeper of the world is counted while it sleeps, and
        // leaves the count on every way out, an interrupted sleep included.
        SimPlatform sim = crowdWorld(1, 0);
        // Its OS waits report an interruption with the thread's status set, when scripted.
        Platform interrupting = new SleeperSimTest.DelegatingPlatform(sim) {
            @Override
            public boolean osWaitUntil(long targetNs) {
                boolean done = super.osWaitUntil(targetNs);
                if (!done) {
                    Thread.currentThread().interrupt();
                }
                return done;
            }
        };
        Sleeper a = exact(interrupting);
        Sleeper b = exact(sim);
        a.sleepUntil(1_000_000);
        assertEquals(1_000_000 - MarginEstimator.DEFAULT_MARGIN_NS, sim.waits().get(0).targetNs());
        assertEquals(0, sim.sleepers());
        // Another thread sleeping: b's sleep is a crowd's (2 > 1 CPU), capped at
        // 1 · 1 ms / (2 · 2) − 5 µs = 245 µs, above b's learned margin.
        sim.setOtherSleepers(1);
        sim.clearWaits();
        long t0 = sim.now();
        long woke = b.sleepUntil(t0 + 1_000_000);
        // The cap does not bind: b's default margin, then its learned one (as
        // ever, a sleep re-plans after an OS wait that woke early enough):
        // one sample, a young view, so 3 071 ns plus half of it, 4 606 ns.
        assertEquals(List.of(1_000_000 - MarginEstimator.DEFAULT_MARGIN_NS, 1_000_000 - 4_606L),
                sim.waits().stream().map(w -> w.targetNs() - t0).toList());
        assertEquals(1_000_000 - 1_606 + 1_700, woke - t0, "1 606 ns left: 17 pause steps");
        assertEquals(0, sim.yields());
        // Interrupted in its OS wait, with the status set: it throws and still leaves the count.
        sim.scriptInterrupts(1_000);
        long t1 = sim.now();
        assertThrows(InterruptedException.class, () -> a.sleepUntil(t1 + 1_000_000));
        assertEquals(0, sim.sleepers());
        // Spin mode never enters the count (the caller asked for a core).
        Platform counting = new SleeperSimTest.DelegatingPlatform(sim) {
            @Override
            public int enterSleep() {
                throw new AssertionError("spin mode entered the crowd count");
            }
        };
        Sleeper sp = Sleeper.builder().mode(Mode.SPIN).platform(counting).build();
        long t2 = sim.now();
        sp.sleepUntil(t2 + 10_000);
        assertEquals(0, sim.sleepers());
    }

    @Test
    void aFollowerChecksTheInterruptStatusEveryPollPeriod() {
        // No slot, and a minSpin longer than the sleep: no OS wait, the whole
        // 40 ms sleep follows. Each yield takes 1 ms and sets the interrupt status.
        SimPlatform sim = crowdWorld(2, 63);
        sim.setSpinSlotsFree(false);
        sim.setYieldStep(1_000_000);
        Platform interruptingOnYield = new SleeperSimTest.DelegatingPlatform(sim) {
            @Override
            public void yieldNow() {
                super.yieldNow();
                Thread.currentThread().interrupt();
            }
        };
        Sleeper f = Sleeper.builder().platform(interruptingOnYield).minSpin(Duration.ofMillis(50)).build();
        assertThrows(InterruptedException.class, () -> f.sleepUntil(40_000_000));
        // The status is checked once the reading before a yield reaches
        // INTERRUPT_POLL_NS (10 ms): after the 11th yield, at 11 ms.
        assertEquals(11, sim.yields());
        assertEquals(11_000_000, sim.now());
        assertTrue(sim.waits().isEmpty());
        assertEquals(0, sim.relaxes());
        assertEquals(10_000_000, f.stats().spinNs(), "the spin up to its last reading");
        assertEquals(0, sim.sleepers(), "left the crowd count");
    }
}
