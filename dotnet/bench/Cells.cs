// The C# bench's cells: one per (method, duration), each with a waiter made
// for it alone, and the statistics of their returns. Compiled into the NUnit
// suite too (mk/dotnet.mk's test-dotnet).
using System;
using System.Collections.Generic;
using System.Globalization;

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
        /// <summary>
        /// The recorded returns (<see cref="Returns.Of"/>: the caller's first reading
        /// after the call − the method's own reading), ns, one per recorded error;
        /// null for a method that returns no reading of its own (<see cref="Method.ReturnsReading"/>).
        /// </summary>
        public long[] ReturnsNs;
        public int N;
        public long ThreadCpuNs, ProcessCpuNs, WallNs, SlackNs;
        public bool HasThreadCpu;
        /// <summary>
        /// keeptime's cells: the cell's sleeper's own account of the measured sleeps
        /// (its stats reset after the warm-up, read after the last round); null for
        /// the other methods.
        /// </summary>
        public SleeperAccount? Sleeper;

        /// <summary>
        /// Takes the waiter's own account into <see cref="Sleeper"/> (null for a method
        /// without a sleeper): the bench calls it after the last round, before the
        /// waiters are disposed.
        /// </summary>
        public void TakeAccount() { Sleeper = Waiter.Account(); }

        /// <summary>The return percentiles of the recorded waits; null without returns.</summary>
        public ReturnPercentiles? Return { get { return Returns.Percentiles(ReturnsNs, N); } }

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
                        ReturnsNs = m.ReturnsReading ? new long[n] : null,
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

    /// <summary>
    /// A keeptime cell's sleeper's own account of its measured sleeps
    /// (<see cref="Dev.KeepTime.Sleeper.Stats"/>, spec/sleep.md <i>Stats</i>),
    /// with its tail target: what the Rust bench keeps as <c>SleeperAccount</c>, and
    /// how the bench prints it (<see cref="Line"/>, the Rust bench's <c>sleeper_line</c>)
    /// and exports it (<see cref="Json"/>, the cell's optional <c>sleeper</c>
    /// object of spec/bench-result.md).
    /// </summary>
    internal struct SleeperAccount
    {
        /// <summary>The tail target in force, ppm (1 % is 10 000).</summary>
        public long TailTargetPpm;
        /// <summary><see cref="SleepStats.Sleeps"/>: sleeps that had to wait.</summary>
        public long Sleeps;
        /// <summary><see cref="SleepStats.Late"/>: sleeps an OS wait ended after the deadline.</summary>
        public long Late;
        /// <summary><see cref="SleepStats.OsWaits"/>: OS waits issued.</summary>
        public long OsWaits;
        /// <summary>
        /// <see cref="SleepStats.Spin"/> in ns: the C# stats hold the spin as a
        /// <see cref="TimeSpan"/>, whole 100 ns ticks (rounded down), so this is a multiple of 100.
        /// </summary>
        public long SpinNs;
        /// <summary><see cref="SleepStats.CpuEstimateNs"/>: learned OS-wait costs plus the spin, ns.</summary>
        public long CpuEstimateNs;
        /// <summary><see cref="SleepStats.UnprovenSleeps"/>: sleeps planned on margins not yet established at the target.</summary>
        public long UnprovenSleeps;

        /// <summary>The account of <paramref name="stats"/>, taken under <paramref name="target"/>.</summary>
        public static SleeperAccount From(SleepStats stats, TailTarget target)
        {
            return new SleeperAccount
            {
                TailTargetPpm = (long)Math.Round(target.Share * 1e6),
                Sleeps = stats.Sleeps,
                Late = stats.Late,
                OsWaits = stats.OsWaits,
                SpinNs = stats.Spin.Ticks * 100,
                CpuEstimateNs = stats.CpuEstimateNs,
                UnprovenSleeps = stats.UnprovenSleeps,
            };
        }

        /// <summary>
        /// The line the bench prints under its table for a keeptime cell, worded as
        /// the Rust bench's <c>sleeper_line</c>: <paramref name="label"/> (the cell, e.g.
        /// <c>keeptime 10 ms</c>), the tail target, the share of sleeps late by the OS,
        /// OS waits and spin per sleep, the estimated CPU per sleep ÷
        /// <paramref name="durationNs"/> and <paramref name="measuredPercent"/> (the
        /// cell's thread CPU %), and, when some sleeps were unproven, how many.
        /// </summary>
        public string Line(string label, long durationNs, double measuredPercent)
        {
            double n = Math.Max(Sleeps, 1);
            var inv = CultureInfo.InvariantCulture;
            string line = string.Format(inv,
                "{0} (tail target {1} %): {2:F2} % of sleeps late by the OS (woke after the deadline), {3:F2} OS waits and {4} of spin per sleep, estimated CPU {5:F2} % (measured {6:F2} %)",
                label, (TailTargetPpm / 1e4).ToString("R", inv), 100.0 * Late / n, OsWaits / n,
                Duration((long)(SpinNs / n)), 100.0 * CpuEstimateNs / n / Math.Max(durationNs, 1), measuredPercent);
            if (UnprovenSleeps > 0)
                // A young model plans on its largest wake-ups yet: its CPU here is
                // its learning's, not its steady state's.
                line += string.Format(inv,
                    "; {0} of {1} sleeps planned on margins not yet established at the target (still learning: a larger --warmup measures its steady state)",
                    UnprovenSleeps, Sleeps);
            return line;
        }

        /// <summary>
        /// The cell's <c>sleeper</c> field as spec/bench-result.md writes it, to append
        /// to the cell's object: <c>,"sleeper":{"tail_target_ppm":…,"sleeps":…,"late":…,
        /// "os_waits":…,"spin_ns":…,"cpu_estimate_ns":…,"unproven_sleeps":…}</c>, all integers.
        /// </summary>
        public string Json()
        {
            return string.Format(CultureInfo.InvariantCulture,
                ",\"sleeper\":{{\"tail_target_ppm\":{0},\"sleeps\":{1},\"late\":{2},\"os_waits\":{3},\"spin_ns\":{4},\"cpu_estimate_ns\":{5},\"unproven_sleeps\":{6}}}",
                TailTargetPpm, Sleeps, Late, OsWaits, SpinNs, CpuEstimateNs, UnprovenSleeps);
        }

        /// <summary>
        /// A duration as the Rust bench writes one (<c>format::duration</c>): in the
        /// largest of s, ms, µs and ns it reaches, exact, without trailing zeros
        /// (<c>2.9 ms</c>, <c>850 ns</c>, <c>12.345 µs</c>).
        /// </summary>
        public static string Duration(long ns)
        {
            if (ns < 0) ns = 0;
            long div; string unit; int digits;
            if (ns >= 1000000000L) { div = 1000000000L; unit = "s"; digits = 9; }
            else if (ns >= 1000000L) { div = 1000000L; unit = "ms"; digits = 6; }
            else if (ns >= 1000L) { div = 1000L; unit = "\u00b5s"; digits = 3; }
            else { div = 1; unit = "ns"; digits = 0; }
            long whole = ns / div, frac = ns % div;
            if (frac == 0) return whole.ToString(CultureInfo.InvariantCulture) + " " + unit;
            return whole.ToString(CultureInfo.InvariantCulture) + "." +
                frac.ToString(CultureInfo.InvariantCulture).PadLeft(digits, '0').TrimEnd('0') + " " + unit;
        }
    }

    /// <summary>The return's p50 and p90, ns (nearest rank).</summary>
    internal struct ReturnPercentiles
    {
        public long P50Ns, P90Ns;
    }

    /// <summary>
    /// The return (spec/bench-result.md, <i>Return</i>): how long after the method's
    /// own last clock reading the caller got its first, as the Rust and Java benches
    /// record it, and how the bench prints and exports its percentiles.
    /// </summary>
    internal static class Returns
    {
        /// <summary>
        /// One wait's return: <paramref name="callerNs"/> (the caller's first reading
        /// after the call) − <paramref name="ownNs"/> (the method's own last reading,
        /// in ns on the same clock), ns.
        /// </summary>
        public static long Of(long callerNs, long ownNs) { return callerNs - ownNs; }

        /// <summary>
        /// Nearest rank over <paramref name="sorted"/> (ascending, not empty):
        /// x[max(ceil(q·n/1000), 1) − 1] for q = <paramref name="permille"/>, in integers.
        /// </summary>
        public static long NearestRank(long[] sorted, int permille)
        {
            long n = sorted.Length;
            long k = Math.Max((permille * n + 999) / 1000, 1);
            return sorted[k - 1];
        }

        /// <summary>
        /// p50 and p90 (nearest rank) of the first <paramref name="n"/> of
        /// <paramref name="returns"/> (which it leaves as they are); null when
        /// <paramref name="returns"/> is null or <paramref name="n"/> is 0.
        /// </summary>
        public static ReturnPercentiles? Percentiles(long[] returns, int n)
        {
            if (returns == null || n <= 0) return null;
            var s = new long[n];
            Array.Copy(returns, s, n);
            Array.Sort(s);
            return new ReturnPercentiles { P50Ns = NearestRank(s, 500), P90Ns = NearestRank(s, 900) };
        }

        /// <summary>
        /// The cell's return fields as spec/bench-result.md writes them, to append to
        /// the cell's object: <c>,"return_p50_ns":P50,"return_p90_ns":P90</c>, both
        /// together; the empty string (no fields) for a method without returns.
        /// </summary>
        public static string Json(ReturnPercentiles? r)
        {
            if (r == null) return "";
            return string.Format(CultureInfo.InvariantCulture, ",\"return_p50_ns\":{0},\"return_p90_ns\":{1}", r.Value.P50Ns, r.Value.P90Ns);
        }

        /// <summary>The table's return column: <c>p50 · p90</c> in µs (two decimals), or — without returns.</summary>
        public static string Text(ReturnPercentiles? r)
        {
            if (r == null) return "\u2014";
            return Us(r.Value.P50Ns) + " \u00b7 " + Us(r.Value.P90Ns);
        }

        private static string Us(long ns) { return (ns / 1000.0).ToString("0.00", CultureInfo.InvariantCulture); }
    }
}
