package dev.keeptime;

import dev.keeptime.MachineInfo.IdleState;
import dev.keeptime.MachineInfo.Preemption;
import dev.keeptime.MachineInfo.Tsc;
import dev.keeptime.MachineInfo.Virtualization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.zip.GZIPInputStream;

/**
 * Reads {@link MachineInfo} from {@code /proc} and {@code /sys}. Each parser
 * takes a file's text, so tests feed it fixtures; {@link #read} does the
 * reading, and anything unreadable stays empty.
 */
final class MachineProbe {
    private MachineProbe() {}

    /** The first processor's vendor, model name and flags in {@code /proc/cpuinfo}. */
    record CpuInfo(Optional<String> vendor, Optional<String> model, List<String> flags) {
        boolean has(String flag) {
            return flags.contains(flag);
        }
    }

    /** The machine as this process sees it now; {@code timerSlackNs} is the calling thread's. */
    static MachineInfo read(OptionalLong timerSlackNs) {
        CpuInfo cpu = parseCpuInfo(LinuxFiles.read("/proc/cpuinfo").orElse(""));
        Optional<String> version = LinuxFiles.read("/proc/sys/kernel/version");
        Preemption preemption = parsePreemption(version.orElse(""), LinuxFiles.read("/sys/kernel/realtime").orElse(""));
        Optional<String> mode = Optional.empty();
        if (preemption == Preemption.DYNAMIC) {
            mode = LinuxFiles.read("/sys/kernel/debug/sched/preempt").flatMap(MachineProbe::parseDebugfsPreempt)
                    .or(() -> LinuxFiles.read("/proc/cmdline").flatMap(MachineProbe::parseCmdlinePreempt));
        }
        String cs = "/sys/devices/system/clocksource/clocksource0/";
        List<String> available = LinuxFiles.read(cs + "available_clocksource")
                .map(s -> List.of(s.split("\\s+"))).orElse(List.of());
        OptionalDouble steal = LinuxFiles.read("/proc/stat").map(MachineProbe::parseStealFraction)
                .orElse(OptionalDouble.empty());
        return new MachineInfo(
                System.getProperty("os.name", "unknown").toLowerCase(Locale.ROOT),
                System.getProperty("os.arch", "unknown"),
                LinuxFiles.read("/proc/sys/kernel/osrelease"),
                version,
                cpu.model(),
                LinuxFiles.read("/sys/devices/system/cpu/online").map(MachineProbe::parseCpuList).orElse(OptionalInt.empty()),
                OptionalInt.of(Runtime.getRuntime().availableProcessors()),
                LinuxFiles.read(cs + "current_clocksource"),
                available,
                tscFlags(cpu),
                timerSlackNs,
                kernelConfig(LinuxFiles.read("/proc/sys/kernel/osrelease").orElse("")).map(MachineProbe::parseConfigHz)
                        .orElse(OptionalLong.empty()),
                LinuxFiles.read("/proc/timer_list").flatMap(MachineProbe::parseTimerList),
                LinuxFiles.read("/sys/devices/system/cpu/cpuidle/current_driver"),
                idleStates("/sys/devices/system/cpu/cpu0/cpuidle"),
                LinuxFiles.read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver"),
                LinuxFiles.read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
                virtualization(cpu, available),
                steal,
                preemption,
                mode,
                OptionalLong.empty());
    }

