package dev.keeptime.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The bench's command line, {@code --warmup} above all: what it accepts, and the one-line error of what it does not. */
class BenchArgsTest {
    private static final long MS = 1_000_000;

    private static Bench.Options parse(String... args) {
        return Bench.parseArgs(args);
    }

    private static String error(String... args) {
        return assertThrows(Bench.UsageException.class, () -> Bench.parseArgs(args)).getMessage();
    }

    @Test
    void withoutWarmupTheBenchChooses() {
        Bench.Options o = parse();
        assertNull(o.warmup());
        assertEquals(1.0, o.scale());
        assertEquals(16, o.crowd());
        assertNull(o.export());
        assertNull(o.action());
        // The rule of every runtime's bench, per method and duration.
        assertEquals(943, Bench.warmupFor(Method.KEEPTIME, MS, null));
        assertEquals(47, Bench.warmupFor(Method.SPIN_PAUSE, MS, null));
    }

    @Test
    void warmupIsACountForEveryMethodAndDuration() {
        assertEquals(20, parse("--warmup", "20").warmup());
        assertEquals(0, parse("--warmup", "0").warmup());
        assertEquals(Integer.MAX_VALUE, parse("--warmup", "2147483647").warmup());
        assertEquals(7, parse("--warmup", "3", "--warmup", "7").warmup(), "the last one counts");
        Bench.Options o = parse("--scale", "0.25", "--warmup", "100", "--export-json", "r.json", "--crowd", "0");
        assertEquals(100, o.warmup());
        assertEquals(0.25, o.scale());
        assertEquals(Path.of("r.json"), o.export());
        assertEquals(0, o.crowd());
        for (Method m : Method.values()) {
            for (long d : new long[] {10_000, MS, 10 * MS}) {
                assertEquals(100, Bench.warmupFor(m, d, o.warmup()), m.id + " at " + d);
                assertEquals(0, Bench.warmupFor(m, d, 0), m.id + " at " + d);
            }
        }
    }

    @Test
    void badWarmupValuesAreUsageErrors() {
        String accepted = ": expected a whole number of warm-up waits per cell, from 0 (none) to 2147483647, e.g. 20";
        assertEquals("--warmup -1" + accepted, error("--warmup", "-1"));
        assertEquals("--warmup abc" + accepted, error("--warmup", "abc"));
        assertEquals("--warmup 1.5" + accepted, error("--warmup", "1.5"));
        assertEquals("--warmup " + accepted, error("--warmup", ""));
        assertEquals("--warmup 2147483648" + accepted, error("--warmup", "2147483648"));
        assertEquals("--warmup --scale" + accepted, error("--warmup", "--scale", "1"));
        assertEquals("--warmup needs a value (try --help)", error("--warmup"));
        assertEquals("--warmup needs a value (try --help)", error("--scale", "1", "--warmup"));
    }

    @Test
    void theOtherOptionsKeepTheirErrors() {
        assertEquals("--scale 0: expected a positive number, e.g. 0.25", error("--scale", "0"));
        assertEquals("--crowd 5000: expected a thread count from 0 (off) to 4096", error("--crowd", "5000"));
        assertEquals("unknown argument: --warm (try --help)", error("--warm", "3"));
        assertEquals("--crowd-only needs a crowd: --crowd 0 turns it off", error("--crowd-only", "--crowd", "0"));
        assertEquals("clocks", parse("--warmup", "5", "--clocks").action());
        assertEquals("help", parse("--help", "--warmup", "-1").action(), "--help wins as soon as it is read");
    }
}
