package dev.keeptime;

import dev.keeptime.ProfileException.Code;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A host profile: what an earlier run on this machine learned, so that a new
 * {@link Sleeper} starts from it instead of from nothing
 * ({@code spec/estimator.md}, <em>Profile</em>; the JUnit suite replays
 * {@code spec/vectors/profile.json}).
 *
 * <p>A fresh sleeper needs hundreds to thousands of OS waits before its
 * windows are full, and until then one slow wake-up <em>is</em> its margin. A
 * profile is a small text file: the machine's {@link Fingerprint}, then per
 * OS-wait bucket its last (at most {@value MarginEstimator#WINDOW}) wake-ups
 * and the cost of an OS wait. A sleeper built from one
 * ({@link Sleeper.Builder#profile(Profile)}) answers as it would after those
 * wake-ups, then learns and forgets as any sleeper does. Write one with
 * {@code keeptime trace --profile FILE} or {@link Sleeper#writeProfile(Path)};
 * load it in a later run:
 *
 * <pre>{@code
 * Sleeper s;
 * try {
 *     s = Sleeper.builder().profile(Profile.load(Path.of("host.profile"))).build();
 * } catch (ProfileException e) {        // bad, cut, or made on another machine
 *     System.err.println(e.getMessage()); // host.profile: line 7: made on another machine: ...
 *     s = Sleeper.create();
 * }
 * }</pre>
 *
 * <p>A profile is read whole and checked before anything is loaded: a bad
 * profile loads nothing. One made on another machine (any of the seven
 * fingerprint values differs) is refused unless loaded with
 * {@link Option#IGNORE_MACHINE}. Immutable and thread-safe.
 */
public final class Profile {
    /** The profile format's version this library reads and writes. */
    public static final int VERSION = 1;
    private static final String MAGIC = "keeptime-profile";
    private static final String HEADER = MAGIC + " " + VERSION;

    /** How a profile is loaded. */
    public enum Option {
        /**
         * Load it whichever machine made it: the fingerprint comparison is
         * skipped, every other check still applies.
         */
        IGNORE_MACHINE
    }

    /**
     * What identifies a machine to a wake-up model ({@code spec/estimator.md},
     * <em>Machine fingerprint</em>), seven strings in file order; {@code "-"}
     * stands for a value that could not be read (for {@code virtualization}:
     * no hypervisor seen). Two machines are the same to a profile when all
     * seven are equal.
     *
     * @param cpuVendor {@code vendor_id} of the first processor in {@code /proc/cpuinfo}
     *     ({@code CPU implementer} where there is none)
     * @param cpuModel {@link MachineInfo#cpuModel()}
     * @param cpusOnline {@link MachineInfo#cpusOnline()} in decimal
     * @param virtualization {@link MachineInfo#virtualization()}'s hypervisor
     * @param cpuidleDriver {@link MachineInfo#idleDriver()}
     * @param clocksource {@link MachineInfo#clocksource()}
     * @param kernelRelease {@link MachineInfo#kernelRelease()} ({@code uname -r})
     */
    public record Fingerprint(String cpuVendor, String cpuModel, String cpusOnline, String virtualization,
            String cpuidleDriver, String clocksource, String kernelRelease) {
        /** The keys, in file order. */
        public static final List<String> KEYS = List.of("cpu_vendor", "cpu_model", "cpus_online", "virtualization",
                "cpuidle_driver", "clocksource", "kernel_release");

        /**
         * A fingerprint of the seven values.
         *
         * @param cpuVendor the CPU's vendor
         * @param cpuModel the CPU's model
         * @param cpusOnline the online CPUs, decimal
         * @param virtualization the hypervisor, {@code "-"} for none
         * @param cpuidleDriver the cpuidle driver
         * @param clocksource the kernel's clocksource
         * @param kernelRelease the kernel release
         * @throws NullPointerException if a value is null
         */
        public Fingerprint {
            Objects.requireNonNull(cpuVendor, "cpuVendor");
            Objects.requireNonNull(cpuModel, "cpuModel");
            Objects.requireNonNull(cpusOnline, "cpusOnline");
            Objects.requireNonNull(virtualization, "virtualization");
            Objects.requireNonNull(cpuidleDriver, "cpuidleDriver");
            Objects.requireNonNull(clocksource, "clocksource");
            Objects.requireNonNull(kernelRelease, "kernelRelease");
        }

        /**
         * This machine's fingerprint, read as {@link Clocks} reads the machine
         * (a few file reads; nothing is measured). Where a file is missing
         * (off Linux) its value is {@code "-"}.
         *
         * @return the fingerprint of the machine this runs on
         */
        public static Fingerprint thisMachine() {
            return MachineProbe.fingerprint();
        }

        /**
         * The values in file order ({@link #KEYS}).
         *
         * @return the seven values
         */
        public List<String> values() {
            return List.of(cpuVendor, cpuModel, cpusOnline, virtualization, cpuidleDriver, clocksource, kernelRelease);
        }

        static Fingerprint of(List<String> v) {
            return new Fingerprint(v.get(0), v.get(1), v.get(2), v.get(3), v.get(4), v.get(5), v.get(6));
        }

        /** {@code v} as a profile line holds it: {@code "-"} when unknown or when no line can hold it. */
        static String value(String v) {
            return v == null || v.isEmpty() || !v.strip().equals(v) || v.indexOf('\n') >= 0 || v.indexOf('\r') >= 0
                    ? "-" : v;
        }
    }

    /** One bucket's remembered wake-ups, oldest first: {@code waits[i]}, {@code overshoots[i]}. */
    private record Section(int bucket, long[] waits, long[] overshoots) {}

    private final Fingerprint machine;
    private final List<Section> sections;
    /** {@code costs[i] = {wait_ns, cpu_ns}}, buckets ascending. */
    private final List<long[]> costs;

    private Profile(Fingerprint machine, List<Section> sections, List<long[]> costs) {
        this.machine = machine;
        this.sections = List.copyOf(sections);
        this.costs = List.copyOf(costs);
    }

    /**
     * Reads the profile at {@code path} and checks that it was made on this
     * machine ({@link Fingerprint#thisMachine()}), unless
     * {@link Option#IGNORE_MACHINE} is given.
     *
     * @param path the profile file
     * @param options {@link Option#IGNORE_MACHINE} to skip the machine check
     * @return the profile
     * @throws ProfileException if the profile is bad, cut short or made on
     *     another machine (naming the file and the line)
     * @throws IOException if the file cannot be read
     */
    public static Profile load(Path path, Option... options) throws IOException {
        byte[] bytes = Files.readAllBytes(path);
        try {
            return checked(parseBytes(bytes), options);
        } catch (ProfileException e) {
            throw e.inFile(path.toString());
        }
    }

    /**
     * Parses a profile's bytes (UTF-8 text) and checks that it was made on
     * this machine, unless {@link Option#IGNORE_MACHINE} is given.
     *
     * @param bytes the profile's bytes
     * @param options {@link Option#IGNORE_MACHINE} to skip the machine check
     * @return the profile
     * @throws ProfileException if it is not UTF-8, bad, cut short or made on
     *     another machine
     */
    public static Profile parse(byte[] bytes, Option... options) throws ProfileException {
        return checked(parseBytes(bytes), options);
    }

    /**
     * Parses a profile's text and checks that it was made on this machine,
     * unless {@link Option#IGNORE_MACHINE} is given. To check against another
     * fingerprint, parse with {@link Option#IGNORE_MACHINE} and call
     * {@link #checkMachine(Fingerprint)}.
     *
     * @param text the profile's text
     * @param options {@link Option#IGNORE_MACHINE} to skip the machine check
     * @return the profile
     * @throws ProfileException if it is bad, cut short or made on another
     *     machine ({@link Code#NOT_TEXT} for a lone surrogate, which UTF-8
     *     cannot hold)
     */
    public static Profile parse(String text, Option... options) throws ProfileException {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw notText(text.substring(0, i).chars().filter(ch -> ch == '\n').count());
            }
        }
        return checked(parseText(text), options);
    }

    private static Profile checked(Profile p, Option[] options) throws ProfileException {
        if (!Arrays.asList(options).contains(Option.IGNORE_MACHINE)) {
            p.checkMachine(Fingerprint.thisMachine());
        }
        return p;
    }

    private static ProfileException notText(long lineBreaksBefore) {
        return ProfileException.at(Code.NOT_TEXT, (int) Math.min(Integer.MAX_VALUE, lineBreaksBefore + 1),
                "not a profile: the text is not UTF-8");
    }

    private static Profile parseBytes(byte[] bytes) throws ProfileException {
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult r = d.decode(in, out, true);
        if (!r.isError()) {
            r = d.flush(out);
        }
        if (r.isError()) {
            long breaks = 0;
            for (int i = 0; i < in.position(); i++) {
                breaks += bytes[i] == '\n' ? 1 : 0;
            }
            throw notText(breaks);
        }
        return parseText(out.flip().toString());
    }

    /**
     * Checks that this profile was made on the machine {@code here}: all
     * seven fingerprint values equal.
     *
     * @param here the machine to compare with
     * @throws ProfileException ({@link Code#MACHINE_MISMATCH}) naming the first
     *     key that differs, in file order, and both values
     */
    public void checkMachine(Fingerprint here) throws ProfileException {
        List<String> mine = machine.values();
        List<String> theirs = here.values();
        for (int i = 0; i < Fingerprint.KEYS.size(); i++) {
            if (!mine.get(i).equals(theirs.get(i))) {
                throw ProfileException.mismatch(2 + i, Fingerprint.KEYS.get(i), mine.get(i), theirs.get(i));
            }
        }
    }

    /**
     * The machine the profile was made on.
     *
     * @return its fingerprint
     */
    public Fingerprint machine() {
        return machine;
    }

    /**
     * Wake-ups per OS-wait bucket.
     *
     * @return for each of the {@value MarginEstimator#BUCKETS} buckets, the
     *     samples the profile holds (0 to {@value MarginEstimator#WINDOW})
     */
    public int[] samples() {
        int[] n = new int[MarginEstimator.BUCKETS];
        for (Section s : sections) {
            n[s.bucket()] = s.waits().length;
        }
        return n;
    }

    /**
     * A fresh estimator with this profile loaded ({@code spec/estimator.md},
     * <em>Loading</em>): each section's samples through
     * {@link MarginEstimator#observe}, then each cost through
     * {@link MarginEstimator#observeCost}, with no sleep begun; then every
     * bucket with samples is marked loaded, its own margin at
     * {@value MarginEstimator#STALE_SHARE_PPM} ppm noted, so that it drops the
     * profile's samples once its own wake-ups prove them stale.
     *
     * @return a new estimator that answers as one that observed the profile's wake-ups
     */
    public MarginEstimator estimator() {
        MarginEstimator e = new MarginEstimator();
        for (Section s : sections) {
            for (int i = 0; i < s.waits().length; i++) {
                e.observe(s.waits()[i], s.overshoots()[i]);
            }
        }
        for (long[] c : costs) {
            e.observeCost(c[0], c[1]);
        }
        e.markLoaded();
        return e;
    }

    /**
     * The profile of what {@code e} remembers, made on {@code machine}
     * ({@code spec/estimator.md}, <em>Writing</em>, from a sleeper): each live
     * bucket's samples oldest first as its shortest wait and its bin's lower
     * edge, then each bucket's own learned cost.
     */
    static Profile of(MarginEstimator e, Fingerprint machine) {
        List<Section> sections = new ArrayList<>();
        List<long[]> costs = new ArrayList<>();
        for (int b = 0; b < MarginEstimator.BUCKETS; b++) {
            long w = MarginEstimator.bucketLo(b);
            int[] bins = e.rememberedBins(b);
            if (bins.length > 0) {
                long[] waits = new long[bins.length];
                long[] overs = new long[bins.length];
                Arrays.fill(waits, w);
                for (int i = 0; i < bins.length; i++) {
                    overs[i] = MarginEstimator.binLo(bins[i]);
                }
                sections.add(new Section(b, waits, overs));
            }
            long c = e.ownCost(b);
            if (c >= 0) {
                costs.add(new long[] {w, c});
            }
        }
        return new Profile(machine, sections, costs);
    }

    /**
     * The profile's text ({@code spec/estimator.md}, <em>Format</em>), ending
     * in a line break.
     *
     * @return the text a profile file holds
     */
    public String text() {
        StringBuilder sb = new StringBuilder(HEADER).append('\n');
        List<String> v = machine.values();
        for (int i = 0; i < v.size(); i++) {
            sb.append(Fingerprint.KEYS.get(i)).append(' ').append(v.get(i)).append('\n');
        }
        for (Section s : sections) {
            sb.append("bucket ").append(s.bucket()).append(' ').append(s.waits().length).append('\n');
            for (int i = 0; i < s.waits().length; i++) {
                sb.append(s.waits()[i]).append(' ').append(s.overshoots()[i]).append('\n');
            }
        }
        for (long[] c : costs) {
            sb.append("cost ").append(c[0]).append(' ').append(c[1]).append('\n');
        }
        return sb.append("end\n").toString();
    }

    /**
     * Writes {@link #text()} to {@code path} (created or replaced).
     *
     * @param path where to write the profile
     * @throws IOException if it cannot be written
     */
    public void write(Path path) throws IOException {
        Files.writeString(path, text(), StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Profile p && text().equals(p.text());
    }

    @Override
    public int hashCode() {
        return text().hashCode();
    }

    @Override
    public String toString() {
        return "Profile[machine=" + machine + ", samples=" + Arrays.toString(samples()) + ", costs=" + costs.size()
                + "]";
    }

    // ---------------------------------------------------------------- parsing

    /** Parses and checks everything but the machine; a line cut short is {@link Code#TRUNCATED}. */
    private static Profile parseText(String text) throws ProfileException {
        Parser ps = new Parser(lines(text));
        try {
            return ps.profile();
        } catch (ProfileException e) {
            int last = ps.lines.size();
            boolean cut = !text.endsWith("\n") && e.line() == last;
            if (cut) {
                cut = switch (e.code()) {
                    case BAD_LINE, BAD_NUMBER, BAD_BUCKET -> true;
                    // Line 1 alone: cut when it is a proper beginning of the header.
                    case NOT_A_PROFILE, UNSUPPORTED_VERSION ->
                        ps.lines.get(0).length() < HEADER.length() && HEADER.startsWith(ps.lines.get(0));
                    default -> false;
                };
            }
            if (cut) {
                throw ProfileException.at(Code.TRUNCATED, e.line(),
                        "the profile ends inside this line, cut short: " + e.detail());
            }
            throw e;
        }
    }

    /** Lines separated by {@code \n}, a {@code \r} ending a line dropped, a final {@code \n} ending the last. */
    private static List<String> lines(String text) {
        List<String> out = new ArrayList<>();
        if (text.isEmpty()) {
            return out;
        }
        int from = 0;
        while (true) {
            int nl = text.indexOf('\n', from);
            String l = nl < 0 ? text.substring(from) : text.substring(from, nl);
            out.add(l.endsWith("\r") ? l.substring(0, l.length() - 1) : l);
            if (nl < 0) {
                break;
            }
            from = nl + 1;
            if (from == text.length()) {
                break; // a final line break ends the last line; it starts none
            }
        }
        return out;
    }

    /** A line or field as an error quotes it, shortened to 60 characters. */
    private static String shown(String s) {
        int n = s.codePointCount(0, s.length());
        String head = n > 60 ? s.substring(0, s.offsetByCodePoints(0, 60)) : s;
        StringBuilder sb = new StringBuilder("\"");
        head.codePoints().forEach(c -> {
            if (c == '"' || c == '\\') {
                sb.append('\\').append((char) c);
            } else if (c < 0x20 || c == 0x7f) {
                sb.append(String.format("\\u%04x", c));
            } else {
                sb.appendCodePoint(c);
            }
        });
        return sb.append('"').append(n > 60 ? "…" : "").toString();
    }

    /** Fields separated by one space each (an empty field where two meet, or at either end). */
    private static String[] fields(String line) {
        return line.split(" ", -1);
    }

    /** A field that must be a number: ASCII digits, at most {@code 2^63 − 1}. */
    private static long number(int line, String field, String what) throws ProfileException {
        boolean digits = !field.isEmpty();
        for (int i = 0; i < field.length() && digits; i++) {
            digits = field.charAt(i) >= '0' && field.charAt(i) <= '9';
        }
        if (!digits) {
            throw ProfileException.at(Code.BAD_NUMBER, line,
                    "expected " + what + " (a whole number), found " + shown(field));
        }
        try {
            return Long.parseLong(field); // at most 2^63 − 1, or an exception
        } catch (NumberFormatException e) {
            throw ProfileException.at(Code.BAD_NUMBER, line,
                    "expected " + what + " (a whole number at most " + Long.MAX_VALUE + "), found " + shown(field));
        }
    }

    /** Reads a profile's lines in order. */
    private static final class Parser {
        final List<String> lines;
        /** Index of the next line. */
        int at;

        Parser(List<String> lines) {
            this.lines = lines;
        }

        /** The next line (its number is {@link #at} after the call), or {@link Code#TRUNCATED} expecting {@code what}. */
        String next(String what) throws ProfileException {
            if (at >= lines.size()) {
                throw ProfileException.at(Code.TRUNCATED, at + 1,
                        "the profile ends here, cut short: expected " + what);
            }
            return lines.get(at++);
        }

        Profile profile() throws ProfileException {
            String header = "\"" + HEADER + "\"";
            String first = next("the header " + header);
            if (!first.startsWith(MAGIC + " ")) {
                throw ProfileException.at(Code.NOT_A_PROFILE, 1,
                        "not a keeptime profile: expected the header " + header + ", found " + shown(first));
            }
            String version = first.substring(MAGIC.length() + 1);
            if (!version.equals(Integer.toString(VERSION))) {
                throw ProfileException.at(Code.UNSUPPORTED_VERSION, 1, "a profile of version " + shown(version)
                        + "; this keeptime reads version " + VERSION + " (write it again with this keeptime)");
            }
            List<String> values = new ArrayList<>();
            for (String key : Fingerprint.KEYS) {
                String line = next("the machine's " + key + " line");
                if (!line.startsWith(key + " ") || line.length() == key.length() + 1) {
                    throw ProfileException.at(Code.BAD_LINE, at,
                            "expected the machine's \"" + key + " VALUE\", found " + shown(line));
                }
                values.add(line.substring(key.length() + 1));
            }
            List<Section> sections = new ArrayList<>();
            List<long[]> costs = new ArrayList<>();
            int lastCostBucket = -1;
            while (true) {
                String expected = costs.isEmpty()
                        ? "a \"bucket B N\" section, a \"cost WAIT_NS CPU_NS\" line or \"end\""
                        : "a \"cost WAIT_NS CPU_NS\" line or \"end\"";
                String line = next(expected);
                int n = at;
                String[] f = fields(line);
                if (f.length == 1 && f[0].equals("end")) {
                    break;
                } else if (f.length == 3 && f[0].equals("bucket") && costs.isEmpty()) {
                    sections.add(section(n, f[1], f[2], sections));
                } else if (f.length == 3 && f[0].equals("cost")) {
                    long w = number(n, f[1], "a wait in ns");
                    long c = number(n, f[2], "a CPU time in ns");
                    int b = MarginEstimator.bucketOf(w);
                    if (b <= lastCostBucket) {
                        throw ProfileException.at(Code.BAD_BUCKET, n, "a cost for bucket " + b + " after one for bucket "
                                + lastCostBucket + ": cost lines go in ascending bucket order, one per bucket");
                    }
                    lastCostBucket = b;
                    costs.add(new long[] {w, c});
                } else {
                    throw ProfileException.at(Code.BAD_LINE, n, "expected " + expected + ", found " + shown(line));
                }
            }
            if (at < lines.size()) {
                throw ProfileException.at(Code.AFTER_END, at + 1,
                        "nothing may follow \"end\", found " + shown(lines.get(at)));
            }
            return new Profile(Fingerprint.of(values), sections, costs);
        }

        /** A section whose {@code bucket B N} line is line {@code n}, and its samples. */
        Section section(int n, String bField, String countField, List<Section> before) throws ProfileException {
            long b = number(n, bField, "a bucket");
            long count = number(n, countField, "a sample count");
            if (b >= MarginEstimator.BUCKETS) {
                throw ProfileException.at(Code.BAD_BUCKET, n,
                        "bucket " + b + " does not exist: buckets are 0 to " + (MarginEstimator.BUCKETS - 1));
            }
            if (!before.isEmpty() && b <= before.get(before.size() - 1).bucket()) {
                throw ProfileException.at(Code.BAD_BUCKET, n, "bucket " + b + " after bucket "
                        + before.get(before.size() - 1).bucket() + ": sections go in ascending bucket order, each once");
            }
            if (count == 0 || count > MarginEstimator.WINDOW) {
                throw ProfileException.at(Code.BAD_BUCKET, n,
                        "bucket " + b + " with " + count + " samples: expected 1 to " + MarginEstimator.WINDOW);
            }
            long[] waits = new long[(int) count];
            long[] overs = new long[(int) count];
            for (int k = 0; k < count; k++) {
                String what = "sample " + (k + 1) + " of " + count + " of bucket " + b + ", \"WAIT_NS OVERSHOOT_NS\"";
                String line = next(what);
                int m = at;
                String[] f = fields(line);
                if (f.length != 2) {
                    throw ProfileException.at(Code.BAD_LINE, m, "expected " + what + ", found " + shown(line));
                }
                long w = number(m, f[0], "a wait in ns");
                long o = number(m, f[1], "an overshoot in ns");
                if (MarginEstimator.bucketOf(w) != b) {
                    throw ProfileException.at(Code.BAD_BUCKET, m, "a wait of " + w + " ns is in bucket "
                            + MarginEstimator.bucketOf(w) + ", not in this section's bucket " + b);
                }
                waits[k] = w;
                overs[k] = o;
            }
            return new Section((int) b, waits, overs);
        }
    }
}
