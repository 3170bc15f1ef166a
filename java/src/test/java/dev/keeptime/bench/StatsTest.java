package dev.keeptime.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.keeptime.Clocks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The bench's statistics and result document follow the project's bench result format. */
class StatsTest {
    @Test
    void statsOfKnownSamples() {
        Stats s = new Stats(new long[] {3, -1, 2, 10, 1}, 1_000, 250);
        assertEquals(5, s.samples);
        assertEquals(-1, s.minNs);
        assertEquals(2, s.p50Ns);
        assertEquals(10, s.maxNs);
        assertEquals(1, s.early);
        assertEquals(3.0, s.meanNs);
        assertEquals(Math.sqrt(70.0 / 4.0), s.stddevNs, 1e-9);
        assertEquals(25.0, s.cpuPercent);
        assertEquals(5, s.histogram.stream().mapToLong(b -> b[2]).sum());
        assertEquals(0, s.late);
        assertEquals(null, s.returnP50Ns);
    }

    @Test
    void lateShareAndReturnPath() {
        long[] errors = {2_001, 5, 2_000, -1, 90_000, 0, 1, 2, 3, 4};
        long[] returns = {30, 10, 20, 40, 50, 60, 70, 80, 90, 100};
        Stats s = new Stats(errors, returns, 1_000, 10);
        assertEquals(2, s.late, "more than 2 µs late: 2001 and 90 000, not 2000");
        assertEquals(20.0, s.latePercent());
        assertEquals(1, s.early);
        assertEquals(50, s.returnP50Ns);
        assertEquals(90, s.returnP90Ns);
    }

