package dev.keeptime;

import static dev.keeptime.DefaultProfileTest.assertStartedFrom;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keeptime.Profile.Fingerprint;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The default profile from the environment: {@code keeptime.profile}, else
 * {@code KEEPTIME_PROFILE}, read once when a default sleeper is first made,
 * unless the program set or cleared the default before
 * ({@code spec/estimator.md}, <em>Default sleepers</em>, <em>From the
 * environment</em>). The property, the variable and the warning stream are the
 * test's ({@link KeepTime#resetDefaultProfile(java.util.function.Function,
 * java.util.function.Function, java.util.function.Supplier)}), never the real
 * ones; models are compared exactly.
 */
class EnvironmentProfileTest extends EnvironmentFixture {
    static final String FRESH = "; keeptime's own sleepers start fresh";

    /** Another model, for the program's own setting. */
    static Profile other;

    @BeforeAll
    static void learn() throws InterruptedException {
        MarginEstimator o = new MarginEstimator();
        for (int i = 0; i < 50; i++) {
            o.observe(400_000, 9_000 + i * 300L);
        }
        o.observeCost(400_000, 4_000);
        other = Profile.of(o, ProfileTest.HERE);
        assertNotEquals(empty, profile);
        assertNotEquals(empty, other);
        assertNotEquals(profile, other);
    }

    /** {@code onThisMachine} written to a file. */
    Path goodFile() throws IOException {
        Path p = dir.resolve("host.profile");
        onThisMachine.write(p);
        return p;
    }

    /** The tickers made without a sleeper. */
    private static List<Ticker> tickersWithoutASleeper() {
        return List.of(
                Ticker.every(Duration.ofMillis(1)),
                Ticker.every(Duration.ofMillis(2), MissedTicks.BURST),
                Ticker.builder(Duration.ofMillis(3)).build());
    }

    /** The sleeper a new thread's first {@link KeepTime#threadSleeper()} gives. */
    private static Sleeper newThreadsSleeper() throws InterruptedException {
        AtomicReference<Sleeper> s = new AtomicReference<>();
        Thread t = new Thread(() -> s.set(KeepTime.threadSleeper()));
        t.start();
        t.join();
        return s.get();
    }

    private static void assertTickersStartFrom(Profile expected) {
        for (Ticker t : tickersWithoutASleeper()) {
            assertStartedFrom(expected, t.sleeper());
            t.close();
        }
    }

    @Test
    void theVariablesProfileStartsTheThreadSleepersAndTickers() throws IOException, InterruptedException {
        Path file = goodFile();
        variables.put("KEEPTIME_PROFILE", file.toString());
        Sleeper first = KeepTime.threadSleeper(); // this thread's, made before the reset: replaced
        assertStartedFrom(profile, first);
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertSame(first, KeepTime.threadSleeper());
        assertTickersStartFrom(profile);
        assertStartedFrom(profile, newThreadsSleeper()); // a thread's first sleeper
        // Read once: the file can go, and nothing is looked up again.
        Files.delete(file);
        assertTickersStartFrom(profile);
        assertStartedFrom(profile, newThreadsSleeper());
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals("", warnings());
    }

    @Test
    void aTickerMadeFirstReadsItAndTheThreadSleepersShareIt() throws IOException, InterruptedException {
        variables.put("KEEPTIME_PROFILE", goodFile().toString());
        Ticker t = Ticker.every(Duration.ofMillis(1));
        assertStartedFrom(profile, t.sleeper());
        t.close();
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertStartedFrom(profile, KeepTime.threadSleeper());
        assertStartedFrom(profile, newThreadsSleeper());
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals("", warnings());
    }

    @Test
    void aStaticSleepIsStartedFromIt() throws IOException, InterruptedException {
        variables.put("KEEPTIME_PROFILE", goodFile().toString());
        KeepTime.sleepNanos(1_000_000);
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        Sleeper s = KeepTime.threadSleeper();
        // One sleep, or none: the deadline is taken before the thread's
        // sleeper is made, and reading the profile on a cold JVM (a fresh
        // CI clone) can take longer than the 1 ms; a sleep whose deadline
        // has passed returns at once and is not counted (spec/sleep.md).
        assertTrue(s.stats().sleeps() <= 1, () -> s.stats().toString());
        // The 10 ms bucket, untouched by a 1 ms sleep, holds the profile's wake-ups.
        int b = MarginEstimator.bucketOf(10_000_000);
        MarginEstimator want = Sleeper.builder().platform(new SimPlatform(0)).profile(profile).build().estimator();
        assertTrue(want.liveSamples(b) > 0);
        assertEquals(want.liveSamples(b), s.estimator().liveSamples(b));
        assertEquals(want.margin(b, 10_000), s.estimator().margin(b, 10_000));
        assertEquals("", warnings());
    }

