package dev.keeptime;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.function.LongSupplier;

/**
 * Clock inspection: how fine and how costly {@link System#nanoTime()} (the
 * MONOTONIC clock) and {@link Instant#now()} (REALTIME) really are, how
 * coarse {@link System#currentTimeMillis()} is, what Linux says about its
 * clocksource, timer slack, idle states, cpufreq, virtualisation and
 * preemption, the idle-latency state ({@link #idleLatency()}), and findings
 * in plain words ({@link ClockReport#findings()}).
 *
 * <pre>{@code
 * ClockReport r = Clocks.inspect();
 * System.out.print(r);                           // readable, one figure per line, then the findings
 * double costNs = r.nanoTimeLatencyNs();
 * }</pre>
 *
 * <p>Cost: about 20–100 ms of the calling thread's time (more where
 * {@code currentTimeMillis} is coarse, at most ~0.5 s).
 */
public final class Clocks {
    /** Back-to-back calls per timed batch of the read-cost measurement. */
    static final int CALLS_PER_BATCH = 10_000;
    /** Timed batches; the read cost is their median. */
    static final int BATCHES = 31;
    /** Successive reads examined for granularity, repeats and monotonicity. */
    static final int GRANULARITY_READS = 200_000;
    /** Steps a coarse clock must show before its granularity is trusted. */
    static final int MIN_STEPS = 3;
    /** Time spent measuring one clock: cost batches stop after half of it; a clock that has not stepped gets four. */
    static final long PER_CLOCK_LIMIT_NS = 50_000_000;
    /** Longest time spent waiting for a coarse clock to step. */
    static final long COARSE_LIMIT_NS = 250_000_000;

    private static volatile long sink;

    private Clocks() {}

    /**
     * Measures the clocks and reads what the OS tells about timers.
     *
     * @return the report
     */
    public static ClockReport inspect() {
        warmUp();
        ClockInfo monotonic = measure("MONOTONIC",
                "System.nanoTime(): time since boot, not counting suspend (CLOCK_MONOTONIC on Linux)", System::nanoTime);
        ClockInfo realtime = measure("REALTIME",
                "Instant.now(): wall-clock time since 1970 in ns (CLOCK_REALTIME on Linux); may step", Clocks::instantNs);
        long millisStep = currentTimeMillisGranularityMs();
        MachineInfo machine = MachineProbe.read(TimerSlack.current());
        return new ClockReport(
                List.of(monotonic, realtime),
                machine,
                idleLatency(),
                millisStep,
                TimerSlack.isSupported(),
                System.getProperty("java.vm.name", "JVM") + " " + Runtime.version());
    }

    /**
     * The machine's idle states and the PM QoS CPU latency request, as they
     * bear on the {@link IdleHint idle-latency hint}: the cpuidle driver and
     * governor, the bound in force system-wide (4 bytes read from
     * {@value IdleHint#DEVICE}; opening it read-only adds no constraint), and
     * whether this process may hold a request ({@link Files#isWritable}, the
     * device is not opened for writing) and if not, which permission it lacks.
     * Changes nothing. Cost: a few small file reads.
     *
     * @return the report
     */
    public static IdleLatencyReport idleLatency() {
        return idleLatency(Path.of("/"));
    }

    /** {@link #idleLatency()} under {@code root} (tests: a fake tree). */
    static IdleLatencyReport idleLatency(Path root) {
        Path cpuidle = root.resolve("sys/devices/system/cpu/cpuidle");
        Path device = root.resolve(IdleHint.DEVICE.substring(1));
        OptionalInt inForce = OptionalInt.empty();
        Optional<String> readError = Optional.empty();
        try {
            inForce = OptionalInt.of(readInForce(device));
        } catch (IOException | RuntimeException e) {
            readError = Optional.of(PmQos.reason(e).equals(PmQos.PERMISSION_DENIED)
                    ? "permission denied (reading it needs root or read access to the device)" : PmQos.reason(e));
        }
        boolean exists = Files.exists(device);
        boolean mayHold = exists && Files.isWritable(device);
        Optional<String> missing = Optional.empty();
        if (!mayHold) {
            missing = Optional.of(exists ? missingWrite(device) : "the device: " + device + " does not exist (no PM QoS CPU latency interface)");
        }
        return new IdleLatencyReport(
                LinuxFiles.read(cpuidle.resolve("current_driver").toString()),
                LinuxFiles.read(cpuidle.resolve("current_governor").toString()),
                inForce, readError, mayHold, missing);
    }

