package dev.keeptime;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What {@link Clocks#inspect()} found out about this JVM's clocks and this
 * machine's timers: the clock report of the project's spec (clocks, machine,
 * idle latency, {@link #findings()}), with a few Java-only figures. Plain
 * words on each figure are in {@link #toString()}.
 *
 * @param clocks {@code MONOTONIC} (read with {@link System#nanoTime()}) and
 *     {@code REALTIME} (read with {@link java.time.Instant#now()})
 * @param machine the machine's timing-relevant configuration
 * @param idleLatency the cpuidle driver, the PM QoS CPU latency bound in
 *     force and whether this process may hold the {@link IdleHint idle-latency hint}
 * @param currentTimeMillisGranularityMs smallest non-zero step of
 *     {@link System#currentTimeMillis()}, ms (0 if it never stepped while measured)
 * @param timerSlackSettable whether keeptime can set the slack to 1 ns here
 *     (Linux, JDK 22+, native access allowed; see {@link TimerSlack})
 * @param runtime JVM name and version
 */
public record ClockReport(
        List<ClockInfo> clocks,
        MachineInfo machine,
        IdleLatencyReport idleLatency,
        long currentTimeMillisGranularityMs,
        boolean timerSlackSettable,
        String runtime) {

    /**
     * Checks the components are present and copies the clocks.
     *
     * @param clocks the clocks
     * @param machine the machine
     * @param idleLatency the idle-latency state
     * @param currentTimeMillisGranularityMs currentTimeMillis's step, ms
     * @param timerSlackSettable whether keeptime can set the slack
     * @param runtime JVM name and version
     * @throws NullPointerException if a component is null
     */
    public ClockReport {
        clocks = List.copyOf(clocks);
        Objects.requireNonNull(machine, "machine");
        Objects.requireNonNull(idleLatency, "idleLatency");
        Objects.requireNonNull(runtime, "runtime");
    }

    /**
     * The clock with this name, ignoring ASCII case ({@code "monotonic"}
     * finds {@code MONOTONIC}).
     *
     * @param name the clock's name
     * @return the clock, if the report has it
     */
    public Optional<ClockInfo> clock(String name) {
        return clocks.stream().filter(c -> equalsIgnoreAsciiCase(c.name(), name)).findFirst();
    }

    static boolean equalsIgnoreAsciiCase(String a, String b) {
        if (a.length() != b.length()) {
            return false;
        }
        for (int i = 0; i < a.length(); i++) {
            char x = a.charAt(i);
            char y = b.charAt(i);
            if (x != y && (x >= 0x80 || y >= 0x80 || Character.toLowerCase(x) != Character.toLowerCase(y))) {
                return false;
            }
        }
        return true;
    }

    /**
     * What the figures mean for precise waiting ({@link ClockFindings}):
     * warnings first, the idle-latency finding last.
     *
     * @return the findings
     */
    public List<Finding> findings() {
        return ClockFindings.of(clocks, machine, Optional.of(idleLatency));
    }

    private Optional<ClockInfo> monotonic() {
        return clock("MONOTONIC").filter(ClockInfo::available);
    }

    /**
     * Cost of one {@link System#nanoTime()} call, ns: the MONOTONIC clock's read cost.
     *
     * @return ns per call (0 if it was not measured)
     */
    public double nanoTimeLatencyNs() {
        return monotonic().map(ClockInfo::readCostNs).orElse(0.0);
    }

    /**
     * Smallest non-zero difference between two successive {@code nanoTime}
     * calls, ns (a clock can tick finer than it can be read, so this is at
     * least about the read cost).
     *
     * @return ns (0 if it never stepped)
     */
    public long nanoTimeGranularityNs() {
        return monotonic().flatMap(c -> c.granularityNs().isPresent()
                ? Optional.of(c.granularityNs().getAsLong()) : Optional.empty()).orElse(0L);
    }

    /**
     * Successive {@code nanoTime} readings that went backwards while measured (should be 0).
     *
     * @return the count
     */
    public long nanoTimeBackwardSteps() {
        return monotonic().map(ClockInfo::monotonicViolations).orElse(0L);
    }

    /**
     * Smallest non-zero step of {@link java.time.Instant#now()}, ns.
     *
     * @return ns (0 if it never stepped)
     */
    public long instantGranularityNs() {
        return clock("REALTIME").flatMap(c -> c.granularityNs().isPresent()
                ? Optional.of(c.granularityNs().getAsLong()) : Optional.empty()).orElse(0L);
    }

    /**
     * The kernel's current clocksource ({@code tsc}, {@code hpet}, {@code kvm-clock}, …).
     *
     * @return it, Linux only
     */
    public Optional<String> clocksource() {
        return machine.clocksource();
    }

    /**
     * The clocksources the kernel could switch to.
     *
     * @return them, Linux only
     */
    public List<String> availableClocksources() {
        return machine.availableClocksources();
    }

    /**
     * The inspecting thread's timer slack, ns, where readable.
     *
     * @return the slack
     */
    public OptionalLong timerSlackNs() {
        return machine.timerSlackNs();
    }

    /**
     * The hypervisor this runs under ({@code "KVM"}, {@code "Xen"}, …, or
     * {@code "unknown"} when only the CPU's flag says so).
     *
     * @return it, empty when none was found
     */
    public Optional<String> virtualization() {
        return machine.virtualization().map(MachineInfo.Virtualization::hypervisor);
    }

    /**
     * {@link Runtime#availableProcessors()} when inspected.
     *
     * @return the CPUs this JVM may use
     */
    public int availableProcessors() {
        return machine.cpusAvailable().orElse(Runtime.getRuntime().availableProcessors());
    }

    /**
     * A multi-line, aligned description with what each figure means, then the findings.
     *
     * @return the report as text
     */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        line(sb, "runtime", runtime + ", " + availableProcessors() + " CPUs available"
                + (machine.cpusOnline().isPresent() ? ", " + machine.cpusOnline().getAsInt() + " online" : ""));
        for (ClockInfo c : clocks) {
            String reader = c.name().equals("MONOTONIC") ? "System.nanoTime" : c.name().equals("REALTIME") ? "Instant.now" : c.name();
            line(sb, reader, !c.available() ? "unavailable: " + c.error().orElse("unknown") : String.format(Locale.ROOT,
                    "%.1f ns per call, steps of %s%s", c.readCostNs(),
                    c.granularityNs().isPresent() ? c.granularityNs().getAsLong() + " ns" : "(never stepped)",
                    c.monotonicViolations() == 0 ? "" : ", WENT BACKWARDS " + c.monotonicViolations() + " times"));
        }
        line(sb, "currentTimeMillis", currentTimeMillisGranularityMs == 0
                ? "did not step while measured"
                : "steps of " + currentTimeMillisGranularityMs + " ms");
        line(sb, "clocksource", clocksource().orElse("unknown")
                + (availableClocksources().isEmpty() ? "" : " (available: " + String.join(" ", availableClocksources()) + ")"));
        String slack = timerSlackNs().isPresent() ? timerSlackNs().getAsLong() + " ns on this thread" : "unknown";
        if (timerSlackNs().isPresent() && timerSlackNs().getAsLong() > 1_000) {
            slack += " (timed waits wake up to this much late)";
        }
        line(sb, "timer slack", slack + "; keeptime " + (timerSlackSettable ? "sets it to 1 ns" : "cannot set it here"));
        line(sb, "virtualization", machine.virtualization().map(v -> v.hypervisor() + " (" + v.source() + ")")
                .orElse("none detected"));
        line(sb, "preemption", machine.preemption().jsonName() + machine.preemptionMode().map(m -> " (" + m + ")").orElse(""));
        sb.append(idleLatency);
        for (Finding f : findings()) {
            line(sb, f.severity().jsonName(), f.message());
        }
        return sb.toString();
    }

    private static void line(StringBuilder sb, String name, String value) {
        sb.append(String.format(Locale.ROOT, "%-18s %s%n", name, value));
    }
}
