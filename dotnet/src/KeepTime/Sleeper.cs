// Sleeper: a precise sleeper with its own learned wake-up model, and its builder.
using System;
using System.Threading;

namespace Dev.KeepTime
{
    /// <summary>How a sleeper finishes a wait: the trade between accuracy and CPU.</summary>
    public enum SleepMode
    {
        /// <summary>OS wait to a learned margin, then a spin: never early, at the CPU cost of a sleep (the default).</summary>
        Exact = 0,
        /// <summary>One OS wait ending the learned median overshoot early, no spin: almost no CPU, but MAY RETURN BEFORE THE DEADLINE.</summary>
        Efficient = 1,
        /// <summary>A pure spin on the clock: the most accurate, a whole core for the whole wait.</summary>
        Spin = 2,
    }

    /// <summary>
    /// The share of exact sleeps allowed to end late because the OS woke the
    /// thread after the deadline: Relaxed 5 %, Balanced 1 % (the default),
    /// Strict 0.1 %, or any share in [0.000001, 1).
    /// </summary>
    public struct TailTarget : IEquatable<TailTarget>
    {
        private readonly double _share;
        private TailTarget(double share) { _share = share; }

        /// <summary>5 % of sleeps may end late: the cheapest.</summary>
        public static TailTarget Relaxed { get { return new TailTarget(0.05); } }
        /// <summary>1 % of sleeps may end late (the default).</summary>
        public static TailTarget Balanced { get { return new TailTarget(0.01); } }
        /// <summary>0.1 % of sleeps may end late, at a higher CPU price.</summary>
        public static TailTarget Strict { get { return new TailTarget(0.001); } }

        /// <summary>
        /// A share strictly between 0 and 1 and at least 0.000001; NaN, infinities and
        /// anything else throw ArgumentOutOfRangeException (nothing is clamped).
        /// </summary>
        public static TailTarget FromShare(double share)
        {
            if (double.IsNaN(share) || !(share >= 0.000001) || !(share < 1.0))
                throw new ArgumentOutOfRangeException("share", share,
                    "keeptime: a tail target is a share in [0.000001, 1), e.g. 0.01 for 1 % late");
            return new TailTarget(share);
        }

        /// <summary>The share, e.g. 0.01.</summary>
        public double Share { get { return _share == 0 ? 0.01 : _share; } }

        /// <inheritdoc/>
        public bool Equals(TailTarget other) { return Share == other.Share; }
        /// <inheritdoc/>
        public override bool Equals(object obj) { return obj is TailTarget && Equals((TailTarget)obj); }
        /// <inheritdoc/>
        public override int GetHashCode() { return Share.GetHashCode(); }
        /// <inheritdoc/>
        public override string ToString() { return (Share * 100).ToString("0.####", System.Globalization.CultureInfo.InvariantCulture) + " % late"; }
    }

    /// <summary>What a sleeper has spent since it was created or its stats were reset.</summary>
    public struct SleepStats
    {
        /// <summary>Sleeps that had to wait.</summary>
        public long Sleeps;
        /// <summary>Sleeps that ended late because an OS wait woke the thread after the deadline.</summary>
        public long Late;
        /// <summary>OS waits issued.</summary>
        public long OsWaits;
        /// <summary>Time spent spinning.</summary>
        public TimeSpan Spin;
        /// <summary>Estimated thread CPU (learned OS-wait cost plus the spin), ns.</summary>
        public long CpuEstimateNs;
        /// <summary>Sleeps planned on a margin learned from fewer samples than the tail target needs: the target is not proven for them.</summary>
        public long UnprovenSleeps;

        internal static SleepStats From(kt_sleep_stats s)
        {
            return new SleepStats
            {
                Sleeps = (long)s.sleeps, Late = (long)s.late, OsWaits = (long)s.os_waits,
                Spin = TimeSpan.FromTicks((long)(s.spin_ns / 100)), CpuEstimateNs = (long)s.cpu_estimate_ns,
                UnprovenSleeps = (long)s.unproven_sleeps,
            };
        }
    }