    /** The bound in force: the device's 4 bytes, a native-order {@code s32}. */
    static int readInForce(Path device) throws IOException {
        try (FileChannel ch = FileChannel.open(device, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.nativeOrder());
            while (b.hasRemaining()) {
                if (ch.read(b) < 0) {
                    throw new IOException("short read: " + b.position() + " of 4 bytes");
                }
            }
            return b.flip().getInt();
        }
    }

    /** Which write permission this process lacks on {@code device}, with its mode and owners. */
    static String missingWrite(Path device) {
        try {
            PosixFileAttributes a = Files.readAttributes(device, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return missingWrite(device.toString(), PosixFilePermissions.toString(a.permissions()),
                    a.owner().getName(), a.group().getName(), a.permissions().contains(PosixFilePermission.GROUP_WRITE));
        } catch (IOException | RuntimeException e) {
            return "write access to " + device + " (its permissions could not be read: " + PmQos.reason(e) + ")";
        }
    }

    static String missingWrite(String device, String mode, String owner, String group, boolean groupWrite) {
        return "write access to " + device + " (" + mode + ", owner " + owner + ", group " + group + "): run as "
                + owner + (groupWrite ? " or in group " + group : "")
                + ", or let this user write it (e.g. a udev rule giving a group rw)";
    }

    private static void warmUp() {
        long acc = 0;
        for (int i = 0; i < 200_000; i++) {
            acc += System.nanoTime();
        }
        sink = acc;
    }

    private static long instantNs() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /**
     * Reads a clock back to back: the read cost is the median over batches of
     * batch time / calls; then successive reads give the smallest step, the
     * share of repeats and the backward steps.
     */
    static ClockInfo measure(String name, String description, LongSupplier read) {
        long start = System.nanoTime();
        double[] perCall = new double[BATCHES];
        int batches = 0;
        long acc = 0;
        while (batches < BATCHES && (batches == 0 || System.nanoTime() - start < PER_CLOCK_LIMIT_NS / 2)) {
            long t0 = System.nanoTime();
            for (int i = 0; i < CALLS_PER_BATCH; i++) {
                acc += read.getAsLong();
            }
            perCall[batches++] = (double) (System.nanoTime() - t0) / CALLS_PER_BATCH;
        }
        sink = acc;
        double[] costs = Arrays.copyOf(perCall, batches);
        Arrays.sort(costs);
        double cost = Percentiles.nearestRank(costs, 500);

        long pairs = 0;
        long repeats = 0;
        long steps = 0;
        long backwards = 0;
        long min = Long.MAX_VALUE;
        long prev = read.getAsLong();
        while (true) {
            for (int i = 0; i < 256; i++) {
                long now = read.getAsLong();
                pairs++;
                if (now == prev) {
                    repeats++;
                } else if (now - prev > 0) {
                    min = Math.min(min, now - prev);
                    steps++;
                } else {
                    backwards++;
                }
                prev = now;
            }
            long elapsed = System.nanoTime() - start;
            boolean enough = pairs >= GRANULARITY_READS && steps >= MIN_STEPS;
            if (enough || elapsed > PER_CLOCK_LIMIT_NS && steps >= MIN_STEPS || elapsed > 4 * PER_CLOCK_LIMIT_NS) {
                break;
            }
        }
        return new ClockInfo(name, description, OptionalLong.empty(),
                min == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(min),
                (double) repeats / pairs, pairs, cost, backwards, true, Optional.empty());
    }

    /** Smallest non-zero step once the clock has stepped MIN_STEPS times (or the time limit passed). */
    static long currentTimeMillisGranularityMs() {
        long start = System.nanoTime();
        long prev = System.currentTimeMillis();
        long min = Long.MAX_VALUE;
        int steps = 0;
        while (steps < MIN_STEPS && System.nanoTime() - start < COARSE_LIMIT_NS) {
            long now = System.currentTimeMillis();
            if (now != prev) {
                if (now > prev) {
                    min = Math.min(min, now - prev);
                    steps++;
                }
                prev = now;
            }
        }
        return min == Long.MAX_VALUE ? 0 : min;
    }
}
