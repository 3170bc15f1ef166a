package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Replays the language-neutral vectors in {@code spec/vectors/} unchanged.
 * Their directory is the system property {@code keeptime.vectors} (set by the
 * pom), else {@code ../spec/vectors} relative to the working directory.
 */
class VectorsTest {
    static Path vectorsDir() {
        return Path.of(System.getProperty("keeptime.vectors", "../spec/vectors"));
    }

    static JsonNode load(String name) throws IOException {
        return new ObjectMapper().readTree(Files.readString(vectorsDir().resolve(name)));
    }

    /** A JSON integer as an unsigned 64-bit value in a long (u64::MAX → -1L). */
    static long u64(JsonNode n) {
        assertTrue(n.isIntegralNumber(), () -> "not an integer: " + n);
        return n.bigIntegerValue().longValue();
    }

    static long[] u64s(JsonNode array) {
        long[] out = new long[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = u64(array.get(i));
        }
        return out;
    }

    static Stream<DynamicTest> perCase(JsonNode root, java.util.function.Consumer<JsonNode> replay) {
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : root.get("cases")) {
            tests.add(DynamicTest.dynamicTest(c.get("name").asText(), () -> replay.accept(c)));
        }
        assertTrue(tests.size() > 0, "no cases");
        return tests.stream();
    }

    // ------------------------------------------------------------- estimator

    @TestFactory
    Stream<DynamicTest> estimator() throws IOException {
        JsonNode root = load("estimator.json");
        JsonNode k = root.get("constants");
        assertEquals(MarginEstimator.BUCKETS, k.get("BUCKETS").asInt());
        assertEquals(MarginEstimator.WINDOW, k.get("WINDOW").asInt());
        assertEquals(MarginEstimator.HORIZON, k.get("HORIZON").asLong());
        assertEquals(MarginEstimator.DEFAULT_MARGIN_NS, k.get("DEFAULT_MARGIN_NS").asLong());
        assertEquals(MarginEstimator.HEADROOM_NS, k.get("HEADROOM_NS").asLong());
        assertEquals(MarginEstimator.MAX_SAMPLE_NS, k.get("MAX_SAMPLE_NS").asLong());
        assertEquals(Sleeper.MIN_OS_WAIT_NS, k.get("MIN_OS_WAIT_NS").asLong());
        assertEquals(Sleeper.SPLIT_NS, k.get("SPLIT_NS").asLong());
        assertEquals(Sleeper.LONG_BUCKET, k.get("LONG_BUCKET").asInt());
        assertEquals(MarginEstimator.OUTLIER_SHARE, k.get("OUTLIER_SHARE").asInt());
        return perCase(root, VectorsTest::replayEstimator);
    }

    static void replayEstimator(JsonNode c) {
        String name = c.get("name").asText();
        MarginEstimator e = new MarginEstimator();
        int i = 0;
        for (JsonNode step : c.get("steps")) {
            String where = name + " step " + i++;
            switch (step.get("op").asText()) {
                case "begin_sleep":
                    e.beginSleep();
                    break;
                case "observe": {
                    e.observe(u64(step.get("wait_ns")), u64(step.get("overshoot_ns")));
                    JsonNode x = step.get("expect");
                    for (int b = 0; b < MarginEstimator.BUCKETS; b++) {
                        assertEquals(u64(x.get("margins_ns").get(b)), e.margin(b), where + " margin b" + b);
                        assertEquals(u64(x.get("compensations_ns").get(b)), e.compensation(b), where + " comp b" + b);
                        assertEquals(u64(x.get("live").get(b)), e.liveSamples(b), where + " live b" + b);
                    }
                    break;
                }
                case "plan_exact":
                    assertEquals(plan(step), WaitPlan.exact(e, u64(step.get("remaining_ns")), u64(step.get("min_spin_ns"))), where);
                    break;
                case "plan_efficient":
                    assertEquals(plan(step), WaitPlan.efficient(e, u64(step.get("remaining_ns"))), where);
                    break;
                default:
                    throw new AssertionError(where + ": unknown op " + step.get("op"));
            }
        }
        JsonNode fin = c.get("final");
        for (int b = 0; b < MarginEstimator.BUCKETS; b++) {
            assertEquals(u64(fin.get("margins_ns").get(b)), e.margin(b), name + " final margin b" + b);
            assertEquals(u64(fin.get("compensations_ns").get(b)), e.compensation(b), name + " final comp b" + b);
        }
    }

    /** The expected plan: {@code null} (spin / none) is {@link WaitPlan#NONE}. */
    static long plan(JsonNode step) {
        JsonNode w = step.get("expect_wait_ns");
        return w.isNull() ? WaitPlan.NONE : u64(w);
    }

    // ------------------------------------------------------------- sleep

    @TestFactory
    Stream<DynamicTest> sleep() throws IOException {
        return perCase(load("sleep.json"), VectorsTest::replaySleep);
    }

    static void replaySleep(JsonNode c) {
        String name = c.get("name").asText();
        SimPlatform sim = new SimPlatform(u64(c.get("start_ns")));
        sim.setSpinStep(u64(c.get("spin_step_ns")));
        sim.setYieldStep(u64(c.get("yield_step_ns")));
        sim.setDefaultOvershoot(u64(c.get("default_overshoot_ns")));
        Mode mode = Mode.fromSpecName(c.get("mode").asText());
        long minSpin = c.has("min_spin_ns") ? u64(c.get("min_spin_ns")) : 0;
        Sleeper sleeper = Sleeper.builder().mode(mode).platform(sim).build();
        if (minSpin != 0) {
            sleeper.setMinSpin(Duration.ofNanos(minSpin));
        }
        int i = 0;
        for (JsonNode sp : c.get("sleeps")) {
            String where = name + " sleep " + i++;
            sim.advanceTo(u64(sp.get("at_ns")));
            sim.scriptOvershoots(u64s(sp.get("overshoots_ns")));
            sim.scriptInterrupts(u64s(sp.get("interrupts_after_ns")));
            sim.setSpinSlotsFree(sp.get("spin_slots_free").asBoolean());
            sim.clearWaits();
            long deadline = u64(sp.get("deadline_ns"));
            long returned;
            try {
                returned = sleeper.sleepUntil(deadline);
            } catch (InterruptedException e) {
                throw new AssertionError(where + ": interrupted", e);
            }
            JsonNode x = sp.get("expect");
            assertEquals(u64(x.get("returned_ns")), returned, where + ": returned");
            JsonNode waits = x.get("waits");
            List<SimPlatform.Wait> got = sim.waits();
            assertEquals(waits.size(), got.size(), where + ": number of OS waits " + got);
            for (int w = 0; w < got.size(); w++) {
                JsonNode e = waits.get(w);
                SimPlatform.Wait g = got.get(w);
                String at = where + " wait " + w;
                assertEquals(u64(e.get(0)), g.issuedNs(), at + " issued");
                assertEquals(u64(e.get(1)), g.targetNs(), at + " target");
                assertEquals(u64(e.get(2)), g.wokeNs(), at + " woke");
                assertEquals(e.get(3).asBoolean(), g.interrupted(), at + " interrupted");
            }
            if (mode != Mode.EFFICIENT) {
                assertTrue(U64.ge(returned, deadline), where + ": early");
            }
        }
    }

    // ------------------------------------------------------------- ticker

    @TestFactory
    Stream<DynamicTest> ticker() throws IOException {
        return perCase(load("ticker.json"), VectorsTest::replayTicker);
    }

    static void replayTicker(JsonNode c) {
        String name = c.get("name").asText();
        Schedule sch = new Schedule(u64(c.get("start_ns")), u64(c.get("period_ns")),
                MissedTicks.fromSpecName(c.get("policy").asText()));
        int i = 0;
        for (JsonNode step : c.get("steps")) {
            String where = name + " step " + i++;
            if (step.has("tick_at")) {
                JsonNode x = step.get("expect");
                Tick t = sch.poll(u64(step.get("tick_at")));
                if (t == null) {
                    assertTrue(!x.get("wait_until_ns").isNull(), where + ": waited, expected an immediate tick");
                    assertEquals(u64(x.get("wait_until_ns")), sch.nextDeadlineNs(), where + ": wait");
                    t = sch.woke(u64(step.get("wake_ns")));
                } else {
                    assertNull(x.get("wait_until_ns").isNull() ? null : x.get("wait_until_ns"),
                            where + ": expected a wait");
                }
                assertEquals(u64(x.get("index")), t.index(), where + ": index");
                assertEquals(u64(x.get("scheduled_ns")), t.scheduledNanos(), where + ": scheduled");
                assertEquals(u64(x.get("lateness_ns")), t.latenessNanos(), where + ": lateness");
                assertEquals(u64(x.get("skipped")), t.skipped(), where + ": skipped");
            } else if (step.has("reset_at")) {
                sch.reset(u64(step.get("reset_at")));
            } else if (step.has("set_period")) {
                boolean rejected = !sch.setPeriod(u64(step.get("set_period")));
                assertEquals(step.get("expect_error").asBoolean(), rejected, where + ": set_period");
            } else if (step.has("expect_stats")) {
                JsonNode x = step.get("expect_stats");
                TickerStats st = sch.stats();
                assertEquals(u64(x.get("ticks")), st.ticks(), where + ": ticks");
                assertEquals(u64(x.get("missed")), st.missed(), where + ": missed");
                assertEquals(u64(x.get("skipped")), st.skipped(), where + ": skipped");
                assertEquals(u64(x.get("worst_lateness_ns")), st.worstLatenessNanos(), where + ": worst lateness");
            } else {
                throw new AssertionError(where + ": unknown step " + step);
            }
        }
    }
}
