package dev.keeptime;

import static dev.keeptime.DefaultProfileTest.assertStartedFrom;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keeptime.Profile.Fingerprint;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link KeepTime#threadProfile()}: the profile of the calling thread's
 * sleeper behind the static methods, made as its next sleep would make it
 * when it has none or a stale one, never otherwise replaced, reset or counted
 * as a sleep ({@code spec/estimator.md}, <em>Default sleepers</em>,
 * <em>Saving what they learned</em>). The environment is the test's
 * ({@link KeepTime#resetDefaultProfile(java.util.function.Function,
 * java.util.function.Function, java.util.function.Supplier)}); models are
 * compared exactly, real sleeps only through what the sleeper recorded.
 */
class ThreadProfileTest extends EnvironmentFixture {
    /** A fresh sleeper's profile on this machine. */
    static Profile fresh;

    @BeforeAll
    static void learn() throws InterruptedException {
        fresh = Profile.of(new MarginEstimator(), Fingerprint.thisMachine());
        assertNotEquals(fresh, onThisMachine);
    }

    /** {@code got} is this machine's, and its loaded model answers exactly as {@code expected}'s (made on HERE). */
    static void assertModel(Profile expected, Profile got) {
        assertEquals(Fingerprint.thisMachine(), got.machine());
        assertEquals(expected, Profile.of(got.estimator(), ProfileTest.HERE));
        assertStartedFrom(expected, Sleeper.builder().profile(got).build());
    }

    /** What a new thread saw: its first {@link KeepTime#threadProfile()}, and its sleeper just before and after a second. */
    record FirstCall(Profile first, Sleeper sleeper, Profile second, Sleeper after) {}

    /** {@code body} on a new thread, its result or its failure. */
    static <T> T onNewThread(Callable<T> body) throws Exception {
        AtomicReference<T> result = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                result.set(body.call());
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        t.start();
        t.join();
        if (failed.get() instanceof Exception e) {
            throw e;
        } else if (failed.get() != null) {
            throw new AssertionError(failed.get());
        }
        return result.get();
    }

    /** A new thread's first call, which makes its sleeper, then a second, which must not replace it. */
    static FirstCall firstCallOnANewThread() throws Exception {
        return onNewThread(() -> {
            Profile first = KeepTime.threadProfile();
            Sleeper s = KeepTime.threadSleeper();
            Profile second = KeepTime.threadProfile();
            return new FirstCall(first, s, second, KeepTime.threadSleeper());
        });
    }

    /** The thread's sleeper is the one its first call made: unslept, the same after another call. */
    static void assertMadeOnceAndUnslept(FirstCall c, Profile startedFrom) {
        assertSame(c.sleeper(), c.after());
        assertEquals(c.first(), c.second());
        assertStartedFrom(startedFrom, c.sleeper()); // stats zero, no sleep, the usual settings
    }

    @Test
    void aThreadThatHasNotSleptWithNoDefaultGivesAFreshSleepersProfile() throws Exception {
        // Nothing in the environment: read once, nothing there.
        FirstCall c = firstCallOnANewThread();
        assertEquals(fresh, c.first());
        assertMadeOnceAndUnslept(c, empty);
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        // Cleared by the program: this thread's (stale) sleeper is replaced by a fresh one first.
        Sleeper before = KeepTime.threadSleeper();
        before.estimator().observe(40_000, 3_000); // learned, to be dropped with the sleeper
        KeepTime.setDefaultProfile(null);
        assertEquals(fresh, KeepTime.threadProfile());
        Sleeper now = KeepTime.threadSleeper();
        assertNotSame(before, now);
        assertStartedFrom(empty, now);
        assertEquals(fresh, firstCallOnANewThread().first());
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
    }

    @Test
    void aThreadThatHasNotSleptWithADefaultGivesTheDefaultsModel() throws Exception {
        KeepTime.setDefaultProfile(profile);
        FirstCall c = firstCallOnANewThread();
        assertModel(profile, c.first());
        assertEquals(onThisMachine, c.first());
        assertMadeOnceAndUnslept(c, profile);

        // This thread's sleeper, made for an older default and taught something: replaced first, as a sleep would.
        Sleeper stale = KeepTime.threadSleeper();
        stale.estimator().observe(900_000, 7_000);
        KeepTime.setDefaultProfile(null);
        KeepTime.setDefaultProfile(profile); // the same profile, a new setting
        Profile p = KeepTime.threadProfile();
        assertModel(profile, p);
        Sleeper now = KeepTime.threadSleeper();
        assertNotSame(stale, now);
        assertStartedFrom(profile, now);
        assertEquals(p, KeepTime.threadProfile());
        assertSame(now, KeepTime.threadSleeper());
        assertEquals(List.of(), lookedUp); // set before any default sleeper: the environment never read
    }

