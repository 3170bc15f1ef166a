package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

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
                OptionalLong.of(50_000), false, Optional.of("KVM"), 2, "VM 17");
        String text = r.toString();
        assertTrue(text.contains("21.5 ns per call, steps of 20 ns, monotonic"), text);
        assertTrue(text.contains("tsc (available: tsc hpet)"), text);
        assertTrue(text.contains("50000 ns on this thread (timed waits wake up to this much late)"), text);
    }

    @Test
    void virtualizationHintFromClocksources() {
        assertEquals(Optional.of("KVM"), Clocks.virtualization(List.of("tsc", "kvm-clock")));
    }
}
