package dev.keeptime;

import java.util.Locale;
import java.util.Objects;

/** How a {@link Sleeper} finishes a wait: the trade between accuracy and CPU. */
public enum Mode {
    /**
     * Spin-finished (the default): OS waits end a learned margin before the
     * deadline, a spin on the clock finishes the sleep. Never returns early;
     * typically within a fraction of a microsecond after the deadline, at a
     * CPU cost of the margin per sleep: twice the learned wake-up latency plus
     * 1 µs, a few µs with a 1 ns timer slack, ~110 µs while the slack is the
     * default 50 µs (JDK 17–21), so shorter sleeps are then spun whole.
     */
    EXACT,
    /**
     * OS-only, compensated (seed 001's method): one OS wait that ends the
     * learned <em>median</em> overshoot before the deadline, no spin. Uses
     * almost no CPU, but <strong>may return before the deadline</strong>
     * (about half of the time, by a few µs) and cannot wait less than the OS's
     * minimum wake-up latency. The one documented exception to "never early".
     */
    EFFICIENT,
    /**
     * Pure spin on the clock with {@link Thread#onSpinWait()}: the most
     * accurate, and a whole core for the whole wait (yielding after 50 µs, so
     * a crowd of spinners does not starve other threads). Never returns early.
     */
    SPIN;

    /**
     * The spec's name of this mode ({@code exact}, {@code efficient}, {@code spin}).
     *
     * @return the lower-case name
     */
    public String specName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The mode with the given spec name, ignoring case.
     *
     * @param name {@code exact}, {@code efficient} or {@code spin}
     * @return the mode
     * @throws IllegalArgumentException for another name
     * @throws NullPointerException if {@code name} is null
     */
    public static Mode fromSpecName(String name) {
        Objects.requireNonNull(name, "name");
        for (Mode m : values()) {
            if (m.specName().equalsIgnoreCase(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown mode: " + name + " (expected exact, efficient or spin)");
    }
}
