package dev.keeptime;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The machine's idle states and PM QoS CPU latency request, as they bear on
 * the {@link IdleHint idle-latency hint} ({@link Clocks#idleLatency()}, also
 * part of {@link Clocks#inspect()}). Read without changing anything.
 *
 * @param cpuidleDriver the cpuidle driver ({@code none}, {@code haltpoll},
 *     {@code intel_idle}, {@code acpi_idle}, …), empty when there is no
 *     cpuidle interface
 * @param cpuidleGovernor the cpuidle governor ({@code menu}, {@code teo},
 *     {@code haltpoll}, …), empty when unknown
 * @param inForceUs the CPU latency bound in force system-wide, µs, read from
 *     {@value IdleHint#DEVICE} ({@value IdleHint#UNCONSTRAINED_US} means
 *     unconstrained); empty when it could not be read
 * @param readError why {@code inForceUs} could not be read, when it could not
 * @param mayHold whether this process may hold a request: write access to
 *     the device, checked without opening it
 * @param missingPermission when it may not: which permission it lacks, or that
 *     there is no such device
 */
public record IdleLatencyReport(
        Optional<String> cpuidleDriver,
        Optional<String> cpuidleGovernor,
        OptionalInt inForceUs,
        Optional<String> readError,
        boolean mayHold,
        Optional<String> missingPermission) {

    /**
     * Checks the components are present.
     *
     * @param cpuidleDriver the cpuidle driver
     * @param cpuidleGovernor the cpuidle governor
     * @param inForceUs the bound in force, µs
     * @param readError why it could not be read
     * @param mayHold whether this process may hold a request
     * @param missingPermission which permission it lacks
     * @throws NullPointerException if a component is null
     */
    public IdleLatencyReport {
        Objects.requireNonNull(cpuidleDriver, "cpuidleDriver");
        Objects.requireNonNull(cpuidleGovernor, "cpuidleGovernor");
        Objects.requireNonNull(inForceUs, "inForceUs");
        Objects.requireNonNull(readError, "readError");
        Objects.requireNonNull(missingPermission, "missingPermission");
    }

    /**
     * Whether the value in force is the kernel's "unconstrained" default.
     *
     * @return {@code true} when read and at least {@value IdleHint#UNCONSTRAINED_US} µs
     */
    public boolean unconstrained() {
        return inForceUs.isPresent() && inForceUs.getAsInt() >= IdleHint.UNCONSTRAINED_US;
    }

    /** Three lines, aligned like {@link ClockReport#toString()}: idle driver, PM QoS value, permission. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        String driver = cpuidleDriver.orElse(null);
        String idle = driver == null ? "no cpuidle interface"
                : "driver " + driver + cpuidleGovernor.map(g -> ", governor " + g).orElse("");
        if ("none".equals(driver)) {
            idle += " (idle CPUs poll or halt with no exit latency to cap: the idle hint changes little)";
        } else if (driver != null) {
            idle += " (idle states with an exit latency delay wake-ups: the idle hint caps them, at the price of power)";
        }
        line(sb, "cpuidle", idle);
        String qos;
        if (inForceUs.isPresent()) {
            qos = unconstrained() ? inForceUs.getAsInt() + " µs (unconstrained)"
                    : inForceUs.getAsInt() + " µs (some process holds a request)";
        } else {
            qos = "unreadable: " + readError.orElse("unknown");
        }
        line(sb, "PM QoS latency", qos);
        line(sb, "idle hint", mayHold ? "this process may hold it (write access to " + IdleHint.DEVICE + ")"
                : "this process may not hold it: lacks " + missingPermission.orElse("write access to " + IdleHint.DEVICE));
        return sb.toString();
    }

    private static void line(StringBuilder sb, String name, String value) {
        sb.append(String.format(Locale.ROOT, "%-18s %s%n", name, value));
    }
}
