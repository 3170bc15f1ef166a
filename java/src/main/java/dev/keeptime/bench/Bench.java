package dev.keeptime.bench;

import dev.keeptime.ClockReport;
import dev.keeptime.Clocks;
import dev.keeptime.Sleeper;
import dev.keeptime.SleeperStats;
import dev.keeptime.TailTarget;
import dev.keeptime.TimerSlack;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The Java benchmark: {@code Thread.sleep}, {@code LockSupport.parkNanos},
 * spins on {@code System.nanoTime()} and keeptime, side by side in one JVM at
 * 10 µs, 100 µs, 250 µs, 1 ms, 2.5 ms and 10 ms.
 *
 * <pre>
 * make bench-java                                   # JDK 25, then JDK 17, same jar
 * java -jar java/target/keeptime-0.1.0.jar [--scale 0.25] [--export-json FILE] [--crowd N] [--crowd-only]
 * java -jar java/target/keeptime-0.1.0.jar --clocks   # the clocks report only
 * </pre>
 *
 * <p>After the durations, the crowd row ({@link Crowd}): {@code --crowd N}
 * threads (default 16, 0 = off) each sleeping 1 ms in a loop for ~2 s × scale,
 * with keeptime, keeptime with the idle hint, {@code parkNanos} and
 * {@code Thread.sleep}, one after the other.
 *
 * <p>Error of one wait = the caller's first {@code System.nanoTime()} reading
 * after the call returned − its deadline ({@code nanoTime()} read just before
 * + d), for every method alike; for a method that returns its own reading
 * (the spins, keeptime) the "return" columns show the caller's reading − that
 * one: what the way back to the caller costs. "&gt; 2 µs" = the share of
 * waits more than 2 µs late. After each duration from 250 µs on, the targets
 * (caller-measured, against the same run's {@code spin-pause}): keeptime's
 * p50 at most {@value #P50_SLACK_NS} ns above the spin's, its share more
 * than 2 µs late at most {@value #LATE_SLACK_POINTS} points above the spin's
 * (at the default 1 % tail target), and no early return. CPU % = the waiting
 * thread's CPU time ({@code ThreadMXBean.getCurrentThreadCpuTime()}) ÷ wall
 * time over its samples. Each method runs on its own long-lived thread, started
 * by the main thread (which never changes its timer slack), so one method's
 * timer slack or learned margins never leak into another's; the methods take
 * turns in rounds, so slow drifts of the machine hit all of them alike.
 * Before each duration every method waits unrecorded at that duration
 * ({@link #defaultWarmup}): about 1 s of waits (at most 3 000) for the
 * keeptime methods, whose sleepers learn from their own waits, about 50 ms
 * (at most 1 000) for the others.
 */
public final class Bench {
    private static final long US = 1_000;
    private static final long MS = 1_000_000;
    private static final long[][] CELLS = {
        // duration ns, samples per method
        {10 * US, 3_000},
        {100 * US, 2_000},
        {250 * US, 1_500},
        {MS, 800},
        {2_500 * US, 400},
        {10 * MS, 150},
    };
    /** The durations (ns) whose keeptime figures are held to the targets. */
    private static final long[] TARGET_DURATIONS = {250 * US, MS, 2_500 * US, 10 * MS};
    /** Target: keeptime's p50 at most this much (ns) above the pure spin's. */
    static final long P50_SLACK_NS = 150;
    /** Target: keeptime's share more than 2 µs late at most this many percentage points above the pure spin's. */
    static final double LATE_SLACK_POINTS = 1.5;
    private static final int ROUNDS = 5;
    /**
     * What one wait is assumed to cost beyond its duration when a warm-up
     * time becomes a count (the Rust bench's planning overhead).
     */
    static final long PLANNING_OVERHEAD_NS = 60 * US;
    /** The warm-up of a method that learns nothing takes about this long per cell. */
    static final long WARMUP_TARGET_NS = 50 * MS;
    /** Fewest warm-up waits per cell. */
    static final int MIN_WARMUP = 10;
    /** Most warm-up waits per cell of a method that learns nothing. */
    static final int MAX_WARMUP = 1_000;
    /**
     * The warm-up of a method that learns ({@link Method#learns}) takes about
     * this long per cell: a fresh keeptime sleeper plans on the largest
     * wake-ups it has seen until it has seen a few hundred, and spends
     * several times its later CPU meanwhile (docs/bench.md).
     */
    static final long LEARNING_WARMUP_TARGET_NS = 1_000 * MS;
    /** Most warm-up waits per cell of a method that learns. */
    static final int MAX_LEARNING_WARMUP = 3_000;
    private static final String USAGE =
            "usage: java -jar keeptime.jar [--scale X] [--export-json FILE] [--crowd N] [--crowd-only] | --clocks";

    private Bench() {}

    /**
     * Runs the benchmark.
     *
     * @param args {@code [--scale X] [--export-json FILE]}
     * @throws Exception if a worker fails or the export cannot be written
     */
    public static void main(String[] args) throws Exception {
        double scale = 1.0;
        Path export = null;
        int crowd = 16;
        boolean crowdOnly = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--scale":
                    scale = parseScale(value(args, i++));
                    break;
                case "--export-json":
                    export = Path.of(value(args, i++));
                    break;
                case "--crowd":
                    crowd = parseCrowd(value(args, i++));
                    break;
                case "--crowd-only":
                    crowdOnly = true;
                    break;
                case "--clocks":
                    System.out.print(Clocks.inspect());
                    return;
                case "-h":
                case "--help":
                    System.out.println(USAGE);
                    return;
                default:
                    usageError("unknown argument: " + args[i] + " (try --help)");
            }
        }
        if (crowdOnly && crowd == 0) {
            usageError("--crowd-only needs a crowd: --crowd 0 turns it off");
        }
        if (crowdOnly && export != null) {
            usageError("--export-json writes the duration cells, which --crowd-only skips");
        }
        String created = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        ClockReport clocks = Clocks.inspect();
        Machine machine = Machine.detect(clocks);
        List<Method> methods = new ArrayList<>();
        for (Method m : Method.values()) {
            if (!m.needsSlackControl || TimerSlack.isSupported()) {
                methods.add(m);
            }
        }
        System.out.println("keeptime Java benchmark: " + System.getProperty("java.vm.name") + " " + Runtime.version()
                + "; timer slack: " + TimerSlack.mechanism());
        System.out.println("machine: " + machine);
        System.out.print(clocks);
        System.out.println("all methods in one JVM, " + ROUNDS + " interleaved rounds per duration; "
                + "error = the caller's first nanoTime reading after the call returned − deadline; "
                + "return = that reading − the method's own last reading");

        if (crowdOnly) {
            runCrowd(crowd, scale);
            return;
        }
        List<Worker> workers = new ArrayList<>();
        for (Method m : methods) {
            workers.add(new Worker(m));
        }
        List<ResultJson.Cell> results = new ArrayList<>();
        List<Long> durations = new ArrayList<>();
        for (long[] cell : CELLS) {
            long d = cell[0];
            durations.add(d);
            int perRound = (int) Math.max(20, cell[1] * scale / ROUNDS);
            int[] warmup = new int[workers.size()];
            for (int i = 0; i < workers.size(); i++) {
                warmup[i] = defaultWarmup(workers.get(i).method, d);
                workers.get(i).run(d, warmup[i], 0);
            }
            List<long[]> errors = new ArrayList<>();
            List<long[]> returns = new ArrayList<>();
            long[] cpu = new long[workers.size()];
            long[] wall = new long[workers.size()];
            Long[] slack = new Long[workers.size()];
            SleeperStats[] sleeperStats = new SleeperStats[workers.size()];
            TailTarget[] targets = new TailTarget[workers.size()];
            for (int i = 0; i < workers.size(); i++) {
                errors.add(new long[perRound * ROUNDS]);
                returns.add(workers.get(i).returnsReading ? new long[perRound * ROUNDS] : null);
            }
            for (int r = 0; r < ROUNDS; r++) {
                for (int i = 0; i < workers.size(); i++) {
                    Worker.Result res = workers.get(i).run(d, 0, perRound);
                    System.arraycopy(res.errors, 0, errors.get(i), r * perRound, perRound);
                    if (res.returns != null) {
                        System.arraycopy(res.returns, 0, returns.get(i), r * perRound, perRound);
                    }
                    cpu[i] += res.cpuNs;
                    wall[i] += res.wallNs;
                    slack[i] = res.timerSlackNs;
                    targets[i] = res.target;
                    sleeperStats[i] = res.sleeper == null ? null : sum(sleeperStats[i], res.sleeper);
                }
            }
            System.out.printf(Locale.ROOT, "%n## %s (%d samples per method)%n%n", Format.duration(d), perRound * ROUNDS);
            System.out.println("| method | p50 | p90 | p99 | max | > 2 µs | early | return p50 | return p90 | CPU |");
            System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
            List<Stats> stats = new ArrayList<>();
            for (int i = 0; i < workers.size(); i++) {
                Stats s = new Stats(errors.get(i), returns.get(i), wall[i], cpu[i]);
                stats.add(s);
                results.add(new ResultJson.Cell(workers.get(i).method, d, warmup[i], slack[i], s, targets[i], sleeperStats[i]));
                System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %.2f %% | %d | %s | %s | %.1f %% |%n",
                        workers.get(i).method.id, Format.ns(s.p50Ns), Format.ns(s.p90Ns), Format.ns(s.p99Ns),
                        Format.ns(s.maxNs), s.latePercent(), s.early, Format.nsOrDash(s.returnP50Ns),
                        Format.nsOrDash(s.returnP90Ns), s.cpuPercent);
            }
            System.out.println();
            System.out.println("| keeptime method | mode | tail target | late share | OS waits/sleep | spin/sleep | CPU estimate | measured CPU |");
            System.out.println("|---|---|---:|---:|---:|---:|---:|---:|");
            for (int i = 0; i < workers.size(); i++) {
                SleeperStats st = sleeperStats[i];
                if (st == null) {
                    continue;
                }
                boolean exact = workers.get(i).method != Method.KEEPTIME_EFFICIENT;
                System.out.printf(Locale.ROOT, "| %s | %s | %s | %.2f %% | %.2f | %s | %.1f %% | %.1f %% |%n",
                        workers.get(i).method.id, exact ? "exact" : "efficient", exact ? targets[i] : "—",
                        100 * st.lateShare(), st.osWaitsPerSleep(), Format.ns(st.spinNs() / Math.max(1, st.sleeps())),
                        100.0 * st.cpuEstimateNs() / Math.max(1, wall[i]), stats.get(i).cpuPercent);
            }
            targets(methods, stats, d);
        }
        for (Worker w : workers) {
            w.stop();
        }
        if (crowd > 0) {
            runCrowd(crowd, scale);
        }
        if (export != null) {
            String json = ResultJson.write(created, machine, durations, methods, results);
            Files.write(export, json.getBytes(StandardCharsets.UTF_8));
            System.out.println("\nwrote " + export);
        }
    }

    /**
     * The unrecorded waits before {@code method}'s cell at {@code d} ns, as
     * every runtime's bench counts them (the Rust bench's
     * {@code default_warmup}): about {@value #WARMUP_TARGET_NS} ns of waits,
     * {@value #MIN_WARMUP} to {@value #MAX_WARMUP} of them; for a method that
     * learns, about {@value #LEARNING_WARMUP_TARGET_NS} ns, {@value #MIN_WARMUP}
     * to {@value #MAX_LEARNING_WARMUP}; each wait counted as {@code d} +
     * {@value #PLANNING_OVERHEAD_NS} ns.
     */
    static int defaultWarmup(Method method, long d) {
        long per = d + PLANNING_OVERHEAD_NS;
        if (method.learns) {
            return (int) Math.max(MIN_WARMUP, Math.min(MAX_LEARNING_WARMUP, LEARNING_WARMUP_TARGET_NS / per));
        }
        return (int) Math.max(MIN_WARMUP, Math.min(MAX_WARMUP, WARMUP_TARGET_NS / per));
    }

    private static void runCrowd(int threads, double scale) throws InterruptedException {
        long measure = (long) Math.max(200 * MS, Crowd.MEASURE_NS * scale);
        Crowd.print(Crowd.runAll(threads, Crowd.WARMUP, measure), measure);
    }

    private static String value(String[] args, int i) {
        if (i + 1 >= args.length) {
            usageError(args[i] + " needs a value (try --help)");
        }
        return args[i + 1];
    }

    /** A positive, finite scale. */
    static double parseScale(String s) {
        double v;
        try {
            v = Double.parseDouble(s);
        } catch (NumberFormatException e) {
            v = Double.NaN;
        }
        if (!(v > 0) || Double.isInfinite(v)) {
            usageError("--scale " + s + ": expected a positive number, e.g. 0.25");
        }
        return v;
    }

    /** 0 (off) to 4096 threads. */
    static int parseCrowd(String s) {
        int v = -1;
        try {
            v = Integer.parseInt(s);
        } catch (NumberFormatException e) {
            // reported below
        }
        if (v < 0 || v > 4096) {
            usageError("--crowd " + s + ": expected a thread count from 0 (off) to 4096");
        }
        return v;
    }

    private static void usageError(String message) {
        System.err.println(message);
        System.exit(2);
    }

    private static SleeperStats sum(SleeperStats a, SleeperStats b) {
        if (a == null) {
            return b;
        }
        return new SleeperStats(a.sleeps() + b.sleeps(), a.late() + b.late(), a.osWaits() + b.osWaits(),
                a.spinNs() + b.spinNs(), a.cpuEstimateNs() + b.cpuEstimateNs(),
                a.unprovenSleeps() + b.unprovenSleeps());
    }

    /**
     * The targets at {@link #TARGET_DURATIONS}, caller-measured, for the
     * static path and an owned sleeper at the default tail target, against
     * the same run's pure spin: met or MISSED, one line each.
     */
    private static void targets(List<Method> methods, List<Stats> stats, long d) {
        if (Arrays.stream(TARGET_DURATIONS).noneMatch(t -> t == d)) {
            return;
        }
        Stats spin = stats.get(methods.indexOf(Method.SPIN_PAUSE));
        System.out.println();
        for (Method m : new Method[] {Method.KEEPTIME, Method.KEEPTIME_SLEEPER}) {
            System.out.println(targetLine(m.id, d, stats.get(methods.indexOf(m)), spin));
        }
    }

    /** One method's targets against the pure spin {@code spin}, at duration {@code d}. */
    static String targetLine(String id, long d, Stats kt, Stats spin) {
        boolean p50 = kt.p50Ns <= spin.p50Ns + P50_SLACK_NS;
        boolean late = kt.latePercent() <= spin.latePercent() + LATE_SLACK_POINTS;
        boolean early = kt.early == 0;
        return String.format(Locale.ROOT,
                "targets at %s, %s vs spin-pause: p50 %s ≤ %s + %d ns: %s; > 2 µs %.2f %% ≤ %.2f %% + %.1f points: %s; early %d: %s",
                Format.duration(d), id, Format.ns(kt.p50Ns), Format.ns(spin.p50Ns), P50_SLACK_NS, met(p50),
                kt.latePercent(), spin.latePercent(), LATE_SLACK_POINTS, met(late), kt.early, met(early));
    }

    private static String met(boolean ok) {
        return ok ? "met" : "MISSED";
    }

    /** A long-lived thread that runs one method's cells. */
    private static final class Worker {
        private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

        final Method method;
        /** Whether the method returns a clock reading of its own (known before the thread starts). */
        final boolean returnsReading;
        private final BlockingQueue<long[]> jobs = new LinkedBlockingQueue<>();
        private final BlockingQueue<Object> results = new LinkedBlockingQueue<>();
        private final Thread thread;

        /** {@code sleeper} and {@code target}: a keeptime method's stats over the measured samples, else null. */
        record Result(long[] errors, long[] returns, long cpuNs, long wallNs, Long timerSlackNs, SleeperStats sleeper,
                TailTarget target) {}

        Worker(Method method) {
            this.method = method;
            this.returnsReading = method.returnsReading();
            this.thread = new Thread(this::loop, "bench-" + method.id);
            this.thread.setDaemon(true);
            this.thread.start();
        }

        private void loop() {
            try {
                Method.Waiter waiter = method.newWaiter();
                jitWarmUp(waiter);
                while (true) {
                    long[] job = jobs.take();
                    if (job.length == 0) {
                        return;
                    }
                    results.put(cell(waiter, job[0], (int) job[1], (int) job[2]));
                }
            } catch (Throwable t) {
                results.add(t);
            }
        }

        /**
         * Lets the JIT compile the waiting code (C2 needs ~10⁴ calls) before
         * anything is measured: short waits until 15 000 are done or 0.4 s passed.
         */
        private static void jitWarmUp(Method.Waiter waiter) throws InterruptedException {
            long end = System.nanoTime() + 400 * MS;
            for (int i = 0; i < 15_000 && System.nanoTime() - end < 0; i++) {
                long d = i % 2 == 0 ? 20 * US : 3 * US;
                waiter.waitUntil(System.nanoTime() + d, d);
            }
        }

        private Result cell(Method.Waiter waiter, long d, int warmup, int n) throws InterruptedException {
            for (int i = 0; i < warmup; i++) {
                waiter.waitUntil(System.nanoTime() + d, d);
            }
            long[] errors = new long[n];
            long[] returns = returnsReading ? new long[n] : null;
            Sleeper sleeper = waiter.sleeper();
            if (sleeper != null) {
                sleeper.resetStats();
            }
            long cpu0 = MX.getCurrentThreadCpuTime();
            long wall0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long deadline = System.nanoTime() + d;
                long own = waiter.waitUntil(deadline, d);
                long caller = System.nanoTime();
                errors[i] = caller - deadline;
                if (returns != null) {
                    returns[i] = caller - own;
                }
            }
            long wall = System.nanoTime() - wall0;
            long cpu = MX.getCurrentThreadCpuTime() - cpu0;
            var slack = TimerSlack.current();
            return new Result(errors, returns, cpu, wall, slack.isPresent() ? slack.getAsLong() : null,
                    sleeper != null ? sleeper.stats() : null, sleeper != null ? sleeper.tailTarget() : null);
        }

        Result run(long d, int warmup, int n) throws Exception {
            jobs.put(new long[] {d, warmup, n});
            Object r = results.take();
            if (r instanceof Throwable) {
                throw new IllegalStateException(method.id + " failed", (Throwable) r);
            }
            return (Result) r;
        }

        void stop() throws InterruptedException {
            jobs.put(new long[0]);
            thread.join();
        }
    }

    /** Units chosen automatically, like the Rust bench's tables. */
    static final class Format {
        private Format() {}

        static String ns(long ns) {
            double a = Math.abs((double) ns);
            if (a < 1_000) {
                return ns + " ns";
            } else if (a < 1_000_000) {
                return String.format(Locale.ROOT, "%.2f µs", ns / 1e3);
            }
            return String.format(Locale.ROOT, "%.2f ms", ns / 1e6);
        }

        static String nsOrDash(Long ns) {
            return ns == null ? "—" : ns(ns);
        }

        static String duration(long ns) {
            return ns(ns).replace(".00", "");
        }
    }

}
