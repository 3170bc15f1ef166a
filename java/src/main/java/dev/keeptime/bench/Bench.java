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
 * java -jar java/target/keeptime-0.1.0.jar [--scale 0.25] [--warmup N] [--export-json FILE] [--crowd N] [--crowd-only]
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
 * time over its samples.
 *
 * <p><b>A fresh waiter for each cell.</b> A cell is one (method, duration)
 * pair. Each cell gets its own {@link CellWorker}: a new thread, started by
 * the main thread (which never changes its timer slack), and on it a new
 * waiter ({@link Method#newWaiter()}: for the keeptime methods a new
 * {@code Sleeper}, or the new thread's own sleeper behind the static
 * methods), created when the cell starts. That waiter makes the cell's
 * warm-up waits and then all of its measured ones: it persists across the
 * cell's {@value #ROUNDS} rounds, and when the cell ends its thread ends and
 * the waiter is dropped. So nothing is learned at one duration and used at
 * another, and one method's timer slack or learned margins never leak into
 * another's, as in the Rust bench ({@code methods.rs}, "a fresh waiter for
 * one cell"). Within a duration the methods take turns in rounds, so slow
 * drifts of the machine hit all of them alike. Before the first cell, the JIT
 * warm-up ({@link #jitWarmUp}) runs each method's code on a throwaway thread
 * and waiter, so no cell's waiter has waited before its cell's warm-up.
 *
 * <p>Before its measured rounds every cell waits unrecorded at its duration:
 * {@code --warmup N} waits if given, else {@link #defaultWarmup}: about 1 s
 * of waits, at least 300 where they take at most 5 s (at most 3 000), for
 * the keeptime methods, whose sleepers learn
 * from their own waits, about 50 ms (at most 1 000) for the others.
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
    /**
     * Fewest warm-up waits per cell of a method that learns, as long as they
     * take at most {@link #LEARNING_WARMUP_LIMIT_NS}: at the default 1 %
     * target a margin sets its largest wake-up aside only from 199 of them,
     * and 1 s is about 100 sleeps at 10 ms (docs/bench.md).
     */
    static final int MIN_LEARNING_WARMUP = 300;
    /** The longest the {@link #MIN_LEARNING_WARMUP} floor makes a cell's warm-up. */
    static final long LEARNING_WARMUP_LIMIT_NS = 5_000 * MS;
    /** Most warm-up waits per cell of a method that learns. */
    static final int MAX_LEARNING_WARMUP = 3_000;
    private static final String USAGE =
            "usage: java -jar keeptime.jar [--scale X] [--warmup N] [--export-json FILE] [--crowd N] [--crowd-only] | --clocks";

    private Bench() {}

    /** A bad command line: its message is printed alone and the bench exits 2. */
    static final class UsageException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /**
     * The command line.
     *
     * @param scale {@code --scale}: sample counts × this
     * @param export {@code --export-json}, or null
     * @param crowd {@code --crowd}: crowd threads, 0 = off
     * @param crowdOnly {@code --crowd-only}
     * @param warmup {@code --warmup}: warm-up waits per cell (and per crowd
     *     thread) for every method, or null: the bench chooses
     *     ({@link #defaultWarmup}, {@link Crowd#WARMUP})
     * @param action {@code "clocks"} or {@code "help"} when one of those was
     *     asked for (the run is skipped), else null
     */
    record Options(double scale, Path export, int crowd, boolean crowdOnly, Integer warmup, String action) {}

    /**
     * Parses the command line; the first of {@code --clocks} and {@code --help}
     * wins, as soon as it is read.
     *
     * @throws UsageException with one line naming the bad argument and what is accepted
     */
    static Options parseArgs(String[] args) {
        double scale = 1.0;
        Path export = null;
        int crowd = 16;
        boolean crowdOnly = false;
        Integer warmup = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--scale":
                    scale = parseScale(value(args, i++));
                    break;
                case "--warmup":
                    warmup = parseWarmup(value(args, i++));
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
                    return new Options(scale, export, crowd, crowdOnly, warmup, "clocks");
                case "-h":
                case "--help":
                    return new Options(scale, export, crowd, crowdOnly, warmup, "help");
                default:
                    throw new UsageException("unknown argument: " + args[i] + " (try --help)");
            }
        }
        if (crowdOnly && crowd == 0) {
            throw new UsageException("--crowd-only needs a crowd: --crowd 0 turns it off");
        }
        if (crowdOnly && export != null) {
            throw new UsageException("--export-json writes the duration cells, which --crowd-only skips");
        }
        return new Options(scale, export, crowd, crowdOnly, warmup, null);
    }

    /** The methods this JVM can run: all but those needing timer-slack control where it is missing. */
    static List<Method> methods() {
        List<Method> methods = new ArrayList<>();
        for (Method m : Method.values()) {
            if (!m.needsSlackControl || TimerSlack.isSupported()) {
                methods.add(m);
            }
        }
        return methods;
    }

    /**
     * Runs the benchmark.
     *
     * @param args {@code [--scale X] [--warmup N] [--export-json FILE] [--crowd N] [--crowd-only] | --clocks}
     * @throws Exception if a worker fails or the export cannot be written
     */
    public static void main(String[] args) throws Exception {
        Options o;
        try {
            o = parseArgs(args);
        } catch (UsageException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        if ("clocks".equals(o.action())) {
            System.out.print(Clocks.inspect());
            return;
        }
        if ("help".equals(o.action())) {
            System.out.println(USAGE);
            return;
        }
        double scale = o.scale();
        Path export = o.export();
        int crowd = o.crowd();
        Integer warmupOption = o.warmup();
        String created = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        ClockReport clocks = Clocks.inspect();
        Machine machine = Machine.detect(clocks);
        List<Method> methods = methods();
        System.out.println("keeptime Java benchmark: " + System.getProperty("java.vm.name") + " " + Runtime.version()
                + "; timer slack: " + TimerSlack.mechanism());
        System.out.println("machine: " + machine);
        System.out.print(clocks);
        System.out.println("all methods in one JVM, a fresh waiter (and thread) per method and duration, "
                + ROUNDS + " interleaved rounds per duration; warm-up: "
                + (warmupOption != null ? warmupOption + " waits per cell (--warmup)" : "the bench's rule per method and duration")
                + "; error = the caller's first nanoTime reading after the call returned − deadline; "
                + "return = that reading − the method's own last reading");

        if (o.crowdOnly()) {
            runCrowd(crowd, scale, warmupOption);
            return;
        }
        for (Method m : methods) {
            jitWarmUp(m);
        }
        List<ResultJson.Cell> results = new ArrayList<>();
        List<Long> durations = new ArrayList<>();
        for (long[] cell : CELLS) {
            long d = cell[0];
            durations.add(d);
            int perRound = (int) Math.max(20, cell[1] * scale / ROUNDS);
            // This duration's cells: a new thread and waiter per method, kept
            // for the warm-up and all the rounds below, stopped after them.
            List<CellWorker> workers = new ArrayList<>();
            for (Method m : methods) {
                workers.add(new CellWorker(m, d));
            }
            int[] warmup = new int[workers.size()];
            for (int i = 0; i < workers.size(); i++) {
                warmup[i] = warmupFor(workers.get(i).method, d, warmupOption);
                workers.get(i).run(warmup[i], 0);
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
                    CellWorker.Result res = workers.get(i).run(0, perRound);
                    System.arraycopy(res.errors, 0, errors.get(i), r * perRound, perRound);
                    if (res.returns != null) {
                        System.arraycopy(res.returns, 0, returns.get(i), r * perRound, perRound);
                    }
                    cpu[i] += res.cpuNs;
                    wall[i] += res.wallNs;
                    slack[i] = res.timerSlackNs;
                    targets[i] = res.target;
                    sleeperStats[i] = res.sleeperStats == null ? null : sum(sleeperStats[i], res.sleeperStats);
                }
            }
            for (CellWorker w : workers) {
                w.stop();
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
        if (crowd > 0) {
            runCrowd(crowd, scale, warmupOption);
        }
        if (export != null) {
            String json = ResultJson.write(created, machine, durations, methods, warmupOption, results);
            Files.write(export, json.getBytes(StandardCharsets.UTF_8));
            System.out.println("\nwrote " + export);
        }
    }

    /**
     * The unrecorded waits before {@code method}'s cell at {@code d} ns, as
     * every runtime's bench counts them (the Rust bench's
     * {@code default_warmup}): about {@value #WARMUP_TARGET_NS} ns of waits,
     * {@value #MIN_WARMUP} to {@value #MAX_WARMUP} of them; for a method that
     * learns, about {@value #LEARNING_WARMUP_TARGET_NS} ns but at least
     * {@value #MIN_LEARNING_WARMUP} waits where they take at most
     * {@value #LEARNING_WARMUP_LIMIT_NS} ns, {@value #MIN_WARMUP} to
     * {@value #MAX_LEARNING_WARMUP}; each wait counted as {@code d} +
     * {@value #PLANNING_OVERHEAD_NS} ns.
     */
    static int defaultWarmup(Method method, long d) {
        long per = d + PLANNING_OVERHEAD_NS;
        if (method.learns) {
            long floor = Math.min(MIN_LEARNING_WARMUP, LEARNING_WARMUP_LIMIT_NS / per);
            long n = Math.max(LEARNING_WARMUP_TARGET_NS / per, floor);
            return (int) Math.max(MIN_WARMUP, Math.min(MAX_LEARNING_WARMUP, n));
        }
        return (int) Math.max(MIN_WARMUP, Math.min(MAX_WARMUP, WARMUP_TARGET_NS / per));
    }

    /**
     * The warm-up waits of {@code method}'s cell at {@code d} ns:
     * {@code --warmup}'s count for every method when given, else
     * {@link #defaultWarmup}.
     */
    static int warmupFor(Method method, long d, Integer warmupOption) {
        return warmupOption != null ? warmupOption : defaultWarmup(method, d);
    }

    private static void runCrowd(int threads, double scale, Integer warmupOption) throws InterruptedException {
        long measure = (long) Math.max(200 * MS, Crowd.MEASURE_NS * scale);
        int warmup = warmupOption != null ? warmupOption : Crowd.WARMUP;
        Crowd.print(Crowd.runAll(threads, warmup, measure), measure, warmup);
    }

    private static String value(String[] args, int i) {
        if (i + 1 >= args.length) {
            throw new UsageException(args[i] + " needs a value (try --help)");
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
            throw new UsageException("--scale " + s + ": expected a positive number, e.g. 0.25");
        }
        return v;
    }

    /** {@code s} as a decimal int, or -1 when it is not one (the callers reject negatives). */
    private static int intOrNegative(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Warm-up waits per cell: a whole number from 0 (none) to {@link Integer#MAX_VALUE}. */
    static int parseWarmup(String s) {
        int v = intOrNegative(s);
        if (v < 0) {
            throw new UsageException("--warmup " + s + ": expected a whole number of warm-up waits per cell, from 0 (none) to "
                    + Integer.MAX_VALUE + ", e.g. 20");
        }
        return v;
    }

    /** 0 (off) to 4096 threads. */
    static int parseCrowd(String s) {
        int v = intOrNegative(s);
        if (v < 0 || v > 4096) {
            throw new UsageException("--crowd " + s + ": expected a thread count from 0 (off) to 4096");
        }
        return v;
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

    /**
     * Lets the JIT compile {@code method}'s waiting code (C2 needs ~10⁴ calls)
     * before anything is measured: short waits until 15 000 are done or 0.4 s
     * passed, on a throwaway thread with a throwaway waiter (so no cell's
     * waiter, nor the static methods' sleeper of any cell's thread, has
     * waited before its cell).
     */
    static void jitWarmUp(Method method) throws InterruptedException {
        Throwable[] failure = new Throwable[1];
        Thread t = new Thread(() -> {
            try {
                Method.Waiter waiter = method.newWaiter();
                long end = System.nanoTime() + 400 * MS;
                for (int i = 0; i < 15_000 && System.nanoTime() - end < 0; i++) {
                    long d = i % 2 == 0 ? 20 * US : 3 * US;
                    waiter.waitUntil(System.nanoTime() + d, d);
                }
            } catch (Throwable e) {
                failure[0] = e;
            }
        }, "bench-jit-" + method.id);
        t.setDaemon(true);
        t.start();
        t.join();
        if (failure[0] != null) {
            throw new IllegalStateException(method.id + " failed its JIT warm-up", failure[0]);
        }
    }

    /**
     * One cell, {@code method} at {@code durationNs}: a thread of its own,
     * started by the caller, and on it one waiter ({@link Method#newWaiter()})
     * created when the thread starts. Every job it runs (the cell's warm-up,
     * then each round's samples) uses that waiter, at that one duration, so
     * the waiter persists across the cell's rounds but never serves another
     * duration or method; {@link #stop()} ends the thread and drops the
     * waiter. The thread inherits the caller's timer slack (the main thread
     * never changes its own).
     */
    static final class CellWorker {
        private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

        final Method method;
        /** The cell's duration: every wait this worker makes is this long. */
        final long durationNs;
        /** Whether the method returns a clock reading of its own (known before the thread starts). */
        final boolean returnsReading;
        private final BlockingQueue<int[]> jobs = new LinkedBlockingQueue<>();
        private final BlockingQueue<Object> results = new LinkedBlockingQueue<>();
        private final Thread thread;

        /**
         * What one job measured. {@code sleeperStats} and {@code target}: a
         * keeptime method's stats over the measured samples, else null.
         * {@code waiter}: the waiter that made the job's waits (the cell's
         * one); {@code sleeper}: the keeptime sleeper behind it (read on the
         * cell's thread), else null; {@code sleepsBeforeJob}: the sleeps that
         * sleeper had counted when the job began (since it was made, or
         * since the previous job's measuring started), 0 on a fresh cell's
         * first job; -1 without a sleeper.
         */
        record Result(long[] errors, long[] returns, long cpuNs, long wallNs, Long timerSlackNs,
                SleeperStats sleeperStats, TailTarget target, Method.Waiter waiter, Sleeper sleeper,
                long sleepsBeforeJob) {}

        CellWorker(Method method, long durationNs) {
            if (durationNs <= 0) {
                throw new IllegalArgumentException("duration " + durationNs + " ns");
            }
            this.method = method;
            this.durationNs = durationNs;
            this.returnsReading = method.returnsReading();
            this.thread = new Thread(this::loop, "bench-" + method.id + "-" + durationNs + "ns");
            this.thread.setDaemon(true);
            this.thread.start();
        }

        private void loop() {
            try {
                // The cell's waiter: made here, on the cell's thread, and used
                // for every job of this cell and nothing else.
                Method.Waiter waiter = method.newWaiter();
                while (true) {
                    int[] job = jobs.take();
                    if (job.length == 0) {
                        return;
                    }
                    results.put(job(waiter, job[0], job[1]));
                }
            } catch (Throwable t) {
                results.add(t);
            }
        }

        private Result job(Method.Waiter waiter, int warmup, int n) throws InterruptedException {
            long d = durationNs;
            Sleeper sleeper = waiter.sleeper();
            long before = sleeper != null ? sleeper.stats().sleeps() : -1;
            for (int i = 0; i < warmup; i++) {
                waiter.waitUntil(System.nanoTime() + d, d);
            }
            long[] errors = new long[n];
            long[] returns = returnsReading ? new long[n] : null;
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
                    sleeper != null ? sleeper.stats() : null, sleeper != null ? sleeper.tailTarget() : null,
                    waiter, sleeper, before);
        }

        /**
         * Runs one job on the cell's thread and waits for it: {@code warmup}
         * unrecorded waits, then {@code n} measured ones, all at the cell's
         * duration with the cell's waiter.
         */
        Result run(int warmup, int n) throws Exception {
            if (warmup < 0 || n < 0) {
                throw new IllegalArgumentException("warmup " + warmup + ", n " + n);
            }
            jobs.put(new int[] {warmup, n});
            Object r = results.take();
            if (r instanceof Throwable) {
                throw new IllegalStateException(method.id + " at " + durationNs + " ns failed", (Throwable) r);
            }
            return (Result) r;
        }

        /** Ends the cell: its thread returns, and its waiter goes with it. */
        void stop() throws InterruptedException {
            jobs.put(new int[0]);
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