    /// <summary>Whether an idle-latency hint is in force.</summary>
    public enum IdleHintState
    {
        /// <summary>No hint was asked for.</summary>
        NotAsked = 0,
        /// <summary>The request is held while the object lives.</summary>
        Held = 1,
        /// <summary>The device could not be opened or written: the object works as without the hint.</summary>
        Refused = 2,
    }

    /// <summary>
    /// The settings of a sleeper (and of a ticker's sleeper): each knob is
    /// checked when set. <c>new SleeperBuilder().Mode(SleepMode.Exact).TailTarget(TailTarget.Strict).Build()</c>.
    /// </summary>
    public sealed class SleeperBuilder
    {
        internal SleepMode _mode = SleepMode.Exact;
        internal TailTarget _tail = global::Dev.KeepTime.TailTarget.Balanced;
        internal long _minSpinNs;
        internal long _idleHintUs = -1;
        internal bool _keepTimerSlack;
        internal Profile _profile;

        /// <summary>Exact (default), Efficient (may end early) or Spin.</summary>
        public SleeperBuilder Mode(SleepMode mode)
        {
            if (mode != SleepMode.Exact && mode != SleepMode.Efficient && mode != SleepMode.Spin)
                throw new ArgumentOutOfRangeException("mode", mode, "keeptime: unknown SleepMode");
            _mode = mode;
            return this;
        }

        /// <summary>The share of exact sleeps allowed to end late.</summary>
        public SleeperBuilder TailTarget(TailTarget target) { _tail = target; return this; }

        /// <summary>A share (see <see cref="Dev.KeepTime.TailTarget.FromShare"/>).</summary>
        public SleeperBuilder TailTarget(double share) { _tail = global::Dev.KeepTime.TailTarget.FromShare(share); return this; }

        /// <summary>The shortest spin that finishes an exact sleep (default zero); negative throws.</summary>
        public SleeperBuilder MinSpin(TimeSpan minSpin) { _minSpinNs = Time.DurationNs(minSpin, "minSpin"); return this; }

        /// <summary>
        /// Asks the kernel to keep CPU wake-up latency at most this long while the
        /// sleeper lives (PM QoS; idle CPUs then poll: more power). Whole µs from 0
        /// to 2147483647 µs; anything else throws. Refused without permission (see
        /// <see cref="Sleeper.IdleHint"/>); the sleeper then works as without it.
        /// </summary>
        public SleeperBuilder IdleHint(TimeSpan maxLatency)
        {
            long ticks = maxLatency.Ticks;
            if (ticks < 0 || ticks % 10 != 0 || ticks / 10 > int.MaxValue)
                throw new ArgumentOutOfRangeException("maxLatency", maxLatency,
                    "keeptime: an idle hint is whole microseconds from 0 to 2147483647");
            _idleHintUs = ticks / 10;
            return this;
        }

        /// <summary>Leave the thread's Linux timer slack alone instead of setting 1 ns.</summary>
        public SleeperBuilder KeepTimerSlack(bool keep = true) { _keepTimerSlack = keep; return this; }

        /// <summary>
        /// Starts the sleeper from a host profile (<see cref="Dev.KeepTime.Profile.Load"/>,
        /// which refuses one from another machine): it answers at once as one that
        /// had made the profile's OS waits, then learns as any sleeper. The sleeper
        /// (or the ticker's, <see cref="BuildTicker"/>) copies the profile when
        /// built; null starts from nothing, or a ticker from the default profile
        /// in force (the default).
        /// </summary>
        public SleeperBuilder Profile(Profile profile) { _profile = profile; return this; }

        /// <summary>A new sleeper with these settings.</summary>
        public Sleeper Build() { return new Sleeper(this); }

