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
    }
}
