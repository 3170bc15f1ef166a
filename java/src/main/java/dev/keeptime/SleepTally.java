package dev.keeptime;

/**
 * A sleeper's counters ({@code spec/sleep.md}, <em>Stats</em>): what its
 * sleeps have cost since it was built or its stats were last reset, counted
 * by {@link SleepEngine} as a sleep runs; {@link #snapshot()} is what
 * {@link Sleeper#stats()} returns. Unsigned 64-bit values.
 */
final class SleepTally {
    long sleeps;
    long late;
    long osWaits;
    long spinNs;
    long cpuEstimateNs;
    long unprovenSleeps;

    /** An immutable copy of the counters. */
    SleeperStats snapshot() {
        return new SleeperStats(sleeps, late, osWaits, spinNs, cpuEstimateNs, unprovenSleeps);
    }

    /** Starts the counters afresh. */
    void reset() {
        sleeps = 0;
        late = 0;
        osWaits = 0;
        spinNs = 0;
        cpuEstimateNs = 0;
        unprovenSleeps = 0;
    }

    /** Counts one OS wait at its learned cost {@code costNs}. */
    void countOsWait(long costNs) {
        osWaits++;
        cpuEstimateNs = U64.add(cpuEstimateNs, costNs);
    }

    /** Counts a spin of {@code ns}. */
    void addSpin(long ns) {
        spinNs = U64.add(spinNs, ns);
        cpuEstimateNs = U64.add(cpuEstimateNs, ns);
    }
}
