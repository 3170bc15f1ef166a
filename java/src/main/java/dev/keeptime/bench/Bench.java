package dev.keeptime.bench;

/** Placeholder. */
public final class Bench {
    private Bench() {}

    /**
     * Entry point.
     *
     * @param args arguments
     */
    public static void main(String[] args) {
        System.out.println(dev.keeptime.Clocks.inspect());
    }
}
