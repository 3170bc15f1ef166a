package dev.keeptime;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Clock inspection: how fine and how costly {@link System#nanoTime()} really
 * is (seed 002's question, answered without leaving Java), how coarse
 * {@link System#currentTimeMillis()} and {@link Instant#now()} are, and what
 * Linux says about its clocksource, the thread's timer slack and virtualisation.
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
                System.getProperty("java.vm.name", "JVM") + " " + Runtime.version());
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
        return perCall[BATCHES / 2];
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
