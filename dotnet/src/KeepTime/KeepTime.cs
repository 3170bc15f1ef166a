// The static entry points: sleeps on the calling thread's own sleeper, the
// precise Task delay, the clock and the clock report.
using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;

namespace Dev.KeepTime
{
    /// <summary>
    /// Precise waits: <see cref="Sleep"/> and <see cref="SleepUntil"/> block the
    /// calling thread (OS wait to a learned margin, then a spin: never early,
    /// typically well under a microsecond late); <see cref="Delay"/> is a
    /// Task that does not block a thread for the wait.
    /// </summary>
    public static class KeepTime
    {
        internal const long DefaultDelayFinishSpinNs = 4000;
        private static long s_delayFinishSpinNs = 20000;

        /// <summary>The version of the native library, e.g. "0.1.0".</summary>
        public static string NativeVersion
        {
            get { Native.EnsureLoaded(); return Marshal.PtrToStringAnsi(Native.kt_version()); }
        }

        /// <summary>Nanoseconds on the monotonic clock keeptime waits on (CLOCK_MONOTONIC on Linux).</summary>
        public static ulong NowNs() { Native.EnsureLoaded(); return Native.kt_now_ns(); }

        /// <summary>
        /// Sleeps for <paramref name="duration"/>, precisely: never less. Uses the
        /// calling thread's own exact sleeper (it sets the thread's timer slack to 1 ns).
        /// Negative (also Timeout.InfiniteTimeSpan) or over 2^63-1 ns: ArgumentOutOfRangeException.
        /// </summary>
        public static void Sleep(TimeSpan duration)
        {
            long ns = Time.DurationNs(duration, "duration");
            Native.EnsureLoaded();
            Native.Check(Native.kt_sleep_ns(ns), "sleep");
        }

        /// <summary>
        /// Sleeps until Stopwatch.GetTimestamp() reads at least
        /// <paramref name="stopwatchTimestamp"/> (a timestamp in the past returns at once).
        /// The Stopwatch counts CLOCK_MONOTONIC on Linux (Mono: 100 ns ticks, floor);
        /// the deadline is converted exactly, rounding up. PlatformNotSupportedException
        /// where the Stopwatch is another clock.
        /// </summary>
        public static void SleepUntil(long stopwatchTimestamp)
        {
            Native.EnsureLoaded();
            Time.RequireStopwatchIsMonotonic();
            ulong deadline = Time.DeadlineNsOfTimestamp(stopwatchTimestamp, "stopwatchTimestamp");
            Native.Check(Native.kt_sleep_until_ns(deadline), "sleep");
        }

        /// <summary>Sleeps until <paramref name="deadlineNs"/> on <see cref="NowNs"/>'s clock.</summary>
        public static void SleepUntilNs(ulong deadlineNs)
        {
            Native.EnsureLoaded();
            Native.Check(Native.kt_sleep_until_ns(deadlineNs), "sleep");
        }

        /// <summary>
        /// A precise delay: the task completes on a clock reading at or after
        /// now + <paramref name="duration"/> (never early), typically a few µs
        /// after it, without blocking a thread for the wait: keeptime's waiter
        /// thread calls back a learned lead before the deadline and a
        /// thread-pool work item spins the last few µs (at most
        /// <see cref="DelayFinishSpin"/>). Cancelled: TaskCanceledException.
        /// Bad durations throw ArgumentOutOfRangeException at the call.
        /// </summary>
        public static Task Delay(TimeSpan duration, CancellationToken cancellationToken = default(CancellationToken))
        {
            long ns = Time.DurationNs(duration, "duration");
            Native.EnsureLoaded();
            ulong deadline = Native.kt_now_ns() + (ulong)ns;
            if (deadline < (ulong)ns)
                throw new ArgumentOutOfRangeException("duration", duration, "keeptime: the deadline is beyond 2^64-1 ns");
            return PreciseDelay.Start(deadline, Interlocked.Read(ref s_delayFinishSpinNs), cancellationToken);
        }

        /// <summary>A precise delay until Stopwatch.GetTimestamp() reads at least <paramref name="stopwatchTimestamp"/>.</summary>
        public static Task DelayUntil(long stopwatchTimestamp, CancellationToken cancellationToken = default(CancellationToken))
        {
            Native.EnsureLoaded();
            Time.RequireStopwatchIsMonotonic();
            ulong deadline = Time.DeadlineNsOfTimestamp(stopwatchTimestamp, "stopwatchTimestamp");
            return PreciseDelay.Start(deadline, Interlocked.Read(ref s_delayFinishSpinNs), cancellationToken);
        }

