// Durations and Stopwatch timestamps to keeptime's nanoseconds, checked.
using System;
using System.Diagnostics;

namespace Dev.KeepTime
{
    internal static class Time
    {
        internal const long NsPerTick = 100; // TimeSpan ticks are 100 ns

        /// <summary>
        /// A duration in ns: negative (Timeout.InfiniteTimeSpan included) or
        /// longer than 2^63-1 ns (about 292 years) is ArgumentOutOfRangeException.
        /// </summary>
        internal static long DurationNs(TimeSpan duration, string paramName)
        {
            long ticks = duration.Ticks;
            if (ticks < 0)
                throw new ArgumentOutOfRangeException(paramName, duration,
                    "keeptime: the duration must not be negative (Timeout.InfiniteTimeSpan is not a wait keeptime takes)");
            if (ticks > long.MaxValue / NsPerTick)
                throw new ArgumentOutOfRangeException(paramName, duration,
                    "keeptime: the duration must be at most 2^63-1 ns (about 292 years)");
            return ticks * NsPerTick;
        }

        internal static readonly long Frequency = Stopwatch.Frequency;

        /// <summary>
        /// The first nanosecond at which Stopwatch.GetTimestamp() reads at
        /// least <paramref name="timestamp"/>, given that the Stopwatch counts
        /// CLOCK_MONOTONIC in whole 1e9/Frequency-ns steps (floor): ceil(ts·1e9/F).
        /// A timestamp at or before 0 is 0 (in the past); one past 2^64-1 ns
        /// is ArgumentOutOfRangeException.
        /// </summary>
        internal static ulong DeadlineNsOfTimestamp(long timestamp, string paramName)
        {
            if (timestamp <= 0) return 0;
            decimal ns = Math.Ceiling((decimal)timestamp * 1000000000m / Frequency);
            if (ns > ulong.MaxValue)
                throw new ArgumentOutOfRangeException(paramName, timestamp,
                    "keeptime: the timestamp is beyond 2^64-1 ns on the monotonic clock");
            return (ulong)ns;
        }

        /// <summary>The Stopwatch reading at nanosecond <paramref name="ns"/> (floor).</summary>
        internal static long TimestampOfNs(ulong ns)
        {
            decimal ts = Math.Floor((decimal)ns * Frequency / 1000000000m);
            return ts > long.MaxValue ? long.MaxValue : (long)ts;
        }

        private static int s_stopwatchIsMonotonic; // 0 unknown, 1 yes, -1 no

        /// <summary>
        /// Whether Stopwatch.GetTimestamp() is CLOCK_MONOTONIC at the
        /// Stopwatch's frequency (floor), checked once by 1000 reads
        /// sandwiching keeptime's own: a &lt;= floor(ns·F/1e9) &lt;= b.
        /// </summary>
        internal static bool StopwatchIsMonotonic
        {
            get
            {
                if (s_stopwatchIsMonotonic == 0)
                {
                    Native.EnsureLoaded();
                    bool ok = Stopwatch.IsHighResolution;
                    for (int i = 0; i < 1000 && ok; i++)
                    {
                        long a = Stopwatch.GetTimestamp();
                        ulong n = Native.kt_now_ns();
                        long b = Stopwatch.GetTimestamp();
                        long mid = TimestampOfNs(n);
                        ok = a <= mid && mid <= b;
                    }
                    s_stopwatchIsMonotonic = ok ? 1 : -1;
                }
                return s_stopwatchIsMonotonic == 1;
            }
        }

        internal static void RequireStopwatchIsMonotonic()
        {
            if (!StopwatchIsMonotonic)
                throw new PlatformNotSupportedException(
                    "keeptime: Stopwatch.GetTimestamp() is not CLOCK_MONOTONIC at Stopwatch.Frequency on this runtime, " +
                    "so a Stopwatch deadline cannot be converted exactly; use KeepTime.SleepUntilNs with KeepTime.NowNs");
        }
    }
}
