package dev.keeptime;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What {@link Clocks#inspect()} found out about this JVM's clocks and this
 * machine's timers. Plain words on each figure are in {@link #toString()}.
 *
 * @param nanoTimeLatencyNs cost of one {@link System#nanoTime()} call, ns: the
 *     median over batches of back-to-back calls (JMH's "latency")
 * @param nanoTimeGranularityNs smallest non-zero difference between two
 *     successive {@code nanoTime} calls, ns (JMH's "granularity"); a clock can
 *     tick finer than it can be read, so this is at least about the latency
 * @param nanoTimeBackwardSteps successive {@code nanoTime} readings that went
 *     backwards while measuring (should be 0: the clock is monotonic)
 * @param currentTimeMillisGranularityMs smallest non-zero step of
 *     {@link System#currentTimeMillis()}, ms (0 if it never stepped while measured)
 * @param instantGranularityNs smallest non-zero step of {@link java.time.Instant#now()}, ns
 * @param clocksource the kernel's current clocksource ({@code tsc}, {@code hpet},
 *     {@code kvm-clock}, …), Linux only
 * @param availableClocksources the clocksources the kernel could switch to
 * @param timerSlackNs the calling thread's timer slack, ns, where readable
 * @param timerSlackSettable whether keeptime can set the slack to 1 ns here
 *     (Linux, JDK 22+, native access allowed; see {@link TimerSlack})
 * @param virtualization a hint that the machine is virtual ({@code "KVM"},
 *     {@code "Hyper-V"}, {@code "xen"}, a DMI product name, or
 *     {@code "hypervisor (CPU flag; type unknown)"}), empty when none was found
 * @param availableProcessors {@link Runtime#availableProcessors()}
 * @param runtime JVM name and version
 * @param idleLatency the cpuidle driver, the PM QoS CPU latency bound in
 *     force and whether this process may hold the {@link IdleHint idle-latency hint}
 */
public record ClockReport(
        double nanoTimeLatencyNs,
        long nanoTimeGranularityNs,
        long nanoTimeBackwardSteps,
        long currentTimeMillisGranularityMs,
        long instantGranularityNs,
        Optional<String> clocksource,
        List<String> availableClocksources,
        OptionalLong timerSlackNs,
        boolean timerSlackSettable,
        Optional<String> virtualization,
        int availableProcessors,
        String runtime,
        IdleLatencyReport idleLatency) {

    /**
     * A multi-line, aligned description with what each figure means.
     *
     * @return the report as text
     */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        line(sb, "runtime", runtime + ", " + availableProcessors + " CPUs available");
        line(sb, "System.nanoTime", String.format(Locale.ROOT,
                "%.1f ns per call, steps of %d ns%s", nanoTimeLatencyNs, nanoTimeGranularityNs,
                nanoTimeBackwardSteps == 0 ? ", monotonic" : ", WENT BACKWARDS " + nanoTimeBackwardSteps + " times"));
        line(sb, "currentTimeMillis", currentTimeMillisGranularityMs == 0
                ? "did not step while measured"
                : "steps of " + currentTimeMillisGranularityMs + " ms");
        line(sb, "Instant.now", "steps of " + instantGranularityNs + " ns");
        line(sb, "clocksource", clocksource.orElse("unknown")
                + (availableClocksources.isEmpty() ? "" : " (available: " + String.join(" ", availableClocksources) + ")"));
        String slack = timerSlackNs.isPresent() ? timerSlackNs.getAsLong() + " ns on this thread" : "unknown";
        if (timerSlackNs.isPresent() && timerSlackNs.getAsLong() > 1_000) {
            slack += " (timed waits wake up to this much late)";
        }
        line(sb, "timer slack", slack + "; keeptime " + (timerSlackSettable ? "sets it to 1 ns" : "cannot set it here"));
        line(sb, "virtualization", virtualization.orElse("none detected"));
        sb.append(idleLatency);
        return sb.toString();
    }

    private static void line(StringBuilder sb, String name, String value) {
        sb.append(String.format(Locale.ROOT, "%-18s %s%n", name, value));
    }
}
