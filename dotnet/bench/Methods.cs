// The C# bench's ways of waiting, and the waiter each cell gets: the
// counterpart of the Rust bench's methods.rs ("a fresh waiter for one
// cell"). A Method describes a way of waiting and makes waiters; a Waiter is
// what one (method, duration) cell waits with, made for that cell alone
// (Cells.Build), warmed up with that cell's warm-up count, then measured in
// the cell's share of every interleaved round. Compiled into the NUnit suite
// too (mk/dotnet.mk's test-dotnet); it uses System and KeepTime.dll only.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace Dev.KeepTime.Bench
{
    /// <summary>
    /// What one cell waits with. <see cref="Method.NewWaiter"/> makes a new one
    /// for every (method, duration) cell; the cell keeps it through its warm-up
    /// and all its rounds, and no other cell ever waits with it. Synchronous
    /// methods implement <see cref="Wait"/>, asynchronous ones <see cref="WaitAsync"/>.
    /// Every method waits for the bench's own deadline, <c>startNs + durationNs</c>
    /// on <see cref="KeepTime.NowNs"/>'s clock (CLOCK_MONOTONIC), where its API
    /// takes a deadline; a method whose API only takes a duration (Thread.Sleep,
    /// Task.Delay) is given <c>durationNs</c> and starts counting it when called.
    /// </summary>
    internal abstract class Waiter : IDisposable
    {
        /// <summary>
        /// Waits until <paramref name="startNs"/> + <paramref name="durationNs"/> on
        /// CLOCK_MONOTONIC (sync methods). Returns the method's own last clock reading
        /// when its wait ends on one (a spin's exit, keeptime's returned reading), raw,
        /// in the method's own units (<see cref="OwnNs"/> converts it, after the
        /// caller has read the clock); null when it reads no clock after waiting.
        /// </summary>
        public virtual long? Wait(long startNs, long durationNs)
        {
            throw new NotSupportedException("an asynchronous method's waiter: use WaitAsync");
        }

        /// <summary>
        /// The method's own reading <paramref name="own"/> (as <see cref="Wait"/> returned
        /// it) in ns on <see cref="KeepTime.NowNs"/>'s clock; the caller converts after
        /// its own reading, so the conversion is never part of the return.
        /// </summary>
        public virtual long OwnNs(long own) { return own; }

        /// <summary>
        /// A task that completes at or after <paramref name="startNs"/> + <paramref name="durationNs"/>
        /// where the method takes a deadline, else <paramref name="durationNs"/> after the call
        /// (async methods). A task carries no reading of its own: async methods have no return.
        /// </summary>
        public virtual Task WaitAsync(long startNs, long durationNs)
        {
            throw new NotSupportedException("a synchronous method's waiter: use Wait");
        }

        /// <summary>
        /// Starts the waiter's own account afresh: keeptime's sleeper resets its stats
        /// (what it learned is kept), so that <see cref="Account"/> counts only what follows;
        /// the bench calls it after the cell's warm-up. Nothing for the other methods.
        /// </summary>
        public virtual void ResetAccount() { }

        /// <summary>
        /// keeptime's sleeper's own account of its sleeps since <see cref="ResetAccount"/>
        /// (the Rust bench's <c>sleeper_stats()</c>); null for a method with no sleeper.
        /// </summary>
        public virtual SleeperAccount? Account() { return null; }

        /// <summary>Frees what the waiter holds (a keeptime Sleeper); the bench calls it after the run.</summary>
        public virtual void Dispose() { }
    }

    /// <summary>
    /// A loop on the Stopwatch until the bench's deadline (busy loop, spins, the
    /// hybrid's spin): no state of its own, a new object per cell all the same.
    /// Its own reading is the Stopwatch timestamp that ended the loop.
    /// </summary>
    internal sealed class StopwatchWaiter : Waiter
    {
        private readonly Func<long, long, long> _wait;
        /// <param name="wait">Waits until (start, duration)'s deadline; returns the Stopwatch reading that ended it.</param>
        public StopwatchWaiter(Func<long, long, long> wait) { _wait = wait; }
        public override long? Wait(long startNs, long durationNs) { return _wait(startNs, durationNs); }
        /// <summary>The first ns at which the Stopwatch read <paramref name="own"/> (<see cref="Methods.SwNs"/>).</summary>
        public override long OwnNs(long own) { return Methods.SwNs(own); }
    }

    /// <summary>An OS sleep for a duration (Thread.Sleep): no state, and no clock reading after it.</summary>
    internal sealed class SleepWaiter : Waiter
    {
        private readonly Action<long, long> _wait;
        public SleepWaiter(Action<long, long> wait) { _wait = wait; }
        public override long? Wait(long startNs, long durationNs) { _wait(startNs, durationNs); return null; }
    }

    /// <summary>An asynchronous waiter: a task per wait.</summary>
    internal sealed class AsyncWaiter : Waiter
    {
        private readonly Func<long, long, Task> _wait;
        /// <param name="wait">(start, duration) to the task of one wait.</param>
        public AsyncWaiter(Func<long, long, Task> wait) { _wait = wait; }
        public override Task WaitAsync(long startNs, long durationNs) { return _wait(startNs, durationNs); }
    }

    /// <summary>
    /// keeptime's exact sleeper, one per cell: a <see cref="Dev.KeepTime.Sleeper"/>
    /// with the default settings (Exact, tail target 1 %, timer slack 1 ns on the
    /// thread it sleeps on), as the one <see cref="KeepTime.Sleep"/> keeps per
    /// thread, but made for this cell, so it has learned nothing when the cell's
    /// warm-up begins and only from this cell's waits afterwards. It sleeps until
    /// the bench's deadline with <see cref="Dev.KeepTime.Sleeper.SleepUntilNs"/>
    /// (the Rust bench's <c>sleep_until_ns(deadline)</c>, the Java bench's
    /// <c>sleepUntil(deadline)</c>), so the error counts no entry path of its own,
    /// and returns the reading keeptime woke at (ns on KeepTime.NowNs's clock).
    /// </summary>
    internal sealed class SleeperWaiter : Waiter
    {
        /// <summary>The cell's own sleeper.</summary>
        public readonly Sleeper Sleeper = new Sleeper(SleepMode.Exact);
        public override long? Wait(long startNs, long durationNs) { return (long)Sleeper.SleepUntilNs((ulong)(startNs + durationNs)); }
        /// <summary><see cref="Dev.KeepTime.Sleeper.ResetStats"/>: the stats start afresh, what was learned is kept.</summary>
        public override void ResetAccount() { Sleeper.ResetStats(); }
        /// <summary><see cref="Dev.KeepTime.Sleeper.Stats"/> since the reset, with the sleeper's tail target.</summary>
        public override SleeperAccount? Account() { return SleeperAccount.From(Sleeper.Stats, Sleeper.TailTarget); }
        public override void Dispose() { Sleeper.Dispose(); }
    }

    internal sealed class Method
    {
        public string Name, Description, Family;
        public bool Async, MayReturnEarly, IsKeepTime;
        /// <summary>Its waiter learns from its own waits: a longer default warm-up (WarmupRule).</summary>
        public bool Learns;
        /// <summary>
        /// What it learns lives in the process, not in its waiter: KeepTime.Delay has
        /// one waiter thread and one learned lead per process, which no public call
        /// makes anew, so this method's cells share them (its waiter objects are still
        /// one per cell). Only keeptime-delay.
        /// </summary>
        public bool LearnsProcessWide;
        /// <summary>
        /// Its waiter's <see cref="Waiter.Wait"/> returns a clock reading of its own at
        /// every wait (the loops on the Stopwatch, keeptime's sleeper): the cells record
        /// a return (spec/bench-result.md, <i>Return</i>). False for OS sleeps and tasks.
        /// </summary>
        public bool ReturnsReading;
        /// <summary>Makes a new waiter: called once per cell (Cells.Build), never shared between cells.</summary>
        public Func<Waiter> NewWaiter;
    }

    internal static class Methods
    {
        private static readonly long Freq = Stopwatch.Frequency;

        /// <summary>
        /// The Stopwatch reading at which CLOCK_MONOTONIC is at or past start + d: the
        /// bench's deadline rounded up to the Stopwatch's tick (100 ns on Mono), the
        /// closest deadline a Stopwatch loop or KeepTime.DelayUntil can be given.
        /// </summary>
        internal static long SwDeadline(long startNs, long durNs)
        {
            return (long)Math.Ceiling((decimal)(startNs + durNs) * Freq / 1000000000m);
        }

        /// <summary>
        /// The first ns on CLOCK_MONOTONIC at which the Stopwatch reads <paramref name="ts"/>,
        /// ceil(ts·1e9/F) (the Stopwatch counts CLOCK_MONOTONIC in whole ticks, floor): a
        /// Stopwatch reading taken at or after this ns, so a return computed from it is
        /// at most one tick too long.
        /// </summary>
        internal static long SwNs(long ts)
        {
            return (long)Math.Ceiling((decimal)ts * 1000000000m / Freq);
        }

        /// <summary>The hybrid's spin: it sleeps to this long before the deadline, then spins.</summary>
        internal const long HybridSpinNs = 1000000;

        /// <summary>Every method, in run order.</summary>
        public static List<Method> All()
        {
            // The loops wait for the bench's deadline (SwDeadline) and return the
            // Stopwatch reading that ended them. Thread.Sleep and Task.Delay take
            // only a duration: they get d and count it from their own call.
            return new List<Method>
            {
                new Method { Name = "busy-loop", Family = "busy loop", ReturnsReading = true,
                    Description = "while (Stopwatch.GetTimestamp() < deadline) {}, the deadline start + d rounded up to a Stopwatch tick (a whole core)",
                    NewWaiter = () => new StopwatchWaiter((s, d) => { long dl = SwDeadline(s, d), now; while ((now = Stopwatch.GetTimestamp()) < dl) { } return now; }) },
                new Method { Name = "spin-pause", Family = "spin with pause", ReturnsReading = true,
                    Description = "Thread.SpinWait(1) in a loop on Stopwatch until the deadline (the CPU's pause hint)",
                    NewWaiter = () => new StopwatchWaiter((s, d) => { long dl = SwDeadline(s, d), now; while ((now = Stopwatch.GetTimestamp()) < dl) Thread.SpinWait(1); return now; }) },
                new Method { Name = "yield-loop", Family = "yield loop", ReturnsReading = true,
                    Description = "Thread.Yield() in a loop on Stopwatch until the deadline",
                    NewWaiter = () => new StopwatchWaiter((s, d) => { long dl = SwDeadline(s, d), now; while ((now = Stopwatch.GetTimestamp()) < dl) Thread.Yield(); return now; }) },
                // Thread.Sleep takes a duration only: d, from its own call.
                new Method { Name = "thread-sleep", Family = "OS sleep", MayReturnEarly = true,
                    Description = "Thread.Sleep(TimeSpan) for d (it takes no deadline; Mono truncates to whole ms and can return early)",
                    NewWaiter = () => new SleepWaiter((s, d) => Thread.Sleep(TimeSpan.FromTicks(d / 100))) },
                // As the Rust bench's hybrid: sleep d - 1 ms (Thread.Sleep takes a
                // duration), then spin to the bench's deadline.
                new Method { Name = "hybrid-1ms", Family = "sleep-then-spin hybrid", ReturnsReading = true,
                    Description = "the 1 ms sleep-then-spin hybrid: Thread.Sleep(d - 1 ms) when d > 1 ms, then a busy loop on Stopwatch until the deadline",
                    NewWaiter = () => new StopwatchWaiter((s, d) =>
                    {
                        long dl = SwDeadline(s, d), now;
                        if (d > HybridSpinNs) Thread.Sleep(TimeSpan.FromTicks((d - HybridSpinNs) / 100));
                        while ((now = Stopwatch.GetTimestamp()) < dl) { }
                        return now;
                    }) },
                new Method { Name = "keeptime", IsKeepTime = true, Learns = true, Family = "keeptime", ReturnsReading = true,
                    Description = "Sleeper.SleepUntilNs(start + d), a fresh Sleeper per cell with the default settings (Exact, the sleeper KeepTime.Sleep keeps per thread): OS wait to a learned margin, then a spin",
                    NewWaiter = () => new SleeperWaiter() },
                // Task.Delay takes a duration only: d, from its own call.
                new Method { Name = "task-delay", Async = true, Family = "async timer",
                    Description = "await Task.Delay(TimeSpan) for d on the thread pool (it takes no deadline)",
                    NewWaiter = () => new AsyncWaiter((s, d) => Task.Delay(TimeSpan.FromTicks(d / 100))) },
                // KeepTime.Delay's waiter (thread and learned lead) is one per
                // process: each cell gets a waiter object of its own, but the
                // state behind it carries over between cells (LearnsProcessWide).
                // DelayUntil takes the deadline as a Stopwatch timestamp, the
                // library's only public deadline for a delay: rounded up to a tick.
                new Method { Name = "keeptime-delay", Async = true, IsKeepTime = true, Learns = true, LearnsProcessWide = true, Family = "keeptime",
                    Description = "await KeepTime.DelayUntil(deadline) on the thread pool, the deadline start + d rounded up to a Stopwatch tick: keeptime's waiter calls back a learned lead early, a pool thread spins the rest (one waiter per process, shared by the cells)",
                    NewWaiter = () => new AsyncWaiter((s, d) => KeepTime.DelayUntil(SwDeadline(s, d))) },
            };
        }
    }
}
