package dev.keeptime;

import dev.keeptime.Profile.Fingerprint;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test's own system properties, environment and warning stream for the
 * default profile's lookups ({@link KeepTime#resetDefaultProfile}): before
 * each test nothing is set and nothing read, after it the process's own
 * sources are back, not read yet. The real environment is never changed.
 * And a learned model to name there.
 */
abstract class EnvironmentFixture {
    /** A learned model, made on {@link ProfileTest#HERE} (as {@link DefaultProfileTest#assertStartedFrom} compares). */
    static Profile profile;
    /** The same model made on this machine: the file the environment names. */
    static Profile onThisMachine;
    /** The empty estimator's profile on {@link ProfileTest#HERE}: what a fresh sleeper answers. */
    static Profile empty;

    @TempDir
    Path dir;

    @BeforeAll
    static void learnModel() throws InterruptedException {
        MarginEstimator e = ProfileTest.learnedOnSim().estimator();
        profile = Profile.of(e, ProfileTest.HERE);
        onThisMachine = Profile.of(e, Fingerprint.thisMachine());
        empty = Profile.of(new MarginEstimator(), ProfileTest.HERE);
    }

    /** The test's system properties and environment. */
    final Map<String, String> properties = new HashMap<>();
    final Map<String, String> variables = new HashMap<>();
    /** The keys looked up, in order, through either. */
    final List<String> lookedUp = Collections.synchronizedList(new ArrayList<>());
    final ByteArrayOutputStream warned = new ByteArrayOutputStream();

    /** Nothing set and nothing read, the environment this test's. */
    @BeforeEach
    void unread() {
        PrintStream warnings = new PrintStream(warned, true, StandardCharsets.UTF_8);
        KeepTime.resetDefaultProfile(key -> {
            lookedUp.add(key);
            return properties.get(key);
        }, key -> {
            lookedUp.add(key);
            return variables.get(key);
        }, () -> warnings);
    }

    /** Back to the process's own state: the real environment, not read yet. */
    @AfterEach
    void restore() {
        KeepTime.resetDefaultProfile();
    }

    /** What was written to the warning stream. */
    String warnings() {
        return warned.toString(StandardCharsets.UTF_8);
    }
}
