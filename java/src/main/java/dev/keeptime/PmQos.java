package dev.keeptime;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The process-wide, reference-counted PM QoS CPU latency request behind the
 * idle-latency hint ({@code spec/idle-hint.md}, {@link IdleHint}).
 *
 * <p>Each sleeper or ticker built with the hint {@link #acquire acquires} one
 * holder with its value. The first live holder opens the device for writing;
 * the strictest (lowest) value among live holders is written, as one
 * native-order 4-byte {@code s32}, whenever it changes; when the last holder
 * is released the device is closed, which ends the kernel's request. Nothing
 * else touches the device. A refusal (no device, no permission, a failed
 * write) is logged once per registry at {@code WARNING}; the process uses one
 * registry, {@link #GLOBAL}. Tests make their own with a fake {@link Device}.
 */
final class PmQos {
    /** The PM QoS CPU latency device. */
    static final String DEVICE = "/dev/cpu_dma_latency";
    /** The refusal reason when opening or writing the device was not permitted. */
    static final String PERMISSION_DENIED = "permission denied (writing it needs root or write access to the device)";
    /** The refusal reason when the device does not exist. */
    static final String NO_SUCH_DEVICE = "no such device";

    /** The process's registry, on the real device, warning through {@code System.getLogger("dev.keeptime")}. */
    static final PmQos GLOBAL = new PmQos(new DeviceFile(Path.of(DEVICE)), System.getLogger("dev.keeptime"));

    /** Opens requests: the real device file, or a fake in tests. */
    interface Device {
        /**
         * The device's path, for messages.
         *
         * @return the path
         */
        String path();

        /**
         * Opens one request (the kernel adds it at "unconstrained").
         *
         * @return the open request
         * @throws IOException if the device cannot be opened for writing
         */
        Request open() throws IOException;
    }

    /** One open request: closing it ends the request. */
    interface Request extends Closeable {
        /**
         * Makes {@code valueUs} the request's value.
         *
         * @param valueUs the latency bound, µs, {@code 0 ≤ valueUs}
         * @throws IOException if the write fails
         */
        void write(int valueUs) throws IOException;
    }

    /** The device file at a path, opened with {@link FileChannel} for writing. */
    static final class DeviceFile implements Device {
        private final Path path;

        DeviceFile(Path path) {
            this.path = path;
        }

        @Override
        public String path() {
            return path.toString();
        }

        @Override
        public Request open() throws IOException {
            FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE);
            return new Request() {
                @Override
                public void write(int valueUs) throws IOException {
                    // One 4-byte write: the device reads a write of exactly
                    // sizeof(s32) as the binary value (any other length as hex text).
                    ByteBuffer b = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.nativeOrder());
                    b.putInt(valueUs).flip();
                    int n = channel.write(b);
                    if (n != Integer.BYTES) {
                        throw new IOException("short write: " + n + " of 4 bytes");
                    }
                }

                @Override
                public void close() throws IOException {
                    channel.close();
                }
            };
        }

        @Override
        public String toString() {
            return path.toString();
        }
    }

    /** Why the request could not be held: the device's path and the reason, in the spec's words. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Device device;
    private final System.Logger logger;
    private final AtomicBoolean warned = new AtomicBoolean();
    /** Live holders: id → value (µs). */
    private final TreeMap<Long, Integer> live = new TreeMap<>();
    private Request open;
    private long nextId;
    /** The value written to the open request, or -1 when none is open. */
    private int written = -1;

    PmQos(Device device, System.Logger logger) {
        this.device = device;
        this.logger = logger;
    }

    /**
     * Adds a holder of {@code valueUs}: opens the device if no holder is
     * live, writes the value if it is stricter than the one in force.
     *
     * @param valueUs the bound, µs, already validated ({@code ≥ 0})
     * @return the new holder's id, for {@link #release(long)}
     * @throws Refused if the device cannot be opened or written; nothing is held then
     */
    synchronized long acquire(int valueUs) throws Refused {
        boolean openedNow = false;
        if (open == null) {
            try {
                open = device.open();
            } catch (IOException | RuntimeException e) {
                throw refused(e);
            }
            openedNow = true;
        }
        if (written < 0 || valueUs < written) {
            try {
                open.write(valueUs);
            } catch (IOException | RuntimeException e) {
                if (openedNow) {
                    closeQuietly();
                }
                throw refused(e);
            }
            written = valueUs;
        }
        long id = nextId++;
        live.put(id, valueUs);
        return id;
    }

    /**
     * Removes a holder: rewrites the strictest remaining value, or closes the
     * device when none is left. Unknown ids are ignored.
     *
     * @param id a holder id from {@link #acquire(int)}
     */
    synchronized void release(long id) {
        if (live.remove(id) == null) {
            return;
        }
        if (live.isEmpty()) {
            closeQuietly();
            return;
        }
        int strictest = Integer.MAX_VALUE;
        for (int v : live.values()) {
            strictest = Math.min(strictest, v);
        }
        if (strictest != written) {
            try {
                open.write(strictest);
                written = strictest;
            } catch (IOException | RuntimeException e) {
                // A failed relaxation leaves the stricter value in force: still safe.
            }
        }
    }

    /**
     * The value this registry has written and holds, if any holder is live.
     *
     * @return the value in force, µs, or empty
     */
    synchronized OptionalInt inForceUs() {
        return written < 0 ? OptionalInt.empty() : OptionalInt.of(written);
    }

    /**
     * Live holders.
     *
     * @return their count
     */
    synchronized int holders() {
        return live.size();
    }

    /** The device, for messages. */
    String devicePath() {
        return device.path();
    }

    private void closeQuietly() {
        Request r = open;
        open = null;
        written = -1;
        try {
            r.close();
        } catch (IOException | RuntimeException e) {
            // Closing ends the request whether or not close reports an error.
        }
    }

    private Refused refused(Exception e) {
        String message = device.path() + ": " + reason(e);
        if (warned.compareAndSet(false, true)) {
            logger.log(System.Logger.Level.WARNING, "keeptime: idle-latency hint refused: " + message
                    + "; sleepers and tickers work without it (said once per process)");
        }
        return new Refused(message, e);
    }

    /** The spec's reasons: "no such device", "permission denied (…)", or the OS's message. */
    static String reason(Exception e) {
        if (e instanceof NoSuchFileException) {
            return NO_SUCH_DEVICE;
        }
        if (e instanceof AccessDeniedException) {
            return PERMISSION_DENIED;
        }
        String m = e instanceof FileSystemException && ((FileSystemException) e).getReason() != null
                ? ((FileSystemException) e).getReason() : e.getMessage();
        if (m == null || m.isBlank()) {
            return e.getClass().getSimpleName();
        }
        String lower = m.toLowerCase(Locale.ROOT);
        if (lower.contains("no such device") || lower.contains("no such file")) {
            return NO_SUCH_DEVICE;
        }
        if (lower.contains("permission denied") || lower.contains("operation not permitted")) {
            return PERMISSION_DENIED;
        }
        return m;
    }

    /** One holder's release, run once: by close() or, as a backstop, by a {@link java.lang.ref.Cleaner}. */
    static final class Holder implements Runnable {
        private final PmQos registry;
        private final long id;
        private final AtomicBoolean released = new AtomicBoolean();

        Holder(PmQos registry, long id) {
            this.registry = registry;
            this.id = id;
        }

        boolean released() {
            return released.get();
        }

        @Override
        public void run() {
            if (released.compareAndSet(false, true)) {
                registry.release(id);
            }
        }
    }
}
