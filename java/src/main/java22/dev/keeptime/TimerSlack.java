package dev.keeptime;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.OptionalLong;

/**
 * The Linux timer slack of the calling thread: how much later than asked the
 * kernel may fire its timers, so that it can batch wake-ups (50 µs by default).
 * It is why a 100 µs {@code parkNanos} takes ~155 µs; keeptime sets it to 1 ns
 * on each thread that waits, where it can.
 *
 * <p>This is the JDK 22+ version of the class (multi-release jar): it calls
 * {@code prctl(PR_SET_TIMERSLACK)} through the Foreign Function &amp; Memory
 * API. Grant native access to avoid the JDK's warning about a restricted
 * method: {@code --enable-native-access=ALL-UNNAMED} (class path),
 * {@code --enable-native-access=dev.keeptime} (module path), or the manifest
 * attribute {@code Enable-Native-Access: ALL-UNNAMED} of an executable jar.
 * With native access denied ({@code --illegal-native-access=deny}) setting is
 * unsupported and everything else works.
 */
public final class TimerSlack {
    private static final int PR_SET_TIMERSLACK = 29;
    private static final int PR_GET_TIMERSLACK = 30;
    /** {@code int prctl(int option, ...)}, with one variadic unsigned long; null if unavailable. */
    private static final MethodHandle PRCTL = findPrctl();

    private TimerSlack() {}

    @SuppressWarnings("restricted") // the reason for --enable-native-access, see the class doc
    private static MethodHandle findPrctl() {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return null;
        }
        try {
            Linker linker = Linker.nativeLinker();
            return linker.defaultLookup().find("prctl")
                    .map(address -> linker.downcallHandle(address,
                            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG),
                            Linker.Option.firstVariadicArg(1)))
                    .orElse(null);
        } catch (RuntimeException | LinkageError e) {
            // IllegalCallerException when native access is denied, UnsupportedOperationException
            // on a platform without a linker: fall back to "unsupported".
            return null;
        }
    }

    private static int prctl(int option, long arg) {
        try {
            return (int) PRCTL.invokeExact(option, arg);
        } catch (Throwable t) {
            return -1;
        }
    }

    /**
     * Whether {@link #set} can change the slack on this JVM and OS.
     *
     * @return {@code true} on Linux with native access available
     */
    public static boolean isSupported() {
        return PRCTL != null;
    }

    /**
     * Sets the calling thread's timer slack. Timer slack is per thread and
     * inherited by threads it starts afterwards. On a virtual thread nothing
     * is changed (the slack would belong to whichever carrier thread runs it).
     *
     * @param ns the new slack in nanoseconds, ≥ 1; 0 restores the thread's default
     * @return whether the slack was changed
     * @throws IllegalArgumentException if {@code ns} is negative
     */
    public static boolean set(long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("timer slack must not be negative: " + ns);
        }
        if (PRCTL == null || Thread.currentThread().isVirtual()) {
            return false;
        }
        return prctl(PR_SET_TIMERSLACK, ns) == 0;
    }

    /**
     * The calling thread's timer slack ({@code prctl(PR_GET_TIMERSLACK)}, else
     * {@code /proc/<tid>/timerslack_ns}).
     *
     * @return the slack in nanoseconds, or empty when unknown
     */
    public static OptionalLong current() {
        if (PRCTL != null) {
            int slack = prctl(PR_GET_TIMERSLACK, 0);
            if (slack >= 0) {
                return OptionalLong.of(slack);
            }
        }
        return LinuxFiles.threadTimerSlackNs();
    }

    /**
     * How this version sets the slack, for reports.
     *
     * @return a short description
     */
    public static String mechanism() {
        return PRCTL != null
                ? "prctl(PR_SET_TIMERSLACK) via FFM (JDK " + Runtime.version().feature() + ")"
                : "unsupported (JDK " + Runtime.version().feature() + ": prctl not reachable, native access denied?)";
    }
}
