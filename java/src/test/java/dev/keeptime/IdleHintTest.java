package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.ResourceBundle;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The idle-latency hint's holder logic on a fake device: exact event logs, no real device. */
class IdleHintTest {
    /** What the fake device saw: "open", "write N", "close". */
    static final class FakeDevice implements PmQos.Device {
        final List<String> log = new ArrayList<>();
        IOException refuseOpen;
        IOException refuseWrite;

        @Override
        public String path() {
            return "/fake/cpu_dma_latency";
        }

        @Override
        public PmQos.Request open() throws IOException {
            if (refuseOpen != null) {
                throw refuseOpen;
            }
            log.add("open");
            return new PmQos.Request() {
                @Override
                public void write(int valueUs) throws IOException {
                    if (refuseWrite != null) {
                        throw refuseWrite;
                    }
                    log.add("write " + valueUs);
                }

                @Override
                public void close() {
                    log.add("close");
                }
            };
        }
    }

    /** Records what is logged. */
    static final class RecordingLogger implements System.Logger {
        final List<String> records = new ArrayList<>();

        @Override
        public String getName() {
            return "dev.keeptime";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            records.add(level + " " + msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            records.add(level + " " + format);
        }
    }

    private final FakeDevice device = new FakeDevice();
    private final RecordingLogger logger = new RecordingLogger();
    private final PmQos registry = new PmQos(device, logger);

    private Sleeper sleeper(long us) {
        return Sleeper.builder().pmQos(registry).idleHint(us).build();
    }

    private static IdleHintStatus held(int asked, int inForce) {
        return new IdleHintStatus(IdleHintStatus.State.HELD, OptionalInt.of(asked), OptionalInt.of(inForce), Optional.empty());
    }

    @Test
    void strictestLiveValueIsInForceAndTheLastCloseClosesTheDevice() {
        Sleeper a = sleeper(50);
        assertEquals(List.of("open", "write 50"), device.log);
        Sleeper b = sleeper(10); // stricter: rewritten
        Sleeper c = sleeper(30); // looser: nothing written
        assertEquals(List.of("open", "write 50", "write 10"), device.log);
        assertEquals(OptionalInt.of(10), registry.inForceUs());
        assertEquals(3, registry.holders());
        assertEquals(held(50, 10), a.idleHintStatus());
        assertEquals(held(10, 10), b.idleHintStatus());
        assertEquals("held: 10 µs in force (asked 30 µs)", c.idleHintStatus().toString());

        b.close(); // the strictest goes: relax to the next strictest
        assertEquals(List.of("open", "write 50", "write 10", "write 30"), device.log);
        assertEquals(IdleHintStatus.State.RELEASED, b.idleHintStatus().state());
        assertEquals("released (asked 10 µs)", b.idleHintStatus().toString());
        b.close(); // idempotent
        a.close(); // 30 still the strictest: no write
        assertEquals(4, device.log.size());
        assertEquals(held(30, 30), c.idleHintStatus());
        c.close(); // the last one: closed, the kernel's request ends
        assertEquals(List.of("open", "write 50", "write 10", "write 30", "close"), device.log);
        assertEquals(OptionalInt.empty(), registry.inForceUs());
        assertEquals(0, registry.holders());

        try (Sleeper d = sleeper(0)) { // a new holder opens again
            assertEquals(held(0, 0), d.idleHintStatus());
        }
        assertEquals(List.of("open", "write 0", "close"), device.log.subList(5, 8));
        assertTrue(logger.records.isEmpty(), logger.records::toString);
    }

    @Test
    void equalValuesShareOneWrite() {
        Sleeper a = sleeper(0);
        Sleeper b = sleeper(0);
        a.close();
        assertEquals(List.of("open", "write 0"), device.log);
        b.close();
        assertEquals(List.of("open", "write 0", "close"), device.log);
    }

    @Test
    void aSleeperWithoutTheHintNeverTouchesTheDevice() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        try (Sleeper s = Sleeper.builder().pmQos(registry).platform(sim).build()) {
            s.sleepUntil(1_000_000);
            assertEquals(IdleHintStatus.NOT_REQUESTED, s.idleHintStatus());
            assertEquals("not requested", s.idleHintStatus().toString());
        }
        assertEquals(List.of(), device.log);
    }

