package dev.keeptime;

/**
 * The pure state machine behind {@link Ticker} (spec/ticker.md): deadlines,
 * missed-tick policies and stats, in unsigned platform nanoseconds, with no
 * clock of its own. {@code spec/vectors/ticker.json} drives it directly.
 */
final class Schedule {
    private long periodNs;
    private final MissedTicks policy;
    private long baseNs;
    private long baseIndex;
    private long nextIndex = 1;
    private long ticks;
    private long missed;
    private long skipped;
    private long worstLatenessNs;

    /** Slot k due at {@code startNs + k·periodNs}; the period must be non-zero (unsigned). */
    Schedule(long startNs, long periodNs, MissedTicks policy) {
        if (periodNs == 0) {
            throw new IllegalArgumentException("period must be positive");
        }
        this.periodNs = periodNs;
        this.policy = policy;
        this.baseNs = startNs;
    }

    private long deadline(long index) {
        return U64.add(U64.mul(index - baseIndex, periodNs), baseNs);
    }

    long nextDeadlineNs() {
        return deadline(nextIndex);
    }

    long nextIndex() {
        return nextIndex;
    }

    long periodNs() {
        return periodNs;
    }

    MissedTicks policy() {
        return policy;
    }

    TickerStats stats() {
        return new TickerStats(ticks, missed, skipped, worstLatenessNs);
    }

    /**
     * The tick asked for at {@code nowNs} when its deadline has come (delivered
     * at once, in platform ns), or null: wait until {@link #nextDeadlineNs()},
     * then call {@link #woke}.
     */
    Tick poll(long nowNs) {
        long due = nextDeadlineNs();
        if (U64.lt(nowNs, due)) {
            return null;
        }
        long index = nextIndex;
        long skip = 0;
        switch (policy) {
            case SKIP:
                skip = Long.divideUnsigned(nowNs - due, periodNs);
                index = U64.add(index, skip);
                break;
            case DELAY:
                baseNs = nowNs;
                baseIndex = index;
                break;
            case BURST:
            default:
                break;
        }
        long scheduled = policy == MissedTicks.DELAY ? due : deadline(index);
        nextIndex = U64.add(index, 1);
        if (U64.lt(due, nowNs)) {
            missed = U64.add(missed, U64.add(1, skip));
            skipped = U64.add(skipped, skip);
        }
        return record(index, scheduled, nowNs, skip);
    }

    /** The wait asked for by {@link #poll} ended at {@code wokeNs}. */
    Tick woke(long wokeNs) {
        long index = nextIndex;
        long scheduled = nextDeadlineNs();
        nextIndex = U64.add(index, 1);
        return record(index, scheduled, wokeNs, 0);
    }

    private Tick record(long index, long scheduledNs, long atNs, long skip) {
        long lateness = U64.sub(atNs, scheduledNs);
        ticks = U64.add(ticks, 1);
        worstLatenessNs = U64.max(worstLatenessNs, lateness);
        return new Tick(index, scheduledNs, lateness, skip);
    }

    /** The next slot is due one period after {@code nowNs}; slot numbers continue. */
    void reset(long nowNs) {
        baseNs = nowNs;
        baseIndex = nextIndex - 1;
    }

    /**
     * The next slot is due one new period after the last delivered slot's
     * deadline (or the start). Returns false, changing nothing, for 0.
     */
    boolean setPeriod(long newPeriodNs) {
        if (newPeriodNs == 0) {
            return false;
        }
        long last = nextIndex - 1;
        baseNs = deadline(last);
        baseIndex = last;
        periodNs = newPeriodNs;
        return true;
    }
}