    @Test
    void edges() {
        long[] pos = LongStream.rangeClosed(1, 40).filter(v -> Stats.upperEdge(v) == v).toArray();
        assertArrayEquals(new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 26, 28,
            30, 32, 36, 40}, pos);
        assertEquals(18, Stats.upperEdge(17));
        assertEquals(-16, Stats.upperEdge(-17));
        assertEquals(16, Stats.lowerEdge(18));
        assertEquals(-18, Stats.lowerEdge(-16));
        assertEquals(-1, Stats.lowerEdge(0));
        assertEquals(0, Stats.lowerEdge(1));
        assertEquals(-2, Stats.lowerEdge(-1));
        assertEquals(57_344, Stats.upperEdge(54_321));
    }

    @Test
    void everyValueLiesInItsBucket() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < 100_000; i++) {
            long v = rnd.nextLong(-(1L << 62), 1L << 62) >> rnd.nextInt(62);
            long le = Stats.upperEdge(v);
            long gt = Stats.lowerEdge(le);
            assertTrue(gt < v && v <= le, v + " not in (" + gt + ", " + le + "]");
            assertEquals(gt, Stats.upperEdge(gt));
            assertEquals(le, Stats.upperEdge(gt + 1));
        }
    }

    /**
     * Every field the schema requires is present, and the optional sleeper
     * field follows its schema (the schema is read, not copied).
     */
    @Test
    void resultDocumentHasEveryRequiredField() throws Exception {
        Stats s = new Stats(new long[] {120, -3, 40, 95_000}, 5_000_000, 200_000);
        Stats withReturns = new Stats(new long[] {120, -3, 40, 95_000}, new long[] {60, 20, 40, 900}, 5_000_000, 200_000);
        String json = ResultJson.write("2026-11-21T19:30:27Z", Machine.detect(Clocks.inspect()), List.of(10_000L),
                List.of(Method.BUSY_LOOP, Method.KEEPTIME, Method.KEEPTIME_EFFICIENT), null,
                List.of(new ResultJson.Cell(Method.BUSY_LOOP, 10_000, 20, 50_000L, s, null, null),
                        new ResultJson.Cell(Method.KEEPTIME, 10_000, 20, null, withReturns,
                                dev.keeptime.TailTarget.BALANCED,
                                new dev.keeptime.SleeperStats(4, 1, 5, 3_000, 28_000, 0)),
                        new ResultJson.Cell(Method.KEEPTIME_EFFICIENT, 10_000, 20, null, s,
                                dev.keeptime.TailTarget.BALANCED, new dev.keeptime.SleeperStats(4, 0, 4, 0, 20_000, 0))));
        ObjectMapper om = new ObjectMapper();
        JsonNode doc = om.readTree(json);
        assertTrue(doc.get("parameters").get("warmup").isNull(), "the bench chose the warm-up counts");
        assertEquals(20, doc.get("results").get(0).get("warmup").asLong());
        assertTrue(doc.get("results").get(0).get("sleeper") == null, "only keeptime cells carry stats");
        assertTrue(doc.get("results").get(2).get("sleeper") == null, "only spin-finished keeptime cells carry stats");
        assertTrue(doc.get("results").get(1).get("sleeper_stats") == null, "the field is named sleeper");
        JsonNode k = doc.get("results").get(1).get("sleeper");
        assertEquals(10_000, k.get("tail_target_ppm").asLong());
        assertEquals(4, k.get("sleeps").asLong());
        assertEquals(1, k.get("late").asLong());
        assertEquals(5, k.get("os_waits").asLong());
        assertEquals(3_000, k.get("spin_ns").asLong());
        assertEquals(28_000, k.get("cpu_estimate_ns").asLong());
        // The return path, only where the method returns a reading of its own.
        assertEquals(40, doc.get("results").get(1).get("return_p50_ns").asLong());
        assertEquals(900, doc.get("results").get(1).get("return_p90_ns").asLong());
        assertTrue(doc.get("results").get(0).get("return_p50_ns") == null, "no return samples, no field");
        for (JsonNode m : doc.get("methods")) {
            assertTrue(m.get("seed") == null, m.toString());
            assertTrue(m.get("family").isTextual(), m.toString());
        }
        assertEquals("keeptime-bench", doc.get("format").asText());
        assertEquals(2, doc.get("version").asInt());
        Path schemaFile = Path.of(System.getProperty("keeptime.vectors", "../spec/vectors"))
                .resolveSibling("bench-result.schema.json");
        assertTrue(Files.exists(schemaFile), "no schema at " + schemaFile);
        JsonNode schema = om.readTree(Files.readString(schemaFile));
        JsonNode defs = schema.get("$defs");
        requireAll(schema, doc, "");
        for (String part : new String[] {"tool", "runtime", "machine", "parameters"}) {
            requireAll(schema.get("properties").get(part), doc.get(part), part);
        }
        for (JsonNode m : doc.get("methods")) {
            requireAll(schema.get("properties").get("methods").get("items"), m, "methods[]");
        }
        JsonNode sleeperSchema = defs.get("cell").get("properties").get("sleeper");
        assertTrue(sleeperSchema != null, "the schema defines the optional sleeper field");
        int withSleeper = 0;
        for (JsonNode cell : doc.get("results")) {
            requireAll(defs.get("cell"), cell, "results[]");
            if (cell.has("sleeper")) {
                withSleeper++;
                checkObject(sleeperSchema, cell.get("sleeper"), "results[].sleeper");
            }
            long count = 0;
            for (JsonNode b : cell.get("histogram")) {
                requireAll(defs.get("bucket"), b, "histogram[]");
                count += b.get("count").asLong();
            }
            assertEquals(cell.get("samples").asLong(), count, "histogram counts add up to samples");
        }
        assertEquals(1, withSleeper);
    }

    /** With {@code --warmup N}, {@code parameters.warmup} is N and every cell records the N it used. */
    @Test
    void theWarmupOptionIsRecordedInTheParameters() throws Exception {
        Stats s = new Stats(new long[] {120, -3, 40}, 5_000_000, 200_000);
        String json = ResultJson.write("2026-11-21T19:30:27Z", Machine.detect(Clocks.inspect()), List.of(10_000L, 1_000_000L),
                List.of(Method.SPIN_PAUSE), 25,
                List.of(new ResultJson.Cell(Method.SPIN_PAUSE, 10_000, Bench.warmupFor(Method.SPIN_PAUSE, 10_000, 25), null, s,
                                null, null),
                        new ResultJson.Cell(Method.SPIN_PAUSE, 1_000_000, Bench.warmupFor(Method.SPIN_PAUSE, 1_000_000, 25),
                                null, s, null, null)));
        JsonNode doc = new ObjectMapper().readTree(json);
        JsonNode warmup = doc.get("parameters").get("warmup");
        assertTrue(warmup.isIntegralNumber(), warmup.toString());
        assertEquals(25, warmup.asLong());
        for (JsonNode cell : doc.get("results")) {
            assertEquals(25, cell.get("warmup").asLong(), cell.toString());
        }
        String zero = ResultJson.write("2026-11-21T19:30:27Z", Machine.detect(Clocks.inspect()), List.of(10_000L),
                List.of(Method.SPIN_PAUSE), 0, List.of(new ResultJson.Cell(Method.SPIN_PAUSE, 10_000, 0, null, s, null, null)));
        assertEquals(0, new ObjectMapper().readTree(zero).get("parameters").get("warmup").asLong());
        assertTrue(new ObjectMapper().readTree(zero).get("parameters").get("warmup").isIntegralNumber());
    }

    /**
     * An object against its schema: an object, every required key present,
     * and every property the schema types as an integer an integer within its
     * {@code minimum}/{@code maximum}; no key the schema does not name.
     */
    private static void checkObject(JsonNode schemaObject, JsonNode node, String where) {
        assertEquals("object", schemaObject.get("type").asText(), where);
        assertTrue(node.isObject(), where + ": not an object: " + node);
        requireAll(schemaObject, node, where);
        JsonNode props = schemaObject.get("properties");
        node.fieldNames().forEachRemaining(name -> {
            JsonNode p = props.get(name);
            assertTrue(p != null, where + ": " + name + " is not in the schema");
            JsonNode v = node.get(name);
            if ("integer".equals(p.path("type").asText())) {
                assertTrue(v.isIntegralNumber(), where + "." + name + ": not an integer: " + v);
                if (p.has("minimum")) {
                    assertTrue(v.asLong() >= p.get("minimum").asLong(), where + "." + name + " below its minimum: " + v);
                }
                if (p.has("maximum")) {
                    assertTrue(v.asLong() <= p.get("maximum").asLong(), where + "." + name + " above its maximum: " + v);
                }
            }
        });
    }

    private static void requireAll(JsonNode schemaObject, JsonNode node, String where) {
        JsonNode required = schemaObject.get("required");
        if (required == null) {
            required = schemaObject.get("items") != null ? schemaObject.get("items").get("required") : null;
        }
        assertTrue(required != null, where + ": schema without a required list");
        for (JsonNode key : required) {
            assertTrue(node.has(key.asText()), where + ": missing " + key.asText() + " in " + node);
        }
    }
}
