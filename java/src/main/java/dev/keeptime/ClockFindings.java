package dev.keeptime;

import dev.keeptime.Finding.Severity;
import dev.keeptime.MachineInfo.IdleState;
import dev.keeptime.MachineInfo.Preemption;
import dev.keeptime.MachineInfo.Tsc;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * The clock report's findings, decided from the report's clocks, machine and
 * idle-latency parts alone by the rules of the clock report's spec: warnings
 * first, each severity in the rules' order, the idle-latency finding last.
 * Pure: the same inputs always give the same findings.
 */
public final class ClockFindings {
    /** The Linux default timer slack, ns. */
    static final long DEFAULT_TIMER_SLACK_NS = 50_000;
    /** A timer slack above this, ns, is worth a finding. */
    static final long LARGE_TIMER_SLACK_NS = 1_000;
    /** Idle states slower than this to exit, µs, are worth a warning. */
    static final long DEEP_IDLE_US = 50;
    /** A vDSO CLOCK_MONOTONIC read on a TSC costs ~25 ns; beyond this something is in the way. */
    static final double SLOW_READ_NS = 150.0;
    /** A MONOTONIC_COARSE resolution from this up, ns, is a tick. */
    static final long COARSE_CLOCK_NS = 1_000;
    /** Stated and measured TSC frequencies further apart than this, ppm, are worth a finding. */
    static final long TSC_MISMATCH_PPM = 1_000;
    /** This many CPUs or fewer are worth a finding. */
    static final int FEW_CPUS = 2;

    /** The clocksources the vDSO cannot read: with one current, every clock read is a system call. */
    static final List<String> SYSCALL_CLOCKSOURCES = List.of("hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit");

    /** Clocks that never go back (REALTIME and TAI may be set back). */
    static final List<String> MUST_BE_MONOTONIC = List.of("MONOTONIC", "MONOTONIC_RAW", "MONOTONIC_COARSE", "BOOTTIME",
            "PROCESS_CPUTIME_ID", "THREAD_CPUTIME_ID", "TSC", "RDTSCP");

    /** cpuidle drivers whose idle states have an exit latency the idle-latency hint caps. */
    static final List<String> HINTABLE_IDLE_DRIVERS = List.of("haltpoll", "intel_idle", "acpi_idle");

    private ClockFindings() {}

    /** What the rules read. */
    private record Inputs(List<ClockInfo> clocks, MachineInfo m) {
        /** The available clock with exactly this name. */
        Optional<ClockInfo> clock(String name) {
            return clocks.stream().filter(c -> c.available() && c.name().equals(name)).findFirst();
        }
    }

    /** The rules, in report order within a severity. */
    private static final List<Function<Inputs, List<Finding>>> RULES = List.of(
            ClockFindings::highResolutionTimers,
            ClockFindings::clockReadCost,
            ClockFindings::tscInvariance,
            ClockFindings::nonMonotonicReads,
            ClockFindings::virtualized,
            ClockFindings::deepIdleStates,
            ClockFindings::timerSlack,
            ClockFindings::coarseClocks,
            ClockFindings::tscFrequency,
            ClockFindings::cpufreqPowersave,
            ClockFindings::preemption,
            ClockFindings::fewCpus,
            ClockFindings::taiOffset);

    /**
     * The findings for a report's parts.
     *
     * @param clocks the report's clocks
     * @param machine the report's machine
     * @param idleLatency the report's idle-latency part, if it has one
     * @return the findings: warnings first, the idle-latency finding last
     */
    public static List<Finding> of(List<ClockInfo> clocks, MachineInfo machine, Optional<IdleLatencyReport> idleLatency) {
        Inputs in = new Inputs(List.copyOf(clocks), machine);
        List<Finding> out = new ArrayList<>();
        for (Function<Inputs, List<Finding>> rule : RULES) {
            out.addAll(rule.apply(in));
        }
        out.sort(Comparator.comparing(Finding::severity)); // stable: WARNING before INFO, rules' order kept
        idleLatency.flatMap(idle -> idleFinding(idle, machine)).ifPresent(out::add);
        return List.copyOf(out);
    }

    private static List<Finding> warning(String code, String message) {
        return List.of(new Finding(Severity.WARNING, code, message));
    }

    private static List<Finding> info(String code, String message) {
        return List.of(new Finding(Severity.INFO, code, message));
    }

