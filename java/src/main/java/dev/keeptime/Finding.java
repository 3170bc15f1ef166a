package dev.keeptime;

import java.util.Objects;

/**
 * One observation about the machine in a {@link ClockReport}, in plain words,
 * backed by something the inspection read or measured ({@link ClockReport#findings()}).
 *
 * @param severity how much it matters
 * @param code a stable identifier such as {@code "timer_slack_default"}
 *     (the list is in the clock report's spec)
 * @param message one or two sentences for a person
 */
public record Finding(Severity severity, String code, String message) {
    /** How much a finding matters; warnings come first in a report. */
    public enum Severity {
        /** Changes how precisely anything here can wait or measure. */
        WARNING("warning"),
        /** Worth knowing when reading measurements. */
        INFO("info");

        private final String jsonName;

        Severity(String jsonName) {
            this.jsonName = jsonName;
        }

        /**
         * The name in the report's JSON form.
         *
         * @return {@code "warning"} or {@code "info"}
         */
        public String jsonName() {
            return jsonName;
        }

        /**
         * The severity with this JSON name.
         *
         * @param name {@code "warning"} or {@code "info"}
         * @return the severity
         * @throws IllegalArgumentException for any other name
         */
        public static Severity fromJsonName(String name) {
            for (Severity s : values()) {
                if (s.jsonName.equals(name)) {
                    return s;
                }
            }
            throw new IllegalArgumentException("not a severity: " + name + " (warning or info)");
        }
    }

    /**
     * Checks the components.
     *
     * @param severity how much it matters
     * @param code the stable identifier
     * @param message the sentence for a person
     * @throws NullPointerException if a component is null
     * @throws IllegalArgumentException if the code or message is empty
     */
    public Finding {
        Objects.requireNonNull(severity, "severity");
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(message, "message");
        if (code.isEmpty() || message.isEmpty()) {
            throw new IllegalArgumentException("a finding needs a code and a message");
        }
    }

    /** {@code "warning: message"}. */
    @Override
    public String toString() {
        return severity.jsonName() + ": " + message;
    }
}
