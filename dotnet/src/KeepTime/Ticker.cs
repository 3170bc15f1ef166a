// Ticker: a fixed-rate loop on an absolute schedule; Schedule: its pure logic.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Threading;

namespace Dev.KeepTime
{
    /// <summary>What a ticker does when a tick is asked for after the next deadline already passed (spec/ticker.md).</summary>
    public enum MissedTicks
    {
        /// <summary>Deliver the latest passed slot at once and drop the ones before it (the default).</summary>
        Skip = 0,
        /// <summary>Deliver every passed slot at once, one per call, until caught up.</summary>
        Burst = 1,
        /// <summary>Deliver one tick at once and restart the schedule from then.</summary>
        Delay = 2,
    }

    /// <summary>One tick: which slot was delivered, and how late.</summary>
    public struct Tick
    {
        /// <summary>Slot number k (the first is 1), due at start + k·period.</summary>
        public long Index;
        /// <summary>The slot's deadline, monotonic ns (<see cref="KeepTime.NowNs"/>).</summary>
        public ulong ScheduledNs;
        /// <summary>How long after the deadline it was delivered, ns.</summary>
        public long LatenessNs;
        /// <summary>Slots dropped just before this one (Skip only).</summary>
        public long Skipped;

        internal static Tick From(kt_tick t)
        {
            return new Tick { Index = (long)t.index, ScheduledNs = t.scheduled_ns, LatenessNs = (long)t.lateness_ns, Skipped = (long)t.skipped };
        }
    }

    /// <summary>Counters of a ticker or schedule.</summary>
    public struct TickerStats
    {
        /// <summary>Ticks delivered.</summary>
        public long Ticks;
        /// <summary>Deadlines that had passed when a tick was asked for.</summary>
        public long Missed;
        /// <summary>Slots dropped by Skip.</summary>
        public long Skipped;
        /// <summary>Largest lateness of a delivered tick, ns.</summary>
        public long WorstLatenessNs;

        internal static TickerStats From(kt_stats s)
        {
            return new TickerStats { Ticks = (long)s.ticks, Missed = (long)s.missed, Skipped = (long)s.skipped, WorstLatenessNs = (long)s.worst_lateness_ns };
        }
    }

    internal static class Periods
    {
        internal static long Ns(TimeSpan period, string paramName)
        {
            if (period.Ticks <= 0)
                throw new ArgumentOutOfRangeException(paramName, period, "keeptime: a period must be positive");
            return Time.DurationNs(period, paramName);
        }

        internal static int Policy(MissedTicks policy, string paramName)
        {
            if (policy != MissedTicks.Skip && policy != MissedTicks.Burst && policy != MissedTicks.Delay)
                throw new ArgumentOutOfRangeException(paramName, policy, "keeptime: unknown MissedTicks policy");
            return (int)policy;
        }
    }

    /// <summary>
    /// A fixed-rate loop: slot k is due at start + k·period, never accumulated
    /// from "now", so the loop does not drift. Enumerate it (<c>foreach (var t in ticker)</c>)
    /// or call <see cref="Wait"/>; the enumeration ends when the ticker is disposed.
    /// One thread at a time.
    /// </summary>
    public sealed class Ticker : IDisposable, IEnumerable<Tick>
    {
        private readonly TickerHandle _h;
        private int _busy;

        /// <summary>
        /// A ticker with an exact sleeper with default settings, starting now. Its
        /// sleeper starts from the default profile in force when the ticker is made
        /// (<see cref="KeepTime.SetDefaultProfile"/>), else fresh; a later change of
        /// the default does not touch it.
        /// </summary>
        public Ticker(TimeSpan period, MissedTicks policy = MissedTicks.Skip) : this(period, policy, new SleeperBuilder()) { }

        /// <summary>
        /// A ticker whose sleeper has the builder's settings, starting now. Its
        /// sleeper starts from the builder's profile (<see cref="SleeperBuilder.Profile"/>)
        /// if it was given one, else from the default profile in force when the
        /// ticker is made (<see cref="KeepTime.SetDefaultProfile"/>), else fresh; a
        /// later change of the default does not touch it. A disposed profile
        /// throws ObjectDisposedException.
        /// </summary>
        public Ticker(TimeSpan period, MissedTicks policy, SleeperBuilder settings)
        {
            if (settings == null) throw new ArgumentNullException("settings");
            long ns = Periods.Ns(period, "period");
            int p = Periods.Policy(policy, "policy");
            Native.EnsureLoaded();
            // A sleeper with the builder's mode and timer slack, started from its
            // profile, else from the default profile in force; the ticker copies
            // it, and this one is freed here.
            using (SleeperHandle sleeper = settings.CreateNative(Native.KT_SLEEPER_DEFAULT_PROFILE))
                Native.Check(Native.kt_ticker_create_with_sleeper(ns, p, sleeper, out _h), "creating a ticker");
            Native.Check(Native.kt_ticker_set_tail_target(_h, settings._tail.Share), "setting the tail target");
            Native.Check(Native.kt_ticker_set_min_spin_ns(_h, settings._minSpinNs), "setting the minimum spin");
            if (settings._idleHintUs >= 0) Native.Check(Native.kt_ticker_set_idle_hint(_h, settings._idleHintUs), "setting the idle hint");
        }

        private void Enter()
        {
            if (_h.IsClosed) throw new ObjectDisposedException("Ticker");
            if (Interlocked.Exchange(ref _busy, 1) != 0)
                throw new InvalidOperationException("keeptime: a Ticker is used by one thread at a time");
        }

