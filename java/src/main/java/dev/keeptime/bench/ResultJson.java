package dev.keeptime.bench;

import dev.keeptime.SleeperStats;
import dev.keeptime.TailTarget;
import java.util.List;
import java.util.Locale;

/**
 * Writes the project's bench result document ({@code "format":
 * "keeptime-bench"}, version 1: {@code spec/bench-result.md}), the same
 * fields, names and units as the Rust CLI writes, so Java results sit in one
 * table with the other runtimes'. Every sample is the caller's first
 * {@code System.nanoTime()} reading after the call returned minus the
 * deadline. A cell of a method that returns its own reading adds
 * {@code return_p50_ns} and {@code return_p90_ns}: the caller's reading
 * minus the method's (what the return path costs).
 */
final class ResultJson {
    static final String FORMAT = "keeptime-bench";
    static final int VERSION = 2;

    private final StringBuilder sb = new StringBuilder();

    private ResultJson() {}

    /**
     * One measured cell; {@code target} and {@code sleeper}: a keeptime
     * method's tail target and stats, else null. The JSON carries them as the
     * cell's {@code sleeper} field for spin-finished ({@link dev.keeptime.Mode#EXACT})
     * keeptime methods only, as {@code spec/bench-result.md} defines it.
     */
    record Cell(Method method, long durationNs, long warmup, Long timerSlackNs, Stats stats,
            TailTarget target, SleeperStats sleeper) {}

    /**
     * The document of one run.
     *
     * @param warmup {@code --warmup}: the warm-up count the user fixed for
     *     every cell, written as {@code parameters.warmup}; null when the
     *     bench chose each cell's count (each cell's {@code warmup} is the
     *     count it used either way)
     */
    static String write(String created, Machine m, List<Long> durations, List<Method> methods, Integer warmup,
            List<Cell> cells) {
        ResultJson j = new ResultJson();
        StringBuilder s = j.sb;
        s.append("{\n");
        j.field(1, "format", FORMAT).append(",\n");
        j.indent(1).append("\"version\": ").append(VERSION).append(",\n");
        j.field(1, "created", created).append(",\n");
        j.indent(1).append("\"tool\": {\n");
        j.field(2, "name", "keeptime-java").append(",\n");
        j.field(2, "version", "0.1.0").append('\n');
        j.indent(1).append("},\n");
        j.indent(1).append("\"runtime\": {\n");
        j.field(2, "language", "java").append(",\n");
        j.field(2, "name", "openjdk").append(",\n");
        j.field(2, "version", Runtime.version().toString()).append('\n');
        j.indent(1).append("},\n");
        j.indent(1).append("\"machine\": {\n");
        j.field(2, "os", m.os).append(",\n");
        j.field(2, "arch", m.arch).append(",\n");
        j.field(2, "kernel", m.kernel).append(",\n");
        j.field(2, "cpu_model", m.cpuModel).append(",\n");
        j.num(2, "cpus", m.cpus).append(",\n");
        j.field(2, "clocksource", m.clocksource).append(",\n");
        j.num(2, "timer_slack_ns", m.timerSlackNs).append(",\n");
        j.field(2, "virtualization", m.virtualization).append(",\n");
        j.field(2, "preemption", m.preemption).append('\n');
        j.indent(1).append("},\n");
        j.indent(1).append("\"parameters\": {\n");
        j.field(2, "schedule", "sleep").append(",\n");
        j.field(2, "cpu_clock", "thread").append(",\n");
        j.indent(2).append("\"durations_ns\": [");
        for (int i = 0; i < durations.size(); i++) {
            s.append(i == 0 ? "" : ", ").append(durations.get(i));
        }
        s.append("],\n");
        j.indent(2).append("\"methods\": [");
        for (int i = 0; i < methods.size(); i++) {
            s.append(i == 0 ? "" : ", ").append(quote(methods.get(i).id));
        }
        s.append("],\n");
        j.indent(2).append("\"samples\": null,\n");
        j.num(2, "warmup", warmup == null ? null : Long.valueOf(warmup)).append(",\n");
        for (String k : new String[] {"budget_ns", "pin_cpu"}) {
            j.indent(2).append('"').append(k).append("\": null,\n");
        }
        j.indent(2).append("\"priority\": null\n");
        j.indent(1).append("},\n");
        j.indent(1).append("\"methods\": [\n");
        for (int i = 0; i < methods.size(); i++) {
            Method me = methods.get(i);
            j.indent(2).append("{\n");
            j.field(3, "name", me.id).append(",\n");
            j.field(3, "description", me.description).append(",\n");
            j.field(3, "family", me.family()).append(",\n");
            j.indent(3).append("\"may_return_early\": ").append(me.mayReturnEarly).append('\n');
            j.indent(2).append(i + 1 < methods.size() ? "},\n" : "}\n");
        }
        j.indent(1).append("],\n");
        j.indent(1).append("\"results\": [\n");
        for (int i = 0; i < cells.size(); i++) {
            j.cell(cells.get(i));
            s.append(i + 1 < cells.size() ? ",\n" : "\n");
        }
        j.indent(1).append("]\n");
        s.append("}\n");
        return s.toString();
    }