    @Test
    void thePropertyComesBeforeTheVariable() throws IOException {
        properties.put("keeptime.profile", goodFile().toString());
        variables.put("KEEPTIME_PROFILE", dir.resolve("missing.profile").toString()); // never read
        assertStartedFrom(profile, KeepTime.threadSleeper());
        assertTickersStartFrom(profile);
        assertEquals(List.of("keeptime.profile"), lookedUp);
        assertEquals("", warnings());
    }

    @Test
    void anEmptyPropertyLeavesItToTheVariable() throws IOException {
        properties.put("keeptime.profile", "");
        variables.put("KEEPTIME_PROFILE", goodFile().toString());
        assertStartedFrom(profile, KeepTime.threadSleeper());
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals("", warnings());
    }

    @Test
    void aPropertyNamingABadFileIsWarnedAboutAndTheVariableNotRead() throws IOException {
        Path missing = dir.resolve("missing.profile");
        properties.put("keeptime.profile", missing.toString());
        variables.put("KEEPTIME_PROFILE", goodFile().toString());
        assertStartedFrom(empty, KeepTime.threadSleeper());
        assertEquals(List.of("keeptime.profile"), lookedUp);
        assertEquals("keeptime: keeptime.profile=" + missing + ": " + missing + ": cannot read the profile: no such file"
                + FRESH + System.lineSeparator(), warnings());
    }

    @Test
    void aFileThatCannotBeLoadedIsOneWarningAndFreshSleepers() throws IOException, InterruptedException {
        Path missing = dir.resolve("missing.profile");
        Path malformed = dir.resolve("malformed.profile");
        Files.writeString(malformed, "hello\n", StandardCharsets.UTF_8);
        Path foreign = dir.resolve("foreign.profile");
        String cpus = Fingerprint.thisMachine().cpusOnline();
        String text = onThisMachine.text();
        assertTrue(text.contains("\ncpus_online " + cpus + "\n"), text);
        Files.writeString(foreign, text.replace("\ncpus_online " + cpus + "\n", "\ncpus_online " + cpus + "0\n"),
                StandardCharsets.UTF_8);
        // The path, then the load exception's own message, which names the file again (an OS error's says
        // only the path, so keeptime says what it could not do and why).
        Map<Path, String> messages = Map.of(
                missing, missing + ": cannot read the profile: no such file",
                malformed, malformed + ": line 1: not a keeptime profile: expected the header"
                        + " \"keeptime-profile 1\", found \"hello\"",
                foreign, foreign + ": line 4: made on another machine: cpus_online is \"" + cpus
                        + "0\" in the profile, \"" + cpus + "\" here (load it anyway with Profile.Option.IGNORE_MACHINE)",
                dir, dir + ": cannot read the profile: Is a directory");
        for (Map.Entry<Path, String> m : messages.entrySet()) {
            unread();
            warned.reset();
            lookedUp.clear();
            variables.put("KEEPTIME_PROFILE", m.getKey().toString());
            assertStartedFrom(empty, KeepTime.threadSleeper());
            assertTickersStartFrom(empty);
            assertStartedFrom(empty, newThreadsSleeper());
            KeepTime.sleepNanos(100_000);
            assertEquals("keeptime: KEEPTIME_PROFILE=" + m.getKey() + ": " + m.getValue() + FRESH
                    + System.lineSeparator(), warnings());
            assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        }
    }

    @Test
    void clearingTheDefaultFirstMeansItIsNeverRead() throws IOException, InterruptedException {
        variables.put("KEEPTIME_PROFILE", dir.resolve("missing.profile").toString());
        KeepTime.setDefaultProfile(null);
        assertStartedFrom(empty, KeepTime.threadSleeper());
        assertTickersStartFrom(empty);
        assertStartedFrom(empty, newThreadsSleeper());
        KeepTime.sleepNanos(100_000);
        assertEquals(List.of(), lookedUp);
        assertEquals("", warnings());
    }

