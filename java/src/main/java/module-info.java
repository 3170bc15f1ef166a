/**
 * keeptime: precise waiting for the JVM. See {@link dev.keeptime.KeepTime}.
 *
 * <p>On JDK 22 and later the library lowers a waiting thread's Linux timer
 * slack through the Foreign Function &amp; Memory API; grant it native access
 * ({@code --enable-native-access=dev.keeptime} on the module path,
 * {@code --enable-native-access=ALL-UNNAMED} on the class path) to avoid the
 * JDK's warning about restricted methods.
 */
module dev.keeptime {
    exports dev.keeptime;
    // Thread CPU time (ThreadMXBean): the cost of an OS wait, sampled every 8th
    // planned wait; also the benchmark's CPU figures.
    requires java.management;
    // The benchmark's crowd row: process CPU time (com.sun.management.OperatingSystemMXBean).
    requires jdk.management;
}
