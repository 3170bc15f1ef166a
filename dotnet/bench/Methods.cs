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
    /// </summary>
    internal abstract class Waiter : IDisposable
    {
        /// <summary>Waits until <paramref name="startNs"/> + <paramref name="durationNs"/> on CLOCK_MONOTONIC (sync methods).</summary>
        public virtual void Wait(long startNs, long durationNs)
        {
            throw new NotSupportedException("an asynchronous method's waiter: use WaitAsync");
        }

        /// <summary>A task that completes <paramref name="durationNs"/> from now (async methods).</summary>
        public virtual Task WaitAsync(long durationNs)
        {
            throw new NotSupportedException("a synchronous method's waiter: use Wait");
        }

        /// <summary>Frees what the waiter holds (a keeptime Sleeper); the bench calls it after the run.</summary>
        public virtual void Dispose() { }
    }

    /// <summary>A waiter with no state of its own (a loop on the Stopwatch, Thread.Sleep): a new object per cell all the same.</summary>
    internal sealed class PlainWaiter : Waiter
    {
        private readonly Action<long, long> _wait;
        public PlainWaiter(Action<long, long> wait) { _wait = wait; }
        public override void Wait(long startNs, long durationNs) { _wait(startNs, durationNs); }
    }

    /// <summary>An asynchronous waiter: a task per wait.</summary>
    internal sealed class AsyncWaiter : Waiter
    {
        private readonly Func<long, Task> _wait;
        public AsyncWaiter(Func<long, Task> wait) { _wait = wait; }
        public override Task WaitAsync(long durationNs) { return _wait(durationNs); }
    }

    /// <summary>
    /// keeptime's exact sleeper, one per cell: a <see cref="Dev.KeepTime.Sleeper"/>
    /// with the default settings (Exact, tail target 1 %, timer slack 1 ns on the
    /// thread it sleeps on), as the one <see cref="KeepTime.Sleep"/> keeps per
    /// thread, but made for this cell, so it has learned nothing when the cell's
    /// warm-up begins and only from this cell's waits afterwards.
    /// </summary>
    internal sealed class SleeperWaiter : Waiter
    {
        /// <summary>The cell's own sleeper.</summary>
        public readonly Sleeper Sleeper = new Sleeper(SleepMode.Exact);
        public override void Wait(long startNs, long durationNs) { Sleeper.Sleep(TimeSpan.FromTicks(durationNs / 100)); }
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
        /// <summary>Makes a new waiter: called once per cell (Cells.Build), never shared between cells.</summary>
        public Func<Waiter> NewWaiter;
    }

    internal static class Methods
    {
        private static readonly long Freq = Stopwatch.Frequency;

        /// <summary>The Stopwatch reading at which CLOCK_MONOTONIC is at or past start + d.</summary>
        internal static long SwDeadline(long startNs, long durNs)
        {
            return (long)Math.Ceiling((decimal)(startNs + durNs) * Freq / 1000000000m);
        }

        private static Func<Waiter> Plain(Action<long, long> wait) { return () => new PlainWaiter(wait); }

        /// <summary>Every method, in run order.</summary>
        public static List<Method> All()
        {
            return new List<Method>
            {
                new Method { Name = "busy-loop", Family = "busy loop", Description = "while (Stopwatch.GetTimestamp() < deadline) {} (a whole core)",
                    NewWaiter = Plain((s, d) => { long dl = SwDeadline(s, d); while (Stopwatch.GetTimestamp() < dl) { } }) },
                new Method { Name = "spin-pause", Family = "spin with pause", Description = "Thread.SpinWait(1) in a loop on Stopwatch (the CPU's pause hint)",
                    NewWaiter = Plain((s, d) => { long dl = SwDeadline(s, d); while (Stopwatch.GetTimestamp() < dl) Thread.SpinWait(1); }) },
                new Method { Name = "yield-loop", Family = "yield loop", Description = "Thread.Yield() in a loop on Stopwatch",
                    NewWaiter = Plain((s, d) => { long dl = SwDeadline(s, d); while (Stopwatch.GetTimestamp() < dl) Thread.Yield(); }) },
                new Method { Name = "thread-sleep", Family = "OS sleep", MayReturnEarly = true, Description = "Thread.Sleep(TimeSpan) (Mono truncates to whole ms and can return early)",
                    NewWaiter = Plain((s, d) => Thread.Sleep(TimeSpan.FromTicks(d / 100))) },
                new Method { Name = "hybrid-1ms", Family = "sleep-then-spin hybrid", Description = "the 1 ms sleep-then-spin hybrid: Thread.Sleep to 1 ms before the deadline, then a busy loop",
                    NewWaiter = Plain((s, d) => { long dl = SwDeadline(s, d); if (d > 1000000) Thread.Sleep(TimeSpan.FromTicks((d - 1000000) / 100)); while (Stopwatch.GetTimestamp() < dl) { } }) },
                new Method { Name = "keeptime", IsKeepTime = true, Learns = true, Family = "keeptime",
                    Description = "Sleeper.Sleep(TimeSpan), a fresh Sleeper per cell with the default settings (Exact, the sleeper KeepTime.Sleep keeps per thread): OS wait to a learned margin, then a spin",
                    NewWaiter = () => new SleeperWaiter() },
                new Method { Name = "task-delay", Async = true, Family = "async timer", Description = "await Task.Delay(TimeSpan) on the thread pool",
                    NewWaiter = () => new AsyncWaiter(d => Task.Delay(TimeSpan.FromTicks(d / 100))) },
                // KeepTime.Delay's waiter (thread and learned lead) is one per
                // process: each cell gets a waiter object of its own, but the
                // state behind it carries over between cells (LearnsProcessWide).
                new Method { Name = "keeptime-delay", Async = true, IsKeepTime = true, Learns = true, LearnsProcessWide = true, Family = "keeptime",
                    Description = "await KeepTime.Delay(TimeSpan) on the thread pool: keeptime's waiter calls back a learned lead early, a pool thread spins the rest (one waiter per process, shared by the cells)",
                    NewWaiter = () => new AsyncWaiter(d => KeepTime.Delay(TimeSpan.FromTicks(d / 100))) },
            };
        }
    }
}