    private void cell(Cell c) {
        Stats st = c.stats();
        indent(2).append("{\n");
        field(3, "method", c.method().id).append(",\n");
        num(3, "duration_ns", c.durationNs()).append(",\n");
        num(3, "warmup", c.warmup()).append(",\n");
        num(3, "timer_slack_ns", c.timerSlackNs()).append(",\n");
        num(3, "samples", st.samples).append(",\n");
        num(3, "min_ns", st.minNs).append(",\n");
        dbl(3, "mean_ns", st.meanNs).append(",\n");
        dbl(3, "stddev_ns", st.stddevNs).append(",\n");
        num(3, "p50_ns", st.p50Ns).append(",\n");
        num(3, "p90_ns", st.p90Ns).append(",\n");
        num(3, "p99_ns", st.p99Ns).append(",\n");
        num(3, "p999_ns", st.p999Ns).append(",\n");
        num(3, "max_ns", st.maxNs).append(",\n");
        num(3, "early", st.early).append(",\n");
        dbl(3, "cpu_percent", st.cpuPercent).append(",\n");
        num(3, "wall_ns", st.wallNs).append(",\n");
        num(3, "cpu_ns", st.cpuNs).append(",\n");
        if (st.returnP50Ns != null) {
            // Optional, for methods that return a clock reading of their own:
            // the caller's first reading after the return minus that one.
            num(3, "return_p50_ns", st.returnP50Ns).append(",\n");
            num(3, "return_p90_ns", st.returnP90Ns).append(",\n");
        }
        if (c.sleeper() != null && c.method() != Method.KEEPTIME_EFFICIENT) {
            // The optional "sleeper" field of spec/bench-result.md, on
            // keeptime's spin-finished cells only: the sleeper's own account
            // of the measured samples and its tail target (spec/sleep.md, Stats).
            SleeperStats k = c.sleeper();
            indent(3).append("\"sleeper\": {\n");
            num(4, "tail_target_ppm", (long) c.target().ppm()).append(",\n");
            num(4, "sleeps", k.sleeps()).append(",\n");
            num(4, "late", k.late()).append(",\n");
            num(4, "os_waits", k.osWaits()).append(",\n");
            num(4, "spin_ns", k.spinNs()).append(",\n");
            num(4, "cpu_estimate_ns", k.cpuEstimateNs()).append('\n');
            indent(3).append("},\n");
        }
        indent(3).append("\"histogram\": [\n");
        for (int i = 0; i < st.histogram.size(); i++) {
            long[] b = st.histogram.get(i);
            indent(4).append("{\n");
            num(5, "gt_ns", b[0]).append(",\n");
            num(5, "le_ns", b[1]).append(",\n");
            num(5, "count", b[2]).append('\n');
            indent(4).append(i + 1 < st.histogram.size() ? "},\n" : "}\n");
        }
        indent(3).append("]\n");
        indent(2).append('}');
    }

    private StringBuilder indent(int level) {
        return sb.append("  ".repeat(level));
    }

    private StringBuilder field(int level, String key, String value) {
        return indent(level).append(quote(key)).append(": ").append(value == null ? "null" : quote(value));
    }

    private StringBuilder num(int level, String key, Long value) {
        return indent(level).append(quote(key)).append(": ").append(value == null ? "null" : value.toString());
    }

    private StringBuilder num(int level, String key, long value) {
        return indent(level).append(quote(key)).append(": ").append(value);
    }

    private StringBuilder dbl(int level, String key, double value) {
        String v = Double.isFinite(value) ? String.format(Locale.ROOT, "%s", value) : "null";
        return indent(level).append(quote(key)).append(": ").append(v);
    }

    static String quote(String s) {
        StringBuilder q = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    q.append("\\\"");
                    break;
                case '\\':
                    q.append("\\\\");
                    break;
                case '\n':
                    q.append("\\n");
                    break;
                case '\t':
                    q.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        q.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        q.append(c);
                    }
            }
        }
        return q.append('"').toString();
    }
}