    @Test
    void tickersHoldTheirOwnAndCloseTheirSleeper() throws InterruptedException {
        SimPlatform sim = new SimPlatform(0);
        Sleeper s = Sleeper.builder().pmQos(registry).platform(sim).idleHint(20).build();
        Ticker t = Ticker.builder(Duration.ofMillis(1)).pmQos(registry).sleeper(s).idleHint(5).build();
        assertEquals(List.of("open", "write 20", "write 5"), device.log);
        assertEquals(held(5, 5), t.idleHintStatus());
        assertEquals(held(20, 5), t.sleeper().idleHintStatus());
        assertEquals(1, t.await().index()); // the ticker ticks as ever on the simulated clock
        t.close(); // the ticker's 5 goes first (relax to the sleeper's 20), then the sleeper's
        assertEquals(List.of("open", "write 20", "write 5", "write 20", "close"), device.log);
        assertEquals(IdleHintStatus.State.RELEASED, t.idleHintStatus().state());
        assertEquals(IdleHintStatus.State.RELEASED, s.idleHintStatus().state());
        assertEquals(2, t.await().index()); // still usable, without the hint

        try (Ticker plain = Ticker.builder(Duration.ofMillis(1)).pmQos(registry).build()) {
            assertEquals(IdleHintStatus.NOT_REQUESTED, plain.idleHintStatus());
        }
        assertEquals(5, device.log.size());
    }

