package dev.keeptime;

import java.time.Duration;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * The opt-in idle-latency hint: a bound on how long an idle CPU may take to
 * wake, held while a {@link Sleeper} or {@link Ticker} that asked for it is
 * open ({@code spec/idle-hint.md}).
 *
 * <p>On Linux it is a PM QoS CPU latency request on
 * {@value #DEVICE}, the request cyclictest holds at 0 for its whole run. With
 * a cpuidle driver that has deep or polling states ({@code haltpoll},
 * {@code intel_idle}, {@code acpi_idle}), OS waits then wake sooner and
 * tighter, so the learned margins shrink and exact sleeps cost less CPU.
 * Recorded on an AMD EPYC KVM guest with {@code haltpoll}: wake-ups 15 µs late
 * at p50 instead of 26 µs, and the planner's CPU for 1 % late sleeps at 1 ms
 * fell from 6.6 % to 2.15 %. With no cpuidle driver ({@code none}) idle CPUs
 * already poll or halt with no exit latency to cap, and the hint changes
 * little. {@link Clocks#idleLatency()} says which kind of machine this is.
 *
 * <p><b>Price.</b> While the hint is held, idle CPUs poll instead of
 * sleeping, on every CPU of the machine: more power and heat, and on a
 * virtual machine the host sees the vCPUs as busy. Ask for it only while
 * precise waits matter, and {@code close()} the sleeper or ticker after.
 *
 * <pre>{@code
 * try (Sleeper s = Sleeper.builder().idleHint(0).build()) {   // holds the hint until close()
 *     System.out.println(s.idleHintStatus());                 // "held: 0 µs in force …" or why refused
 *     s.sleep(Duration.ofMillis(1));
 * }
 * }</pre>
 *
 * <p><b>Per process, reference-counted.</b> Every sleeper or ticker built with
 * the hint adds one holder with its value; the first live holder opens the
 * device, the strictest (lowest) value among live holders is written (a
 * native-order 4-byte {@code int}) whenever it changes, and the last holder
 * to go closes the device, which ends the kernel's request. A holder lives
 * until its sleeper or ticker is closed; one that is never closed is
 * released when it is garbage-collected (a {@link java.lang.ref.Cleaner}
 * backstop, at no predictable time). A sleeper that did not ask never opens
 * the device.
 *
 * <p><b>Refusal.</b> Writing the device needs root or write access to it. If
 * it cannot be opened or written, the hint is refused: the sleeper works
 * exactly as without it, building it does not fail, and one warning per
 * process goes to {@code System.getLogger("dev.keeptime")} at
 * {@code WARNING}, naming the device and the reason. Each sleeper's
 * {@link Sleeper#idleHintStatus()} says whether its hint is held (and the
 * value in force) or was refused (and why).
 *
 * <p><b>Value.</b> Whole microseconds, {@code 0} to
 * {@value #MAX_LATENCY_US} (the kernel reads an {@code s32}); anything else
 * is an {@link IllegalArgumentException} when the knob is set, and nothing
 * is requested. {@code 0} is the usual choice. A {@link Duration} is
 * truncated to whole µs (a lower value is a stricter bound).
 */
public final class IdleHint {
    /** The Linux PM QoS CPU latency device. */
    public static final String DEVICE = PmQos.DEVICE;
    /** The largest value accepted, µs: the kernel reads an {@code s32}. */
    public static final long MAX_LATENCY_US = Integer.MAX_VALUE;
    /**
     * What the device reads when nothing constrains the CPUs: the kernel's
     * default of 2 000 000 000 µs (2000 s).
     */
    public static final int UNCONSTRAINED_US = 2_000_000_000;

    private IdleHint() {}

    /**
     * Checks a latency bound in µs.
     *
     * @param maxLatencyUs the bound, µs
     * @return the same value as an {@code int}
     * @throws IllegalArgumentException if it is negative or past {@value #MAX_LATENCY_US}
     */
    static int checkMicros(long maxLatencyUs) {
        if (maxLatencyUs < 0 || maxLatencyUs > MAX_LATENCY_US) {
            throw new IllegalArgumentException("idle latency " + maxLatencyUs
                    + " µs is out of range: the kernel accepts 0 to " + MAX_LATENCY_US + " µs");
        }
        return (int) maxLatencyUs;
    }

    /**
     * Converts a latency bound to whole µs, truncating.
     *
     * @param maxLatency the bound
     * @return whole µs
     * @throws IllegalArgumentException if it is negative or {@value #MAX_LATENCY_US} µs + 1 or more
     * @throws NullPointerException if {@code maxLatency} is null
     */
    static int micros(Duration maxLatency) {
        Objects.requireNonNull(maxLatency, "maxLatency");
        if (maxLatency.isNegative()) {
            throw new IllegalArgumentException("idle latency " + maxLatency
                    + " is out of range: the kernel accepts 0 to " + MAX_LATENCY_US + " µs");
        }
        long us;
        try {
            us = maxLatency.toNanos() / 1_000;
        } catch (ArithmeticException e) {
            us = Long.MAX_VALUE;
        }
        if (us > MAX_LATENCY_US) {
            throw new IllegalArgumentException("idle latency " + maxLatency
                    + " is out of range: the kernel accepts 0 to " + MAX_LATENCY_US + " µs");
        }
        return (int) us;
    }

    /**
     * The value this process holds in force, if any sleeper or ticker holds
     * the hint now (the strictest live value); empty otherwise. Other
     * processes' requests are not counted: {@link Clocks#idleLatency()}
     * reads the system-wide value.
     *
     * @return µs in force for this process, or empty
     */
    public static OptionalInt heldUs() {
        return PmQos.GLOBAL.inForceUs();
    }
}
