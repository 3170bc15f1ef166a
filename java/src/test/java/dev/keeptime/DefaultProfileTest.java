package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link KeepTime#setDefaultProfile(Profile)}: the thread sleepers behind the
 * static methods are replaced by ones started from the default profile, or
 * fresh ones when it is cleared, and a {@link Ticker} made without a sleeper
 * waits with one started from the default in force when it is made
 * ({@code spec/estimator.md}, <em>Default sleepers</em>). Decisions are
 * checked exactly; the one real sleep checks only that it never ends early.
 */
class DefaultProfileTest {
    /** A profile of a sleeper that slept 600 times on a simulated clock. */
    static Profile profile;
    /** The empty estimator's profile: what a fresh sleeper answers. */
    static Profile empty;

    @BeforeAll
    static void learn() throws InterruptedException {
        Sleeper s = ProfileTest.learnedOnSim();
        profile = Profile.of(s.estimator(), ProfileTest.HERE);
        empty = Profile.of(new MarginEstimator(), ProfileTest.HERE);
        assertNotEquals(empty, profile);
    }

    /** No default, whatever {@code keeptime.profile} or {@code KEEPTIME_PROFILE} the run was started with. */
    @BeforeEach
    @AfterEach
    void clear() {
        KeepTime.setDefaultProfile(null);
    }

    /** The thread sleeper's usual settings and an estimator that answers as {@code expected}'s, unslept. */
    static void assertStartedFrom(Profile expected, Sleeper s) {
        assertEquals(Mode.EXACT, s.mode());
        assertEquals(TailTarget.BALANCED, s.tailTarget());
        assertEquals(Duration.ZERO, s.minSpin());
        assertTrue(s.platform() instanceof SystemPlatform, "real clock");
        assertEquals(SleeperStats.ZERO, s.stats());
        MarginEstimator e = s.estimator();
        assertEquals(0, e.sleeps());
        assertEquals(expected, Profile.of(e, ProfileTest.HERE));
        Sleeper.Builder b = Sleeper.builder().platform(new SimPlatform(0));
        boolean fresh = expected.equals(Profile.of(new MarginEstimator(), ProfileTest.HERE));
        MarginEstimator want = (fresh ? b : b.profile(expected)).build().estimator();
        for (int k = 0; k < MarginEstimator.BUCKETS; k++) {
            assertEquals(want.liveSamples(k), e.liveSamples(k), "live b" + k);
            assertEquals(want.cost(k), e.cost(k), "cost b" + k);
            for (long share : new long[] {50_000, 10_000, 1_000}) {
                String at = "b" + k + " at " + share;
                assertEquals(want.margin(k, share), e.margin(k, share), at);
                assertEquals(want.samples(k, share), e.samples(k, share), at);
                assertArrayEquals(want.splitCounts(k, share, 10_000, 20_000),
                        e.splitCounts(k, share, 10_000, 20_000), at);
            }
        }
    }

    @Test
    void settingReplacesTheThreadSleeperWithOneStartedFromTheProfile() {
        Sleeper before = KeepTime.threadSleeper();
        before.estimator().observe(40_000, 3_000); // something learned, to be dropped
        Profile learned = Profile.of(before.estimator(), ProfileTest.HERE);
        KeepTime.setDefaultProfile(profile);
        Sleeper after = KeepTime.threadSleeper();
        assertNotSame(before, after);
        assertStartedFrom(profile, after);
        // Not stale any more: the same sleeper until the default changes.
        assertSame(after, KeepTime.threadSleeper());
        // A reference taken before keeps the old sleeper, untouched.
        assertEquals(learned, Profile.of(before.estimator(), ProfileTest.HERE));
    }

    @Test
    void clearingReplacesItWithAFreshOne() {
        KeepTime.setDefaultProfile(profile);
        Sleeper from = KeepTime.threadSleeper();
        assertStartedFrom(profile, from);
        KeepTime.setDefaultProfile(null);
        Sleeper fresh = KeepTime.threadSleeper();
        assertNotSame(from, fresh);
        assertStartedFrom(empty, fresh);
        assertSame(fresh, KeepTime.threadSleeper());
    }