    private static List<Finding> highResolutionTimers(Inputs in) {
        if (!in.m.highResolutionTimers().equals(Optional.of(false))) {
            return List.of();
        }
        OptionalLong hz = in.m.tickHz();
        String tick = hz.isPresent() && hz.getAsLong() > 0
                ? "the next kernel tick (" + humanNs(1e9 / hz.getAsLong()) + ")" : "the next kernel tick";
        return warning("high_resolution_timers_inactive",
                "High-resolution timers are off: every timed wait ends at " + tick + ", so no OS wait is finer than that.");
    }

    private static List<Finding> clockReadCost(Inputs in) {
        Optional<ClockInfo> mono = in.clock("MONOTONIC");
        Optional<String> cs = in.m.clocksource();
        if (cs.isPresent() && SYSCALL_CLOCKSOURCES.contains(cs.get())) {
            String cost = mono.map(c -> " (System.nanoTime: " + humanNs(c.readCostNs()) + " per read)").orElse("");
            String tsc = in.m.availableClocksources().contains("tsc") ? "; tsc is available as a clocksource" : "";
            return warning("clocksource_syscall", "The clocksource is " + cs.get() + ": every clock read is a system call"
                    + cost + ", not a ~25 ns vDSO read" + tsc + ".");
        }
        if (mono.isEmpty() || !(mono.get().readCostNs() > SLOW_READ_NS)) {
            return List.of();
        }
        return warning("clock_read_slow", "System.nanoTime costs " + humanNs(mono.get().readCostNs()) + " per read here"
                + cs.map(s -> " on clocksource " + s).orElse("")
                + " (a vDSO read of the TSC takes ~25 ns): spins see the time less often.");
    }

    private static List<Finding> tscInvariance(Inputs in) {
        Optional<Tsc> tsc = in.m.tsc();
        if (tsc.isEmpty() || tsc.get().invariant()) {
            return List.of();
        }
        List<String> missing = new ArrayList<>();
        if (!tsc.get().constantTsc()) {
            missing.add("constant_tsc");
        }
        if (!tsc.get().nonstopTsc()) {
            missing.add("nonstop_tsc");
        }
        return warning("tsc_not_invariant", "The TSC lacks " + String.join(" and ", missing)
                + ": its rate may follow the CPU frequency or stop in deep idle, so TSC ticks do not convert to time.");
    }

    private static List<Finding> nonMonotonicReads(Inputs in) {
        List<Finding> out = new ArrayList<>();
        for (ClockInfo c : in.clocks) {
            if (c.available() && c.monotonicViolations() > 0 && MUST_BE_MONOTONIC.contains(c.name())) {
                out.add(new Finding(Severity.WARNING, "non_monotonic_reads", c.name() + " went backwards "
                        + c.monotonicViolations() + " times in " + c.samples()
                        + " successive reads; it never should, so its timestamps cannot order events."));
            }
        }
        return out;
    }

    private static List<Finding> virtualized(Inputs in) {
        if (in.m.virtualization().isEmpty()) {
            return List.of();
        }
        String hv = in.m.virtualization().get().hypervisor();
        String under = hv.equals("unknown") ? "a hypervisor" : hv;
        String steal = in.m.stealFraction().isPresent() && in.m.stealFraction().getAsDouble() > 0
                ? String.format(Locale.ROOT, " (steal so far: %.2f%% of CPU time)", in.m.stealFraction().getAsDouble() * 100)
                : "";
        return warning("virtualized", "Running under " + under + ": wake-ups and spins depend on the host's scheduling" + steal + ".");
    }

    private static List<Finding> deepIdleStates(Inputs in) {
        List<String> names = new ArrayList<>();
        long worst = 0;
        for (IdleState s : in.m.idleStates()) {
            if (!s.disabled() && s.exitLatencyUs() > DEEP_IDLE_US) {
                names.add(s.name() + " (" + s.exitLatencyUs() + " µs)");
                worst = Math.max(worst, s.exitLatencyUs());
            }
        }
        if (names.isEmpty()) {
            return List.of();
        }
        return warning("deep_idle_states", "Idle states " + String.join(", ", names) + " take over " + DEEP_IDLE_US
                + " µs to exit: a wake-up on a sleeping CPU may be up to " + worst
                + " µs late; keeptime's learned margin spins through it.");
    }