        private void Leave() { Volatile.Write(ref _busy, 0); }

        /// <summary>Waits for the next slot (or returns at once, as the policy says) and returns it.</summary>
        public Tick Wait()
        {
            Enter();
            try { kt_tick t; Native.Check(Native.kt_ticker_wait(_h, out t), "ticker wait"); return Tick.From(t); }
            finally { Leave(); }
        }

        /// <summary>The counters.</summary>
        public TickerStats Stats
        {
            get { kt_stats s; Enter(); try { Native.Check(Native.kt_ticker_stats(_h, out s), "ticker stats"); } finally { Leave(); } return TickerStats.From(s); }
        }

        /// <summary>The period; setting it makes the next slot due one new period after the last delivered one.</summary>
        public TimeSpan Period
        {
            get { ulong ns; Enter(); try { Native.Check(Native.kt_ticker_period_ns(_h, out ns), "ticker period"); } finally { Leave(); } return TimeSpan.FromTicks((long)(ns / 100)); }
            set
            {
                long ns = Periods.Ns(value, "value");
                Enter(); try { Native.Check(Native.kt_ticker_set_period(_h, ns), "set period"); } finally { Leave(); }
            }
        }

        /// <summary>When the next slot is due, monotonic ns.</summary>
        public ulong NextDeadlineNs
        {
            get { ulong ns; Enter(); try { Native.Check(Native.kt_ticker_next_deadline_ns(_h, out ns), "next deadline"); } finally { Leave(); } return ns; }
        }

        /// <summary>Restarts the schedule from now (slot numbers continue).</summary>
        public void Reset() { Enter(); try { Native.Check(Native.kt_ticker_reset(_h), "reset"); } finally { Leave(); } }

        /// <summary>Ticks until the ticker is disposed.</summary>
        public IEnumerator<Tick> GetEnumerator()
        {
            while (!_h.IsClosed)
            {
                Tick t;
                try { t = Wait(); }
                catch (ObjectDisposedException) { yield break; }
                yield return t;
            }
        }

        IEnumerator IEnumerable.GetEnumerator() { return GetEnumerator(); }

        /// <summary>Frees the native ticker.</summary>
        public void Dispose() { _h.Dispose(); }
    }

    /// <summary>What <see cref="Schedule.Poll"/> asks for.</summary>
    public struct ScheduleStep
    {
        /// <summary>True: wait until <see cref="DeadlineNs"/>, then call <see cref="Schedule.Woke"/>. False: <see cref="Tick"/> is delivered now.</summary>
        public bool Wait;
        /// <summary>The deadline to wait for (Wait only).</summary>
        public ulong DeadlineNs;
        /// <summary>The tick delivered now (not Wait).</summary>
        public Tick Tick;
    }

    /// <summary>
    /// A ticker's schedule without the waiting (spec/ticker.md): you tell it the
    /// time, it tells you what to wait for and what each tick is. Times are
    /// unsigned ns; arithmetic saturates at 2^64-1.
    /// </summary>
    public sealed class Schedule : IDisposable
    {
        private readonly ScheduleHandle _h;

        /// <summary>Slot k is due at startNs + k·periodNs; a zero period throws.</summary>
        public Schedule(ulong startNs, ulong periodNs, MissedTicks policy)
        {
            if (periodNs == 0) throw new ArgumentOutOfRangeException("periodNs", periodNs, "keeptime: a period must be positive");
            int p = Periods.Policy(policy, "policy");
            Native.EnsureLoaded();
            Native.Check(Native.kt_schedule_create(startNs, periodNs, p, out _h), "creating a schedule");
        }

        private void Open() { if (_h.IsClosed) throw new ObjectDisposedException("Schedule"); }

        /// <summary>A tick is asked for at <paramref name="nowNs"/>.</summary>
        public ScheduleStep Poll(ulong nowNs)
        {
            Open();
            kt_step s;
            Native.Check(Native.kt_schedule_poll(_h, nowNs, out s), "schedule poll");
            return new ScheduleStep { Wait = s.kind == 0, DeadlineNs = s.deadline_ns, Tick = Tick.From(s.tick) };
        }

        /// <summary>The wait asked for by <see cref="Poll"/> ended at <paramref name="wokeNs"/>.</summary>
        public Tick Woke(ulong wokeNs)
        {
            Open();
            kt_tick t;
            Native.Check(Native.kt_schedule_woke(_h, wokeNs, out t), "schedule woke");
            return Tick.From(t);
        }

        /// <summary>Restarts from <paramref name="nowNs"/>.</summary>
        public void Reset(ulong nowNs) { Open(); Native.Check(Native.kt_schedule_reset(_h, nowNs), "schedule reset"); }

        /// <summary>Changes the period; zero throws (the schedule is unchanged).</summary>
        public void SetPeriod(ulong periodNs)
        {
            if (periodNs == 0) throw new ArgumentOutOfRangeException("periodNs", periodNs, "keeptime: a period must be positive");
            Open();
            Native.Check(Native.kt_schedule_set_period(_h, periodNs), "schedule set period");
        }

        /// <summary>The counters.</summary>
        public TickerStats Stats { get { Open(); kt_stats s; Native.Check(Native.kt_schedule_stats(_h, out s), "schedule stats"); return TickerStats.From(s); } }

        /// <summary>Frees the native schedule.</summary>
        public void Dispose() { _h.Dispose(); }
    }
}