    /**
     * This machine's profile fingerprint ({@code spec/estimator.md},
     * <em>Machine fingerprint</em>): the fields of {@link #read} a wake-up
     * model depends on, read the same way, without measuring anything.
     */
    static Profile.Fingerprint fingerprint() {
        String cpuinfo = LinuxFiles.read("/proc/cpuinfo").orElse("");
        CpuInfo cpu = parseCpuInfo(cpuinfo);
        String cs = "/sys/devices/system/clocksource/clocksource0/";
        List<String> available = LinuxFiles.read(cs + "available_clocksource")
                .map(s -> List.of(s.split("\\s+"))).orElse(List.of());
        OptionalInt online = LinuxFiles.read("/sys/devices/system/cpu/online").map(MachineProbe::parseCpuList)
                .orElse(OptionalInt.empty());
        return Profile.Fingerprint.of(List.of(
                parseCpuVendor(cpuinfo).orElse(""),
                cpu.model().orElse(""),
                online.isPresent() ? Integer.toString(online.getAsInt()) : "",
                virtualization(cpu, available).map(Virtualization::hypervisor).orElse(""),
                LinuxFiles.read("/sys/devices/system/cpu/cpuidle/current_driver").orElse(""),
                LinuxFiles.read(cs + "current_clocksource").orElse(""),
                LinuxFiles.read("/proc/sys/kernel/osrelease").orElse(""))
                .stream().map(Profile.Fingerprint::value).toList());
    }

    /**
     * The CPU's vendor from the first processor block of {@code /proc/cpuinfo}:
     * {@code vendor_id} on x86 ({@code AuthenticAMD}), else its
     * {@code CPU implementer} ({@code 0x41}).
     */
    static Optional<String> parseCpuVendor(String text) {
        return parseCpuInfo(text).vendor();
    }

    static CpuInfo parseCpuInfo(String text) {
        Optional<String> vendor = Optional.empty();
        Optional<String> model = Optional.empty();
        List<String> flags = null;
        boolean seen = false;
        for (String line : text.split("\n", -1)) {
            if (line.isBlank()) {
                if (seen) {
                    break;
                }
                continue;
            }
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String key = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            switch (key) {
                case "processor" -> seen = true;
                case "vendor_id" -> {
                    if (!value.isEmpty()) {
                        vendor = Optional.of(value);
                    }
                }
                case "CPU implementer" -> {
                    if (vendor.isEmpty() && !value.isEmpty()) {
                        vendor = Optional.of(value);
                    }
                }
                case "model name", "Model", "cpu model" -> {
                    if (model.isEmpty() && !value.isEmpty()) {
                        model = Optional.of(value);
                    }
                }
                case "flags", "Features" -> {
                    if (flags == null) {
                        flags = value.isEmpty() ? List.of() : List.of(value.split("\\s+"));
                    }
                }
                default -> { }
            }
        }
        return new CpuInfo(vendor, model, flags == null ? List.of() : flags);
    }

