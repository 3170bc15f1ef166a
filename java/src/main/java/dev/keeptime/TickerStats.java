package dev.keeptime;

/**
 * Counters of a {@link Ticker} since it was created.
 *
 * @param ticks ticks delivered
 * @param missed deadlines that had passed when {@link Ticker#await()} was
 *     called: late deliveries plus skipped slots
 * @param skipped slots dropped by {@link MissedTicks#SKIP}
 * @param worstLatenessNanos largest lateness of any delivered tick, ns
 */
public record TickerStats(long ticks, long missed, long skipped, long worstLatenessNanos) {}
