package dev.keeptime;

import java.util.OptionalLong;

/**
 * The Linux timer slack of the calling thread: how much later than asked the
 * kernel may fire its timers, so that it can batch wake-ups (50 µs by default).
 * It is why a 100 µs {@code parkNanos} takes ~155 µs; keeptime sets it to 1 ns
 * on each thread that waits, where it can.
 *
 * <p>Setting it needs {@code prctl(PR_SET_TIMERSLACK)}, which pure Java can
 * only reach through the Foreign Function &amp; Memory API of JDK 22 and
 * later. This jar is multi-release: on JDK 17–21 this base version is used,
 * which cannot set the slack ({@link #isSupported()} is {@code false}; the
 * estimator then learns the 50 µs slack and spins for it); on JDK 22+ a
 * version in {@code META-INF/versions/22} calls {@code prctl}.
 *
 * <p>On JDK 22+ grant native access to avoid the JDK's warning about a
 * restricted method: {@code --enable-native-access=ALL-UNNAMED} (class path),
 * {@code --enable-native-access=dev.keeptime} (module path), or the manifest
 * attribute {@code Enable-Native-Access: ALL-UNNAMED} of an executable jar.
 * With native access denied ({@code --illegal-native-access=deny}) setting is
 * unsupported and everything else works.
 */
public final class TimerSlack {
    private TimerSlack() {}

    /**
     * Whether {@link #set} can change the slack on this JVM and OS.
     *
     * @return {@code false} in this version (JDK 17–21, or no Linux)
     */
    public static boolean isSupported() {
        return false;
    }

    /**
     * Sets the calling thread's timer slack. Timer slack is per thread and
     * inherited by threads it starts afterwards.
     *
     * @param ns the new slack in nanoseconds, ≥ 1; 0 restores the thread's default
     * @return whether the slack was changed ({@code false} in this version)
     * @throws IllegalArgumentException if {@code ns} is negative
     */
    public static boolean set(long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("timer slack must not be negative: " + ns);
        }
        return false;
    }

    /**
     * The calling thread's timer slack, where the OS tells it
     * ({@code /proc/<tid>/timerslack_ns} on Linux).
     *
     * @return the slack in nanoseconds, or empty when unknown
     */
    public static OptionalLong current() {
        return LinuxFiles.threadTimerSlackNs();
    }

    /**
     * How this version sets the slack, for reports.
     *
     * @return a short description
     */
    public static String mechanism() {
        return "unsupported (JDK " + Runtime.version().feature() + " < 22: no FFM prctl)";
    }
}