    /**
     * The kernel's build configuration: {@code /proc/config.gz}, else
     * {@code /boot/config-<release>}; empty when neither is readable.
     */
    static Optional<String> kernelConfig(String release) {
        try (InputStream in = new GZIPInputStream(Files.newInputStream(Path.of("/proc/config.gz")))) {
            return Optional.of(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
            return release.isEmpty() ? Optional.empty() : LinuxFiles.read("/boot/config-" + release);
        }
    }

    /** The tick rate, {@code CONFIG_HZ=250} in a kernel configuration. */
    static OptionalLong parseConfigHz(String config) {
        for (String line : config.split("\n")) {
            if (line.startsWith("CONFIG_HZ=")) {
                try {
                    long hz = Long.parseLong(line.substring("CONFIG_HZ=".length()).trim());
                    return hz > 0 ? OptionalLong.of(hz) : OptionalLong.empty();
                } catch (NumberFormatException e) {
                    return OptionalLong.empty();
                }
            }
        }
        return OptionalLong.empty();
    }

    /** The TSC's flags, when the CPU has one (the {@code tsc} flag). */
    static Optional<Tsc> tscFlags(CpuInfo cpu) {
        if (!cpu.has("tsc")) {
            return Optional.empty();
        }
        return Optional.of(new Tsc(cpu.has("constant_tsc"), cpu.has("nonstop_tsc"), cpu.has("tsc_known_freq"),
                cpu.has("tsc_reliable"), cpu.has("rdtscp"), OptionalLong.empty(), OptionalLong.empty()));
    }

    /** Counts the CPUs in a kernel CPU list such as {@code 0-3,6,8-9}; empty when malformed or empty. */
    static OptionalInt parseCpuList(String text) {
        int count = 0;
        try {
            for (String part : text.trim().split(",")) {
                if (part.isEmpty()) {
                    continue;
                }
                int dash = part.indexOf('-');
                if (dash < 0) {
                    Integer.parseUnsignedInt(part.trim());
                    count++;
                } else {
                    int lo = Integer.parseUnsignedInt(part.substring(0, dash).trim());
                    int hi = Integer.parseUnsignedInt(part.substring(dash + 1).trim());
                    if (hi < lo) {
                        return OptionalInt.empty();
                    }
                    count += hi - lo + 1;
                }
            }
        } catch (NumberFormatException e) {
            return OptionalInt.empty();
        }
        return count > 0 ? OptionalInt.of(count) : OptionalInt.empty();
    }

    /** Whether every CPU in {@code /proc/timer_list} has {@code hres_active : 1}; empty without such a line. */
    static Optional<Boolean> parseTimerList(String text) {
        boolean any = false;
        for (String line : text.split("\n")) {
            int colon = line.indexOf(':');
            if (colon < 0 || !line.substring(0, colon).trim().replaceFirst("^\\.+", "").equals("hres_active")) {
                continue;
            }
            if (!line.substring(colon + 1).trim().equals("1")) {
                return Optional.of(false);
            }
            any = true;
        }
        return any ? Optional.of(true) : Optional.empty();
    }

    /** The preemption model from {@code uname -v} and {@code /sys/kernel/realtime} ("" when absent). */
    static Preemption parsePreemption(String unameVersion, String realtime) {
        if (realtime.trim().equals("1")) {
            return Preemption.RT;
        }
        List<String> words = unameVersion.isBlank() ? List.of() : Arrays.asList(unameVersion.trim().split("\\s+"));
        if (words.contains("PREEMPT_RT")) {
            return Preemption.RT;
        } else if (words.contains("PREEMPT_DYNAMIC")) {
            return Preemption.DYNAMIC;
        } else if (words.contains("PREEMPT")) {
            return Preemption.FULL;
        } else if (words.contains("SMP") || !words.isEmpty() && words.get(0).startsWith("#")) {
            return Preemption.NONE_OR_VOLUNTARY;
        }
        return Preemption.UNKNOWN;
    }

    /** The current mode in {@code /sys/kernel/debug/sched/preempt}: the parenthesised word. */
    static Optional<String> parseDebugfsPreempt(String text) {
        for (String w : text.trim().split("\\s+")) {
            if (w.length() > 2 && w.startsWith("(") && w.endsWith(")")) {
                return Optional.of(w.substring(1, w.length() - 1));
            }
        }
        return Optional.empty();
    }

    /** The {@code preempt=} boot parameter in {@code /proc/cmdline}, before any {@code --}. */
    static Optional<String> parseCmdlinePreempt(String cmdline) {
        for (String w : cmdline.trim().split("\\s+")) {
            if (w.equals("--")) {
                break;
            }
            if (w.startsWith("preempt=") && w.length() > "preempt=".length()) {
                return Optional.of(w.substring("preempt=".length()));
            }
        }
        return Optional.empty();
    }

    /** Steal over the first eight counters of {@code /proc/stat}'s {@code cpu} line. */
    static OptionalDouble parseStealFraction(String procStat) {
        for (String line : procStat.split("\n")) {
            if (!line.startsWith("cpu ")) {
                continue;
            }
            String[] f = line.trim().split("\\s+");
            if (f.length < 9) {
                return OptionalDouble.empty();
            }
            long total = 0;
            try {
                for (int i = 1; i <= 8; i++) {
                    total = Math.addExact(total, Long.parseUnsignedLong(f[i]));
                }
                return total > 0 ? OptionalDouble.of((double) Long.parseUnsignedLong(f[8]) / total) : OptionalDouble.empty();
            } catch (NumberFormatException | ArithmeticException e) {
                return OptionalDouble.empty();
            }
        }
        return OptionalDouble.empty();
    }

    /** The hypervisor from DMI vendor and product, for vendors that only make virtual machines. */
    static Optional<String> hypervisorFromDmi(String vendor, String product) {
        String v = vendor.trim();
        String p = product.trim();
        String name = null;
        if (v.equals("QEMU")) {
            name = "QEMU/KVM";
        } else if (p.equals("KVM") || p.startsWith("KVM ")) {
            name = "KVM";
        } else if (v.startsWith("VMware")) {
            name = "VMware";
        } else if (v.equals("Xen")) {
            name = "Xen";
        } else if (v.equals("innotek GmbH") || p.equals("VirtualBox")) {
            name = "VirtualBox";
        } else if (v.startsWith("Parallels")) {
            name = "Parallels";
        } else if (v.equals("Microsoft Corporation") && p.equals("Virtual Machine")) {
            name = "Hyper-V";
        } else if (v.equals("Google") && p.equals("Google Compute Engine")) {
            name = "KVM (Google Compute Engine)";
        }
        return Optional.ofNullable(name);
    }

    /** One idle state from its name, latency, residency and disable files ("" when absent). */
    static Optional<IdleState> parseIdleState(String name, String latencyUs, String residencyUs, String disable) {
        String n = name.trim();
        try {
            long latency = Long.parseUnsignedLong(latencyUs.trim());
            if (n.isEmpty() || latency < 0) {
                return Optional.empty();
            }
            OptionalLong residency = OptionalLong.empty();
            try {
                long r = Long.parseUnsignedLong(residencyUs.trim());
                if (r >= 0) {
                    residency = OptionalLong.of(r);
                }
            } catch (NumberFormatException e) {
                // unknown residency
            }
            String d = disable.trim();
            return Optional.of(new IdleState(n, latency, residency, !d.isEmpty() && !d.equals("0")));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static List<IdleState> idleStates(String dir) {
        List<IdleState> out = new ArrayList<>();
        for (int n = 0; n < 16; n++) { // the kernel allows at most 10
            String state = dir + "/state" + n + "/";
            Optional<String> name = LinuxFiles.read(state + "name");
            Optional<String> latency = LinuxFiles.read(state + "latency");
            if (name.isEmpty() || latency.isEmpty()) {
                break;
            }
            parseIdleState(name.get(), latency.get(), LinuxFiles.read(state + "residency").orElse(""),
                    LinuxFiles.read(state + "disable").orElse("")).ifPresent(out::add);
        }
        return out;
    }

    /**
     * The hypervisor from {@code /sys/hypervisor/type}, the DMI tables, a
     * clocksource only a hypervisor offers, or (type unknown) the CPU's flag.
     */
    static Optional<Virtualization> virtualization(CpuInfo cpu, List<String> clocksources) {
        Optional<String> type = LinuxFiles.read("/sys/hypervisor/type");
        if (type.isPresent()) {
            return Optional.of(new Virtualization(type.get().equals("xen") ? "Xen" : type.get(), "/sys/hypervisor/type"));
        }
        Optional<String> dmi = hypervisorFromDmi(LinuxFiles.read("/sys/class/dmi/id/sys_vendor").orElse(""),
                LinuxFiles.read("/sys/class/dmi/id/product_name").orElse(""));
        if (dmi.isPresent()) {
            return Optional.of(new Virtualization(dmi.get(), "/sys/class/dmi/id"));
        }
        return virtualizationFromHints(cpu, clocksources);
    }

    /** A paravirtual clocksource names the hypervisor; the CPU's flag says only that there is one. */
    static Optional<Virtualization> virtualizationFromHints(CpuInfo cpu, List<String> clocksources) {
        String source = "/sys/devices/system/clocksource";
        if (clocksources.contains("kvm-clock")) {
            return Optional.of(new Virtualization("KVM", source));
        }
        if (clocksources.contains("hyperv_clocksource_tsc_page")) {
            return Optional.of(new Virtualization("Hyper-V", source));
        }
        if (clocksources.contains("xen")) {
            return Optional.of(new Virtualization("Xen", source));
        }
        return cpu.has("hypervisor") ? Optional.of(new Virtualization("unknown", "/proc/cpuinfo")) : Optional.empty();
    }
}
