package dev.keeptime;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What one clock is and how it behaved when read back to back (an entry of
 * {@link ClockReport#clocks()}). A clock that could not be read has
 * {@code available} false, zero measurements and the reason in {@code error}.
 *
 * @param name upper-case short name: {@code MONOTONIC} (read with
 *     {@link System#nanoTime()}), {@code REALTIME} (read with
 *     {@link java.time.Instant#now()}), …
 * @param description what the clock counts and how Java reads it
 * @param resolutionNs what {@code clock_getres} says; empty when Java cannot ask
 * @param granularityNs smallest non-zero step between two successive reads,
 *     ns (an upper bound on the real step for a fine clock: the read cost
 *     bounds it); empty if it never stepped
 * @param repeatFraction share (0–1) of successive reads equal to the one before
 * @param samples successive reads examined
 * @param readCostNs median over batches of ns per read
 * @param monotonicViolations reads lower than the one before
 * @param available whether the clock could be read
 * @param error why not
 */
public record ClockInfo(
        String name,
        String description,
        OptionalLong resolutionNs,
        OptionalLong granularityNs,
        double repeatFraction,
        long samples,
        double readCostNs,
        long monotonicViolations,
        boolean available,
        Optional<String> error) {

    /**
     * Checks the components.
     *
     * @param name the clock's name
     * @param description what it counts
     * @param resolutionNs clock_getres
     * @param granularityNs smallest step seen
     * @param repeatFraction share of repeated reads
     * @param samples reads examined
     * @param readCostNs ns per read
     * @param monotonicViolations backward steps
     * @param available whether it could be read
     * @param error why not
     * @throws NullPointerException if a reference component is null
     */
    public ClockInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(resolutionNs, "resolutionNs");
        Objects.requireNonNull(granularityNs, "granularityNs");
        Objects.requireNonNull(error, "error");
    }
}
