package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The README's example, run as written (with a loop that ends). */
class ReadmeExampleTest {
    @Test
    void readmeExample() throws InterruptedException {
        KeepTime.sleep(Duration.ofNanos(100_000));             // 100 µs, never less, ~0.1–1 µs more
        long deadline = System.nanoTime() + 2_000_000;
        long woke = KeepTime.sleepUntil(deadline);             // System.nanoTime() domain
        assertTrue(woke - deadline >= 0);

        Ticker t = Ticker.every(Duration.ofMillis(1), MissedTicks.SKIP);  // 1 kHz, start + k·period
        for (int i = 0; i < 5; i++) {
            Tick tick = t.await();
            assertTrue(tick.latenessNanos() >= 0 && tick.index() >= i + 1);
        }
        assertEquals(5, t.stats().ticks());

        ClockReport r = Clocks.inspect();                       // nanoTime cost and steps, clocksource, timer slack
        assertTrue(r.nanoTimeLatencyNs() > 0);
        Sleeper s = Sleeper.of(Mode.EFFICIENT);                 // EXACT (default), EFFICIENT, SPIN
        s.sleep(Duration.ofMillis(1));
        assertEquals(Mode.EFFICIENT, s.mode());

        Sleeper strict = Sleeper.builder().tailTarget(TailTarget.STRICT).build();  // ≤ 0.1 % of sleeps late
        Sleeper custom = Sleeper.builder().tailTarget(0.002).build();              // 0.2 %; NaN, ≤ 0, ≥ 1, < 1e-6 throw
        strict.sleep(Duration.ofMillis(1));
        custom.sleep(Duration.ofMillis(1));
        SleeperStats st = strict.stats();   // sleeps(), late(), osWaits(), spinNs(), cpuEstimateNs(), lateShare()
        assertEquals(1, st.sleeps());
        assertEquals(2_000, custom.tailTarget().ppm());

        try (Sleeper hinted = Sleeper.builder().idleHint(0).build()) {  // opt-in idle-latency hint, held until close()
            System.out.println(hinted.idleHintStatus());                // "held: 0 µs in force (asked 0 µs)" or why refused
            assertTrue(hinted.idleHintStatus().held()
                    || hinted.idleHintStatus().state() == IdleHintStatus.State.REFUSED);
        }
    }

    /** A sleeper and a ticker with the idle hint, both released by try-with-resources. */
    @Test
    void idleHintExample() throws InterruptedException {
        try (Sleeper s = Sleeper.builder().idleHint(0).build();            // µs; or idleHint(Duration)
             Ticker t = Ticker.builder(Duration.ofMillis(1)).idleHint(0).build()) {
            IdleHintStatus st = s.idleHintStatus();   // state() HELD / REFUSED / RELEASED / NOT_REQUESTED,
                                                      // inForceUs(), refusal()
            for (int i = 0; i < 3; i++) {
                t.await();
            }
            assertEquals(st.state(), t.idleHintStatus().state());
            assertEquals(3, t.stats().ticks());
        }
        assertTrue(IdleHint.heldUs().isEmpty());      // both holders released: the device is closed
    }
}
