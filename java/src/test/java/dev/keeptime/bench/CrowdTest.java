package dev.keeptime.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The crowd row on the real clock: only invariants (a short crowd, never early where never-early is promised). */
class CrowdTest {
    @Test
    void aShortCrowdMeasuresEveryThreadAndKeeptimeIsNeverEarly() throws InterruptedException {
        for (Crowd.Kind kind : new Crowd.Kind[] {Crowd.Kind.KEEPTIME, Crowd.Kind.KEEPTIME_IDLE_HINT, Crowd.Kind.THREAD_SLEEP}) {
            Crowd.Row row = Crowd.run(kind, 3, 1_000_000, 20, 100_000_000);
            Stats s = row.stats();
            assertNotNull(s, () -> kind.id + ": " + row.note());
            assertEquals(0, s.early, kind.id);
            assertTrue(s.samples >= 3, kind.id + ": " + s.samples);
            // At most one sleep per thread per ms of the window (plus the one that straddles its end).
            assertTrue(s.samples <= 3 * 101, kind.id + ": " + s.samples);
            // Process CPU is counted in 10 ms ticks: a quiet 100 ms window may read 0.
            assertTrue(s.cpuNs >= 0 && s.wallNs > 0, kind.id + ": cpu " + s.cpuNs + " wall " + s.wallNs);
            assertTrue(row.late() <= s.samples && row.lateShare() <= 1.0);
            assertEquals(kind == Crowd.Kind.KEEPTIME_IDLE_HINT, row.note().startsWith("idle hint "), row.note());
        }
    }
}
