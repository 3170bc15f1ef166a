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

    /** A required JSON boolean field. */
    static boolean bool(JsonNode o, String field) {
        JsonNode n = o.get(field);
        assertTrue(n != null && n.isBoolean(), () -> "not a boolean: " + field + " in " + o);
        return n.booleanValue();
    }

    /** A case's count field as an int, or {@code absent} when the case has none. */
    static int count(JsonNode o, String field, int absent) {
        JsonNode n = o.get(field);
        if (n == null) {
            return absent;
        }
        assertTrue(n.isIntegralNumber() && n.canConvertToInt() && n.asInt() >= 0, field + " = " + n);
        return n.asInt();
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
        assertEquals(MarginEstimator.BINS, k.get("BINS").asInt());
        assertEquals(MarginEstimator.HORIZON, k.get("HORIZON").asLong());
        assertEquals(MarginEstimator.DEFAULT_MARGIN_NS, k.get("DEFAULT_MARGIN_NS").asLong());
        assertEquals(MarginEstimator.DEFAULT_COST_NS, k.get("DEFAULT_COST_NS").asLong());
        assertEquals(MarginEstimator.COST_SAMPLE_EVERY, k.get("COST_SAMPLE_EVERY").asLong());
        assertEquals(MarginEstimator.MAX_SAMPLE_NS, k.get("MAX_SAMPLE_NS").asLong());
        assertEquals(Sleeper.MIN_OS_WAIT_NS, k.get("MIN_OS_WAIT_NS").asLong());
        List<Long> splits = new ArrayList<>();
        for (long x : u64s(k.get("SPLITS_NS"))) {
            splits.add(x);
        }
        assertEquals(Sleeper.SPLITS_NS, splits);
        assertEquals(Sleeper.EXPLORE_EVERY, u64(k.get("EXPLORE_EVERY")));
        assertEquals(Sleeper.EXPLORE_YOUNG_SLEEPS, u64(k.get("EXPLORE_YOUNG_SLEEPS")));
        assertEquals(Sleeper.EXPLORE_COST_DIV, u64(k.get("EXPLORE_COST_DIV")));
        assertEquals(MarginEstimator.STALE_SHARE_PPM, u64(k.get("STALE_SHARE_PPM")));
        assertEquals(MarginEstimator.STALE_MIN, u64(k.get("STALE_MIN")));
        assertEquals(MarginEstimator.STALE_DIV, u64(k.get("STALE_DIV")));
        assertEquals(MarginEstimator.YOUNG_HEADROOM_DIV, u64(k.get("YOUNG_HEADROOM_DIV")));
        long[] shares = u64s(k.get("check_shares_ppm"));
        return perCase(root, c -> replayEstimator(c, shares));
    }

    /** The state a {@code check} step and {@code final} compare, field by field. */
    static void assertState(JsonNode x, MarginEstimator e, long[] shares, String where) {
        for (int p = 0; p < shares.length; p++) {
            for (int b = 0; b < MarginEstimator.BUCKETS; b++) {
                assertEquals(u64(x.get("margins_ns").get(p).get(b)), e.margin(b, shares[p]),
                        where + " margin b" + b + " at " + shares[p] + " ppm");
            }
        }
        for (int b = 0; b < MarginEstimator.BUCKETS; b++) {
            assertEquals(u64(x.get("compensations_ns").get(b)), e.compensation(b), where + " comp b" + b);
            assertEquals(u64(x.get("costs_ns").get(b)), e.cost(b), where + " cost b" + b);
            assertEquals(u64(x.get("live").get(b)), e.liveSamples(b), where + " live b" + b);
        }
    }

    static void replayEstimator(JsonNode c, long[] shares) {
        replayEstimator(new MarginEstimator(), c, shares);
    }

    /** Runs a case's {@code steps} on {@code e}, then compares its {@code final} state. */
    static void replayEstimator(MarginEstimator e, JsonNode c, long[] shares) {
        String name = c.get("name").asText();
        int i = 0;
        for (JsonNode step : c.get("steps")) {
            String where = name + " step " + i++;
            switch (step.get("op").asText()) {
                case "begin_sleep":
                    e.beginSleep();
                    break;
                case "begin_sleeps":
                    for (long k = u64(step.get("count")); k > 0; k--) {
                        e.beginSleep();
                    }
                    break;
                case "observe":
                    e.observe(u64(step.get("wait_ns")), u64(step.get("overshoot_ns")));
                    break;
                case "observe_each": {
                    long wait = u64(step.get("wait_ns"));
                    for (long o : u64s(step.get("overshoots_ns"))) {
                        e.observe(wait, o);
                    }
                    break;
                }
                case "observe_cost":
                    e.observeCost(u64(step.get("wait_ns")), u64(step.get("cpu_ns")));
                    break;
                case "check":
                    assertState(step.get("expect"), e, shares, where);
                    break;
                case "plan_exact": {
                    WaitPlan.Step ps = new WaitPlan.Step(bool(step, "first"), bool(step, "explore"),
                            bool(step, "after_split"));
                    WaitPlan.Exact got = WaitPlan.exact(e, u64(step.get("remaining_ns")),
                            u64(step.get("budget_ppm")), u64(step.get("min_spin_ns")), ps);
                    JsonNode x = step.get("expect");
                    WaitPlan.Exact want = x.isNull() ? null
                            : new WaitPlan.Exact(u64(x.get("wait_ns")), bool(x, "split"),
                                    u64(x.get("rest_budget_ppm")), bool(x, "proven"));
                    assertEquals(want, got, where + " plan_exact " + step);
                    break;
                }
                case "plan_efficient": {
                    JsonNode w = step.get("expect_wait_ns");
                    long want = w.isNull() ? WaitPlan.NONE : u64(w);
                    assertEquals(want, WaitPlan.efficient(e, u64(step.get("remaining_ns"))), where);
                    break;
                }
                default:
                    throw new AssertionError(where + ": unknown op " + step.get("op"));
            }
        }
        assertState(c.get("final"), e, shares, name + " final");
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
        sim.setWaitCost(u64(c.get("wait_cost_ns")));
        sim.setCpus(count(c, "cpus", 1));
        sim.setOtherSleepers(count(c, "other_sleepers", 0));
        Mode mode = Mode.fromSpecName(c.get("mode").asText());
        long minSpin = c.has("min_spin_ns") ? u64(c.get("min_spin_ns")) : 0;
        Sleeper sleeper = Sleeper.builder().mode(mode).platform(sim)
                .tailTarget(TailTarget.ofPpm(c.get("tail_target_ppm").asInt()))
                .minSpin(Duration.ofNanos(minSpin)).build();
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
            JsonNode st = x.get("stats");
            assertEquals(new SleeperStats(u64(st.get("sleeps")), u64(st.get("late")), u64(st.get("os_waits")),
                    u64(st.get("spin_ns")), u64(st.get("cpu_estimate_ns")), u64(st.get("unproven_sleeps"))),
                    sleeper.stats(), where + ": stats");
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