        /// <summary>
        /// A ticker whose sleeper has these settings, starting now: it starts from
        /// this builder's profile if it was given one, else from the default
        /// profile in force when the ticker is made (<see cref="KeepTime.SetDefaultProfile"/>),
        /// else fresh. A disposed profile throws ObjectDisposedException.
        /// </summary>
        public Ticker BuildTicker(TimeSpan period, MissedTicks policy = MissedTicks.Skip) { return new Ticker(period, policy, this); }

        /// <summary>
        /// A native sleeper with this builder's mode and timer slack, started
        /// from its profile if it was given one (a disposed profile throws
        /// ObjectDisposedException), else created with
        /// <paramref name="flags"/> added (a ticker's own sleeper:
        /// KT_SLEEPER_DEFAULT_PROFILE). The other settings are the caller's to apply.
        /// </summary>
        internal SleeperHandle CreateNative(uint flags)
        {
            uint slack = _keepTimerSlack ? Native.KT_SLEEPER_KEEP_TIMER_SLACK : 0u;
            SleeperHandle h;
            if (_profile != null)
            {
                if (_profile._h.IsClosed) throw new ObjectDisposedException("Profile");
                Native.Check(Native.kt_sleeper_create_with_profile((int)_mode, slack, _profile._h, out h), "creating a sleeper from a profile");
            }
            else
                Native.Check(Native.kt_sleeper_create((int)_mode, slack | flags, out h), "creating a sleeper");
            return h;
        }
    }

    /// <summary>
    /// A precise sleeper with its own learned wake-up model, mode, tail target
    /// and stats. Use it from one thread at a time (it may move between
    /// threads): a second thread entering while one is inside gets
    /// InvalidOperationException. Dispose it when done (it holds native memory
    /// and possibly an idle-latency request).
    /// </summary>
    public sealed class Sleeper : IDisposable
    {
        private readonly SleeperHandle _h;
        private int _busy;

        /// <summary>An exact sleeper with the default settings.</summary>
        public Sleeper() : this(new SleeperBuilder()) { }

        /// <summary>A sleeper in <paramref name="mode"/>.</summary>
        public Sleeper(SleepMode mode) : this(new SleeperBuilder().Mode(mode)) { }

        internal Sleeper(SleeperBuilder b)
        {
            Native.EnsureLoaded();
            _h = b.CreateNative(0u);
            Native.Check(Native.kt_sleeper_set_tail_target(_h, b._tail.Share), "setting the tail target");
            Native.Check(Native.kt_sleeper_set_min_spin_ns(_h, b._minSpinNs), "setting the minimum spin");
            if (b._idleHintUs >= 0) Native.Check(Native.kt_sleeper_set_idle_hint(_h, b._idleHintUs), "setting the idle hint");
        }

        /// <summary>A builder for a sleeper's settings.</summary>
        public static SleeperBuilder Builder() { return new SleeperBuilder(); }

        private void Enter()
        {
            if (_h.IsClosed) throw new ObjectDisposedException("Sleeper");
            if (Interlocked.Exchange(ref _busy, 1) != 0)
                throw new InvalidOperationException("keeptime: a Sleeper is used by one thread at a time; give each thread its own");
        }

        private void Leave() { Volatile.Write(ref _busy, 0); }

        /// <summary>Sleeps for <paramref name="duration"/>, precisely (never less in Exact and Spin).</summary>
        public void Sleep(TimeSpan duration)
        {
            long ns = Time.DurationNs(duration, "duration");
            Enter();
            try { Native.Check(Native.kt_sleeper_sleep_ns(_h, ns), "sleep"); }
            finally { Leave(); }
        }

        /// <summary>
        /// Sleeps until Stopwatch.GetTimestamp() reads at least <paramref name="stopwatchTimestamp"/>.
        /// Returns the Stopwatch reading at the wake-up as keeptime saw it.
        /// </summary>
        public long SleepUntil(long stopwatchTimestamp)
        {
            Time.RequireStopwatchIsMonotonic();
            ulong deadline = Time.DeadlineNsOfTimestamp(stopwatchTimestamp, "stopwatchTimestamp");
            return Time.TimestampOfNs(SleepUntilNs(deadline));
        }