    private static List<Finding> timerSlack(Inputs in) {
        OptionalLong slack = in.m.timerSlackNs();
        if (slack.isEmpty()) {
            return List.of();
        }
        String keeptime = ": a plain sleep wakes up to that much late; keeptime sets 1 ns on the threads it waits on"
                + " where it can (TimerSlack).";
        if (slack.getAsLong() == DEFAULT_TIMER_SLACK_NS) {
            return info("timer_slack_default", "This thread's timer slack is the Linux default, 50 µs" + keeptime);
        }
        if (slack.getAsLong() > LARGE_TIMER_SLACK_NS) {
            return info("timer_slack_large", "This thread's timer slack is " + humanNs(slack.getAsLong()) + keeptime);
        }
        return List.of();
    }

    private static List<Finding> coarseClocks(Inputs in) {
        Optional<ClockInfo> coarse = in.clock("MONOTONIC_COARSE");
        if (coarse.isEmpty() || coarse.get().resolutionNs().isEmpty()
                || coarse.get().resolutionNs().getAsLong() < COARSE_CLOCK_NS) {
            return List.of();
        }
        return info("coarse_clocks", "MONOTONIC_COARSE and REALTIME_COARSE step every "
                + humanNs(coarse.get().resolutionNs().getAsLong())
                + " (the kernel tick): too coarse to time waits (a read costs " + humanNs(coarse.get().readCostNs()) + ").");
    }

    private static List<Finding> tscFrequency(Inputs in) {
        Optional<Tsc> tsc = in.m.tsc();
        if (tsc.isEmpty() || tsc.get().reportedFrequencyHz().isEmpty() || tsc.get().measuredFrequencyHz().isEmpty()) {
            return List.of();
        }
        long stated = tsc.get().reportedFrequencyHz().getAsLong();
        long measured = tsc.get().measuredFrequencyHz().getAsLong();
        BigInteger ppm = ppmApart(stated, measured);
        if (ppm.compareTo(BigInteger.valueOf(TSC_MISMATCH_PPM)) <= 0) {
            return List.of();
        }
        return info("tsc_frequency_mismatch", "The stated TSC frequency is " + formatHz(stated) + ", the measured one "
                + formatHz(measured) + " (" + ppm + " ppm apart).");
    }

    private static List<Finding> cpufreqPowersave(Inputs in) {
        if (!in.m.cpufreqGovernor().equals(Optional.of("powersave"))) {
            return List.of();
        }
        return info("cpufreq_powersave", "The cpufreq governor is powersave"
                + in.m.cpufreqDriver().map(d -> " (driver " + d + ")").orElse("")
                + ": the CPU may run below full speed and ramp up after each wake-up.");
    }

    private static List<Finding> preemption(Inputs in) {
        Preemption p = in.m.preemption();
        Optional<String> mode = in.m.preemptionMode();
        boolean dynamicOff = p == Preemption.DYNAMIC
                && (mode.equals(Optional.of("none")) || mode.equals(Optional.of("voluntary")));
        if (p == Preemption.NONE_OR_VOLUNTARY || dynamicOff) {
            return info("kernel_not_preemptible", "The kernel does not preempt kernel code (no PREEMPT build, or "
                    + "preempt=none/voluntary): a woken thread may wait for a long system call on its CPU.");
        }
        if (p == Preemption.RT) {
            return info("kernel_preempt_rt", "The kernel is PREEMPT_RT: wake-up latency is as low and bounded as Linux makes it.");
        }
        return List.of();
    }

    private static List<Finding> fewCpus(Inputs in) {
        int n;
        String which;
        if (in.m.cpusOnline().isPresent()) {
            n = in.m.cpusOnline().getAsInt();
            which = "online";
        } else if (in.m.cpusAvailable().isPresent()) {
            n = in.m.cpusAvailable().getAsInt();
            which = "available to this JVM";
        } else {
            return List.of();
        }
        if (n > FEW_CPUS) {
            return List.of();
        }
        if (n == 1) {
            return warning("few_cpus", "Only 1 CPU " + which + ": a spinning wait holds the whole machine while it spins, "
                    + "and every other thread waits behind it.");
        }
        return info("few_cpus", "Only " + n + " CPUs " + which + ": a spinning wait holds half the machine while it spins.");
    }

