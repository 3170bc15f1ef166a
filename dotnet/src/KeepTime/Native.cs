// P/Invoke declarations for libkeeptime (crates/keeptime-c, include/keeptime.h)
// and how the library is found.
using System;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;

namespace Dev.KeepTime
{
    internal sealed class SleeperHandle : SafeHandle
    {
        public SleeperHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.kt_sleeper_free(handle); return true; }
    }

    internal sealed class TickerHandle : SafeHandle
    {
        public TickerHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.kt_ticker_free(handle); return true; }
    }

    internal sealed class ScheduleHandle : SafeHandle
    {
        public ScheduleHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.kt_schedule_free(handle); return true; }
    }

    internal sealed class DelayHandle : SafeHandle
    {
        public DelayHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        // kt_delay_free cancels first: no callback runs after it returns.
        protected override bool ReleaseHandle() { Native.kt_delay_free(handle); return true; }
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct kt_sleep_stats
    {
        public ulong sleeps, late, os_waits, spin_ns, cpu_estimate_ns, unproven_sleeps;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct kt_tick
    {
        public ulong index, scheduled_ns, lateness_ns, skipped;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct kt_stats
    {
        public ulong ticks, missed, skipped, worst_lateness_ns;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct kt_step
    {
        public int kind;
        public ulong deadline_ns;
        public kt_tick tick;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct kt_idle_hint_status
    {
        public int state, refusal;
        public long asked_us, in_force_us;
    }

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate void kt_delay_fn(IntPtr userData);

    internal static class Native
    {
        // The name in [DllImport]. Mono maps it with KeepTime.dll.config to
        // libkeeptime.so, which it looks for beside KeepTime.dll, then through
        // the system loader (LD_LIBRARY_PATH, the standard directories).
        internal const string Lib = "keeptime";

        internal const int KT_OK = 0, KT_ENULL = -1, KT_EINVAL = -2, KT_EINTR = -3, KT_EPANIC = -4, KT_EPROFILE = -5;
        /// <summary>kt_sleeper_create flags.</summary>
        internal const uint KT_SLEEPER_KEEP_TIMER_SLACK = 1, KT_SLEEPER_DEFAULT_PROFILE = 2;

        private static readonly object s_loadLock = new object();
        private static volatile bool s_loaded;

        /// <summary>
        /// Checks once that libkeeptime loads; a failure is one
        /// DllNotFoundException naming the library and every place looked at.
        /// </summary>
        internal static void EnsureLoaded()
        {
            if (s_loaded) return;
            lock (s_loadLock)
            {
                if (s_loaded) return;
                string beside = null;
                try
                {
                    string dir = Path.GetDirectoryName(typeof(Native).Assembly.Location);
                    if (!string.IsNullOrEmpty(dir)) beside = Path.Combine(dir, "libkeeptime.so");
                }
                catch (Exception) { beside = null; }
                try
                {
                    if (VersionChecked() == IntPtr.Zero) throw new DllNotFoundException("kt_version returned NULL");
                }
                catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException || e is BadImageFormatException)
                {
                    string ld = Environment.GetEnvironmentVariable("LD_LIBRARY_PATH");
                    throw new DllNotFoundException(
                        "keeptime: could not load the native library libkeeptime.so (looked for it " +
                        (beside != null ? "beside KeepTime.dll as " + beside + ", then " : "") +
                        "through the system loader: LD_LIBRARY_PATH=" + (string.IsNullOrEmpty(ld) ? "(unset)" : ld) +
                        " and the standard library directories; KeepTime.dll.config maps 'keeptime' to it). " +
                        "Build it with 'make c-lib' (target/release/libkeeptime.so) and copy it beside KeepTime.dll, " +
                        "add its directory to LD_LIBRARY_PATH, or install it (make install). Cause: " + e.Message, e);
                }
                s_loaded = true;
            }
        }

        // A method of its own, so that the first native call is this one and
        // a missing library is reported by EnsureLoaded's message.
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        private static IntPtr VersionChecked() { return kt_version(); }

        [DllImport(Lib)] internal static extern IntPtr kt_version();
        [DllImport(Lib)] internal static extern IntPtr kt_strerror(int status);
        [DllImport(Lib)] internal static extern ulong kt_now_ns();
        [DllImport(Lib)] internal static extern int kt_sleep_ns(long durationNs);
        [DllImport(Lib)] internal static extern int kt_sleep_until_ns(ulong deadlineNs);
        [DllImport(Lib)] internal static extern int kt_clocks_json(out IntPtr json);
        [DllImport(Lib)] internal static extern void kt_string_free(IntPtr s);
        [DllImport(Lib)] internal static extern int kt_clock_findings_json(byte[] partsJson, out IntPtr findingsJson);

        [DllImport(Lib)] internal static extern int kt_sleeper_create(int mode, uint flags, out SleeperHandle sleeper);
        [DllImport(Lib)] internal static extern int kt_sleeper_sleep_ns(SleeperHandle s, long durationNs);
        [DllImport(Lib)] internal static extern int kt_sleeper_sleep_until_ns(SleeperHandle s, ulong deadlineNs, out ulong wokeNs);
        [DllImport(Lib)] internal static extern int kt_sleeper_mode(SleeperHandle s, out int mode);
        [DllImport(Lib)] internal static extern int kt_sleeper_set_mode(SleeperHandle s, int mode);
        [DllImport(Lib)] internal static extern int kt_sleeper_set_min_spin_ns(SleeperHandle s, long ns);
        [DllImport(Lib)] internal static extern int kt_sleeper_min_spin_ns(SleeperHandle s, out ulong ns);
        [DllImport(Lib)] internal static extern int kt_sleeper_set_tail_target(SleeperHandle s, double share);
        [DllImport(Lib)] internal static extern int kt_sleeper_tail_target(SleeperHandle s, out double share);
        [DllImport(Lib)] internal static extern int kt_sleeper_stats(SleeperHandle s, out kt_sleep_stats stats);
        [DllImport(Lib)] internal static extern int kt_sleeper_reset_stats(SleeperHandle s);
        [DllImport(Lib)] internal static extern int kt_sleeper_set_idle_hint(SleeperHandle s, long us);
        [DllImport(Lib)] internal static extern int kt_sleeper_idle_hint(SleeperHandle s, out kt_idle_hint_status status);
        [DllImport(Lib)] internal static extern void kt_sleeper_free(IntPtr s);

        [DllImport(Lib)] internal static extern int kt_profile_load(byte[] path, uint flags, out ProfileHandle profile, out IntPtr error);
        [DllImport(Lib)] internal static extern int kt_sleeper_create_with_profile(int mode, uint flags, ProfileHandle profile, out SleeperHandle sleeper);
        [DllImport(Lib)] internal static extern int kt_sleeper_write_profile(SleeperHandle s, byte[] path, out IntPtr error);
        [DllImport(Lib)] internal static extern int kt_thread_write_profile(byte[] path, out IntPtr error);
        [DllImport(Lib)] internal static extern void kt_profile_free(IntPtr p);
        // Two overloads of one entry point: a SafeHandle cannot be marshalled
        // as NULL, so clearing passes IntPtr.Zero; setting passes the handle,
        // which the marshaller keeps alive (AddRef/Release) for the call.
        [DllImport(Lib)] internal static extern int kt_set_default_profile(ProfileHandle profile);
        [DllImport(Lib)] internal static extern int kt_set_default_profile(IntPtr profile);

        /// <summary>A string as the NUL-terminated UTF-8 bytes a path argument takes.</summary>
        internal static byte[] Utf8(string s)
        {
            byte[] text = System.Text.Encoding.UTF8.GetBytes(s);
            byte[] z = new byte[text.Length + 1];
            Array.Copy(text, z, text.Length);
            return z;
        }

        /// <summary>An error string a call allocated, freed here; <paramref name="fallback"/> if none.</summary>
        internal static string TakeString(IntPtr p, string fallback)
        {
            if (p == IntPtr.Zero) return fallback;
            try { return KeepTime.PtrToUtf8(p); }
            finally { kt_string_free(p); }
        }

        [DllImport(Lib)] internal static extern int kt_ticker_create_with_sleeper(long periodNs, int policy, SleeperHandle sleeper, out TickerHandle ticker);
        [DllImport(Lib)] internal static extern int kt_ticker_wait(TickerHandle t, out kt_tick tick);
        [DllImport(Lib)] internal static extern int kt_ticker_stats(TickerHandle t, out kt_stats stats);
        [DllImport(Lib)] internal static extern int kt_ticker_reset(TickerHandle t);
        [DllImport(Lib)] internal static extern int kt_ticker_set_period(TickerHandle t, long periodNs);
        [DllImport(Lib)] internal static extern int kt_ticker_period_ns(TickerHandle t, out ulong periodNs);
        [DllImport(Lib)] internal static extern int kt_ticker_next_deadline_ns(TickerHandle t, out ulong deadlineNs);
        [DllImport(Lib)] internal static extern int kt_ticker_set_mode(TickerHandle t, int mode);
        [DllImport(Lib)] internal static extern int kt_ticker_set_tail_target(TickerHandle t, double share);
        [DllImport(Lib)] internal static extern int kt_ticker_set_min_spin_ns(TickerHandle t, long ns);
        [DllImport(Lib)] internal static extern int kt_ticker_set_idle_hint(TickerHandle t, long us);
        [DllImport(Lib)] internal static extern void kt_ticker_free(IntPtr t);

        [DllImport(Lib)] internal static extern int kt_schedule_create(ulong startNs, ulong periodNs, int policy, out ScheduleHandle s);
        [DllImport(Lib)] internal static extern int kt_schedule_poll(ScheduleHandle s, ulong nowNs, out kt_step step);
        [DllImport(Lib)] internal static extern int kt_schedule_woke(ScheduleHandle s, ulong wokeNs, out kt_tick tick);
        [DllImport(Lib)] internal static extern int kt_schedule_reset(ScheduleHandle s, ulong nowNs);
        [DllImport(Lib)] internal static extern int kt_schedule_set_period(ScheduleHandle s, ulong periodNs);
        [DllImport(Lib)] internal static extern int kt_schedule_stats(ScheduleHandle s, out kt_stats stats);
        [DllImport(Lib)] internal static extern void kt_schedule_free(IntPtr s);

        [DllImport(Lib)] internal static extern int kt_delay_start(ulong deadlineNs, kt_delay_fn callback, IntPtr userData, out DelayHandle delay);
        [DllImport(Lib)] internal static extern int kt_delay_poll(DelayHandle d, out int state, out ulong nowNs);
        [DllImport(Lib)] internal static extern int kt_delay_cancel(DelayHandle d);
        [DllImport(Lib)] internal static extern int kt_delay_set_finish_spin_ns(DelayHandle d, long ns);
        [DllImport(Lib)] internal static extern int kt_delay_lead_ns(long remainingNs, out ulong leadNs);
        [DllImport(Lib)] internal static extern int kt_delay_capacity(out ulong perSecond);
        [DllImport(Lib)] internal static extern void kt_delay_free(IntPtr d);

        internal static string StatusText(int status)
        {
            IntPtr p = kt_strerror(status);
            return p == IntPtr.Zero ? "keeptime status " + status : Marshal.PtrToStringAnsi(p);
        }

        /// <summary>
        /// Turns a status the arguments were already checked against into an
        /// exception; reaching here with KT_EINVAL means a check is missing.
        /// </summary>
        internal static void Check(int status, string what)
        {
            if (status == KT_OK) return;
            string text = "keeptime: " + what + ": " + StatusText(status) + " (status " + status + ")";
            switch (status)
            {
                case KT_EINVAL: throw new ArgumentException(text);
                case KT_EINTR: throw new OperationCanceledException(text);
                default: throw new InvalidOperationException(text);
            }
        }
    }
}
