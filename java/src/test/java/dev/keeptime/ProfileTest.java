package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.keeptime.Profile.Fingerprint;
import dev.keeptime.ProfileException.Code;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/** Host profiles: {@code spec/vectors/profile.json} replayed, round trips, machine checks, cut files. */
class ProfileTest {
    /** "This machine" of the tests that do not read the real one. */
    static final Fingerprint HERE = new Fingerprint("AuthenticAMD", "AMD EPYC", "2", "KVM", "haltpoll", "tsc", "6.18.44");

    // ------------------------------------------------------------- vectors

    @TestFactory
    Stream<DynamicTest> vectors() throws IOException {
        JsonNode root = VectorsTest.load("profile.json");
        JsonNode k = root.get("constants");
        assertEquals(MarginEstimator.BUCKETS, k.get("BUCKETS").asInt());
        assertEquals(MarginEstimator.WINDOW, k.get("WINDOW").asInt());
        assertEquals(MarginEstimator.HORIZON, k.get("HORIZON").asLong());
        assertEquals(MarginEstimator.MAX_SAMPLE_NS, k.get("MAX_SAMPLE_NS").asLong());
        assertEquals(Profile.VERSION, k.get("version").asInt());
        long[] shares = VectorsTest.u64s(k.get("check_shares_ppm"));
        assertTrue(shares.length > 0, "no check_shares_ppm");
        JsonNode m = root.get("machine");
        assertEquals(Fingerprint.KEYS.size(), m.size(), "machine keys");
        List<String> values = new ArrayList<>();
        for (String key : Fingerprint.KEYS) {
            assertTrue(m.has(key), "machine: no " + key);
            values.add(m.get(key).asText());
        }
        Fingerprint machine = Fingerprint.of(values);
        int[] seen = new int[2]; // loaded, refused
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : root.get("cases")) {
            tests.add(DynamicTest.dynamicTest(c.get("name").asText(), () -> replay(c, machine, shares, seen)));
        }
        tests.add(DynamicTest.dynamicTest("every kind of case ran", () -> {
            assertTrue(seen[0] > 0 && seen[1] > 0, "loaded " + seen[0] + ", refused " + seen[1]);
        }));
        return tests.stream();
    }

    static void replay(JsonNode c, Fingerprint machine, long[] shares, int[] seen) {
        String name = c.get("name").asText();
        if (!c.has("text")) { // an estimator case: the same wake-ups observed one by one
            VectorsTest.replayEstimator(c, shares);
            return;
        }
        boolean ignore = VectorsTest.bool(c, "ignore_machine");
        Profile p;
        try {
            p = Profile.parse(c.get("text").asText(), Profile.Option.IGNORE_MACHINE);
            if (!ignore) {
                p.checkMachine(machine);
            }
        } catch (ProfileException e) {
            JsonNode x = c.get("expect_error");
            if (x == null) {
                throw new AssertionError(name + ": refused: " + e.getMessage(), e);
            }
            seen[1]++;
            assertEquals(x.get("code").asText(), e.code().specName(), name + ": " + e.getMessage());
            assertEquals(x.get("line").asInt(), e.line(), name + ": " + e.getMessage());
            assertEquals(x.has("key") ? Optional.of(x.get("key").asText()) : Optional.empty(), e.key(), name);
            assertFalse(e.getMessage().contains("\n"), name + ": one line");
            return;
        }
        assertFalse(c.has("expect_error"), name + ": loaded, expected " + c.get("expect_error"));
        seen[0]++;
        VectorsTest.replayEstimator(p.estimator(), c, shares);
    }

    // ------------------------------------------------------------- round trip

    /** The sleep lengths of {@link #learnedOnSim()}, ns. */
    static final long[] LEARNED_LENGTHS = {250_000, 1_000_000, 2_500_000, 10_000_000};

    /**
     * A simulated sleeper after 600 sleeps of four lengths with scripted
     * overshoots: several live buckets, each with a cost.
     */
    static Sleeper learnedOnSim() throws InterruptedException {
        SimPlatform sim = new SimPlatform(1_000_000);
        sim.setDefaultOvershoot(30_000);
        long[] overs = new long[3000];
        for (int i = 0; i < overs.length; i++) {
            overs[i] = 2_000 + (i * 7_919L) % 60_000;
        }
        sim.scriptOvershoots(overs);
        Sleeper s = Sleeper.builder().platform(sim).build();
        for (int i = 0; i < 600; i++) {
            s.sleepUntil(sim.nowNs() + LEARNED_LENGTHS[i % 4]);
        }
        return s;
    }

    @Test
    void aSleepersProfileStartsANewSleeperThatAnswersTheSame() throws Exception {
        Sleeper first = learnedOnSim();
        MarginEstimator a = first.estimator();
        a.observe(40_000, 300_000); // a young bucket, one outlier
        Profile p = Profile.of(a, HERE);
        Profile back = Profile.parse(p.text(), Profile.Option.IGNORE_MACHINE);
        assertEquals(p, back);
        assertEquals(p.text(), back.text());
        back.checkMachine(HERE);

        Sleeper.Builder builder = Sleeper.builder().platform(new SimPlatform(0)).profile(back);
        Sleeper next = builder.build();
        MarginEstimator b = next.estimator();
        assertEquals(0, b.sleeps());
        int live = 0;
        for (int k = 0; k < MarginEstimator.BUCKETS; k++) {
            assertEquals(a.liveSamples(k), b.liveSamples(k), "live b" + k);
            assertEquals(a.cost(k), b.cost(k), "cost b" + k);
            assertEquals(a.compensation(k), b.compensation(k), "compensation b" + k);
            live += a.liveSamples(k);
            for (long share : new long[] {50_000, 10_000, 5_000, 1_000}) {
                String at = "b" + k + " at " + share;
                assertEquals(a.margin(k, share), b.margin(k, share), at);
                assertEquals(a.samples(k, share), b.samples(k, share), at);
                assertEquals(a.established(k, share), b.established(k, share), at);
                for (long g : new long[] {5_000, 20_000, 40_000, 70_000}) {
                    assertEquals(a.tail(k, share, g), b.tail(k, share, g), at + " tail " + g);
                    assertArrayEquals(a.splitCounts(k, share, g / 2, g), b.splitCounts(k, share, g / 2, g), at);
                }
            }
        }
        int sections = (int) Arrays.stream(p.samples()).filter(n -> n > 0).count();
        assertTrue(live > 0 && sections >= 2 && p.text().contains("\ncost "), p.toString());
        for (long rem : LEARNED_LENGTHS) {
            WaitPlan.Step step = new WaitPlan.Step(true, false, false);
            assertEquals(WaitPlan.exact(a, rem, 10_000, 0, step), WaitPlan.exact(b, rem, 10_000, 0, step), "plan " + rem);
        }
        // Each sleeper the builder builds starts from the profile afresh,
        // whatever another one has slept since.
        next.sleepUntil(next.platform().nowNs() + 1_000_000);
        assertEquals(1, next.estimator().sleeps());
        Sleeper again = builder.build();
        assertEquals(0, again.estimator().sleeps());
        assertEquals(back, Profile.of(again.estimator(), HERE));
        // A ticker waiting with a sleeper from a profile plans on it.
        Ticker t = Ticker.builder(java.time.Duration.ofMillis(1)).sleeper(again).build();
        assertEquals(b.margin(6, 10_000), t.sleeper().estimator().margin(6, 10_000));
    }

    // ------------------------------------------------------------- the machine

    @Test
    void aProfileFromAnotherMachineIsRefusedUnlessIgnored(@TempDir Path dir) throws IOException {
        MarginEstimator e = new MarginEstimator();
        e.observe(900_000, 20_000);
        e.observeCost(900_000, 9_000);
        Fingerprint other = new Fingerprint("AuthenticAMD", "AMD EPYC", "4", "KVM", "haltpoll", "hpet", "6.18.44");
        ProfileException x = assertThrows(ProfileException.class, () -> Profile.of(e, other).checkMachine(HERE));
        assertEquals(Code.MACHINE_MISMATCH, x.code());
        assertEquals(4, x.line());
        assertEquals(Optional.of("cpus_online"), x.key());
        assertEquals(Optional.of("4"), x.profileValue());
        assertEquals(Optional.of("2"), x.machineValue());
        assertEquals("line 4: made on another machine: cpus_online is \"4\" in the profile, \"2\" here"
                + " (load it anyway with Profile.Option.IGNORE_MACHINE)", x.getMessage());

        Fingerprint here = Fingerprint.thisMachine();
        Fingerprint foreign = new Fingerprint(here.cpuVendor(), here.cpuModel(), here.cpusOnline(),
                here.virtualization(), here.cpuidleDriver(), here.clocksource(), here.kernelRelease() + "-other");
        Path path = dir.resolve("host.profile");
        Profile.of(e, foreign).write(path);
        x = assertThrows(ProfileException.class, () -> Profile.load(path));
        assertEquals(Code.MACHINE_MISMATCH, x.code());
        assertEquals(8, x.line());
        assertEquals(Optional.of("kernel_release"), x.key());
        assertEquals(Optional.of(path.toString()), x.file());
        assertTrue(x.getMessage().startsWith(path + ": line 8: made on another machine: kernel_release is "),
                x.getMessage());
        Profile loaded = Profile.load(path, Profile.Option.IGNORE_MACHINE);
        assertEquals(foreign, loaded.machine());
        assertEquals(1, loaded.samples()[MarginEstimator.bucketOf(900_000)]);
        Sleeper s = Sleeper.builder().platform(new SimPlatform(0)).profile(loaded).build();
        assertEquals(9_000, s.estimator().cost(MarginEstimator.bucketOf(900_000)));

        // This machine's own profile, as a sleeper writes it, loads as is.
        Sleeper.builder().platform(new SimPlatform(0)).profile(loaded).build().writeProfile(path);
        assertEquals(here, Profile.load(path).machine());
        assertThrows(NoSuchFileException.class, () -> Profile.load(dir.resolve("missing")));
    }

    @Test
    void theFingerprintReadsTheFirstProcessorsVendor() {
        String x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n";
        String arm = "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nCPU implementer\t: 0x51\n";
        assertEquals(Optional.of("AuthenticAMD"), MachineProbe.parseCpuVendor(x86));
        assertEquals(Optional.of("0x41"), MachineProbe.parseCpuVendor(arm));
        assertEquals(Optional.empty(), MachineProbe.parseCpuVendor(""));
        for (String v : new String[] {"", " x", "a\nb", "a\r", null}) {
            assertEquals("-", Fingerprint.value(v));
        }
        assertEquals("AMD EPYC", Fingerprint.value("AMD EPYC"));
        Fingerprint here = Fingerprint.thisMachine();
        for (String v : here.values()) {
            assertEquals(Fingerprint.value(v), v, "this machine's value " + v);
        }
        assertThrows(NullPointerException.class, () -> new Fingerprint(null, "", "", "", "", "", ""));
    }

    // ------------------------------------------------------------- bad files

    @Test
    void aProfileCutAnywhereIsTruncated() throws ProfileException {
        MarginEstimator e = new MarginEstimator();
        for (int i = 0; i < 40; i++) {
            e.observe(60_000, 3_000 + i * 500L);
            e.observe(190_000, 12_345 + i * 1_000L);
        }
        e.observe(9_000_000, 80_000);
        e.observeCost(60_000, 2_400);
        e.observeCost(9_000_000, 3_300);
        byte[] text = Profile.of(e, HERE).text().getBytes(StandardCharsets.UTF_8);
        int lineEnds = 0;
        for (int n = 0; n < text.length - 1; n++) {
            byte[] cut = Arrays.copyOf(text, n);
            ProfileException x = assertThrows(ProfileException.class,
                    () -> Profile.parse(cut, Profile.Option.IGNORE_MACHINE), "cut after " + n + " bytes");
            assertEquals(Code.TRUNCATED, x.code(), "cut after " + n + " bytes: " + x.getMessage());
            int line = 1;
            for (int i = 0; i < n; i++) {
                line += text[i] == '\n' ? 1 : 0;
            }
            boolean atLineEnd = n == 0 || text[n - 1] == '\n';
            // The cut line, or the next one when the cut line reads as whole ("640000 14").
            if (x.line() != line && (atLineEnd || x.line() != line + 1)) {
                fail("cut after " + n + " bytes: line " + x.line() + ", want " + line);
            }
            lineEnds += n > 0 && atLineEnd ? 1 : 0;
        }
        int lines = 0;
        for (byte c : text) {
            lines += c == '\n' ? 1 : 0;
        }
        assertEquals(lines - 1, lineEnds);
        Profile.parse(text, Profile.Option.IGNORE_MACHINE);
        Profile.parse(Arrays.copyOf(text, text.length - 1), Profile.Option.IGNORE_MACHINE);
    }

    @Test
    void errorsNameTheLineAndWhatWasExpected() throws ProfileException {
        String base = Profile.of(new MarginEstimator(), HERE).text();
        assertError(bytes("keeptime-profile 1\n"), new byte[] {(byte) 0xff, '\n'}, Code.NOT_TEXT, 2,
                "line 2: not a profile: the text is not UTF-8");
        assertError(new byte[] {(byte) 0xc0, (byte) 0x80}, new byte[0], Code.NOT_TEXT, 1, null);
        ProfileException x = assertThrows(ProfileException.class, () -> Profile.parse("keeptime-profile 1\n\ud800\n"));
        assertEquals(Code.NOT_TEXT, x.code());
        assertEquals(2, x.line());
        assertError(bytes("hello"), new byte[0], Code.NOT_A_PROFILE, 1,
                "line 1: not a keeptime profile: expected the header \"keeptime-profile 1\", found \"hello\"");
        assertError(bytes("keeptime-profile "), new byte[0], Code.TRUNCATED, 1, null);
        assertError(bytes("keeptime-profile 12"), new byte[0], Code.UNSUPPORTED_VERSION, 1, null);
        assertError(new byte[0], new byte[0], Code.TRUNCATED, 1,
                "line 1: the profile ends here, cut short: expected the header \"keeptime-profile 1\"");
        String noEnd = base.replace("end\n", "");
        assertError(bytes(noEnd + "bucket 6 2\n640000 5000\n"), new byte[0], Code.TRUNCATED, 11,
                "line 11: the profile ends here, cut short: expected sample 2 of 2 of bucket 6, \"WAIT_NS OVERSHOOT_NS\"");
        assertError(bytes(noEnd + "bucket 6 1\n640000 5e3\nend\n"), new byte[0], Code.BAD_NUMBER, 10,
                "line 10: expected an overshoot in ns (a whole number), found \"5e3\"");
        assertError(bytes(noEnd + "bucket 6 1\n640000 9223372036854775808\nend\n"), new byte[0], Code.BAD_NUMBER, 10, null);
        Profile.parse(noEnd + "bucket 6 1\n640000 9223372036854775807\nend\n", Profile.Option.IGNORE_MACHINE);
        assertError(bytes(noEnd + "bucket 6 1\n1280000 5000\nend\n"), new byte[0], Code.BAD_BUCKET, 10,
                "line 10: a wait of 1280000 ns is in bucket 7, not in this section's bucket 6");
        assertError(bytes(noEnd + "cost 1 2\ncost 3 4\nend\n"), new byte[0], Code.BAD_BUCKET, 10, null);
        assertError(bytes(noEnd + "bucket 6 1\n64"), new byte[0], Code.TRUNCATED, 10, null);
        assertError(bytes(base + "end\n"), new byte[0], Code.AFTER_END, 10,
                "line 10: nothing may follow \"end\", found \"end\"");
        assertError(bytes(base.replace("cpu_model AMD EPYC", "cpu_model")), new byte[0], Code.BAD_LINE, 3,
                "line 3: expected the machine's \"cpu_model VALUE\", found \"cpu_model\"");
        assertError(bytes(noEnd + "y".repeat(70) + "\nend\n"), new byte[0], Code.BAD_LINE, 9,
                "line 9: expected a \"bucket B N\" section, a \"cost WAIT_NS CPU_NS\" line or \"end\", found \""
                        + "y".repeat(60) + "\"…");
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static void assertError(byte[] head, byte[] tail, Code code, int line, String message) {
        byte[] all = Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        ProfileException x = assertThrows(ProfileException.class, () -> Profile.parse(all, Profile.Option.IGNORE_MACHINE),
                () -> new String(all, StandardCharsets.UTF_8));
        assertEquals(code, x.code(), x.getMessage());
        assertEquals(line, x.line(), x.getMessage());
        if (message != null) {
            assertEquals(message, x.getMessage());
        }
    }
}
