package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keeptime.MachineInfo.IdleState;
import dev.keeptime.MachineInfo.Preemption;
import dev.keeptime.MachineInfo.Tsc;
import dev.keeptime.MachineInfo.Virtualization;
import java.math.BigInteger;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ClockFindingsTest {
    /** TSC clocksource, invariant TSC, high-res timers, 8 CPUs, slack 1 ns, full preemption, TAI set: no findings. */
    static MachineInfo quietMachine() {
        return new MachineInfo("linux", "amd64", Optional.empty(), Optional.empty(), Optional.empty(), OptionalInt.of(8),
                OptionalInt.of(8), Optional.of("tsc"), List.of("tsc", "hpet"),
                Optional.of(new Tsc(true, true, false, false, false, OptionalLong.empty(), OptionalLong.empty())),
                OptionalLong.of(1), OptionalLong.of(1000), Optional.of(true), Optional.empty(), List.of(), Optional.empty(),
                Optional.of("performance"), Optional.empty(), OptionalDouble.empty(), Preemption.FULL, Optional.empty(),
                OptionalLong.of(37));
    }

    static ClockInfo clock(String name, long resolutionNs, double readCostNs, long samples, long violations) {
        return new ClockInfo(name, "", resolutionNs > 0 ? OptionalLong.of(resolutionNs) : OptionalLong.empty(),
                OptionalLong.empty(), 0, samples, readCostNs, violations, true, Optional.empty());
    }

    private static List<String> codes(List<Finding> fs) {
        return fs.stream().map(f -> f.severity().jsonName() + ":" + f.code()).toList();
    }

    @Test
    void messagesUseTheReportsFigures() {
        assertEquals(List.of(), ClockFindings.of(List.of(), quietMachine(), Optional.empty()));
        MachineInfo q = quietMachine();
        MachineInfo m = new MachineInfo(q.os(), q.arch(), q.kernelRelease(), q.kernelVersion(), q.cpuModel(),
                OptionalInt.of(2), q.cpusAvailable(), Optional.of("hpet"), q.availableClocksources(),
                Optional.of(new Tsc(true, false, false, false, false, OptionalLong.of(2_400_000_000L),
                        OptionalLong.of(2_700_000_000L))),
                OptionalLong.of(200_000), OptionalLong.of(250), Optional.of(false), q.idleDriver(),
                List.of(new IdleState("C1", 2, OptionalLong.empty(), false), new IdleState("C6", 133, OptionalLong.empty(), false)),
                q.cpufreqDriver(), q.cpufreqGovernor(), Optional.of(new Virtualization("KVM", "cpuid")),
                OptionalDouble.of(0.0123), q.preemption(), q.preemptionMode(), q.taiOffsetS());
        List<ClockInfo> clocks = List.of(clock("MONOTONIC", 1, 1234, 20_000, 0),
                clock("MONOTONIC_COARSE", 4_000_000, 6, 20_000, 0), clock("TSC", 0, 9, 20_000, 3));
        List<Finding> got = ClockFindings.of(clocks, m, Optional.empty());
        assertEquals(List.of("warning:high_resolution_timers_inactive", "warning:clocksource_syscall",
                "warning:tsc_not_invariant", "warning:non_monotonic_reads", "warning:virtualized", "warning:deep_idle_states",
                "info:timer_slack_large", "info:coarse_clocks", "info:tsc_frequency_mismatch", "info:few_cpus"), codes(got));
        assertEquals(List.of(
                "High-resolution timers are off: every timed wait ends at the next kernel tick (4 ms), so no OS wait is finer than that.",
                "The clocksource is hpet: every clock read is a system call (System.nanoTime: 1.2 µs per read), not a ~25 ns vDSO read; "
                        + "tsc is available as a clocksource.",
                "The TSC lacks nonstop_tsc: its rate may follow the CPU frequency or stop in deep idle, so TSC ticks do not convert to time.",
                "TSC went backwards 3 times in 20000 successive reads; it never should, so its timestamps cannot order events.",
                "Running under KVM: wake-ups and spins depend on the host's scheduling (steal so far: 1.23% of CPU time).",
                "Idle states C6 (133 µs) take over 50 µs to exit: a wake-up on a sleeping CPU may be up to 133 µs late; "
                        + "keeptime's learned margin spins through it.",
                "This thread's timer slack is 200 µs: a plain sleep wakes up to that much late; keeptime sets 1 ns on the threads "
                        + "it waits on where it can (TimerSlack).",
                "MONOTONIC_COARSE and REALTIME_COARSE step every 4 ms (the kernel tick): too coarse to time waits (a read costs 6 ns).",
                "The stated TSC frequency is 2.400 GHz, the measured one 2.700 GHz (111111 ppm apart).",
                "Only 2 CPUs online: a spinning wait holds half the machine while it spins."),
                got.stream().map(Finding::message).toList());

        MachineInfo oneCpu = new MachineInfo(q.os(), q.arch(), q.kernelRelease(), q.kernelVersion(), q.cpuModel(),
                OptionalInt.empty(), OptionalInt.of(1), q.clocksource(), q.availableClocksources(), q.tsc(),
                q.timerSlackNs(), q.tickHz(), q.highResolutionTimers(), q.idleDriver(), q.idleStates(), q.cpufreqDriver(),
                q.cpufreqGovernor(), q.virtualization(), q.stealFraction(), q.preemption(), q.preemptionMode(), q.taiOffsetS());
        assertEquals(List.of(new Finding(Finding.Severity.WARNING, "few_cpus", "Only 1 CPU available to this JVM: a spinning "
                + "wait holds the whole machine while it spins, and every other thread waits behind it.")),
                ClockFindings.of(List.of(), oneCpu, Optional.empty()));

        MachineInfo kvmClock = new MachineInfo(q.os(), q.arch(), q.kernelRelease(), q.kernelVersion(), q.cpuModel(),
                q.cpusOnline(), q.cpusAvailable(), Optional.of("kvm-clock"), q.availableClocksources(), q.tsc(),
                q.timerSlackNs(), q.tickHz(), q.highResolutionTimers(), q.idleDriver(), q.idleStates(), q.cpufreqDriver(),
                q.cpufreqGovernor(), q.virtualization(), q.stealFraction(), q.preemption(), q.preemptionMode(), q.taiOffsetS());
        got = ClockFindings.of(List.of(clock("MONOTONIC", 1, 480, 20_000, 0)), kvmClock, Optional.empty());
        assertEquals(List.of(new Finding(Finding.Severity.WARNING, "clock_read_slow", "System.nanoTime costs 480 ns per read "
                + "here on clocksource kvm-clock (a vDSO read of the TSC takes ~25 ns): spins see the time less often.")), got);
    }

    @Test
    void theIdleFindingSaysWhatTheHintDoesHere() {
        MachineInfo q = quietMachine();
        MachineInfo halt = new MachineInfo(q.os(), q.arch(), q.kernelRelease(), q.kernelVersion(), q.cpuModel(),
                q.cpusOnline(), q.cpusAvailable(), q.clocksource(), q.availableClocksources(), q.tsc(), q.timerSlackNs(),
                q.tickHz(), q.highResolutionTimers(), Optional.of("haltpoll"),
                List.of(new IdleState("POLL", 0, OptionalLong.empty(), false), new IdleState("haltpoll", 1, OptionalLong.empty(), false)),
                q.cpufreqDriver(), q.cpufreqGovernor(), q.virtualization(), q.stealFraction(), q.preemption(),
                q.preemptionMode(), q.taiOffsetS());
        IdleLatencyReport refused = new IdleLatencyReport(Optional.of("haltpoll"), Optional.empty(), OptionalInt.of(0),
                Optional.empty(), false, Optional.of("write access to /dev/cpu_dma_latency"));
        assertEquals(Optional.of(new Finding(Finding.Severity.INFO, "idle_hint_available",
                "The cpuidle driver haltpoll has idle states with exit latency (haltpoll 1 µs): the idle-latency hint "
                        + "(Sleeper.builder().idleHint(0), a PM QoS request on /dev/cpu_dma_latency) makes OS waits wake sooner, "
                        + "so exact sleeps spin less; its price is power, as idle CPUs poll. A process already holds 0 µs. "
                        + "This process may not hold it: it lacks write access to /dev/cpu_dma_latency.")),
                ClockFindings.idleFinding(refused, halt));
        IdleLatencyReport none = new IdleLatencyReport(Optional.empty(), Optional.empty(), OptionalInt.empty(),
                Optional.empty(), true, Optional.empty());
        assertEquals(Optional.empty(), ClockFindings.idleFinding(none, q));
        IdleLatencyReport noneDriver = new IdleLatencyReport(Optional.of("none"), Optional.empty(), OptionalInt.empty(),
                Optional.empty(), true, Optional.empty());
        assertEquals("idle_hint_little_effect", ClockFindings.idleFinding(noneDriver, q).orElseThrow().code());
    }

    @Test
    void formatters() {
        assertEquals("4 ms", ClockFindings.humanNs(4e6));
        assertEquals("50 µs", ClockFindings.humanNs(5e4));
        assertEquals("1.5 ms", ClockFindings.humanNs(1.5e6));
        assertEquals("23.4 ns", ClockFindings.humanNs(23.4));
        assertEquals("2 s", ClockFindings.humanNs(2e9));
        assertEquals("2.700 GHz", ClockFindings.formatHz(2_700_000_000L));
        assertEquals("24.000 MHz", ClockFindings.formatHz(24_000_000L));
        assertEquals(BigInteger.valueOf(1000), ClockFindings.ppmApart(1_001_000_000L, 1_000_000_000L));
        assertEquals(BigInteger.valueOf(999), ClockFindings.ppmApart(1_000_000_000L, 1_001_000_000L));
        assertEquals(BigInteger.valueOf(111111), ClockFindings.ppmApart(2_400_000_000L, 2_700_000_000L));
        assertEquals(Finding.Severity.WARNING, Finding.Severity.fromJsonName("warning"));
        assertThrows(IllegalArgumentException.class, () -> Finding.Severity.fromJsonName("error"));
        assertThrows(IllegalArgumentException.class, () -> new Finding(Finding.Severity.INFO, "", "x"));
    }

    @Test
    void machineParsers() {
        MachineProbe.CpuInfo cpu = MachineProbe.parseCpuInfo("processor\t: 0\nmodel name\t: AMD EPYC\n"
                + "flags\t\t: fpu tsc rdtscp constant_tsc nonstop_tsc hypervisor\n\nprocessor\t: 1\nmodel name\t: Other\n");
        assertEquals(Optional.of("AMD EPYC"), cpu.model());
        assertEquals(List.of("fpu", "tsc", "rdtscp", "constant_tsc", "nonstop_tsc", "hypervisor"), cpu.flags());
        Tsc tsc = MachineProbe.tscFlags(cpu).orElseThrow();
        assertTrue(tsc.invariant() && tsc.rdtscp() && !tsc.tscKnownFreq());
        assertEquals(Optional.empty(), MachineProbe.tscFlags(MachineProbe.parseCpuInfo("processor : 0\nFeatures : fp asimd\n")));
        assertEquals(Optional.of(new Virtualization("KVM", "/sys/devices/system/clocksource")),
                MachineProbe.virtualizationFromHints(cpu, List.of("tsc", "kvm-clock")));
        assertEquals(Optional.of(new Virtualization("unknown", "/proc/cpuinfo")),
                MachineProbe.virtualizationFromHints(cpu, List.of("tsc")));
        assertEquals(OptionalInt.of(2), MachineProbe.parseCpuList("0-1\n"));
        assertEquals(OptionalInt.of(7), MachineProbe.parseCpuList("0-3,6,8-9"));
        assertEquals(OptionalInt.empty(), MachineProbe.parseCpuList("3-1"));
        assertEquals(OptionalInt.empty(), MachineProbe.parseCpuList("x"));
        assertEquals(OptionalInt.empty(), MachineProbe.parseCpuList(""));
        String timerList = "cpu: 0\n  .hres_active    : 1\ncpu: 1\n  .hres_active    : 1\n";
        assertEquals(Optional.of(true), MachineProbe.parseTimerList(timerList));
        assertEquals(Optional.of(false), MachineProbe.parseTimerList(timerList.replaceFirst(": 1", ": 0")));
        assertEquals(Optional.empty(), MachineProbe.parseTimerList("Timer List Version: v0.10\n"));
        assertEquals(Preemption.DYNAMIC, MachineProbe.parsePreemption("#1 SMP PREEMPT_DYNAMIC @0", ""));
        assertEquals(Preemption.RT, MachineProbe.parsePreemption("#1 SMP PREEMPT_RT Thu", ""));
        assertEquals(Preemption.FULL, MachineProbe.parsePreemption("#1 SMP PREEMPT Debian", ""));
        assertEquals(Preemption.NONE_OR_VOLUNTARY, MachineProbe.parsePreemption("#45-Ubuntu SMP Fri", ""));
        assertEquals(Preemption.UNKNOWN, MachineProbe.parsePreemption("", ""));
        assertEquals(Preemption.RT, MachineProbe.parsePreemption("#1 SMP", "1\n"));
        assertEquals(Optional.of("full"), MachineProbe.parseDebugfsPreempt("none voluntary (full) lazy\n"));
        assertEquals(Optional.empty(), MachineProbe.parseDebugfsPreempt("none full"));
        assertEquals(Optional.of("voluntary"), MachineProbe.parseCmdlinePreempt("ro preempt=voluntary quiet"));
        assertEquals(Optional.empty(), MachineProbe.parseCmdlinePreempt("ro -- preempt=full"));
        assertEquals(Optional.empty(), MachineProbe.parseCmdlinePreempt("ro preempt="));
        assertEquals(OptionalDouble.of(0.05), MachineProbe.parseStealFraction("cpu  100 0 100 700 50 0 0 50 0 0\ncpu0 1\n"));
        assertEquals(OptionalDouble.empty(), MachineProbe.parseStealFraction("cpu  1 2 3\n"));
        assertEquals(Optional.of("QEMU/KVM"), MachineProbe.hypervisorFromDmi("QEMU", "Standard PC"));
        assertEquals(Optional.empty(), MachineProbe.hypervisorFromDmi("Amazon EC2", "m5.metal"));
        assertEquals(Optional.of(new IdleState("C6", 133, OptionalLong.of(400), false)),
                MachineProbe.parseIdleState("C6\n", "133\n", "400\n", "0\n"));
        assertEquals(Optional.of(new IdleState("POLL", 0, OptionalLong.empty(), true)),
                MachineProbe.parseIdleState("POLL", "0", "", "1"));
        assertEquals(Optional.empty(), MachineProbe.parseIdleState("C1", "n/a", "", ""));
        assertEquals(OptionalLong.of(250), MachineProbe.parseConfigHz("# CONFIG_HZ_1000 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"));
        assertEquals(OptionalLong.empty(), MachineProbe.parseConfigHz("CONFIG_HZ_250=y\n"));
        assertEquals(OptionalLong.empty(), MachineProbe.parseConfigHz("CONFIG_HZ=x\n"));
    }
}