        /// <summary>
        /// Sets the host profile that keeptime's own sleepers start from, or
        /// clears it with null (spec/estimator.md, <i>Default sleepers</i>).
        /// Those are the calling threads' sleepers behind <see cref="Sleep"/>,
        /// <see cref="SleepUntil"/> and <see cref="SleepUntilNs"/>, and the
        /// waiter behind <see cref="Delay"/> and <see cref="DelayUntil"/>: each
        /// one, at its next sleep, is replaced by a new one with its usual
        /// settings started from <paramref name="profile"/> (as
        /// <see cref="SleeperBuilder.Profile"/> starts one); null replaces each
        /// with a fresh one. What a replaced sleeper learned, and its stats,
        /// are dropped. A <see cref="Sleeper"/> you built is never touched.
        /// The profile is copied: dispose it whenever you like. Set it once, at
        /// start-up, before the first sleep: each change drops what the default
        /// sleepers learned since. A program that never calls this gets the
        /// profile the environment variable KEEPTIME_PROFILE names (read once,
        /// when the first of those sleepers is made; a file that cannot be
        /// loaded is one line on stderr, and they start fresh); a call made
        /// before then wins.
        /// </summary>
        /// <exception cref="ObjectDisposedException"><paramref name="profile"/> has been disposed.</exception>
        /// <example><code>
        /// using (var p = Profile.Load("host.profile"))
        ///     KeepTime.SetDefaultProfile(p);        // at start-up
        /// KeepTime.Sleep(TimeSpan.FromMilliseconds(1)); // plans on the profile's wake-ups
        /// </code></example>
        public static void SetDefaultProfile(Profile profile)
        {
            Native.EnsureLoaded();
            if (profile == null)
            {
                Native.Check(Native.kt_set_default_profile(IntPtr.Zero), "clearing the default profile");
                return;
            }
            if (profile._h.IsClosed) throw new ObjectDisposedException("Profile");
            Native.Check(Native.kt_set_default_profile(profile._h), "setting the default profile");
        }

        /// <summary>
        /// Writes a host profile of what the calling thread's sleeper behind
        /// <see cref="Sleep"/>, <see cref="SleepUntil"/> and <see cref="SleepUntilNs"/>
        /// has learned, on this machine, to <paramref name="path"/> (replacing the
        /// file): at the end of a run, for the next to start from
        /// (KEEPTIME_PROFILE, or <see cref="Profile.Load"/> and
        /// <see cref="SetDefaultProfile"/>). It holds the wake-ups of the program's
        /// own sleeps, in the order it made its OS waits, which a profile recorded
        /// by <c>keeptime trace --profile</c> (each length in a block of its own)
        /// does not. A thread that has not slept writes its sleeper as it would
        /// start (the default profile in force, else nothing learned); the call
        /// does not reset it.
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
        /// <exception cref="System.IO.IOException">The file cannot be written.</exception>
        public static void WriteThreadProfile(string path)
        {
            if (path == null) throw new ArgumentNullException("path");
            Native.EnsureLoaded();
            IntPtr error;
            int rc = Native.kt_thread_write_profile(Native.Utf8(path), out error);
            string message = Native.TakeString(error, null);
            if (rc == Native.KT_EPROFILE) throw new System.IO.IOException("keeptime: " + message);
            Native.Check(rc, "writing the thread's profile");
        }
        /// <summary>
        /// The longest spin a thread-pool thread does to finish one
        /// <see cref="Delay"/> (default 20 µs: a callback-to-pool round trip on
        /// Mono takes several µs, and a shorter spin would make the delay late by
        /// one round). From 4 µs to 50 µs; anything else throws.
        /// </summary>
        public static TimeSpan DelayFinishSpin
        {
            get { return TimeSpan.FromTicks(Interlocked.Read(ref s_delayFinishSpinNs) / 100); }
            set
            {
                long ns = Time.DurationNs(value, "value");
                if (ns < 4000 || ns > 50000)
                    throw new ArgumentOutOfRangeException("value", value, "keeptime: the delay's finishing spin is from 4 us to 50 us");
                Interlocked.Exchange(ref s_delayFinishSpinNs, ns);
            }
        }