    private static List<Finding> taiOffset(Inputs in) {
        if (in.m.taiOffsetS().isEmpty() || in.m.taiOffsetS().getAsLong() != 0) {
            return List.of();
        }
        return info("tai_offset_unset", "CLOCK_TAI equals CLOCK_REALTIME: nobody has set the kernel's TAI offset "
                + "(NTP sets 37 s), so TAI here is not TAI.");
    }

    /**
     * The finding on the idle-latency hint: worth it with a driver whose idle
     * states have exit latency, little effect with driver {@code none},
     * nothing when no driver is known.
     */
    static Optional<Finding> idleFinding(IdleLatencyReport idle, MachineInfo m) {
        Optional<String> driverName = idle.cpuidleDriver().or(m::idleDriver);
        if (driverName.isEmpty()) {
            return Optional.empty();
        }
        String driver = driverName.get();
        if (driver.equals("none")) {
            return Optional.of(new Finding(Severity.INFO, "idle_hint_little_effect", "The cpuidle driver is none: idle CPUs "
                    + "have no exit latency to cap, so the idle-latency hint (Sleeper.builder().idleHint(0)) changes little here."));
        }
        List<String> latent = new ArrayList<>();
        for (IdleState s : m.idleStates()) {
            if (!s.disabled() && s.exitLatencyUs() > 0) {
                latent.add(s.name() + " " + s.exitLatencyUs() + " µs");
            }
        }
        if (latent.isEmpty() && !HINTABLE_IDLE_DRIVERS.contains(driver)) {
            return Optional.empty();
        }
        StringBuilder b = new StringBuilder("The cpuidle driver ").append(driver).append(" has idle states with exit latency");
        if (!latent.isEmpty()) {
            b.append(" (").append(String.join(", ", latent)).append(')');
        }
        b.append(": the idle-latency hint (Sleeper.builder().idleHint(0), a PM QoS request on ").append(IdleHint.DEVICE)
                .append(") makes OS waits wake sooner, so exact sleeps spin less; its price is power, as idle CPUs poll.");
        if (idle.inForceUs().isPresent() && idle.inForceUs().getAsInt() < IdleHint.UNCONSTRAINED_US) {
            b.append(" A process already holds ").append(idle.inForceUs().getAsInt()).append(" µs.");
        }
        if (!idle.mayHold()) {
            b.append(" This process may not hold it").append(idle.missingPermission().map(p -> ": it lacks " + p).orElse(""))
                    .append('.');
        }
        return Optional.of(new Finding(Severity.INFO, "idle_hint_available", b.toString()));
    }

    /** |a − b| relative to b in parts per million, rounded down (b = 0: effectively infinite). */
    static BigInteger ppmApart(long a, long b) {
        BigInteger bb = BigInteger.valueOf(b);
        if (b == 0) {
            return BigInteger.valueOf(Long.MAX_VALUE);
        }
        return BigInteger.valueOf(a).subtract(bb).abs().multiply(BigInteger.valueOf(1_000_000)).divide(bb.abs());
    }

    /**
     * A duration in ns with the unit that suits it, to 0.1: {@code "4 ms"},
     * {@code "1.5 ms"}, {@code "23.4 ns"}.
     *
     * @param ns the duration
     * @return it in words
     */
    static String humanNs(double ns) {
        double value = ns;
        String unit = "ns";
        if (ns >= 1e9) {
            value = ns / 1e9;
            unit = "s";
        } else if (ns >= 1e6) {
            value = ns / 1e6;
            unit = "ms";
        } else if (ns >= 1e3) {
            value = ns / 1e3;
            unit = "µs";
        }
        double rounded = Math.round(value * 10) / 10.0;
        return String.format(Locale.ROOT, rounded == Math.rint(rounded) ? "%.0f %s" : "%.1f %s", rounded, unit);
    }

    /**
     * A frequency to three decimals in GHz from 1 GHz up, else in MHz:
     * {@code "2.700 GHz"}, {@code "24.000 MHz"}.
     *
     * @param hz the frequency
     * @return it in words
     */
    static String formatHz(long hz) {
        return hz >= 1_000_000_000L
                ? String.format(Locale.ROOT, "%.3f GHz", hz / 1e9)
                : String.format(Locale.ROOT, "%.3f MHz", hz / 1e6);
    }
}
