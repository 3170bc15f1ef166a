package dev.keeptime;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Precise waiting: the accuracy of a spin at the CPU cost of a sleep.
 *
 * <p>On Linux a 100 µs {@code LockSupport.parkNanos} or {@code Thread.sleep}
 * takes ~155 µs (50 µs of timer slack plus the wake-up), and on JDK 17
 * {@code Thread.sleep(0, 100_000)} even rounds up to a whole millisecond; a
 * busy loop is exact but burns a core. keeptime parks until a <em>learned</em>
 * margin before the deadline, then spins the last few microseconds; it picks
 * the cheapest plan that keeps at most 1 % of sleeps late (the
 * {@link TailTarget}, set per {@link Sleeper}):
 *
 * <pre>{@code
 * KeepTime.sleep(Duration.ofNanos(100_000));            // 100 µs, to a fraction of a µs
 * long deadline = System.nanoTime() + 2_000_000;
 * KeepTime.sleepUntil(deadline);                        // never before the deadline
 *
 * Ticker ticker = Ticker.every(Duration.ofMillis(1));   // 1 kHz, no drift
 * Tick tick = ticker.await();
 * }</pre>
 *
 * <p>The static methods use one {@link Sleeper} per thread ({@link Mode#EXACT},
 * kept in a {@link ThreadLocal}), so each thread learns its own margins; create
 * a {@link Sleeper} for another mode. They start fresh, or from a host
 * {@link Profile} set once at start-up with {@link #setDefaultProfile(Profile)}.
 *
 * <p>A program that sets none is started from the profile its environment
 * names: the system property {@code keeptime.profile} or, when that is unset
 * or empty, the environment variable {@code KEEPTIME_PROFILE}, when set and
 * not empty, is the path of the default profile. So a host's profile
 * ({@code keeptime trace --profile host.profile}, then
 * {@code java -Dkeeptime.profile=host.profile -jar app.jar}) reaches every
 * program on it without a line of code. It is read once per process, when a
 * default profile is first needed (the first sleeper behind the static
 * methods, or the first sleeper of a {@link Ticker} made without one), and
 * loaded as {@link Profile#load(Path, Profile.Option...)} loads it, the
 * machine checked; a {@link #setDefaultProfile(Profile)} call before then
 * (even with {@code null}) wins and it is never read. A file that cannot be
 * loaded fails nothing: one line goes to {@link System#err},
 * {@code keeptime: KEEPTIME_PROFILE=PATH: MESSAGE; keeptime's own sleepers start fresh}
 * ({@code keeptime.profile=PATH} when the property named it; {@code MESSAGE}
 * the load exception's message), and the default sleepers start fresh.
 *
 * <p>Guarantees: never returns before the
 * deadline on {@link System#nanoTime()}; a deadline in the past returns at
 * once; interrupts as in {@link Thread#sleep(long)} (the status is cleared
 * and {@link InterruptedException} thrown); on Linux with JDK 22+ the waiting
 * thread's timer slack is set to 1 ns ({@link TimerSlack}).
 */
public final class KeepTime {
    /**
     * The thread's sleeper, always on the real clock ({@link SystemPlatform}):
     * the static methods take it, let it do everything of a sleep but the
     * last few µs ({@link Sleeper#HANDOFF_NS}), and spin those in their own
     * frame, so nothing but the return runs after the deadline
     * ({@code spec/sleep.md}, <em>Hand-off</em>).
     */
    private static final ThreadLocal<ThreadSleeper> SLEEPER = ThreadLocal.withInitial(ThreadSleeper::new);

    /**
     * The default profile and its generation, one immutable object so a
     * reader sees a consistent pair: {@link #setDefaultProfile(Profile)}
     * publishes a new one (a new identity, even for the same profile or
     * {@code null}), and a thread whose sleeper was made for another one
     * replaces it at its next sleep ({@code spec/estimator.md}, <em>Default
     * sleepers</em>). {@link Default#UNREAD} until the program sets one or
     * the first default sleeper reads the environment's.
     */
    private static volatile Default defaultProfile = Default.UNREAD;

    /** The system property naming the default profile's file; it comes before {@code KEEPTIME_PROFILE}. */
    static final String PROFILE_PROPERTY = "keeptime.profile";
    /** The environment variable naming the default profile's file. */
    static final String PROFILE_VARIABLE = "KEEPTIME_PROFILE";

    /**
     * Guards reading the environment's profile: the first sleepers that need
     * the default wait for one load and all see it, and
     * {@link #setDefaultProfile(Profile)} waits for a load under way, so the
     * program's setting is never overwritten by the environment's.
     */
    private static final Object ENVIRONMENT_LOCK = new Object();
    /** Where the environment's profile is looked up and warned about: the real ones, or a test's (under the lock). */
    private static Function<String, String> properties = System::getProperty;
    private static Function<String, String> variables = System::getenv;
    private static Supplier<PrintStream> warnings = () -> System.err;

    /** A default profile setting: {@code null} for none (fresh sleepers). */
    private static final class Default {
        /**
         * Nothing set yet and the environment not read: the first sleeper
         * that needs the default reads it ({@link #inForce(Default)}) and
         * never starts from this one.
         */
        static final Default UNREAD = new Default(null);

        final Profile profile;

        Default(Profile profile) {
            this.profile = profile;
        }

        /** A new sleeper with the usual settings, started from this setting (thread sleepers, tickers' own). */
        Sleeper newSleeper() {
            return profile == null ? Sleeper.create() : Sleeper.builder().profile(profile).build();
        }
    }

    /**
     * A thread's sleeper and the default it was made for; replaced in place
     * (no allocation on the hot path) when the default has changed.
     */
    private static final class ThreadSleeper {
        Sleeper sleeper;
        Default madeFor;

        ThreadSleeper() {
            renew(defaultProfile);
        }

        void renew(Default d) {
            d = inForce(d);
            sleeper = d.newSleeper();
            madeFor = d;
        }
    }

    private KeepTime() {}

    /**
     * The calling thread's current sleeper: the one in the {@link ThreadLocal},
     * replaced first if the default profile has changed since it was made
     * (one volatile read when it has not).
     */
    private static Sleeper current() {
        ThreadSleeper t = SLEEPER.get();
        Default d = defaultProfile;
        if (t.madeFor != d) {
            t.renew(d);
        }
        return t.sleeper;
    }

    /**
     * A new sleeper with the usual settings ({@link Mode#EXACT}, the default
     * {@link TailTarget}, the real clock) started from the default profile in
     * force now, or a fresh one if none is set: the sleeper of a
     * {@link Ticker} made without one ({@code spec/estimator.md},
     * <em>Default sleepers</em>, <em>Tickers</em>). A later
     * {@link #setDefaultProfile(Profile)} does not touch it.
     */
    static Sleeper defaultSleeper() {
        return inForce(defaultProfile).newSleeper();
    }

    /**
     * {@code d}, or, if it is {@link Default#UNREAD}, the setting the
     * environment gives: read once, by the first caller, under the lock
     * (later callers wait and take the same), and published as the default.
     * Off the hot path: a thread sleeper reads it only when it is made or
     * replaced.
     */
    private static Default inForce(Default d) {
        if (d != Default.UNREAD) {
            return d;
        }
        synchronized (ENVIRONMENT_LOCK) {
            d = defaultProfile;
            if (d == Default.UNREAD) {
                d = new Default(fromEnvironment());
                defaultProfile = d;
            }
            return d;
        }
    }

    /**
     * The profile {@code keeptime.profile} or else {@code KEEPTIME_PROFILE}
     * names ({@code spec/estimator.md}, <em>Default sleepers</em>, <em>From
     * the environment</em>), loaded with the machine check; {@code null} when
     * neither is set and not empty, or when the file cannot be loaded (then
     * one line on the warning stream). Never throws for the file.
     */
    private static Profile fromEnvironment() {
        String name = PROFILE_PROPERTY;
        String path = properties.apply(PROFILE_PROPERTY);
        if (path == null || path.isEmpty()) {
            name = PROFILE_VARIABLE;
            path = variables.apply(PROFILE_VARIABLE);
        }
        if (path == null || path.isEmpty()) {
            return null;
        }
        try {
            return Profile.load(Path.of(path));
        } catch (IOException | InvalidPathException e) {
            warnings.get().println("keeptime: " + name + "=" + path + ": " + why(path, e)
                    + "; keeptime's own sleepers start fresh");
            return null;
        }
    }

    /**
     * What went wrong, naming the file: a {@link ProfileException}'s own
     * message (it names the file and the line); for a file that cannot be
     * opened or read, {@code PATH: cannot read the profile: REASON}, since
     * {@link java.nio.file.NoSuchFileException} and its kin say only the path.
     */
    private static String why(String path, Exception e) {
        if (e instanceof ProfileException) {
            return e.getMessage();
        }
        String reason;
        if (e instanceof java.nio.file.NoSuchFileException) {
            reason = "no such file";
        } else if (e instanceof java.nio.file.AccessDeniedException) {
            reason = "permission denied";
        } else if (e instanceof java.nio.file.FileSystemException) {
            String r = ((java.nio.file.FileSystemException) e).getReason();
            reason = r != null ? r : e.getClass().getSimpleName();
        } else {
            reason = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        }
        return path + ": cannot read the profile: " + reason;
    }

    /**
     * Test hook: back to the state before the first default sleeper (nothing
     * set, the environment not read), the environment's profile to be looked
     * up from then on with {@code properties} and {@code variables} and
     * warned about on {@code warnings}. Thread sleepers made before are
     * replaced at their next use, as after any change.
     */
    static void resetDefaultProfile(Function<String, String> properties, Function<String, String> variables,
            Supplier<PrintStream> warnings) {
        synchronized (ENVIRONMENT_LOCK) {
            KeepTime.properties = Objects.requireNonNull(properties, "properties");
            KeepTime.variables = Objects.requireNonNull(variables, "variables");
            KeepTime.warnings = Objects.requireNonNull(warnings, "warnings");
            defaultProfile = Default.UNREAD;
        }
    }

    /** Test hook: {@link #resetDefaultProfile(Function, Function, Supplier)} with the real sources and {@link System#err}. */
    static void resetDefaultProfile() {
        resetDefaultProfile(System::getProperty, System::getenv, () -> System.err);
    }

    /**
     * Sets the host profile the thread sleepers behind the static methods
     * start from ({@code spec/estimator.md}, <em>Default sleepers</em>);
     * {@code null} clears it. From then on each thread's sleeper, at its next
     * static sleep (or {@link #threadSleeper()}) and before planning it, is
     * replaced by a new one with the usual settings ({@link Mode#EXACT}, the
     * default {@link TailTarget}) started from the profile, as
     * {@link Sleeper.Builder#profile(Profile)} starts one; clearing replaces
     * it with a fresh one the same way. What the replaced sleeper learned and
     * its {@link Sleeper#stats() stats} are dropped, and so is a mode or
     * target set on it; a {@link Sleeper} the program built itself is never
     * touched. A {@link Ticker} made from then on without a sleeper
     * ({@link Ticker#every(Duration)}, {@link Ticker#every(Duration, MissedTicks)},
     * a {@link Ticker#builder(Duration)} given none) waits with a new sleeper
     * started from the profile in force when it is made; a later call does not
     * touch a ticker that exists, and a ticker given a sleeper keeps it. Cannot fail:
     * {@link Profile#load(java.nio.file.Path, Profile.Option...)} has already
     * checked the profile (its format, and the machine unless asked to ignore
     * it), and a {@code Profile} is immutable. Set it once, at
     * start-up, before the first sleep: every later call (even with the same
     * profile) throws away what the thread sleepers learned since.
     *
     * <p>Until the first call, the default is the profile the system property
     * {@code keeptime.profile} or the environment variable
     * {@code KEEPTIME_PROFILE} names (the property first; either only when
     * set and not empty), read once per process when a default sleeper is
     * first made. A call before then (even with {@code null}) means it is
     * never read: the program's choice wins; a call after replaces it as any
     * change does. It is loaded with the machine check; a file that cannot be
     * loaded throws nothing but writes one line to {@link System#err},
     * {@code keeptime: KEEPTIME_PROFILE=PATH: MESSAGE; keeptime's own sleepers start fresh}
     * ({@code keeptime.profile=PATH} for the property), and the default
     * sleepers start fresh.
     *
     * <pre>{@code
     * Profile p = Profile.load(Path.of("host.profile")); // ProfileException if bad or another machine's
     * KeepTime.setDefaultProfile(p);                     // once, at start-up
     * KeepTime.sleep(Duration.ofNanos(100_000));         // this thread's sleeper starts from p
     * }</pre>
     *
     * @param profile the profile the thread sleepers (and the sleepers of
     *     tickers made without one) start from, or {@code null} for fresh ones
     */
    public static void setDefaultProfile(Profile profile) {
        // Under the lock: a load of the environment's profile under way ends
        // first, and this setting, not UNREAD any more, marks it consumed.
        synchronized (ENVIRONMENT_LOCK) {
            defaultProfile = new Default(profile);
        }
    }

    /**
     * Sleeps for {@code duration}: never less, typically a fraction of a
     * microsecond more. A negative duration returns at once (without looking
     * at the interrupt status), like {@code Thread.sleep(Duration)} on JDK 19+;
     * durations past {@code 2^64 - 1} ns (584 years) saturate.
     *
     * @param duration how long to sleep
     * @throws InterruptedException if the thread is interrupted before or
     *     during the wait; the interrupt status is then cleared
     * @throws NullPointerException if {@code duration} is null
     */
    public static void sleep(Duration duration) throws InterruptedException {
        Sleeper s = current();
        long now = s.toHandoffAfter(duration);
        long until = s.handoffUntil;
        SystemPlatform.spinTo(now, until);
    }

    /**
     * Sleeps for {@code nanos} nanoseconds; see {@link #sleep(Duration)}. A
     * negative value returns at once.
     *
     * @param nanos how long to sleep, ns
     * @throws InterruptedException if the thread is interrupted before or
     *     during the wait; the interrupt status is then cleared
     */
    public static void sleepNanos(long nanos) throws InterruptedException {
        Sleeper s = current();
        long now = s.toHandoffAfterNanos(nanos);
        long until = s.handoffUntil;
        SystemPlatform.spinTo(now, until);
    }

    /**
     * Sleeps until {@code deadline}, a {@link System#nanoTime()} value, and
     * returns the first {@code nanoTime} reading taken after the wait
     * ({@code woke - deadline >= 0}). A deadline that has passed returns at
     * once (after the interrupt check, like {@code Thread.sleep(0)}).
     *
     * @param deadline the {@code System.nanoTime()} value to wait for
     * @return the {@code System.nanoTime()} reading after the wait
     * @throws InterruptedException if the thread is interrupted before or
     *     during the wait; the interrupt status is then cleared
     */
    public static long sleepUntil(long deadline) throws InterruptedException {
        Sleeper s = current();
        long now = s.toHandoffUntil(deadline);
        long until = s.handoffUntil;
        return SystemPlatform.nanoTimeOf(SystemPlatform.spinTo(now, until));
    }

    /**
     * The calling thread's sleeper behind the static methods (for its
     * {@link Sleeper#estimator()}; switching its mode changes this thread's
     * static sleeps). If the default profile has changed since the thread's
     * sleeper was made ({@link #setDefaultProfile(Profile)}), it is replaced
     * first and the new one returned; a reference obtained before the change
     * keeps the old sleeper, which the static methods no longer use.
     *
     * @return this thread's sleeper
     */
    public static Sleeper threadSleeper() {
        return current();
    }

    /**
     * What the calling thread's sleeper behind the static methods has learned,
     * as {@link Sleeper#profile()} makes it (this machine's fingerprint), for
     * the program's next run ({@code spec/estimator.md}, <em>Default
     * sleepers</em>, <em>Saving what they learned</em>). If the thread has no
     * sleeper yet, or the default profile has changed since it was made, it
     * gets one first, as its next sleep would: a thread that has not slept
     * gives the default profile's wake-ups (the one set, or the one
     * {@code keeptime.profile} or {@code KEEPTIME_PROFILE} names), or none.
     * The sleeper is neither replaced otherwise nor reset, and the call is
     * not a sleep.
     *
     * <pre>{@code
     * KeepTime.threadProfile().write(Path.of("app.profile")); // at the end of a run
     * // the next run: java -Dkeeptime.profile=app.profile -jar app.jar
     * }</pre>
     *
     * <p>It can beat a trace's profile ({@code keeptime trace --profile}): it
     * holds the wake-ups of the program's own sleeps, in the order it makes
     * its OS waits, while a trace records each length in a block of its own,
     * and on some hosts underestimates a short wait right after a long one.
     *
     * @return the profile of this thread's sleeper
     */
    public static Profile threadProfile() {
        return current().profile();
    }
}
