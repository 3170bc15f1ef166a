package dev.keeptime;

/**
 * One tick of a {@link Ticker}.
 *
 * @param index slot number {@code k} (the first tick is 1), due at
 *     {@code start + k·period} (for {@link MissedTicks#DELAY}, counted from the
 *     latest restart)
 * @param scheduledNanos when the slot was due, a {@link System#nanoTime()} value
 * @param latenessNanos how long after {@code scheduledNanos} the tick was
 *     delivered (0 if earlier, which only {@link Mode#EFFICIENT} can do)
 * @param skipped slots dropped just before this one ({@link MissedTicks#SKIP} only)
 */
public record Tick(long index, long scheduledNanos, long latenessNanos, long skipped) {}
