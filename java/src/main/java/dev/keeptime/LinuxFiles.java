package dev.keeptime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;

/** Small, never-throwing readers of Linux /proc and /sys files. */
final class LinuxFiles {
    private LinuxFiles() {}

    /** The trimmed content of a small file, or empty if it cannot be read. */
    static Optional<String> read(String path) {
        try {
            String s = new String(Files.readAllBytes(Path.of(path)), StandardCharsets.UTF_8).trim();
            return s.isEmpty() ? Optional.empty() : Optional.of(s);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * The calling thread's timer slack. {@code /proc/thread-self} has no
     * {@code timerslack_ns}, but {@code /proc/<tid>/timerslack_ns} is the
     * thread's own, and a thread may always read its own.
     */
    static OptionalLong threadTimerSlackNs() {
        try {
            // "/proc/thread-self" -> "<pid>/task/<tid>"
            Path link = Files.readSymbolicLink(Path.of("/proc/thread-self"));
            String tid = link.getFileName().toString();
            return read("/proc/" + tid + "/timerslack_ns")
                    .map(s -> OptionalLong.of(Long.parseLong(s)))
                    .orElse(OptionalLong.empty());
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }
}
