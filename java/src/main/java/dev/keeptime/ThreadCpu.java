package dev.keeptime;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/** The calling thread's CPU clock, where the JVM offers one. */
final class ThreadCpu {
    /** null when the JVM cannot measure the current thread's CPU time. */
    private static final ThreadMXBean BEAN = find();

    private ThreadCpu() {}

    private static ThreadMXBean find() {
        try {
            ThreadMXBean bean = ManagementFactory.getThreadMXBean();
            return bean.isCurrentThreadCpuTimeSupported() ? bean : null;
        } catch (RuntimeException | LinkageError e) {
            return null; // no java.management in this runtime image
        }
    }

    /** Whether {@link #nowNs()} can answer. */
    static boolean isSupported() {
        return BEAN != null;
    }

    /** The current thread's CPU time in ns, or -1 when unavailable (or disabled). */
    static long nowNs() {
        if (BEAN == null) {
            return -1;
        }
        try {
            return BEAN.getCurrentThreadCpuTime();
        } catch (UnsupportedOperationException e) {
            return -1;
        }
    }
}
