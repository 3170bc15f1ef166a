// The C# bench's cells: one per (method, duration), each with a waiter made
// for it alone. Compiled into the NUnit suite too (mk/dotnet.mk's
// test-dotnet).
using System;
using System.Collections.Generic;

namespace Dev.KeepTime.Bench
{
    internal sealed class Cell
    {
        public Method Method;
        public long DurationNs;
        /// <summary>
        /// This cell's own waiter, made by Cells.Build for it alone: warmed up with
        /// <see cref="Warmup"/> waits, then measured in each round; never waits for
        /// another cell (another duration or another method).
        /// </summary>
        public Waiter Waiter;
        /// <summary>Warm-up waits with <see cref="Waiter"/> before the rounds, not recorded.</summary>
        public int Warmup;
        /// <summary>The recorded errors, ns; the first <see cref="N"/> are filled.</summary>
        public long[] Errors;
        public int N;
        public long ThreadCpuNs, ProcessCpuNs, WallNs, SlackNs;
        public bool HasThreadCpu;

        /// <summary>
        /// Counts one measured block of <paramref name="n"/> waits, whose errors are
        /// already in Errors[N..N+n): its wall time, process CPU time and, for a
        /// synchronous method, the waiting thread's CPU time (null for async ones).
        /// </summary>
        public void AddBlock(int n, long wallNs, long processCpuNs, long? threadCpuNs)
        {
            N += n;
            WallNs += wallNs;
            ProcessCpuNs += processCpuNs;
            if (threadCpuNs != null)
            {
                ThreadCpuNs += threadCpuNs.Value;
                HasThreadCpu = true;
            }
        }
    }

    internal static class Cells
    {
        /// <summary>
        /// The cells in run order (durations outer, methods inner). Each cell gets
        /// a new waiter from its method's <see cref="Method.NewWaiter"/>, so two cells of
        /// one method at two durations never share one, and its warm-up count:
        /// <paramref name="warmup"/> if given (--warmup), else
        /// <see cref="WarmupRule.Default"/> for the method and the duration. Each
        /// cell records <c>samples[d] × scale</c> waits, rounded down to a multiple
        /// of <paramref name="rounds"/> (at least <paramref name="rounds"/>), so every
        /// round runs the same share of every cell. Makes waiters, waits for nothing.
        /// </summary>
        public static List<Cell> Build(IList<Method> methods, IList<long> durations, IDictionary<long, int> samples,
            int rounds, double scale, int? warmup, long slackNs)
        {
            if (rounds < 1) throw new ArgumentOutOfRangeException("rounds", rounds, "at least one round");
            if (warmup < 0) throw new ArgumentOutOfRangeException("warmup", warmup, "a warm-up count is 0 or more");
            var cells = new List<Cell>();
            foreach (var d in durations)
                foreach (var m in methods)
                {
                    int n = Math.Max(rounds, (int)(samples[d] * scale) / rounds * rounds);
                    cells.Add(new Cell
                    {
                        Method = m,
                        DurationNs = d,
                        Waiter = m.NewWaiter(),
                        Warmup = warmup ?? WarmupRule.Default(m.Learns, d),
                        Errors = new long[n],
                        SlackNs = slackNs,
                    });
                }
            return cells;
        }

        /// <summary>Disposes every cell's waiter (its Sleeper, for keeptime).</summary>
        public static void DisposeWaiters(IEnumerable<Cell> cells)
        {
            foreach (var c in cells) c.Waiter.Dispose();
        }
    }
}
