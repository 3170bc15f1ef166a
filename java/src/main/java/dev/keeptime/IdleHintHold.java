package dev.keeptime;

import java.lang.ref.Cleaner;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One sleeper's or ticker's part in the idle-latency hint: the holder it
 * acquired (released by {@link #close()} or, as a backstop, when its owner is
 * collected), or why it was refused.
 */
final class IdleHintHold {
    private static final class Lazy {
        static final Cleaner CLEANER = Cleaner.create();
    }

    static final IdleHintHold NONE = new IdleHintHold(-1, null, null, null, null);

    private final int requestedUs;
    private final PmQos registry;
    private final PmQos.Holder holder;
    private final Cleaner.Cleanable cleanable;
    private final String refusal;

    private IdleHintHold(int requestedUs, PmQos registry, PmQos.Holder holder, Cleaner.Cleanable cleanable,
            String refusal) {
        this.requestedUs = requestedUs;
        this.registry = registry;
        this.holder = holder;
        this.cleanable = cleanable;
        this.refusal = refusal;
    }

    /**
     * Asks {@code registry} (null: the process's, {@link PmQos#GLOBAL}) for
     * {@code valueUs} on behalf of {@code owner};
     * a refusal is recorded (and warned once by the registry), never thrown.
     * The release action does not reference {@code owner}, so the owner
     * stays collectable.
     */
    static IdleHintHold acquire(PmQos registry, int valueUs, Object owner) {
        if (registry == null) {
            registry = PmQos.GLOBAL;
        }
        try {
            PmQos.Holder h = new PmQos.Holder(registry, registry.acquire(valueUs));
            return new IdleHintHold(valueUs, registry, h, Lazy.CLEANER.register(owner, h), null);
        } catch (PmQos.Refused e) {
            return new IdleHintHold(valueUs, registry, null, null, e.getMessage());
        }
    }

    IdleHintStatus status() {
        if (requestedUs < 0) {
            return IdleHintStatus.NOT_REQUESTED;
        }
        OptionalInt asked = OptionalInt.of(requestedUs);
        if (refusal != null) {
            return new IdleHintStatus(IdleHintStatus.State.REFUSED, asked, OptionalInt.empty(), Optional.of(refusal));
        }
        if (holder.released()) {
            return new IdleHintStatus(IdleHintStatus.State.RELEASED, asked, OptionalInt.empty(), Optional.empty());
        }
        OptionalInt inForce = registry.inForceUs();
        // Between our release check and this read another thread cannot
        // release ours (only close() does), so a live holder means a value.
        return new IdleHintStatus(IdleHintStatus.State.HELD, asked,
                OptionalInt.of(inForce.orElse(requestedUs)), Optional.empty());
    }

    /** Releases the holder once; later calls do nothing. */
    void close() {
        if (cleanable != null) {
            cleanable.clean();
        }
    }
}