    @Test
    void afterRealSleepsItIsTheThreadSleepersProfileAndRoundTrips() throws Exception {
        long[] lengths = {300_000, 1_000_000, 2_000_000};
        for (int i = 0; i < 30; i++) {
            long start = System.nanoTime();
            KeepTime.sleepNanos(lengths[i % lengths.length]);
            assertTrue(System.nanoTime() - start >= lengths[i % lengths.length], "ended early");
        }
        Sleeper s = KeepTime.threadSleeper();
        SleeperStats stats = s.stats();
        long sleeps = s.estimator().sleeps();
        Profile model = Profile.of(s.estimator(), ProfileTest.HERE);
        // Every sleep that had to wait is counted, in the stats and in the model alike; a real
        // sleep whose deadline had passed when it began (its thread descheduled that long, on a
        // loaded machine) returns at once and counts in neither: an invariant, not a count.
        assertEquals(stats.sleeps(), sleeps);
        assertTrue(sleeps >= 1 && sleeps <= 30, "sleeps counted: " + sleeps);

        Profile p = KeepTime.threadProfile();
        // The same sleeper, nothing recorded or reset by the call.
        assertSame(s, KeepTime.threadSleeper());
        assertEquals(stats, s.stats());
        assertEquals(sleeps, s.estimator().sleeps());
        assertEquals(model, Profile.of(s.estimator(), ProfileTest.HERE));

        assertEquals(s.profile(), p);
        assertEquals(Fingerprint.thisMachine(), p.machine());
        assertTrue(Arrays.stream(p.samples()).sum() > 0, "the OS waits' wake-ups: " + p);
        assertNotEquals(fresh, p);
        // Round trips on this machine (the machine checked), as text and as a file.
        Profile parsed = Profile.parse(p.text());
        assertEquals(p, parsed);
        assertEquals(p.text(), parsed.text());
        Path file = dir.resolve("app.profile");
        p.write(file);
        Profile loaded = Profile.load(file);
        assertEquals(p, loaded);
        // Loaded, it answers as the thread sleeper does.
        assertStartedFrom(Profile.of(s.estimator(), ProfileTest.HERE), Sleeper.builder().profile(loaded).build());

        // The next sleep still runs on the same sleeper, its stats going on from where they were.
        KeepTime.sleepNanos(1_000_000);
        assertSame(s, KeepTime.threadSleeper());
        long next = s.stats().sleeps();
        assertTrue(next == stats.sleeps() || next == stats.sleeps() + 1, "sleeps counted after one more: " + next);
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
    }

    @Test
    void theEnvironmentsProfileIsWhatAThreadThatHasNotSleptGives() throws Exception {
        Path file = dir.resolve("host.profile");
        onThisMachine.write(file);
        variables.put("KEEPTIME_PROFILE", file.toString());
        assertEquals(List.of(), lookedUp);

        FirstCall c = firstCallOnANewThread(); // the first default sleeper: it reads the environment
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertModel(profile, c.first());
        assertEquals(onThisMachine, c.first());
        assertMadeOnceAndUnslept(c, profile);
        // Read once: this thread (stale since the reset) and another new one take the same, nothing looked up again.
        Profile here = KeepTime.threadProfile();
        assertModel(profile, here);
        assertStartedFrom(profile, KeepTime.threadSleeper());
        assertModel(profile, firstCallOnANewThread().first());
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals("", warned.toString(StandardCharsets.UTF_8));
    }

    @Test
    void thePropertysProfileComesFirstAndIsReadOnce() throws Exception {
        Path file = dir.resolve("host.profile");
        onThisMachine.write(file);
        properties.put("keeptime.profile", file.toString());
        variables.put("KEEPTIME_PROFILE", dir.resolve("missing.profile").toString()); // never read
        assertModel(profile, KeepTime.threadProfile());
        assertModel(profile, firstCallOnANewThread().first());
        assertEquals(List.of("keeptime.profile"), lookedUp);
        assertEquals("", warned.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aFileThatCannotBeLoadedGivesAFreshSleepersProfileAndOneWarning() throws Exception {
        Path missing = dir.resolve("missing.profile");
        variables.put("KEEPTIME_PROFILE", missing.toString());
        assertEquals(fresh, KeepTime.threadProfile());
        assertStartedFrom(empty, KeepTime.threadSleeper());
        assertEquals(fresh, firstCallOnANewThread().first());
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals("keeptime: KEEPTIME_PROFILE=" + missing + ": " + missing + ": cannot read the profile: no such file"
                + EnvironmentProfileTest.FRESH + System.lineSeparator(), warned.toString(StandardCharsets.UTF_8));
    }

    @Test
    void itIsWhatTheThreadsOwnSleeperLearnedNotAnotherThreads() throws Exception {
        KeepTime.setDefaultProfile(profile);
        Sleeper mine = KeepTime.threadSleeper();
        mine.estimator().observe(400_000, 9_000); // this thread's only
        Profile p = KeepTime.threadProfile();
        assertEquals(mine.profile(), p);
        assertNotEquals(onThisMachine, p);
        assertEquals(onThisMachine, onNewThread(KeepTime::threadProfile));
        assertSame(mine, KeepTime.threadSleeper());
    }

    /** The README's workflow: save at the end of a run, start the next from it. */
    @Test
    void whatOneRunSavesStartsTheNextRunsSleepers() throws Exception {
        KeepTime.sleepNanos(1_000_000);
        Path file = dir.resolve("app.profile");
        KeepTime.threadProfile().write(file);
        Profile saved = Profile.load(file);
        // The next run: nothing set, the property names the file.
        unread();
        lookedUp.clear();
        properties.put("keeptime.profile", file.toString());
        FirstCall c = firstCallOnANewThread();
        assertEquals(saved, c.first());
        assertEquals(0, c.sleeper().stats().sleeps());
        assertEquals(Profile.of(saved.estimator(), ProfileTest.HERE), Profile.of(c.sleeper().estimator(), ProfileTest.HERE));
        assertEquals(List.of("keeptime.profile"), lookedUp);
    }
}