    @Test
    void settingAgainStartsOverEvenWithTheSameProfile() {
        KeepTime.setDefaultProfile(profile);
        Sleeper first = KeepTime.threadSleeper();
        first.setMode(Mode.SPIN); // settings made on it are dropped too
        first.setTailTarget(TailTarget.STRICT);
        first.estimator().observe(900_000, 7_000);
        assertNotEquals(profile, Profile.of(first.estimator(), ProfileTest.HERE));
        KeepTime.setDefaultProfile(profile);
        Sleeper second = KeepTime.threadSleeper();
        assertNotSame(first, second);
        assertStartedFrom(profile, second);
    }

    @Test
    void aSleeperTheProgramBuiltIsNeverTouched() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(4_000);
        Sleeper own = Sleeper.builder().platform(sim).build();
        own.sleepUntil(100_000);
        Profile learned = Profile.of(own.estimator(), ProfileTest.HERE);
        SleeperStats stats = own.stats();
        KeepTime.setDefaultProfile(profile);
        KeepTime.threadSleeper();
        KeepTime.setDefaultProfile(null);
        KeepTime.threadSleeper();
        assertEquals(learned, Profile.of(own.estimator(), ProfileTest.HERE));
        assertEquals(stats, own.stats());
        assertEquals(1, own.estimator().sleeps());
    }

    @Test
    void everyThreadReplacesItsOwnAtItsNextUse() throws InterruptedException {
        // A thread whose sleeper was made before the default was set, and one
        // started after it.
        AtomicReference<Sleeper> old = new AtomicReference<>();
        AtomicReference<Sleeper> renewed = new AtomicReference<>();
        Object lock = new Object();
        boolean[] set = {false};
        Thread early = new Thread(() -> {
            old.set(KeepTime.threadSleeper());
            synchronized (lock) {
                lock.notifyAll();
                while (!set[0]) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
            renewed.set(KeepTime.threadSleeper());
        });
        synchronized (lock) {
            early.start();
            while (old.get() == null) {
                lock.wait();
            }
            assertStartedFrom(empty, old.get());
            KeepTime.setDefaultProfile(profile);
            set[0] = true;
            lock.notifyAll();
        }
        early.join();
        assertNotSame(old.get(), renewed.get());
        assertStartedFrom(profile, renewed.get());

        AtomicReference<Sleeper> late = new AtomicReference<>();
        Thread t = new Thread(() -> late.set(KeepTime.threadSleeper()));
        t.start();
        t.join();
        assertStartedFrom(profile, late.get());
        // Each thread has its own.
        Sleeper mine = KeepTime.threadSleeper();
        assertNotSame(mine, late.get());
        assertNotSame(mine, renewed.get());
        assertStartedFrom(profile, mine);
    }

    @Test
    void aStaticSleepReplacesTheSleeperBeforePlanning() throws InterruptedException {
        Sleeper before = KeepTime.threadSleeper();
        SleeperStats beforeStats = before.stats();
        long beforeSleeps = before.estimator().sleeps();
        KeepTime.setDefaultProfile(profile);

        long deadline = System.nanoTime() + 5_000_000; // far enough never to have passed
        long woke = KeepTime.sleepUntil(deadline);
        assertTrue(woke - deadline >= 0, "early by " + (deadline - woke) + " ns");
        Sleeper after = KeepTime.threadSleeper();
        assertNotSame(before, after);
        // The sleep ran on the new sleeper, planned on the profile's model.
        assertEquals(1, after.stats().sleeps());
        assertEquals(1, after.estimator().sleeps());
        assertEquals(beforeStats, before.stats());
        assertEquals(beforeSleeps, before.estimator().sleeps());

        long start = System.nanoTime();
        KeepTime.sleepNanos(5_000_000);
        assertTrue(System.nanoTime() - start >= 5_000_000, "sleepNanos ended early");
        start = System.nanoTime();
        KeepTime.sleep(Duration.ofMillis(5));
        assertTrue(System.nanoTime() - start >= 5_000_000, "sleep ended early");
        assertSame(after, KeepTime.threadSleeper());
        assertEquals(3, after.stats().sleeps());

        // Cleared: the next sleep runs on a fresh sleeper.
        KeepTime.setDefaultProfile(null);
        KeepTime.sleepNanos(5_000_000);
        Sleeper fresh = KeepTime.threadSleeper();
        assertNotSame(after, fresh);
        assertEquals(1, fresh.stats().sleeps());
        assertEquals(3, after.stats().sleeps());
    }

    /** The tickers made without a sleeper: {@code every(period)}, {@code every(period, policy)}, a bare builder's. */
    private static List<Ticker> tickersWithoutASleeper() {
        return List.of(
                Ticker.every(Duration.ofMillis(1)),
                Ticker.every(Duration.ofMillis(2), MissedTicks.BURST),
                Ticker.builder(Duration.ofMillis(3)).missedTicks(MissedTicks.DELAY).build());
    }

    @Test
    void aTickerMadeWithoutASleeperStartsFromTheDefaultInForce() {
        KeepTime.setDefaultProfile(profile);
        List<Ticker> tickers = tickersWithoutASleeper();
        Sleeper thread = KeepTime.threadSleeper();
        for (Ticker t : tickers) {
            assertStartedFrom(profile, t.sleeper());
            assertNotSame(thread, t.sleeper()); // its own, not the thread's
            t.close();
        }
        assertNotSame(tickers.get(0).sleeper(), tickers.get(1).sleeper());
        assertNotSame(tickers.get(1).sleeper(), tickers.get(2).sleeper());
        // The ticker's own settings are still its own.
        assertEquals(MissedTicks.SKIP, tickers.get(0).missedTicks());
        assertEquals(MissedTicks.BURST, tickers.get(1).missedTicks());
        assertEquals(MissedTicks.DELAY, tickers.get(2).missedTicks());
        assertEquals(Duration.ofMillis(3), tickers.get(2).period());
    }

    @Test
    void aLaterChangeOfTheDefaultDoesNotTouchATickerThatExists() {
        List<Ticker> fresh = tickersWithoutASleeper(); // before any default
        for (Ticker t : fresh) {
            assertStartedFrom(empty, t.sleeper());
        }
        KeepTime.setDefaultProfile(profile);
        List<Ticker> fromProfile = tickersWithoutASleeper();
        for (int i = 0; i < fresh.size(); i++) {
            Sleeper before = fresh.get(i).sleeper();
            assertStartedFrom(empty, before); // not replaced, still fresh
            assertSame(before, fresh.get(i).sleeper());
            assertStartedFrom(profile, fromProfile.get(i).sleeper());
        }
        // Cleared: tickers made from then on are fresh; those made before keep the profile's model.
        KeepTime.setDefaultProfile(null);
        List<Ticker> cleared = tickersWithoutASleeper();
        for (int i = 0; i < fresh.size(); i++) {
            assertStartedFrom(profile, fromProfile.get(i).sleeper());
            assertStartedFrom(empty, cleared.get(i).sleeper());
            fresh.get(i).close();
            fromProfile.get(i).close();
            cleared.get(i).close();
        }
    }

    @Test
    void aTickerGivenASleeperWaitsWithThatSleeperAsItIs() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        sim.setDefaultOvershoot(4_000);
        Sleeper own = Sleeper.builder().platform(sim).mode(Mode.SPIN).build();
        own.sleepUntil(100_000);
        Profile learned = Profile.of(own.estimator(), ProfileTest.HERE);
        SleeperStats stats = own.stats();
        KeepTime.setDefaultProfile(profile);
        Ticker every = Ticker.every(Duration.ofMillis(1), MissedTicks.SKIP, own);
        Ticker built = Ticker.builder(Duration.ofMillis(1)).sleeper(own).build();
        KeepTime.setDefaultProfile(null);
        for (Ticker t : List.of(every, built)) {
            assertSame(own, t.sleeper());
        }
        assertEquals(Mode.SPIN, own.mode());
        assertEquals(learned, Profile.of(own.estimator(), ProfileTest.HERE));
        assertNotEquals(profile, learned);
        assertEquals(stats, own.stats());
        assertEquals(1, own.estimator().sleeps());
    }

    @Test
    void aBuiltTickersIdleHintStaysTheTickersWithADefaultSleeper() {
        IdleHintTest.FakeDevice device = new IdleHintTest.FakeDevice();
        PmQos registry = new PmQos(device, new IdleHintTest.RecordingLogger());
        KeepTime.setDefaultProfile(profile);
        Ticker t = Ticker.builder(Duration.ofMillis(1)).pmQos(registry).idleHint(5).build();
        assertStartedFrom(profile, t.sleeper());
        assertEquals(IdleHintStatus.State.HELD, t.idleHintStatus().state());
        assertEquals(IdleHintStatus.NOT_REQUESTED, t.sleeper().idleHintStatus()); // the ticker's, not its sleeper's
        assertEquals(List.of("open", "write 5"), device.log);
        t.close();
        assertEquals(List.of("open", "write 5", "close"), device.log);
    }
}
