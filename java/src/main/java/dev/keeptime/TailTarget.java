package dev.keeptime;

/**
 * The share of {@link Mode#EXACT} sleeps a {@link Sleeper} lets end late
 * because the OS woke the thread after the deadline. For each sleep keeptime
 * picks the plan with the least expected CPU whose predicted late share meets
 * the target, from the wake-ups and OS-wait costs it has learned on this
 * machine ({@code spec/sleep.md}). A stricter target spins longer.
 *
 * <p>Held in parts per million ({@code 1 … 999 999}). A share converts as
 * {@code round(share · 10^6)}; NaN, shares {@code ≤ 0} or {@code ≥ 1}, and
 * shares below {@code 10^-6} (the resolution) are rejected with
 * {@link IllegalArgumentException}, never clamped.
 *
 * <pre>{@code
 * TailTarget t = TailTarget.of(0.002);          // 0.2 %
 * assert t.ppm() == 2_000;
 * Sleeper s = Sleeper.builder().tailTarget(TailTarget.STRICT).build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class TailTarget {
    /** 5 % of sleeps may end late: the cheapest preset. */
    public static final TailTarget RELAXED = new TailTarget(50_000);
    /** 1 % of sleeps may end late (the default): a spin-level p99. */
    public static final TailTarget BALANCED = new TailTarget(10_000);
    /** 0.1 % of sleeps may end late: a spin-level p99.9, at a higher CPU price. */
    public static final TailTarget STRICT = new TailTarget(1_000);

    private final int ppm;

    private TailTarget(int ppm) {
        this.ppm = ppm;
    }

    /**
     * A target from a share in {@code (0, 1)}, e.g. {@code 0.01} for 1 %.
     *
     * @param share the share of sleeps allowed to end late
     * @return the target, {@code round(share · 10^6)} ppm
     * @throws IllegalArgumentException if {@code share} is NaN, {@code ≤ 0},
     *     {@code ≥ 1}, below {@code 10^-6}, or rounds to {@code 10^6} ppm
     */
    public static TailTarget of(double share) {
        if (!(share > 0.0 && share < 1.0) || share < 1e-6) {
            throw new IllegalArgumentException("tail target must be a share in (0, 1) of at least 1e-6"
                    + " (e.g. 0.01 for 1 %), got " + share);
        }
        long ppm = Math.round(share * 1e6);
        if (ppm < 1 || ppm > 999_999) {
            throw new IllegalArgumentException("tail target must be a share in (0, 1) of at least 1e-6"
                    + " that rounds to at most 999 999 ppm, got " + share);
        }
        return ofPpm((int) ppm);
    }

    /**
     * A target in parts per million.
     *
     * @param ppm {@code 1 … 999 999}
     * @return the target
     * @throws IllegalArgumentException if {@code ppm} is outside {@code 1 … 999 999}
     */
    public static TailTarget ofPpm(int ppm) {
        if (ppm < 1 || ppm > 999_999) {
            throw new IllegalArgumentException("tail target must be 1 to 999999 ppm, got " + ppm);
        }
        switch (ppm) {
            case 50_000:
                return RELAXED;
            case 10_000:
                return BALANCED;
            case 1_000:
                return STRICT;
            default:
                return new TailTarget(ppm);
        }
    }

    /**
     * A preset by name ({@code relaxed}, {@code balanced}, {@code strict},
     * ignoring case), a share ({@code 0.01}) or a percentage ({@code 1%}).
     *
     * @param text the target
     * @return the target
     * @throws IllegalArgumentException if {@code text} is none of these, or
     *     the share is rejected by {@link #of(double)}
     * @throws NullPointerException if {@code text} is null
     */
    public static TailTarget parse(String text) {
        String t = text.trim();
        switch (t.toLowerCase(java.util.Locale.ROOT)) {
            case "relaxed":
                return RELAXED;
            case "balanced":
            case "default":
                return BALANCED;
            case "strict":
                return STRICT;
            default:
                break;
        }
        double share;
        try {
            share = t.endsWith("%")
                    ? Double.parseDouble(t.substring(0, t.length() - 1).trim()) / 100.0
                    : Double.parseDouble(t);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("tail target must be relaxed, balanced, strict, a share"
                    + " in (0, 1) or a percentage, got \"" + text + "\"", e);
        }
        return of(share);
    }

    /**
     * The share, e.g. {@code 0.01}.
     *
     * @return {@code ppm() / 10^6}
     */
    public double share() {
        return ppm / 1e6;
    }

    /**
     * The share in parts per million.
     *
     * @return {@code 1 … 999 999}
     */
    public int ppm() {
        return ppm;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TailTarget && ((TailTarget) o).ppm == ppm;
    }

    @Override
    public int hashCode() {
        return ppm;
    }

    /** The target as a percentage, e.g. {@code 1 %} or {@code 0.1 %}. */
    @Override
    public String toString() {
        return java.math.BigDecimal.valueOf(ppm, 4).stripTrailingZeros().toPlainString() + " %";
    }
}
