package dev.keeptime;

import java.util.Locale;
import java.util.Objects;

/** How a {@link Sleeper} finishes a wait: the trade between accuracy and CPU. */
public enum Mode {
    /**
     * Spin-finished (the default): OS waits end a learned margin before the
     * deadline, a spin on the clock finishes the sleep. Never returns early.
     * The margin is placed at the sleeper's {@link TailTarget} (default 1 %
     * of sleeps may end late because the OS woke the thread late), and the
     * plan (one OS wait, two, or a pure spin) is the cheapest in expected
     * thread CPU that meets it; see {@link Sleeper}.
     */
    EXACT,
    /**
     * OS-only, compensated: one OS wait that ends the
     * learned <em>median</em> overshoot before the deadline, no spin. Uses
     * almost no CPU, but <strong>may return before the deadline</strong>
     * (about half of the time, by a few µs) and cannot wait less than the OS's
     * minimum wake-up latency. The one documented exception to "never early".
     */
    EFFICIENT,
    /**
     * Pure spin on the clock with {@link Thread#onSpinWait()}: the most
     * accurate, and a whole core for the whole wait. After 50 µs it yields
     * while the deadline is more than 20 µs away (so a crowd of spinners does
     * not starve other threads); the last 20 µs are polled with the pause
     * hint alone. Never returns early.
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
