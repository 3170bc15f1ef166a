package dev.keeptime;

import java.util.Locale;
import java.util.Objects;

/**
 * What a {@link Ticker} does when {@link Ticker#await()} is called after the
 * next deadline already passed (the loop body overran).
 *
 * <p>The timeline of each policy on one overrun is drawn in the ticker spec
 * ({@code spec/ticker.md}, "Missed ticks at a glance").
 *
 * <p>Precisely, with slot {@code k} due at {@code d_k} and {@code await()}
 * called at {@code now > d_k}: see each constant. A call at exactly
 * {@code now == d_k} delivers slot {@code k} at once and does not count as missed.
 */
public enum MissedTicks {
    /**
     * Delivers slot {@code k} at once and keeps every later deadline: the
     * ticker catches up by returning immediately until it is back on time.
     * Right when every slot must be processed (counting, sampling).
     */
    BURST,
    /**
     * Delivers slot {@code k} at once and restarts the schedule from now:
     * {@code d_{k+1} = now + period}. The rate is kept, the phase is not.
     */
    DELAY,
    /**
     * The default: delivers at once the latest slot {@code j} with
     * {@code d_j <= now}, reports {@code skipped = j - k} slots that were never
     * delivered, and continues with {@code d_{j+1}}: the phase of the schedule
     * is kept and there is never more than one late tick in a row. A control
     * or audio loop that fell behind wants the <em>current</em> slot, not a
     * burst of stale ones, and must not drift.
     */
    SKIP;

    /**
     * The spec's name of this policy ({@code burst}, {@code delay}, {@code skip}).
     *
     * @return the lower-case name
     */
    public String specName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The policy with the given spec name, ignoring case.
     *
     * @param name {@code burst}, {@code delay} or {@code skip}
     * @return the policy
     * @throws IllegalArgumentException for another name
     * @throws NullPointerException if {@code name} is null
     */
    public static MissedTicks fromSpecName(String name) {
        Objects.requireNonNull(name, "name");
        for (MissedTicks m : values()) {
            if (m.specName().equalsIgnoreCase(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown missed-tick policy: " + name + " (expected burst, delay or skip)");
    }
}
