package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClocksTest {
    @Test
    void inspectMeasuresTheClocks() {
        ClockReport r = Clocks.inspect();
        assertEquals(List.of("MONOTONIC", "REALTIME"), r.clocks().stream().map(ClockInfo::name).toList(), r::toString);
        for (ClockInfo c : r.clocks()) {
            assertTrue(c.available() && c.error().isEmpty(), r::toString);
            assertTrue(c.readCostNs() > 0 && c.samples() > 0, r::toString);
            assertTrue(c.repeatFraction() >= 0 && c.repeatFraction() <= 1, r::toString);
        }
        assertEquals(0, r.nanoTimeBackwardSteps(), r::toString);
        assertTrue(r.nanoTimeLatencyNs() > 0, r::toString);
        assertTrue(r.nanoTimeGranularityNs() > 0, r::toString);
        assertTrue(r.instantGranularityNs() > 0, r::toString);
        assertTrue(r.currentTimeMillisGranularityMs() >= 0, r::toString);
        assertEquals(Runtime.getRuntime().availableProcessors(), r.availableProcessors());
        assertEquals(r.clock("MONOTONIC"), r.clock("monotonic"));
        // The findings are the rules' verdict on the report's own parts.
        assertEquals(ClockFindings.of(r.clocks(), r.machine(), Optional.of(r.idleLatency())), r.findings());
        String text = r.toString();
        for (String line : new String[] {"System.nanoTime", "Instant.now", "currentTimeMillis", "clocksource", "timer slack"}) {
            assertTrue(text.contains(line), text);
        }
        for (Finding f : r.findings()) {
            assertTrue(text.contains(f.message()), text);
        }
        if (System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            MachineInfo m = r.machine();
            assertTrue(r.clocksource().isPresent(), text);
            assertTrue(r.availableClocksources().contains(r.clocksource().get()), text);
            assertTrue(r.timerSlackNs().isPresent(), text);
            assertTrue(m.kernelRelease().isPresent() && m.cpusOnline().isPresent(), m::toString);
            assertTrue(m.preemption() != MachineInfo.Preemption.UNKNOWN, m::toString);
        }
    }

    @Test
    void reportReadsWell() {
        MachineInfo m = ClockFindingsTest.quietMachine();
        ClockReport r = new ClockReport(
                List.of(new ClockInfo("MONOTONIC", "nanoTime", OptionalLong.empty(), OptionalLong.of(20), 0, 1000, 21.5, 0,
                        true, Optional.empty())),
                new MachineInfo(m.os(), m.arch(), m.kernelRelease(), m.kernelVersion(), m.cpuModel(), m.cpusOnline(),
                        OptionalInt.of(2), m.clocksource(), m.availableClocksources(), m.tsc(), OptionalLong.of(50_000),
                        m.tickHz(), m.highResolutionTimers(), m.idleDriver(), m.idleStates(), m.cpufreqDriver(),
                        m.cpufreqGovernor(), Optional.of(new MachineInfo.Virtualization("KVM", "cpuid")), m.stealFraction(),
                        m.preemption(), m.preemptionMode(), m.taiOffsetS()),
                new IdleLatencyReport(Optional.of("haltpoll"), Optional.of("haltpoll"), OptionalInt.of(2_000_000_000),
                        Optional.empty(), false, Optional.of("write access to /dev/cpu_dma_latency (rw-------, owner root, "
                                + "group root): run as root, or let this user write it (e.g. a udev rule giving a group rw)")),
                1, false, "VM 17");
        String text = r.toString();
        assertTrue(text.contains("System.nanoTime    21.5 ns per call, steps of 20 ns\n".replace("\n", System.lineSeparator())), text);
        assertTrue(text.contains("tsc (available: tsc hpet)"), text);
        assertTrue(text.contains("50000 ns on this thread (timed waits wake up to this much late)"), text);
        assertTrue(text.contains("cpuidle            driver haltpoll, governor haltpoll (idle states"), text);
        assertTrue(text.contains("PM QoS latency     2000000000 µs (unconstrained)"), text);
        assertTrue(text.contains("idle hint          this process may not hold it: lacks write access to /dev/cpu_dma_latency"
                + " (rw-------, owner root, group root): run as root"), text);
        assertEquals(List.of("warning:virtualized", "info:timer_slack_default", "info:idle_hint_available"),
                r.findings().stream().map(f -> f.severity().jsonName() + ":" + f.code()).toList());
        assertTrue(text.contains("warning            Running under KVM: "), text);
        assertEquals(Optional.of("KVM"), r.virtualization());
        assertEquals(21.5, r.nanoTimeLatencyNs());
        assertEquals(20, r.nanoTimeGranularityNs());
    }

    @Test
    void clockLookupIgnoresAsciiCaseOnly() {
        ClockReport r = new ClockReport(
                List.of(new ClockInfo("MONOTONIC_RAW", "", OptionalLong.empty(), OptionalLong.empty(), 0, 0, 0, 0, true,
                        Optional.empty()), new ClockInfo("K", "", OptionalLong.empty(), OptionalLong.empty(), 0, 0, 0, 0,
                        true, Optional.empty())),
                ClockFindingsTest.quietMachine(), Clocks.idleLatency(Path.of("/nowhere")), 0, false, "VM");
        for (String n : new String[] {"MONOTONIC_RAW", "monotonic_raw", "Monotonic_Raw", "k"}) {
            assertTrue(r.clock(n).isPresent(), n);
        }
        for (String n : new String[] {"MONOTONIC", "monotonic_raw ", "\u212a", ""}) {
            assertTrue(r.clock(n).isEmpty(), n);
        }
    }

    @Test
    void idleLatencyUnderAFakeRoot(@TempDir Path root) throws IOException {
        Path idle = Files.createDirectories(root.resolve("sys/devices/system/cpu/cpuidle"));
        Files.writeString(idle.resolve("current_driver"), "haltpoll\n");
        Files.writeString(idle.resolve("current_governor"), "haltpoll\n");
        Path dev = Files.createDirectories(root.resolve("dev")).resolve("cpu_dma_latency");
        Files.write(dev, ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(2_000_000_000).array());

        IdleLatencyReport r = Clocks.idleLatency(root);
        assertEquals(Optional.of("haltpoll"), r.cpuidleDriver());
        assertEquals(Optional.of("haltpoll"), r.cpuidleGovernor());
        assertEquals(OptionalInt.of(2_000_000_000), r.inForceUs());
        assertTrue(r.unconstrained());
        assertEquals(Optional.empty(), r.readError());
        // Checked like the kernel will (root may write whatever the mode says).
        assertEquals(Files.isWritable(dev), r.mayHold());
        assertEquals(r.mayHold(), r.missingPermission().isEmpty());

        Files.write(dev, ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0).array());
        assertEquals(OptionalInt.of(0), Clocks.idleLatency(root).inForceUs());
        assertTrue(Clocks.idleLatency(root).toString().contains("0 µs (some process holds a request)"));

        IdleLatencyReport none = Clocks.idleLatency(root.resolve("nowhere"));
        assertEquals(Optional.empty(), none.cpuidleDriver());
        assertEquals(OptionalInt.empty(), none.inForceUs());
        assertEquals(Optional.of("no such device"), none.readError());
        assertFalse(none.mayHold());
        assertTrue(none.missingPermission().get().contains("does not exist"), none::toString);
        assertTrue(none.toString().contains("no cpuidle interface"), none::toString);
    }

    @Test
    void theMissingPermissionNamesModeAndOwners() {
        assertEquals("write access to /dev/cpu_dma_latency (rw-rw----, owner root, group rt): run as root or in group rt,"
                + " or let this user write it (e.g. a udev rule giving a group rw)",
                Clocks.missingWrite("/dev/cpu_dma_latency", "rw-rw----", "root", "rt", true));
    }

    @Test
    void theRealIdleLatencyReportIsConsistent() {
        IdleLatencyReport r = Clocks.idleLatency();
        assertEquals(r.inForceUs().isEmpty(), r.readError().isPresent(), r::toString);
        assertEquals(r.mayHold(), r.missingPermission().isEmpty(), r::toString);
        assertEquals(Files.isWritable(Path.of(IdleHint.DEVICE)), r.mayHold(), r::toString);
    }
}
