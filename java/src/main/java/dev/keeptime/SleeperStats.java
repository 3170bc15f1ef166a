package dev.keeptime;

/**
 * What a {@link Sleeper} has spent so far ({@link Sleeper#stats()}): what
 * precision costs on this machine. All counts are unsigned 64-bit values
 * (they saturate, and cannot reach {@code 2^63} in practice).
 *
 * @param sleeps sleeps that had to wait (deadline not yet passed when called)
 * @param late sleeps that returned after their deadline from an OS wait (a
 *     spin-finished sleep is never counted here)
 * @param osWaits OS waits issued (a wait resumed after an interruption counts once)
 * @param spinNs time spent spinning, ns
 * @param cpuEstimateNs estimated thread CPU, ns: the learned cost of each OS
 *     wait when it was counted, plus {@code spinNs}
 * @param unprovenSleeps sleeps planned on margins not yet established at
 *     their share (fewer samples than the tail target needs, even pooled:
 *     99 at 1 %, 999 at 0.1 %): the target is not proven for them, only the
 *     most cautious margin (the latest wake-up seen of that length or
 *     longer); counted once per sleep. A young sleeper at a strict target
 *     has many; the late share of the other sleeps is what the target governs
 */
public record SleeperStats(long sleeps, long late, long osWaits, long spinNs, long cpuEstimateNs,
        long unprovenSleeps) {
    /** No sleeps yet. */
    public static final SleeperStats ZERO = new SleeperStats(0, 0, 0, 0, 0, 0);

    /**
     * {@code late / sleeps} (0 before the first sleep).
     *
     * @return the share of sleeps that ended late
     */
    public double lateShare() {
        return sleeps == 0 ? 0.0 : (double) late / sleeps;
    }

    /**
     * OS waits per sleep (0 before the first sleep).
     *
     * @return {@code osWaits / sleeps}
     */
    public double osWaitsPerSleep() {
        return sleeps == 0 ? 0.0 : (double) osWaits / sleeps;
    }
}