        /// <summary>Sleeps until <paramref name="deadlineNs"/> on the monotonic clock (<see cref="KeepTime.NowNs"/>); returns the first reading after the wait.</summary>
        public ulong SleepUntilNs(ulong deadlineNs)
        {
            Enter();
            try
            {
                ulong woke;
                Native.Check(Native.kt_sleeper_sleep_until_ns(_h, deadlineNs, out woke), "sleep");
                return woke;
            }
            finally { Leave(); }
        }

        /// <summary>The mode; settable (what was learned is kept).</summary>
        public SleepMode Mode
        {
            get { int m; Enter(); try { Native.Check(Native.kt_sleeper_mode(_h, out m), "mode"); } finally { Leave(); } return (SleepMode)m; }
            set
            {
                new SleeperBuilder().Mode(value);
                Enter(); try { Native.Check(Native.kt_sleeper_set_mode(_h, (int)value), "set mode"); } finally { Leave(); }
            }
        }

        /// <summary>The tail target; settable.</summary>
        public TailTarget TailTarget
        {
            get { double s; Enter(); try { Native.Check(Native.kt_sleeper_tail_target(_h, out s), "tail target"); } finally { Leave(); } return TailTarget.FromShare(s); }
            set { Enter(); try { Native.Check(Native.kt_sleeper_set_tail_target(_h, value.Share), "set tail target"); } finally { Leave(); } }
        }

        /// <summary>The shortest final spin; settable (negative throws).</summary>
        public TimeSpan MinSpin
        {
            get { ulong ns; Enter(); try { Native.Check(Native.kt_sleeper_min_spin_ns(_h, out ns), "min spin"); } finally { Leave(); } return TimeSpan.FromTicks((long)(ns / 100)); }
            set
            {
                long ns = Time.DurationNs(value, "value");
                Enter(); try { Native.Check(Native.kt_sleeper_set_min_spin_ns(_h, ns), "set min spin"); } finally { Leave(); }
            }
        }

        /// <summary>Whether the idle-latency hint asked for is held, refused, or was not asked for.</summary>
        public IdleHintState IdleHint
        {
            get { kt_idle_hint_status st; Enter(); try { Native.Check(Native.kt_sleeper_idle_hint(_h, out st), "idle hint"); } finally { Leave(); } return (IdleHintState)st.state; }
        }

        /// <summary>Sleeps, late sleeps, OS waits, spin and estimated CPU since creation or <see cref="ResetStats"/>.</summary>
        public SleepStats Stats
        {
            get { kt_sleep_stats st; Enter(); try { Native.Check(Native.kt_sleeper_stats(_h, out st), "stats"); } finally { Leave(); } return SleepStats.From(st); }
        }

        /// <summary>Starts the stats afresh; what was learned is kept.</summary>
        public void ResetStats() { Enter(); try { Native.Check(Native.kt_sleeper_reset_stats(_h), "reset stats"); } finally { Leave(); } }

        /// <summary>
        /// Writes a host profile of what this sleeper has learned, on this machine,
        /// to <paramref name="path"/> (replacing the file): a later run starts its
        /// sleepers from it (<see cref="Profile.Load"/>). IOException if it cannot
        /// be written.
        /// </summary>
        public void WriteProfile(string path)
        {
            if (path == null) throw new ArgumentNullException("path");
            Enter();
            try
            {
                IntPtr error;
                int rc = Native.kt_sleeper_write_profile(_h, Native.Utf8(path), out error);
                string message = Native.TakeString(error, null);
                if (rc == Native.KT_EPROFILE) throw new System.IO.IOException("keeptime: " + message);
                Native.Check(rc, "writing a profile");
            }
            finally { Leave(); }
        }

        /// <summary>Frees the native sleeper; later calls throw ObjectDisposedException.</summary>
        public void Dispose() { _h.Dispose(); }
    }
}