    @Test
    void badValuesAreRejectedWhenTheKnobIsSetAndNothingIsRequested() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Sleeper.builder().idleHint(-1));
        assertEquals("idle latency -1 µs is out of range: the kernel accepts 0 to 2147483647 µs", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Sleeper.builder().idleHint(2_147_483_648L));
        assertEquals("idle latency 2147483648 µs is out of range: the kernel accepts 0 to 2147483647 µs", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Sleeper.builder().idleHint(Duration.ofNanos(-1)));
        assertEquals("idle latency PT-0.000000001S is out of range: the kernel accepts 0 to 2147483647 µs", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Sleeper.builder().idleHint(Duration.ofNanos(2_147_483_648_000L)));
        assertThrows(IllegalArgumentException.class, () -> Sleeper.builder().idleHint(Duration.ofSeconds(Long.MAX_VALUE)));
        assertThrows(IllegalArgumentException.class, () -> Ticker.builder(Duration.ofMillis(1)).idleHint(Long.MIN_VALUE));
        assertThrows(NullPointerException.class, () -> Sleeper.builder().idleHint(null));
        assertEquals(List.of(), device.log);

        // The top of the range is accepted; a duration is truncated to whole µs.
        sleeper(Integer.MAX_VALUE).close();
        Sleeper.builder().pmQos(registry).idleHint(Duration.ofNanos(1_999)).build().close();
        Sleeper.builder().pmQos(registry).idleHint(Duration.ofNanos(2_147_483_647_999L)).build().close();
        assertEquals(List.of("open", "write 2147483647", "close", "open", "write 1", "close",
                "open", "write 2147483647", "close"), device.log);
    }

    @Test
    void refusalIsWarnedOncePerRegistryAndNeverFailsTheSleeper() throws InterruptedException {
        device.refuseOpen = new AccessDeniedException("/fake/cpu_dma_latency");
        Sleeper a = sleeper(0);
        Sleeper b = sleeper(0);
        IdleHintStatus st = a.idleHintStatus();
        assertEquals(IdleHintStatus.State.REFUSED, st.state());
        assertFalse(st.held());
        assertEquals(Optional.of("/fake/cpu_dma_latency: permission denied (writing it needs root or write access to the device)"),
                st.refusal());
        assertEquals(st, b.idleHintStatus());
        assertEquals(List.of("WARNING keeptime: idle-latency hint refused: /fake/cpu_dma_latency: permission denied "
                + "(writing it needs root or write access to the device); sleepers and tickers work without it "
                + "(said once per process)"), logger.records);
        device.refuseOpen = new NoSuchFileException("/fake/cpu_dma_latency");
        Ticker t = Ticker.builder(Duration.ofMillis(1)).pmQos(registry).idleHint(0).build();
        assertEquals(Optional.of("/fake/cpu_dma_latency: no such device"), t.idleHintStatus().refusal());
        assertEquals(1, logger.records.size()); // still one warning
        assertEquals(0, registry.holders());
        // The refused sleeper sleeps as any other: never early.
        long deadline = System.nanoTime() + 200_000;
        assertTrue(a.sleepUntil(deadline) - deadline >= 0);
        a.close(); // nothing to release
        assertEquals(IdleHintStatus.State.REFUSED, a.idleHintStatus().state());
        assertEquals(List.of(), device.log);
    }

    @Test
    void aFailedFirstWriteClosesTheDeviceAgain() {
        device.refuseWrite = new IOException("Invalid argument");
        Sleeper s = sleeper(7);
        assertEquals(Optional.of("/fake/cpu_dma_latency: Invalid argument"), s.idleHintStatus().refusal());
        assertEquals(List.of("open", "close"), device.log);
        assertEquals(0, registry.holders());
        assertEquals(1, logger.records.size());
    }

    @Test
    void reasonsInTheSpecsWords() {
        assertEquals("no such device", PmQos.reason(new NoSuchFileException("/dev/cpu_dma_latency")));
        assertEquals(PmQos.PERMISSION_DENIED, PmQos.reason(new AccessDeniedException("/dev/cpu_dma_latency")));
        assertEquals("no such device", PmQos.reason(
                new java.nio.file.FileSystemException("/dev/cpu_dma_latency", null, "No such device or address")));
        assertEquals("Input/output error", PmQos.reason(new IOException("Input/output error")));
        assertEquals("IOException", PmQos.reason(new IOException()));
    }

    @Test
    void theCleanerReleasesASleeperThatWasNeverClosed() throws InterruptedException {
        holdAndDrop();
        assertEquals(1, registry.holders());
        long end = System.nanoTime() + 10_000_000_000L;
        while (registry.holders() != 0 && System.nanoTime() - end < 0) {
            System.gc();
            Thread.sleep(10);
        }
        assertEquals(0, registry.holders());
        assertEquals(List.of("open", "write 3", "close"), device.log.subList(0, 3));
    }

    private void holdAndDrop() {
        Sleeper s = sleeper(3);
        assertTrue(s.idleHintStatus().held());
    }

    @Test
    void theDeviceFileGetsOneNativeOrderInt(@TempDir Path dir) throws IOException {
        Path dev = dir.resolve("cpu_dma_latency");
        Files.write(dev, new byte[0]);
        PmQos fileRegistry = new PmQos(new PmQos.DeviceFile(dev), logger);
        try (Sleeper s = Sleeper.builder().pmQos(fileRegistry).idleHint(0x01020304).build()) {
            assertTrue(s.idleHintStatus().held(), s.idleHintStatus()::toString);
            byte[] bytes = Files.readAllBytes(dev);
            assertEquals(4, bytes.length);
            assertEquals(0x01020304, ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()).getInt());
            assertEquals(0x01020304, Clocks.readInForce(dev));
        }
        PmQos missing = new PmQos(new PmQos.DeviceFile(dir.resolve("nowhere")), logger);
        try (Sleeper s = Sleeper.builder().pmQos(missing).idleHint(0).build()) {
            assertEquals(Optional.of(dir.resolve("nowhere") + ": no such device"), s.idleHintStatus().refusal());
        }
    }

    /** The real device, as this process finds it: only invariants (held or refused, never early). */
    @Test
    void theRealDeviceIsHeldOrRefusedAndSleepsAreNeverEarly() throws InterruptedException {
        Supplier<String> where = () -> Clocks.idleLatency().toString();
        try (Sleeper s = Sleeper.builder().idleHint(0).build()) {
            IdleHintStatus st = s.idleHintStatus();
            if (st.held()) {
                assertEquals(OptionalInt.of(0), st.inForceUs());
                assertEquals(OptionalInt.of(0), IdleHint.heldUs());
                // Held at 0 by this process: the system-wide bound is 0 while it lasts.
                IdleLatencyReport r = Clocks.idleLatency();
                if (r.inForceUs().isPresent()) {
                    assertEquals(0, r.inForceUs().getAsInt(), where);
                }
            } else {
                assertEquals(IdleHintStatus.State.REFUSED, st.state(), where);
                assertTrue(st.refusal().get().startsWith(IdleHint.DEVICE + ": "), st::toString);
            }
            for (int i = 0; i < 50; i++) {
                long deadline = System.nanoTime() + 300_000;
                assertTrue(s.sleepUntil(deadline) - deadline >= 0);
            }
            if (st.held()) {
                s.close();
                assertEquals(IdleHintStatus.State.RELEASED, s.idleHintStatus().state());
                assertEquals(OptionalInt.empty(), IdleHint.heldUs());
            }
        }
    }
}