        /// <summary>
        /// How many precise deadlines per second keeptime's waiter serves on
        /// this machine (its stated capacity, learned from this process's
        /// delays; 25 000 before any). <see cref="Delay"/>s past it complete at
        /// their deadline by a plain OS wait, without the precise finish.
        /// </summary>
        public static long DelayCapacityPerSecond
        {
            get
            {
                ulong perSecond;
                Native.Check(Native.kt_delay_capacity(out perSecond), "delay capacity");
                return (long)perSecond;
            }
        }

        /// <summary>
        /// The Stopwatch reading that corresponds to <paramref name="ns"/> on
        /// <see cref="NowNs"/>'s clock (floor), where the Stopwatch is that clock.
        /// </summary>
        public static long StopwatchTimestampOfNs(ulong ns)
        {
            Time.RequireStopwatchIsMonotonic();
            return Time.TimestampOfNs(ns);
        }

        /// <summary>
        /// The machine's clock report as JSON: the core's findings (clocks, read
        /// cost, granularity, clocksource, timer slack, idle states, findings in
        /// plain words) plus a "dotnet" object with Stopwatch.Frequency,
        /// Stopwatch.IsHighResolution and whether the Stopwatch is CLOCK_MONOTONIC.
        /// Takes 50–150 ms of spinning.
        /// </summary>
        public static string ClocksJson()
        {
            Native.EnsureLoaded();
            IntPtr p;
            Native.Check(Native.kt_clocks_json(out p), "clocks");
            string core;
            try { core = PtrToUtf8(p); }
            finally { Native.kt_string_free(p); }
            string dotnet = "{\"stopwatch_frequency\":" + Stopwatch.Frequency +
                ",\"stopwatch_is_high_resolution\":" + (Stopwatch.IsHighResolution ? "true" : "false") +
                ",\"stopwatch_is_clock_monotonic\":" + (Time.StopwatchIsMonotonic ? "true" : "false") +
                ",\"stopwatch_tick_ns\":" + (1e9 / Stopwatch.Frequency).ToString("R", System.Globalization.CultureInfo.InvariantCulture) +
                ",\"runtime\":\"" + RuntimeDescription().Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"}";
            int end = core.LastIndexOf('}');
            return core.Substring(0, end) + ",\"dotnet\":" + dotnet + "}";
        }

        /// <summary>
        /// The findings the core makes from a clock report's parts, by the rules of
        /// the clock report spec (spec/clocks.md): <paramref name="partsJson"/> is a
        /// JSON object <c>{"clocks": [...], "machine": {...}, "idle_latency": {...} or null}</c>
        /// in the shape of <see cref="ClocksJson"/>'s report (absent fields are unknown).
        /// Returns a JSON array of <c>{severity, code, message}</c> in report order: how a
        /// report saved elsewhere, or one a test builds, gets its findings.
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="partsJson"/> is null.</exception>
        /// <exception cref="ArgumentException"><paramref name="partsJson"/> is not such an object.</exception>
        /// <example><code>
        /// string findings = KeepTime.ClockFindingsJson(
        ///     "{\"clocks\": [], \"machine\": {\"os\": \"linux\", \"arch\": \"x86_64\"}}");
        /// // "[]": nothing known, nothing found
        /// </code></example>
        public static string ClockFindingsJson(string partsJson)
        {
            if (partsJson == null) throw new ArgumentNullException("partsJson");
            Native.EnsureLoaded();
            byte[] utf8 = System.Text.Encoding.UTF8.GetBytes(partsJson + "\0");
            IntPtr p;
            Native.Check(Native.kt_clock_findings_json(utf8, out p), "clock findings: partsJson must be a JSON object with \"clocks\" (an array) and \"machine\" (an object)");
            try { return PtrToUtf8(p); }
            finally { Native.kt_string_free(p); }
        }

        internal static string RuntimeDescription()
        {
            Type mono = Type.GetType("Mono.Runtime");
            if (mono != null)
            {
                var m = mono.GetMethod("GetDisplayName", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
                if (m != null) return "Mono " + m.Invoke(null, null);
            }
            return ".NET " + Environment.Version;
        }

        internal static string PtrToUtf8(IntPtr p)
        {
            int len = 0;
            while (Marshal.ReadByte(p, len) != 0) len++;
            var bytes = new byte[len];
            Marshal.Copy(p, bytes, 0, len);
            return System.Text.Encoding.UTF8.GetString(bytes);
        }
    }
}
