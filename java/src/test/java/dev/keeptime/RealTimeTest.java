package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * On the real clock, only what must always hold: never early, no drift,
 * interrupts honoured. No timed assertions: the machines are shared and noisy
 * (the timeouts only stop a hung test).
 */
@Timeout(120)
class RealTimeTest {
    /** Random waits from 0 to 1.5 ms, as sleep(Duration), sleepNanos and sleepUntil. */
    static void neverEarly(Sleeper s, long seed, int sleeps) throws InterruptedException {
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < sleeps; i++) {
            long d = rnd.nextInt(10) == 0 ? rnd.nextLong(1_500_000) : rnd.nextLong(250_000);
            long deadline = System.nanoTime() + d;
            switch (i % 3) {
                case 0:
                    s.sleep(Duration.ofNanos(d));
                    break;
                case 1:
                    s.sleepNanos(d);
                    break;
                default:
                    long woke = s.sleepUntil(deadline);
                    long after = System.nanoTime();
                    assertTrue(woke - deadline >= 0, "returned reading before the deadline");
                    assertTrue(after - woke >= 0, "returned a reading from after the return");
                    break;
            }
            long now = System.nanoTime();
            assertTrue(now - deadline >= 0, () -> s + ": returned " + (deadline - now) + " ns early after " + d + " ns");
        }
    }

    /**
     * The static methods, whose last stretch runs in their own frame after
     * the thread's sleeper is done: never early by the caller's own clock.
     */
    @Test
    void staticSleepsNeverReturnEarly() throws InterruptedException {
        SplittableRandom rnd = new SplittableRandom(4);
        for (int i = 0; i < 300; i++) {
            long d = rnd.nextInt(10) == 0 ? rnd.nextLong(1_500_000) : rnd.nextLong(250_000);
            long deadline = System.nanoTime() + d;
            long woke = deadline;
            switch (i % 3) {
                case 0:
                    KeepTime.sleep(Duration.ofNanos(d));
                    break;
                case 1:
                    KeepTime.sleepNanos(d);
                    break;
                default:
                    woke = KeepTime.sleepUntil(deadline);
                    break;
            }
            long now = System.nanoTime();
            assertTrue(now - deadline >= 0, "returned " + (deadline - now) + " ns early after " + d + " ns");
            assertTrue(woke - deadline >= 0 && now - woke >= 0, "returned reading " + woke + " outside [deadline, now]");
        }
        assertEquals(0, SystemPlatform.sleepers(), "sleepers left in the crowd count");
    }

    @Test
    void exactNeverReturnsEarly() throws InterruptedException {
        neverEarly(Sleeper.create(), 1, 400);
    }

    /** Every tail target: never early, and the stats add up (invariants only, no timing). */
    @Test
    void everyTailTargetNeverReturnsEarlyAndItsStatsAddUp() throws InterruptedException {
        long seed = 10;
        for (TailTarget t : new TailTarget[] {TailTarget.RELAXED, TailTarget.BALANCED, TailTarget.STRICT}) {
            Sleeper s = Sleeper.builder().tailTarget(t).build();
            neverEarly(s, seed++, 150);
            SleeperStats st = s.stats();
            assertTrue(st.sleeps() <= 150, st::toString);
            assertTrue(st.late() <= st.sleeps(), st::toString);
            assertTrue(st.osWaits() >= 0 && st.spinNs() >= 0, st::toString);
            assertTrue(st.cpuEstimateNs() >= st.spinNs(), st::toString);
            s.resetStats();
            assertEquals(SleeperStats.ZERO, s.stats());
        }
    }

    @Test
    void spinAndNoSlackNeverReturnEarly() throws InterruptedException {
        neverEarly(Sleeper.of(Mode.SPIN), 2, 100);
        neverEarly(Sleeper.builder().timerSlack(false).build(), 3, 200);
    }

    /**
     * More sleeping threads than CPUs: spin slots run out and sleeps become a
     * crowd's (capped spins, followers without a slot), never early all the
     * same; afterwards no sleeper is left in the process-wide count.
     */
    @Test
    void severalThreadsNeverReturnEarly() throws InterruptedException {
        int threads = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = 100 + t;
            Thread th = new Thread(() -> {
                try {
                    SplittableRandom rnd = new SplittableRandom(seed);
                    for (int i = 0; i < 300; i++) {
                        long d = rnd.nextLong(300_000);
                        long deadline = System.nanoTime() + d;
                        if (i % 3 == 0) {
                            KeepTime.sleepNanos(d);
                        } else if (i % 3 == 1) {
                            KeepTime.sleep(Duration.ofNanos(d));
                        } else {
                            KeepTime.sleepUntil(deadline);
                        }
                        long early = deadline - System.nanoTime();
                        if (early > 0) {
                            throw new AssertionError("returned " + early + " ns early");
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            all.add(th);
            th.start();
        }
        for (Thread th : all) {
            th.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(0, SystemPlatform.sleepers(), "sleepers left in the crowd count");
    }

    @Test
    void tickerDoesNotDrift() throws InterruptedException {
        long period = 500_000;
        Ticker t = Ticker.every(Duration.ofNanos(period), MissedTicks.SKIP);
        Tick first = t.await();
        long expectIndex = first.index() + 1;
        for (int i = 0; i < 200; i++) {
            Tick tick = t.await();
            long now = System.nanoTime();
            assertTrue(now - tick.scheduledNanos() >= 0, "ticked before its slot");
            assertTrue(tick.latenessNanos() >= 0);
            assertTrue(now - (tick.scheduledNanos() + tick.latenessNanos()) >= 0, "lateness from after the return");
            assertEquals(expectIndex + tick.skipped(), tick.index());
            // Deadlines are start + k·period exactly, however late each tick was served.
            assertEquals(first.scheduledNanos() + (tick.index() - first.index()) * period, tick.scheduledNanos());
            expectIndex = tick.index() + 1;
        }
        TickerStats st = t.stats();
        assertEquals(201, st.ticks());
        assertEquals(st.skipped(), expectIndex - 1 - 201);
    }

    @Test
    void interruptDuringALongSleepThrowsAndClearsTheStatus() throws InterruptedException {
        for (Mode mode : Mode.values()) {
            AtomicReference<Object> outcome = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            Thread sleeper = new Thread(() -> {
                Sleeper s = Sleeper.of(mode);
                started.countDown();
                try {
                    s.sleep(Duration.ofSeconds(60));
                    outcome.set("returned normally");
                } catch (InterruptedException e) {
                    outcome.set(Thread.currentThread().isInterrupted() ? "status still set" : e);
                }
            });
            sleeper.start();
            started.await();
            Thread.sleep(20);
            sleeper.interrupt();
            sleeper.join();
            assertTrue(outcome.get() instanceof InterruptedException, mode + ": " + outcome.get());
            assertEquals(0, SystemPlatform.sleepers(), mode + ": an interrupted sleep left the crowd count");
        }
    }

    @Test
    void interruptBeforeASleepThrows() {
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> KeepTime.sleep(Duration.ofMillis(5)));
        assertFalse(Thread.interrupted());
    }

    @Test
    void timerSlackIsSetOnceThePlatformSupportsIt() throws InterruptedException {
        AtomicReference<String> seen = new AtomicReference<>();
        Thread th = new Thread(() -> {
            try {
                KeepTime.sleepNanos(100_000);
                seen.set(String.valueOf(TimerSlack.current().orElse(-1)));
            } catch (InterruptedException e) {
                seen.set("interrupted");
            }
        });
        th.start();
        th.join();
        if (TimerSlack.isSupported()) {
            assertEquals("1", seen.get());
        }
        boolean fromJar = String.valueOf(TimerSlack.class.getProtectionDomain().getCodeSource().getLocation())
                .endsWith(".jar");
        if (fromJar) {
            // The multi-release jar picks the FFM version exactly on JDK 22+ (on Linux).
            boolean linux = System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT).contains("linux");
            assertEquals(linux && Runtime.version().feature() >= 22, TimerSlack.isSupported(), TimerSlack.mechanism());
        }
    }
}
