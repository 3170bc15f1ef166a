package dev.keeptime;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Whether a sleeper's or ticker's {@link IdleHint idle-latency hint} is held
 * ({@link Sleeper#idleHintStatus()}, {@link Ticker#idleHintStatus()}).
 *
 * @param state what became of the request
 * @param requestedUs the value asked for, µs; empty when not requested
 * @param inForceUs when {@link State#HELD}: the value this process has in
 *     force, the strictest of its live holders (at most {@code requestedUs});
 *     empty otherwise
 * @param refusal when {@link State#REFUSED}: the device and the reason, e.g.
 *     {@code "/dev/cpu_dma_latency: permission denied (writing it needs root
 *     or write access to the device)"}; empty otherwise
 */
public record IdleHintStatus(State state, OptionalInt requestedUs, OptionalInt inForceUs, Optional<String> refusal) {
    /** What became of a sleeper's or ticker's request. */
    public enum State {
        /** Built without the hint: the device was never touched for it. */
        NOT_REQUESTED,
        /** Held: the request (or a stricter one of this process) is in force. */
        HELD,
        /** The device could not be opened or written; the sleeper works without it. */
        REFUSED,
        /** Was held, and released by {@code close()}. */
        RELEASED
    }

    /** Not requested. */
    static final IdleHintStatus NOT_REQUESTED =
            new IdleHintStatus(State.NOT_REQUESTED, OptionalInt.empty(), OptionalInt.empty(), Optional.empty());

    /**
     * Checks the components agree with the state.
     *
     * @param state what became of the request
     * @param requestedUs the value asked for
     * @param inForceUs the value in force when held
     * @param refusal the reason when refused
     * @throws NullPointerException if a component is null
     * @throws IllegalArgumentException if a component does not fit the state
     */
    public IdleHintStatus {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(requestedUs, "requestedUs");
        Objects.requireNonNull(inForceUs, "inForceUs");
        Objects.requireNonNull(refusal, "refusal");
        if ((state == State.NOT_REQUESTED) == requestedUs.isPresent()
                || (state == State.HELD) != inForceUs.isPresent()
                || (state == State.REFUSED) != refusal.isPresent()) {
            throw new IllegalArgumentException("inconsistent idle hint status: " + state + " " + requestedUs
                    + " " + inForceUs + " " + refusal);
        }
    }

    /**
     * Whether the hint is held now.
     *
     * @return {@code state() == HELD}
     */
    public boolean held() {
        return state == State.HELD;
    }

    /**
     * One line: {@code "held: 0 µs in force (asked 0 µs)"}, {@code "refused: <device>: <reason>"},
     * {@code "released (asked 0 µs)"} or {@code "not requested"}.
     *
     * @return the status in words
     */
    @Override
    public String toString() {
        switch (state) {
            case HELD:
                return "held: " + inForceUs.getAsInt() + " µs in force (asked " + requestedUs.getAsInt() + " µs)";
            case REFUSED:
                return "refused: " + refusal.get();
            case RELEASED:
                return "released (asked " + requestedUs.getAsInt() + " µs)";
            default:
                return "not requested";
        }
    }
}
