package dev.keeptime.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** The machine fields of the bench result format, from Linux /proc and /sys where readable. */
final class Machine {
    final String os;
    final String arch;
    final String kernel;
    final String cpuModel;
    final Long cpus;
    final String clocksource;
    final Long timerSlackNs;
    final String virtualization;
    final String preemption;

    private Machine(String os, String arch, String kernel, String cpuModel, Long cpus, String clocksource,
            Long timerSlackNs, String virtualization, String preemption) {
        this.os = os;
        this.arch = arch;
        this.kernel = kernel;
        this.cpuModel = cpuModel;
        this.cpus = cpus;
        this.clocksource = clocksource;
        this.timerSlackNs = timerSlackNs;
        this.virtualization = virtualization;
        this.preemption = preemption;
    }

    /** This machine; {@code timerSlackNs} as the calling thread found it. */
    static Machine detect(dev.keeptime.ClockReport clocks) {
        String osName = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String os = osName.contains("linux") ? "linux" : osName.contains("mac") ? "macos"
                : osName.contains("windows") ? "windows" : osName;
        String arch = System.getProperty("os.arch", "");
        if (arch.equals("amd64")) {
            arch = "x86_64";
        }
        String cpuModel = read("/proc/cpuinfo").flatMap(t -> t.lines()
                .filter(l -> l.startsWith("model name") || l.startsWith("Model"))
                .map(l -> l.substring(l.indexOf(':') + 1).trim())
                .findFirst()).orElse(null);
        Long cpus = read("/sys/devices/system/cpu/online").map(Machine::countCpus).orElse(null);
        return new Machine(os, arch,
                read("/proc/sys/kernel/osrelease").orElse(System.getProperty("os.version")),
                cpuModel,
                cpus,
                clocks.clocksource().orElse(null),
                clocks.timerSlackNs().isPresent() ? clocks.timerSlackNs().getAsLong() : null,
                clocks.virtualization().orElse(null),
                os.equals("linux") ? preemption() : null);
    }

    /** "0-1,4" → 3. */
    static Long countCpus(String list) {
        long n = 0;
        for (String part : list.split(",")) {
            String[] r = part.trim().split("-");
            n += r.length == 2 ? Long.parseLong(r[1]) - Long.parseLong(r[0]) + 1 : 1;
        }
        return n;
    }

    /** The kernel's preemption model from {@code uname -v}, worded like the Rust core. */
    static String preemption() {
        if (read("/sys/kernel/realtime").map(String::trim).filter("1"::equals).isPresent()) {
            return "PREEMPT_RT";
        }
        List<String> words = Arrays.asList(read("/proc/sys/kernel/version").orElse("").split("\\s+"));
        if (words.contains("PREEMPT_RT")) {
            return "PREEMPT_RT";
        } else if (words.contains("PREEMPT_DYNAMIC")) {
            return read("/sys/kernel/debug/sched/preempt").map(m -> "PREEMPT_DYNAMIC (" + m + ")")
                    .orElse("PREEMPT_DYNAMIC");
        } else if (words.contains("PREEMPT")) {
            return "PREEMPT (full)";
        } else if (words.contains("SMP") || (!words.isEmpty() && words.get(0).startsWith("#"))) {
            return "none or voluntary";
        }
        return null;
    }

    static java.util.Optional<String> read(String path) {
        try {
            String s = new String(Files.readAllBytes(Path.of(path)), StandardCharsets.UTF_8).trim();
            return s.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(s);
        } catch (IOException | RuntimeException e) {
            return java.util.Optional.empty();
        }
    }

    @Override
    public String toString() {
        return os + " " + arch + ", kernel " + kernel + " (" + preemption + "), " + cpus + " CPUs ("
                + cpuModel + "), clocksource " + clocksource + ", virtualization " + virtualization;
    }
}
