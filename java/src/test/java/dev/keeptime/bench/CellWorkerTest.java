package dev.keeptime.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.keeptime.Sleeper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A fresh waiter for each (method, duration) cell: two cells of one method
 * at two durations never share a waiter (nor a keeptime sleeper), one cell
 * keeps its waiter across its rounds, and a cell's sleeper has slept
 * nothing before the cell's first job. Identity and counts only; no timing.
 */
class CellWorkerTest {
    private static final long US = 1_000;

    @Test
    void everyMethodGetsADistinctWaiterPerDurationAndKeepsItAcrossRounds() throws Exception {
        for (Method m : Bench.methods()) {
            List<Bench.CellWorker> cells = new ArrayList<>();
            try {
                Bench.CellWorker a = new Bench.CellWorker(m, 20 * US);
                cells.add(a);
                Bench.CellWorker b = new Bench.CellWorker(m, 30 * US);
                cells.add(b);
                assertEquals(20 * US, a.durationNs);
                assertEquals(30 * US, b.durationNs);
                // Each cell's first job: its warm-up (here none), then a round.
                Bench.CellWorker.Result a1 = a.run(0, 2);
                Bench.CellWorker.Result b1 = b.run(0, 2);
                // Later rounds of the same cells.
                Bench.CellWorker.Result a2 = a.run(0, 2);
                Bench.CellWorker.Result a3 = a.run(1, 1);
                Bench.CellWorker.Result b2 = b.run(0, 2);
                assertEquals(2, a1.errors().length, m.id);
                assertEquals(1, a3.errors().length, m.id);

                assertNotNull(a1.waiter(), m.id);
                assertNotSame(a1.waiter(), b1.waiter(), m.id + ": two durations, one waiter");
                assertSame(a1.waiter(), a2.waiter(), m.id + ": a cell's waiter persists across its rounds");
                assertSame(a1.waiter(), a3.waiter(), m.id);
                assertSame(b1.waiter(), b2.waiter(), m.id);
                assertSame(a1.waiter().getClass(), b1.waiter().getClass(), m.id);

                if (m.learns) {
                    Sleeper sa = a1.sleeper();
                    Sleeper sb = b1.sleeper();
                    assertNotNull(sa, m.id);
                    assertNotNull(sb, m.id);
                    assertNotSame(sa, sb, m.id + ": two durations, one sleeper");
                    assertSame(sa, a2.sleeper(), m.id + ": a cell's sleeper persists across its rounds");
                    assertSame(sb, b2.sleeper(), m.id);
                    // Fresh: nothing slept on this sleeper before the cell's first job
                    // (not the JIT warm-up, not another cell).
                    assertEquals(0, a1.sleepsBeforeJob(), m.id);
                    assertEquals(0, b1.sleepsBeforeJob(), m.id);
                    assertNotNull(a1.sleeperStats(), m.id);
                    assertNotNull(a1.target(), m.id);
                } else {
                    assertNull(a1.sleeper(), m.id);
                    assertNull(a1.sleeperStats(), m.id);
                    assertEquals(-1, a1.sleepsBeforeJob(), m.id);
                }
            } finally {
                for (Bench.CellWorker c : cells) {
                    c.stop();
                }
            }
        }
    }

    /** The static methods' sleeper belongs to the thread: each cell's thread has its own, unlike the caller's. */
    @Test
    void theStaticMethodsSleeperIsTheCellThreadsOwn() throws Exception {
        Bench.CellWorker a = new Bench.CellWorker(Method.KEEPTIME, 20 * US);
        Bench.CellWorker b = new Bench.CellWorker(Method.KEEPTIME, 20 * US);
        try {
            Sleeper sa = a.run(0, 1).sleeper();
            Sleeper sb = b.run(0, 1).sleeper();
            assertNotSame(sa, sb);
            assertNotSame(dev.keeptime.KeepTime.threadSleeper(), sa);
            assertNotSame(dev.keeptime.KeepTime.threadSleeper(), sb);
        } finally {
            a.stop();
            b.stop();
        }
    }

    @Test
    void aJitWarmUpLeavesNothingBehind() throws Exception {
        Bench.jitWarmUp(Method.KEEPTIME_SLEEPER);
        Bench.jitWarmUp(Method.KEEPTIME);
        Bench.CellWorker c = new Bench.CellWorker(Method.KEEPTIME, 20 * US);
        try {
            assertEquals(0, c.run(0, 1).sleepsBeforeJob());
        } finally {
            c.stop();
        }
    }
}
