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

/**
 * Clock inspection, without leaving Java: how fine and how costly
 * {@link System#nanoTime()} really is, how coarse
 * {@link System#currentTimeMillis()} and {@link Instant#now()} are, and what
 * Linux says about its clocksource, the thread's timer slack, virtualisation,
 * and its idle states and PM QoS request ({@link #idleLatency()}).
 *
 * <pre>{@code
 * ClockReport r = Clocks.inspect();
 * System.out.print(r);                           // readable, one figure per line
 * double costNs = r.nanoTimeLatencyNs();
 * }</pre>
 *
 * <p>Cost: about 20–100 ms of the calling thread's time (more where
 * {@code currentTimeMillis} is coarse, at most ~0.5 s).
 */
public final class Clocks {
    /** Back-to-back calls per timed batch of the latency measurement. */
    static final int CALLS_PER_BATCH = 10_000;
    /** Timed batches; the latency is their median. */
    static final int BATCHES = 31;
    /** Successive pairs examined for the nanoTime granularity. */
    static final int GRANULARITY_READS = 1_000_000;
    /** Steps a coarse clock must show before its granularity is trusted. */
    static final int MIN_STEPS = 3;
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
        double latency = nanoTimeLatencyNs();
        long[] granularity = nanoTimeGranularity();
        long millisStep = currentTimeMillisGranularityMs();
        long instantStep = instantGranularityNs();
        String base = "/sys/devices/system/clocksource/clocksource0/";
        Optional<String> current = LinuxFiles.read(base + "current_clocksource");
        List<String> available = LinuxFiles.read(base + "available_clocksource")
                .map(s -> List.of(s.split("\\s+")))
                .orElse(List.of());
        return new ClockReport(
                latency,
                granularity[0],
                granularity[1],
                millisStep,
                instantStep,
                current,
                available,
                TimerSlack.current(),
                TimerSlack.isSupported(),
                virtualization(available),
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.name", "JVM") + " " + Runtime.version(),
                idleLatency());
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

    /** Median over batches of (batch time / calls per batch). */
    static double nanoTimeLatencyNs() {
        double[] perCall = new double[BATCHES];
        long acc = 0;
        for (int b = 0; b < BATCHES; b++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < CALLS_PER_BATCH; i++) {
                acc += System.nanoTime();
            }
            long t1 = System.nanoTime();
            perCall[b] = (double) (t1 - t0) / CALLS_PER_BATCH;
        }
        sink = acc;
        Arrays.sort(perCall);
        return Percentiles.nearestRank(perCall, 500);
    }

    /** {smallest non-zero forward step, backward steps} over successive calls. */
    static long[] nanoTimeGranularity() {
        long min = Long.MAX_VALUE;
        long backwards = 0;
        long prev = System.nanoTime();
        for (int i = 0; i < GRANULARITY_READS; i++) {
            long now = System.nanoTime();
            long step = now - prev;
            if (step > 0 && step < min) {
                min = step;
            } else if (step < 0) {
                backwards++;
            }
            prev = now;
        }
        return new long[] {min == Long.MAX_VALUE ? 0 : min, backwards};
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

    static long instantGranularityNs() {
        long start = System.nanoTime();
        Instant prev = Instant.now();
        long min = Long.MAX_VALUE;
        int steps = 0;
        while ((steps < 1_000 || System.nanoTime() - start < 2_000_000)
                && System.nanoTime() - start < COARSE_LIMIT_NS) {
            Instant now = Instant.now();
            if (now.isAfter(prev)) {
                long d = (now.getEpochSecond() - prev.getEpochSecond()) * 1_000_000_000L
                        + (now.getNano() - prev.getNano());
                min = Math.min(min, d);
                steps++;
            }
            prev = now;
        }
        return min == Long.MAX_VALUE ? 0 : min;
    }

    /**
     * A hint, from the clocksources a paravirtualised kernel offers, Xen's and
     * the DMI tables' names, and the CPU's "hypervisor" flag.
     */
    static Optional<String> virtualization(List<String> clocksources) {
        if (clocksources.contains("kvm-clock")) {
            return Optional.of("KVM");
        }
        if (clocksources.contains("hyperv_clocksource_tsc_page")) {
            return Optional.of("Hyper-V");
        }
        Optional<String> xen = LinuxFiles.read("/sys/hypervisor/type");
        if (xen.isPresent()) {
            return xen;
        }
        Optional<String> product = LinuxFiles.read("/sys/class/dmi/id/product_name");
        Optional<String> vendor = LinuxFiles.read("/sys/class/dmi/id/sys_vendor");
        String dmi = (vendor.orElse("") + " " + product.orElse("")).toLowerCase(java.util.Locale.ROOT);
        for (String name : new String[] {"kvm", "qemu", "vmware", "virtualbox", "virtual machine", "xen", "bochs", "parallels"}) {
            if (dmi.contains(name)) {
                return Optional.of((vendor.orElse("") + " " + product.orElse("")).trim());
            }
        }
        boolean flag = LinuxFiles.read("/proc/cpuinfo")
                .map(s -> s.lines().filter(l -> l.startsWith("flags")).findFirst().orElse(""))
                .map(l -> l.contains(" hypervisor"))
                .orElse(false);
        return flag ? Optional.of("hypervisor (CPU flag; type unknown)") : Optional.empty();
    }
}
