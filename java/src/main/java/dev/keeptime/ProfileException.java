package dev.keeptime;

import java.io.IOException;
import java.util.Optional;

/**
 * Why a host {@link Profile} was refused: its {@link #code() code}, the
 * 1-based {@link #line() line}, the {@link #file() file} when it was read from
 * one and, for {@link Code#MACHINE_MISMATCH}, the fingerprint {@link #key()}
 * and both values. The message is one line naming the file, the line and what
 * was expected there, e.g. {@code host.profile: line 7: made on another
 * machine: clocksource is "hpet" in the profile, "tsc" here (load it anyway
 * with Profile.Option.IGNORE_MACHINE)}.
 *
 * <p>An {@link IOException}, because a bad or foreign profile is a property of
 * a file the caller asked to read, like a {@link java.util.zip.ZipException}
 * or a {@link java.nio.charset.MalformedInputException}: it is checked, the
 * caller decides (usually to start fresh), and {@link Profile#load(java.nio.file.Path,
 * Profile.Option...)} throws it alongside the file's own I/O errors.
 */
public final class ProfileException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The codes of {@code spec/estimator.md} (<em>Errors</em>). */
    public enum Code {
        /** The file is not UTF-8. */
        NOT_TEXT("not_text"),
        /** Line 1 does not start with {@code keeptime-profile }. */
        NOT_A_PROFILE("not_a_profile"),
        /** A profile of another version than {@link Profile#VERSION}. */
        UNSUPPORTED_VERSION("unsupported_version"),
        /** A line of the wrong shape. */
        BAD_LINE("bad_line"),
        /** A field that must be a number is not one, or exceeds {@code 2^63 − 1}. */
        BAD_NUMBER("bad_number"),
        /** A bucket out of range or order, a sample count out of range, or a wait outside its section's bucket. */
        BAD_BUCKET("bad_bucket"),
        /** The text ends before {@code end}, or inside a line. */
        TRUNCATED("truncated"),
        /** Something follows {@code end}. */
        AFTER_END("after_end"),
        /** The profile was made on another machine. */
        MACHINE_MISMATCH("machine_mismatch");

        private final String specName;

        Code(String specName) {
            this.specName = specName;
        }

        /**
         * The spec's name of the code ({@code "bad_line"}, …).
         *
         * @return the code as the spec and its vectors write it
         */
        public String specName() {
            return specName;
        }
    }

    private final Code code;
    private final int line;
    private final String file;
    private final String detail;
    private final String key;
    private final String inProfile;
    private final String here;

    private ProfileException(Code code, int line, String file, String detail, String key, String inProfile,
            String here) {
        super((file != null ? file + ": " : "") + "line " + line + ": " + detail);
        this.code = code;
        this.line = line;
        this.file = file;
        this.detail = detail;
        this.key = key;
        this.inProfile = inProfile;
        this.here = here;
    }

    static ProfileException at(Code code, int line, String detail) {
        return new ProfileException(code, line, null, detail, null, null, null);
    }

    static ProfileException mismatch(int line, String key, String inProfile, String here) {
        return new ProfileException(Code.MACHINE_MISMATCH, line, null, "made on another machine: " + key + " is \""
                + inProfile + "\" in the profile, \"" + here
                + "\" here (load it anyway with Profile.Option.IGNORE_MACHINE)", key, inProfile, here);
    }

    /** This error, as read from {@code file}. */
    ProfileException inFile(String file) {
        return new ProfileException(code, line, file, detail, key, inProfile, here);
    }

    /** This error's detail, for a wrapping error. */
    String detail() {
        return detail;
    }

    /**
     * What went wrong.
     *
     * @return the code
     */
    public Code code() {
        return code;
    }

    /**
     * The 1-based line the error is on.
     *
     * @return the line
     */
    public int line() {
        return line;
    }

    /**
     * The profile's path, when it was read from a file.
     *
     * @return the file, or empty for a parsed text
     */
    public Optional<String> file() {
        return Optional.ofNullable(file);
    }

    /**
     * For {@link Code#MACHINE_MISMATCH}: the first fingerprint key (in file
     * order) whose value differs.
     *
     * @return the key, or empty for another code
     */
    public Optional<String> key() {
        return Optional.ofNullable(key);
    }

    /**
     * For {@link Code#MACHINE_MISMATCH}: the profile's value of {@link #key()}.
     *
     * @return the value in the profile, or empty for another code
     */
    public Optional<String> profileValue() {
        return Optional.ofNullable(inProfile);
    }

    /**
     * For {@link Code#MACHINE_MISMATCH}: this machine's value of {@link #key()}.
     *
     * @return the value here, or empty for another code
     */
    public Optional<String> machineValue() {
        return Optional.ofNullable(here);
    }
}