    @Test
    void settingTheDefaultFirstMeansItIsNeverRead() throws IOException, InterruptedException {
        variables.put("KEEPTIME_PROFILE", goodFile().toString());
        KeepTime.setDefaultProfile(other);
        assertStartedFrom(other, KeepTime.threadSleeper());
        assertTickersStartFrom(other);
        assertStartedFrom(other, newThreadsSleeper());
        assertEquals(List.of(), lookedUp);
        assertEquals("", warnings());
    }

    @Test
    void anEmptyOrUnsetValueReadsNothing() throws InterruptedException {
        properties.put("keeptime.profile", "");
        variables.put("KEEPTIME_PROFILE", "");
        assertStartedFrom(empty, KeepTime.threadSleeper());
        assertTickersStartFrom(empty);
        assertStartedFrom(empty, newThreadsSleeper());
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals("", warnings());

        unread();
        lookedUp.clear();
        properties.clear();
        variables.clear();
        assertStartedFrom(empty, KeepTime.threadSleeper());
        assertTickersStartFrom(empty);
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals("", warnings());
    }

    @Test
    void aLaterSettingReplacesTheEnvironmentsProfile() throws IOException {
        variables.put("KEEPTIME_PROFILE", goodFile().toString());
        Sleeper fromEnvironment = KeepTime.threadSleeper();
        assertStartedFrom(profile, fromEnvironment);
        Ticker before = Ticker.every(Duration.ofMillis(1));
        KeepTime.setDefaultProfile(other);
        Sleeper set = KeepTime.threadSleeper();
        assertStartedFrom(other, set);
        assertTickersStartFrom(other);
        assertStartedFrom(profile, before.sleeper()); // a ticker that exists keeps its sleeper
        before.close();
        KeepTime.setDefaultProfile(null);
        assertStartedFrom(empty, KeepTime.threadSleeper());
        assertTickersStartFrom(empty);
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals("", warnings());
    }

    @Test
    void aSleeperTheProgramBuildsNeverReadsIt() throws IOException, InterruptedException {
        variables.put("KEEPTIME_PROFILE", goodFile().toString());
        Sleeper own = Sleeper.builder().build();
        List<Sleeper> built = List.of(Sleeper.create(), Sleeper.of(Mode.EFFICIENT), own);
        Ticker every = Ticker.every(Duration.ofMillis(1), MissedTicks.SKIP, own);
        Ticker builder = Ticker.builder(Duration.ofMillis(1)).sleeper(own).build();
        assertSame(own, every.sleeper());
        assertSame(own, builder.sleeper());
        for (Sleeper s : built) {
            assertEquals(0, s.estimator().sleeps());
            assertEquals(empty, Profile.of(s.estimator(), ProfileTest.HERE));
        }
        assertEquals(List.of(), lookedUp);
        // Still unread: the first default sleeper reads it.
        assertStartedFrom(profile, KeepTime.threadSleeper());
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals(empty, Profile.of(own.estimator(), ProfileTest.HERE));
        assertEquals("", warnings());
    }

    @Test
    void concurrentFirstSleepersLoadItOnceAndAllSeeIt() throws Exception {
        Path p = goodFile();
        CountDownLatch go = new CountDownLatch(1);
        KeepTime.resetDefaultProfile(key -> {
            lookedUp.add(key);
            return null;
        }, key -> {
            lookedUp.add(key);
            try {
                Thread.sleep(20); // the others arrive while the first is reading
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return p.toString();
        }, () -> new PrintStream(warned, true, StandardCharsets.UTF_8));
        int n = 8;
        List<AtomicReference<Sleeper>> got = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            AtomicReference<Sleeper> s = new AtomicReference<>();
            got.add(s);
            boolean ticker = i % 2 == 1;
            threads.add(new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                s.set(ticker ? Ticker.every(Duration.ofMillis(1)).sleeper() : KeepTime.threadSleeper());
            }));
        }
        threads.forEach(Thread::start);
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        for (AtomicReference<Sleeper> s : got) {
            assertStartedFrom(profile, s.get());
        }
        assertEquals(List.of("keeptime.profile", "KEEPTIME_PROFILE"), lookedUp);
        assertEquals("", warnings());
    }
}
