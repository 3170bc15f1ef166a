package dev.keeptime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.keeptime.MachineInfo.IdleState;
import dev.keeptime.MachineInfo.Preemption;
import dev.keeptime.MachineInfo.Tsc;
import dev.keeptime.MachineInfo.Virtualization;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Replays {@code spec/vectors/clocks.json}: from each case's clocks, machine
 * and idle-latency parts (an absent field is unknown), the findings every
 * runtime must make, in order (severity and code).
 */
class ClockVectorsTest {
    private static final Set<String> CLOCK_FIELDS = Set.of("name", "description", "id", "resolution_ns", "granularity_ns",
            "granularity_ticks", "repeat_fraction", "samples", "read_cost_ns", "monotonic_violations", "frequency_hz",
            "frequency_source", "available", "error");
    private static final Set<String> MACHINE_FIELDS = Set.of("os", "arch", "kernel_release", "kernel_version", "cpu_model",
            "cpus_online", "cpus_available", "clocksource", "available_clocksources", "tsc", "timer_slack_ns", "tick_hz",
            "high_resolution_timers", "high_resolution_timers_source", "idle_driver", "idle_states", "cpufreq_driver",
            "cpufreq_governor", "virtualization", "steal_fraction", "preemption", "preemption_mode", "tai_offset_s");
    private static final Set<String> IDLE_FIELDS = Set.of("driver", "governor", "in_force_us", "read_error", "may_request",
            "request_refused", "device", "euid", "groups");

    @TestFactory
    Stream<DynamicTest> everyRuntimeMakesTheseFindings() throws IOException {
        JsonNode root = VectorsTest.load("clocks.json");
        assertEquals(1, root.get("version").asInt());
        assertTrue(root.get("cases").size() >= 15);
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : root.get("cases")) {
            tests.add(DynamicTest.dynamicTest(c.get("name").asText(), () -> replay(c)));
        }
        return tests.stream();
    }

    private static void replay(JsonNode c) {
        List<ClockInfo> clocks = new ArrayList<>();
        for (JsonNode n : c.get("clocks")) {
            clocks.add(clock(n));
        }
        MachineInfo machine = machine(c.get("machine"));
        Optional<IdleLatencyReport> idle = present(c, "idle_latency") ? Optional.of(idle(c.get("idle_latency")))
                : Optional.empty();
        List<String> want = new ArrayList<>();
        for (JsonNode f : c.get("findings")) {
            want.add(Finding.Severity.fromJsonName(f.get("severity").asText()).jsonName() + ":" + f.get("code").asText());
        }
        List<Finding> made = ClockFindings.of(clocks, machine, idle);
        for (Finding f : made) {
            assertFalse(f.message().isBlank(), f::code);
        }
        assertEquals(want, made.stream().map(f -> f.severity().jsonName() + ":" + f.code()).toList());
    }

    /** Every field of an input object is one the report has (a misspelt field would be silently unknown). */
    private static void knownFields(JsonNode o, Set<String> known) {
        for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            assertTrue(known.contains(f), () -> "unknown field " + f + " in " + o);
        }
    }

    private static boolean present(JsonNode o, String field) {
        return o.has(field) && !o.get(field).isNull();
    }

    private static Optional<String> text(JsonNode o, String field) {
        return present(o, field) ? Optional.of(o.get(field).asText()) : Optional.empty();
    }

    private static OptionalLong u64(JsonNode o, String field) {
        return present(o, field) ? OptionalLong.of(VectorsTest.u64(o.get(field))) : OptionalLong.empty();
    }

    private static OptionalInt count(JsonNode o, String field) {
        return present(o, field) ? OptionalInt.of(VectorsTest.count(o, field, 0)) : OptionalInt.empty();
    }

    private static boolean flag(JsonNode o, String field) {
        return present(o, field) && VectorsTest.bool(o, field);
    }

    private static List<String> strings(JsonNode o, String field) {
        List<String> out = new ArrayList<>();
        if (present(o, field)) {
            o.get(field).forEach(n -> out.add(n.asText()));
        }
        return out;
    }

    static ClockInfo clock(JsonNode n) {
        knownFields(n, CLOCK_FIELDS);
        return new ClockInfo(n.get("name").asText(), text(n, "description").orElse(""), u64(n, "resolution_ns"),
                u64(n, "granularity_ns"), present(n, "repeat_fraction") ? n.get("repeat_fraction").asDouble() : 0,
                u64(n, "samples").orElse(0), present(n, "read_cost_ns") ? n.get("read_cost_ns").asDouble() : 0,
                u64(n, "monotonic_violations").orElse(0), flag(n, "available"), text(n, "error"));
    }

    static MachineInfo machine(JsonNode m) {
        knownFields(m, MACHINE_FIELDS);
        Optional<Tsc> tsc = Optional.empty();
        if (present(m, "tsc")) {
            JsonNode t = m.get("tsc");
            tsc = Optional.of(new Tsc(flag(t, "constant_tsc"), flag(t, "nonstop_tsc"), flag(t, "tsc_known_freq"),
                    flag(t, "tsc_reliable"), flag(t, "rdtscp"), u64(t, "reported_frequency_hz"),
                    u64(t, "measured_frequency_hz")));
        }
        List<IdleState> states = new ArrayList<>();
        if (present(m, "idle_states")) {
            for (JsonNode s : m.get("idle_states")) {
                states.add(new IdleState(s.get("name").asText(), VectorsTest.u64(s.get("exit_latency_us")),
                        u64(s, "target_residency_us"), flag(s, "disabled")));
            }
        }
        Optional<Virtualization> virt = present(m, "virtualization")
                ? Optional.of(new Virtualization(m.get("virtualization").get("hypervisor").asText(),
                        m.get("virtualization").get("source").asText()))
                : Optional.empty();
        return new MachineInfo(m.get("os").asText(), m.get("arch").asText(), text(m, "kernel_release"),
                text(m, "kernel_version"), text(m, "cpu_model"), count(m, "cpus_online"), count(m, "cpus_available"),
                text(m, "clocksource"), strings(m, "available_clocksources"), tsc, u64(m, "timer_slack_ns"),
                u64(m, "tick_hz"), present(m, "high_resolution_timers")
                        ? Optional.of(VectorsTest.bool(m, "high_resolution_timers")) : Optional.empty(),
                text(m, "idle_driver"), states, text(m, "cpufreq_driver"), text(m, "cpufreq_governor"), virt,
                present(m, "steal_fraction") ? OptionalDouble.of(m.get("steal_fraction").asDouble()) : OptionalDouble.empty(),
                text(m, "preemption").map(Preemption::fromJsonName).orElse(Preemption.UNKNOWN),
                text(m, "preemption_mode"), present(m, "tai_offset_s")
                        ? OptionalLong.of(m.get("tai_offset_s").asLong()) : OptionalLong.empty());
    }

    static IdleLatencyReport idle(JsonNode i) {
        knownFields(i, IDLE_FIELDS);
        return new IdleLatencyReport(text(i, "driver"), text(i, "governor"),
                present(i, "in_force_us") ? OptionalInt.of(i.get("in_force_us").intValue()) : OptionalInt.empty(),
                text(i, "read_error"), VectorsTest.bool(i, "may_request"), text(i, "request_refused"));
    }
}
