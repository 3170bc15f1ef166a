package dev.keeptime.bench;

import dev.keeptime.IdleHintStatus;
import dev.keeptime.Sleeper;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The crowd row: N platform threads, each sleeping 1 ms in a loop for ~2 s,
 * with keeptime and with the JDK's own waits as baselines, one method after
 * the other in the same JVM, as the Rust bench's crowd runs it.
 *
 * <p>Error of one sleep = the caller's first {@code System.nanoTime()}
 * reading after the call returned − its deadline ({@code nanoTime()} read just before + 1 ms). Late share =
 * sleeps more than {@value #LATE_NS} ns late. Process CPU = the JVM's CPU
 * time ({@code com.sun.management.OperatingSystemMXBean.getProcessCpuTime()})
 * over the measured window ÷ its wall time, as a % of one core (all threads,
 * the JIT and GC included; Linux HotSpot counts it in clock ticks, 10 ms,
 * so ±0.5 % of a core over 2 s). Every thread first sleeps
 * {@link #WARMUP} times unmeasured, as many as keeptime's cells at 1 ms get
 * (its sleepers learn; the other methods lose nothing by the wait), as the
 * Rust bench's crowd ({@code --warmup N}: N times, as there); when all have, the measured window starts for all of
 * them at once. Sleeps that start after the window do not count.
 */
final class Crowd {
    /** A sleep this much (ns) or less after its deadline is on time. */
    static final long LATE_NS = Stats.LATE_NS;
    static final long SLEEP_NS = 1_000_000;
    /** Warm-up sleeps per thread, every method: {@code Bench.defaultWarmup(KEEPTIME, 1 ms)}, 943. */
    static final int WARMUP = Bench.defaultWarmup(Method.KEEPTIME, SLEEP_NS);
    static final long MEASURE_NS = 2_000_000_000L;

    /** The methods of the crowd row. */
    enum Kind {
        KEEPTIME("keeptime", "a Sleeper per thread (Mode.EXACT, tail target 1 %), sleepUntil(deadline)"),
        KEEPTIME_IDLE_HINT("keeptime-idle-hint", "the same, each sleeper built with idleHint(0) (one shared PM QoS request at 0 µs)"),
        PARK_NANOS("park-nanos", "LockSupport.parkNanos(1 ms), once, the thread's timer slack left as it is"),
        THREAD_SLEEP("thread-sleep", "Thread.sleep(1)");

        final String id;
        final String description;

        Kind(String id, String description) {
            this.id = id;
            this.description = description;
        }
    }

    /**
     * One method's figures; {@code stats} is null when no sleep started in
     * the window (the threads were stalled for all of it); {@code note}: what
     * became of the idle hint, or empty.
     */
    record Row(Kind kind, int threads, Stats stats, long late, String note) {
        double lateShare() {
            return stats == null ? 0 : (double) late / stats.samples;
        }
    }

    private Crowd() {}

    /** The JVM's CPU time, ns, or -1 when the platform bean does not give it. */
    static long processCpuNs() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }

    /** Every method, one after the other, {@code threads} threads each, {@code warmup} sleeps each first. */
    static List<Row> runAll(int threads, int warmup, long measureNs) throws InterruptedException {
        List<Row> rows = new ArrayList<>();
        for (Kind k : Kind.values()) {
            rows.add(run(k, threads, SLEEP_NS, warmup, measureNs));
        }
        return rows;
    }

    /**
     * {@code threads} threads of {@code kind} sleeping {@code sleepNs} in a
     * loop: {@code warmup} sleeps each, then, once every thread has done
     * them, the window of {@code measureNs} for all at once.
     */
    static Row run(Kind kind, int threads, long sleepNs, int warmup, long measureNs) throws InterruptedException {
        long[][] errors = new long[threads][];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<String> note = new AtomicReference<>("");
        CountDownLatch warmedUp = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        long[] window = new long[2]; // its start and end (nanoTime), written before go opens
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int index = i;
            Thread t = new Thread(() -> {
                try {
                    errors[index] = loop(kind, index, sleepNs, warmup, warmedUp, go, window, note);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "crowd-" + kind.id + "-" + i);
            t.setDaemon(true);
            workers.add(t);
            t.start();
        }
        warmedUp.await();
        long t0 = System.nanoTime();
        long cpu0 = processCpuNs();
        window[0] = t0;
        window[1] = t0 + measureNs;
        go.countDown();
        parkUntil(window[1]);
        long wall = System.nanoTime() - t0;
        long cpu1 = processCpuNs();
        for (Thread t : workers) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("crowd " + kind.id + " failed", failure.get());
        }
        int n = 0;
        for (long[] e : errors) {
            n += e.length;
        }
        long[] all = new long[n];
        int at = 0;
        for (long[] e : errors) {
            System.arraycopy(e, 0, all, at, e.length);
            at += e.length;
        }
        if (n == 0) {
            return new Row(kind, threads, null, 0, "no sleep started in the measured window: the threads were stalled");
        }
        long cpu = cpu0 < 0 || cpu1 < 0 ? 0 : cpu1 - cpu0;
        Stats s = new Stats(all, wall, cpu);
        return new Row(kind, threads, s, s.late, note.get());
    }

    /**
     * One thread: {@code warmup} sleeps, then it counts down {@code warmedUp}
     * (also when a warm-up sleep failed, so the crowd never waits for it),
     * waits for {@code go} and records every sleep that starts before the
     * window's end.
     */
    private static long[] loop(Kind kind, int index, long d, int warmup, CountDownLatch warmedUp,
            CountDownLatch go, long[] window, AtomicReference<String> note) throws InterruptedException {
        Sleeper sleeper = null;
        try {
            try {
                sleeper = kind == Kind.KEEPTIME ? Sleeper.create()
                        : kind == Kind.KEEPTIME_IDLE_HINT ? Sleeper.builder().idleHint(0).build() : null;
                if (sleeper != null && index == 0 && kind == Kind.KEEPTIME_IDLE_HINT) {
                    IdleHintStatus st = sleeper.idleHintStatus();
                    note.set("idle hint " + st);
                }
                for (int i = 0; i < warmup; i++) {
                    sleepOnce(kind, sleeper, System.nanoTime(), d);
                }
            } finally {
                warmedUp.countDown();
            }
            go.await();
            long t1 = window[1];
            long[] out = new long[(int) ((t1 - window[0]) / d) + 16];
            int n = 0;
            while (true) {
                long now = System.nanoTime();
                if (now - t1 >= 0) {
                    break;
                }
                long error = sleepOnce(kind, sleeper, now, d);
                if (n == out.length) {
                    out = Arrays.copyOf(out, n * 2);
                }
                out[n++] = error;
            }
            return Arrays.copyOf(out, n);
        } finally {
            if (sleeper != null) {
                sleeper.close();
            }
        }
    }

    /**
     * One sleep of {@code d} from {@code now} (a reading taken just before);
     * returns the error: the caller's first reading after it returned − the deadline.
     */
    private static long sleepOnce(Kind kind, Sleeper sleeper, long now, long d) throws InterruptedException {
        long deadline = now + d;
        switch (kind) {
            case PARK_NANOS:
                LockSupport.parkNanos(d);
                break;
            case THREAD_SLEEP:
                Thread.sleep(d / 1_000_000, (int) (d % 1_000_000));
                break;
            default:
                sleeper.sleepUntil(deadline);
        }
        return System.nanoTime() - deadline; // the caller's reading, for every method alike
    }

    private static void parkUntil(long t) {
        long now;
        while ((now = System.nanoTime()) - t < 0) {
            LockSupport.parkNanos(t - now);
        }
    }

    /** The crowd table; {@code warmup}: the warm-up sleeps each thread made. */
    static void print(List<Row> rows, long measureNs, int warmup) {
        Row first = rows.get(0);
        System.out.printf(Locale.ROOT, "%n## crowd: %d threads × %s sleeps, %s per method after %d sleeps of warm-up per thread%n%n",
                first.threads(), Bench.Format.duration(SLEEP_NS), Bench.Format.duration(measureNs), warmup);
        System.out.println("| method | sleeps | p50 | p99 | max | early | late > 2 µs | process CPU (% of one core) |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
        for (Row r : rows) {
            Stats s = r.stats();
            if (s == null) {
                System.out.println("| " + r.kind().id + " | 0 | — | — | — | — | — | — |");
                continue;
            }
            System.out.printf(Locale.ROOT, "| %s | %d | %s | %s | %s | %d | %.1f %% | %.1f %% |%n", r.kind().id, s.samples,
                    Bench.Format.ns(s.p50Ns), Bench.Format.ns(s.p99Ns), Bench.Format.ns(s.maxNs), s.early,
                    100 * r.lateShare(), s.cpuPercent);
        }
        for (Row r : rows) {
            if (!r.note().isEmpty()) {
                System.out.println(r.kind().id + ": " + r.note());
            }
        }
        System.out.println();
        for (Kind k : Kind.values()) {
            System.out.println("  " + k.id + ": " + k.description);
        }
    }
}
