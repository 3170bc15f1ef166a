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
        assertTrue(r.nanoTimeLatencyNs() > 0, r::toString);
        assertTrue(r.nanoTimeGranularityNs() > 0, r::toString);
        assertTrue(r.instantGranularityNs() > 0, r::toString);
        assertTrue(r.currentTimeMillisGranularityMs() >= 0, r::toString);
        assertEquals(Runtime.getRuntime().availableProcessors(), r.availableProcessors());
        String text = r.toString();
        for (String line : new String[] {"System.nanoTime", "currentTimeMillis", "clocksource", "timer slack"}) {
            assertTrue(text.contains(line), text);
        }
        if (System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            assertTrue(r.clocksource().isPresent(), text);
            assertTrue(r.availableClocksources().contains(r.clocksource().get()), text);
            assertTrue(r.timerSlackNs().isPresent(), text);
        }
    }

    @Test
    void reportReadsWell() {
        ClockReport r = new ClockReport(21.5, 20, 0, 1, 1_000, Optional.of("tsc"), List.of("tsc", "hpet"),
                OptionalLong.of(50_000), false, Optional.of("KVM"), 2, "VM 17",
                new IdleLatencyReport(Optional.of("haltpoll"), Optional.of("haltpoll"), OptionalInt.of(2_000_000_000),
                        Optional.empty(), false, Optional.of("write access to /dev/cpu_dma_latency (rw-------, owner root, "
                                + "group root): run as root, or let this user write it (e.g. a udev rule giving a group rw)")));
        String text = r.toString();
        assertTrue(text.contains("21.5 ns per call, steps of 20 ns, monotonic"), text);
        assertTrue(text.contains("tsc (available: tsc hpet)"), text);
        assertTrue(text.contains("50000 ns on this thread (timed waits wake up to this much late)"), text);
        assertTrue(text.contains("cpuidle            driver haltpoll, governor haltpoll (idle states"), text);
        assertTrue(text.contains("PM QoS latency     2000000000 µs (unconstrained)"), text);
        assertTrue(text.contains("idle hint          this process may not hold it: lacks write access to /dev/cpu_dma_latency"
                + " (rw-------, owner root, group root): run as root"), text);
    }

    @Test
    void virtualizationHintFromClocksources() {
        assertEquals(Optional.of("KVM"), Clocks.virtualization(List.of("tsc", "kvm-clock")));
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
