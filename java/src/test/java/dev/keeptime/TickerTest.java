package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The ticker on a simulated clock: exact assertions. */
class TickerTest {
    static final long MS = 1_000_000;

    static Ticker ticker(SimPlatform sim, long periodNs, MissedTicks policy) {
        return Ticker.every(Duration.ofNanos(periodNs), policy, Sleeper.builder().platform(sim).build());
    }

    @Test
    void onTimeTicksFollowTheAbsoluteSchedule() throws InterruptedException {
        SimPlatform sim = new SimPlatform(5_000);
        sim.setDefaultOvershoot(3_000);
        Ticker t = ticker(sim, MS, MissedTicks.SKIP);
        for (long k = 1; k <= 20; k++) {
            Tick tick = t.await();
            assertEquals(new Tick(k, 5_000 + k * MS, sim.now() - (5_000 + k * MS), 0), tick);
            sim.advance(300_000 + 7 * k); // the loop body: deadlines do not move with it
        }
        TickerStats st = t.stats();
        assertEquals(20, st.ticks());
        assertEquals(0, st.missed());
        assertEquals(5_000 + 21 * MS, t.nextDeadlineNanos());
    }

    @Test
    void skipDeliversTheLatestPassedSlot() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Ticker t = ticker(sim, MS, MissedTicks.SKIP);
        t.await();                          // slot 1 at 1 ms
        sim.advanceTo(3_500_000);           // overran past slots 2 and 3
        assertEquals(new Tick(3, 3 * MS, 500_000, 1), t.await());
        assertEquals(4, t.await().index()); // back on schedule, at 4 ms
        assertEquals(new TickerStats(3, 2, 1, 500_000), t.stats());
    }

    @Test
    void burstDeliversEveryMissedSlot() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Ticker t = ticker(sim, MS, MissedTicks.BURST);
        t.await();
        sim.advanceTo(3_500_000);
        assertEquals(new Tick(2, 2 * MS, 1_500_000, 0), t.await());
        assertEquals(new Tick(3, 3 * MS, 500_000, 0), t.await());
        // The OS wakes on time (bin [0, 1023]): the few samples are a young
        // view, so the wait ends 1023 ns plus half of it as a young view's
        // headroom, 1 534 ns, early; 16 spin steps of 100 ns finish 66 ns
        // after the deadline.
        assertEquals(new Tick(4, 4 * MS, 66, 0), t.await());
    }

    @Test
    void delayRestartsTheScheduleFromTheLateTick() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Ticker t = ticker(sim, MS, MissedTicks.DELAY);
        t.await();
        sim.advanceTo(3_500_000);
        assertEquals(new Tick(2, 2 * MS, 1_500_000, 0), t.await());
        // 1023 ns plus a young view's headroom: a 1 534 ns margin, 16 spin
        // steps of 100 ns.
        assertEquals(new Tick(3, 4_500_000, 66, 0), t.await());
    }

    @Test
    void resetAndSetPeriod() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Ticker t = ticker(sim, MS, MissedTicks.SKIP);
        t.await();
        sim.advanceTo(1_700_000);
        t.reset();
        assertEquals(2_700_000, t.nextDeadlineNanos());
        t.setPeriod(Duration.ofNanos(250_000));
        // The last slot is re-based by the reset at 1.7 ms: one new period after it.
        assertEquals(1_950_000, t.nextDeadlineNanos());
        assertEquals(Duration.ofNanos(250_000), t.period());
    }

    @Test
    void badPeriodsAreRejected() {
        SimPlatform sim = new SimPlatform(0);
        Sleeper s = Sleeper.builder().platform(sim).build();
        assertThrows(IllegalArgumentException.class, () -> Ticker.every(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> Ticker.every(Duration.ofNanos(-1)));
        assertThrows(IllegalArgumentException.class, () -> Ticker.every(Duration.ZERO, MissedTicks.BURST, s));
        Ticker t = ticker(sim, MS, MissedTicks.SKIP);
        assertThrows(IllegalArgumentException.class, () -> t.setPeriod(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> t.setPeriod(Duration.ofMillis(-3)));
        assertEquals(Duration.ofMillis(1), t.period(), "unchanged");
        assertEquals("period", assertThrows(NullPointerException.class, () -> Ticker.every(null)).getMessage());
        assertEquals("policy", assertThrows(NullPointerException.class,
                () -> Ticker.every(Duration.ofMillis(1), null)).getMessage());
        assertEquals("sleeper", assertThrows(NullPointerException.class,
                () -> Ticker.every(Duration.ofMillis(1), MissedTicks.SKIP, null)).getMessage());
        assertEquals("period", assertThrows(NullPointerException.class, () -> t.setPeriod(null)).getMessage());
    }

    @Test
    void hugePeriodsSaturate() throws InterruptedException {
        SimPlatform sim = new SimPlatform(7);
        Ticker t = ticker(sim, 1, MissedTicks.BURST);
        t.setPeriod(Duration.ofSeconds(Long.MAX_VALUE));
        assertEquals(U64.MAX, t.nextDeadlineNanos());
        assertEquals(U64.MAX, t.await().scheduledNanos());
    }

    @Test
    void interruptedAwaitConsumesNoSlot() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Ticker t = ticker(sim, MS, MissedTicks.SKIP);
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, t::await);
        assertEquals(1, t.await().index());
    }

    @Test
    void aTickIsRecordedBeforeItsFinalSpinAndReportsTheSpinsEnd() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setSpinStep(70);
        Ticker t = ticker(sim, MS, MissedTicks.SKIP);
        sim.scriptOvershoots(10_000);
        Tick tick = t.await();
        assertEquals(MS, tick.scheduledNanos());
        var waits = sim.waits();
        long start = waits.get(waits.size() - 1).wokeNs();
        long end = SleeperSimTest.firstStepAtOrPast(start, 70, MS);
        assertEquals(end, sim.now());
        assertTrue(end > MS, "the last step passes the deadline");
        // The tick reports where the final spin ended,
        assertEquals(end - MS, tick.latenessNanos());
        // while the schedule recorded the slot at its deadline, before that spin.
        assertEquals(new TickerStats(1, 0, 0, 0), t.stats());
    }

    @Test
    void policyNames() {
        for (MissedTicks m : MissedTicks.values()) {
            assertEquals(m, MissedTicks.fromSpecName(m.specName()));
        }
        assertThrows(IllegalArgumentException.class, () -> MissedTicks.fromSpecName("drop"));
    }
}
