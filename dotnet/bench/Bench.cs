// keeptime-bench for .NET: every common way of waiting in C# against
// keeptime's Sleeper and KeepTime.Delay, in one run, in interleaved rounds,
// measured from the caller: error = the caller's CLOCK_MONOTONIC reading right
// after the wait returns - the deadline (start + d, start read just before the
// call), the deadline every method waits for where its API takes one (Methods).
// For a method that ends on a clock reading of its own (the loops, keeptime's
// sleeper), return = that caller reading - the method's own reading, as in the
// Rust and Java benches. Writes spec/bench-result.md's JSON.
//
// keeptime's own account (as the Rust bench's sleeper line): each keeptime
// cell's Sleeper has its stats reset after the cell's warm-up and read after
// the last round; the bench prints them in a line per cell under the table
// and exports them as the cell's "sleeper" object.
//
// What is fresh, and when (as the Rust bench's "a fresh waiter for one
// cell"): every (method, duration) cell gets a waiter of its own, made before
// the warm-ups (Cells.Build, Method.NewWaiter). The cell warms that waiter up
// with its own count (WarmupRule, or --warmup), then measures with it in each
// of the interleaved rounds: a cell's waiter lives through all its rounds and
// never waits for another cell, so nothing a waiter learns at one duration
// reaches a cell at another. keeptime's waiter is a new Sleeper per cell.
// What is not fresh per cell: the worker thread of a synchronous method (one
// per method, for its timer slack and CPU clock; the Sleeper, not the thread,
// holds what keeptime learns), and KeepTime.Delay's waiter thread and learned
// lead, which are one per process in the library (Method.LearnsProcessWide):
// keeptime-delay's cells share those.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Dev.KeepTime;

namespace Dev.KeepTime.Bench
{
    internal static class Sys
    {
        [StructLayout(LayoutKind.Sequential)]
        private struct Timespec { public long Sec, Nsec; }

        [DllImport("libc", EntryPoint = "clock_gettime")]
        private static extern int clock_gettime(int clock, out Timespec ts);
        [DllImport("libc", EntryPoint = "prctl")]
        private static extern int prctl(int option, ulong a2, ulong a3, ulong a4, ulong a5);

        private const int CLOCK_PROCESS_CPUTIME_ID = 2, CLOCK_THREAD_CPUTIME_ID = 3;

        private static long Read(int clock) { Timespec t; clock_gettime(clock, out t); return t.Sec * 1000000000L + t.Nsec; }
        public static long ThreadCpuNs() { return Read(CLOCK_THREAD_CPUTIME_ID); }
        public static long ProcessCpuNs() { return Read(CLOCK_PROCESS_CPUTIME_ID); }
        public static long TimerSlackNs() { return prctl(30 /* PR_GET_TIMERSLACK */, 0, 0, 0, 0); }
    }

    /// <summary>
    /// A thread of its own per synchronous method, so each keeps its own timer slack and CPU
    /// clock. One per method for the whole run: the cells of a method at every duration run on
    /// it, each with its own waiter (what keeptime learns is in the waiter's Sleeper, not the thread).
    /// </summary>
    internal sealed class Worker
    {
        private readonly AutoResetEvent _go = new AutoResetEvent(false), _done = new AutoResetEvent(false);
        private Action _job;
        public Worker(string name)
        {
            var t = new Thread(() => { while (true) { _go.WaitOne(); _job(); _done.Set(); } }) { IsBackground = true, Name = name };
            t.Start();
        }
        public void Run(Action job) { _job = job; _go.Set(); _done.WaitOne(); }
    }

    internal static class Program
    {
        private static readonly long Freq = Stopwatch.Frequency;

        private static int Main(string[] args)
        {
            BenchArgs opts;
            int? exit = BenchArgs.FromCommandLine(args, Console.Out, Console.Error, out opts);
            if (exit != null) return exit.Value;
            DateTime created = DateTime.UtcNow;
            long startSlack = Sys.TimerSlackNs();
            string clocks = KeepTime.ClocksJson(); // before any keeptime sleep on this thread

            long[] durations = { 100000, 1000000, 10000000 };
            var samples = new Dictionary<long, int> { { 100000, 4000 }, { 1000000, 2000 }, { 10000000, 300 } };
            const int rounds = 10;
            var methods = Methods.All();
            var workers = methods.Where(m => !m.Async).ToDictionary(m => m.Name, m => new Worker("bench-" + m.Name));
            // A new waiter per cell, kept by that cell through its warm-up and its rounds.
            var cells = Cells.Build(methods, durations, samples, rounds, opts.Scale, opts.Warmup, startSlack);

            Console.WriteLine("keeptime-bench (.NET): {0}, Stopwatch {1} Hz, {2} methods x {3} durations, {4} interleaved rounds",
                KeepTime.NativeVersion == null ? "" : RuntimeName(), Freq, methods.Count, durations.Length, rounds);
            Console.WriteLine("each cell waits with a waiter made for it alone (keeptime: a new Sleeper per cell), kept through its warm-up and rounds; {0}: one waiter per process, shared by its cells",
                string.Join(" and ", methods.Where(m => m.LearnsProcessWide).Select(m => m.Name)));
            if (opts.Warmup != null)
                Console.WriteLine("warm-up per cell, not recorded: {0} waits (--warmup)", opts.Warmup.Value);
            else
                Console.WriteLine("warm-up per cell, not recorded: about 1 s of waits, at least 300 where they take at most 5 s (at most 3000), for {0}, which learn; about 50 ms (at most 1000) for the others",
                    string.Join(" and ", methods.Where(m => m.Learns).Select(m => m.Name)));
            // Warm-up: every cell's own waiter, not recorded; then keeptime's sleeper
            // starts its stats afresh (keeping what it learned), so that its own
            // account covers the measured sleeps only.
            foreach (var c in cells)
            {
                RunBlock(c, c.Warmup, workers, record: false);
                c.Waiter.ResetAccount();
            }
            // The rounds: each cell measures with the waiter it warmed up.
            for (int r = 0; r < rounds; r++)
                foreach (var c in cells) RunBlock(c, c.Errors.Length / rounds, workers, record: true);
            foreach (var c in cells) if (c.Method.Name == "keeptime") c.SlackNs = 1;
            // keeptime's sleepers' own account of the measured sleeps, before they go.
            foreach (var c in cells) c.TakeAccount();
            Cells.DisposeWaiters(cells);

            PrintTable(cells, durations);
            PrintSleepers(cells);
            PrintTargets(cells);
            if (opts.Json != null)
            {
                File.WriteAllText(opts.Json, Json(created, startSlack, clocks, methods, durations, cells, opts.Scale, opts.Warmup));
                Console.WriteLine("wrote " + opts.Json);
            }
            return 0;
        }

        private static string RuntimeName() { return Type.GetType("Mono.Runtime") != null ? "Mono" : ".NET"; }

        /// <summary>
        /// n waits of cell c with the cell's own waiter (its warm-up, or its share of one
        /// round), on its method's worker thread or, for an async method, as an await loop
        /// on the pool; recorded into the cell when <paramref name="record"/>.
        /// </summary>
        private static void RunBlock(Cell c, int n, Dictionary<string, Worker> workers, bool record)
        {
            long d = c.DurationNs;
            long[] errs = c.Errors, rets = c.ReturnsNs;
            Waiter waiter = c.Waiter; // this cell's own, never another cell's
            if (!c.Method.Async)
            {
                workers[c.Method.Name].Run(() =>
                {
                    long cpu0 = Sys.ThreadCpuNs(), p0 = Sys.ProcessCpuNs(), w0 = (long)KeepTime.NowNs();
                    for (int i = 0; i < n; i++)
                    {
                        long start = (long)KeepTime.NowNs();
                        long? own = waiter.Wait(start, d);
                        // The caller's first reading after the call: the error's end
                        // and the return's; the method's own reading is converted after it.
                        long after = (long)KeepTime.NowNs();
                        if (record)
                        {
                            errs[c.N + i] = after - (start + d);
                            if (rets != null) rets[c.N + i] = Returns.Of(after, waiter.OwnNs(own.Value));
                        }
                    }
                    long w1 = (long)KeepTime.NowNs(), cpu1 = Sys.ThreadCpuNs(), p1 = Sys.ProcessCpuNs();
                    if (record) c.AddBlock(n, w1 - w0, p1 - p0, cpu1 - cpu0);
                });
            }
            else
            {
                long p0 = Sys.ProcessCpuNs(), w0 = (long)KeepTime.NowNs();
                Task.Run(async () =>
                {
                    for (int i = 0; i < n; i++)
                    {
                        long start = (long)KeepTime.NowNs();
                        await waiter.WaitAsync(start, d);
                        long after = (long)KeepTime.NowNs();
                        if (record) errs[c.N + i] = after - (start + d);
                    }
                }).Wait();
                long w1 = (long)KeepTime.NowNs(), p1 = Sys.ProcessCpuNs();
                if (record) c.AddBlock(n, w1 - w0, p1 - p0, null);
            }
        }

        // Nearest rank: x[max(ceil(q*n/1000), 1) - 1], in integers.
        internal static long Rank(long[] sorted, int permille) { return Returns.NearestRank(sorted, permille); }

        private static long[] Sorted(Cell c) { var s = (long[])c.Errors.Clone(); Array.Sort(s); return s; }
        private static double Pct(long cpu, long wall) { return wall > 0 ? 100.0 * cpu / wall : 0; }

        private static string Us(long ns) { return (ns / 1000.0).ToString("0.0", CultureInfo.InvariantCulture); }

        private static void PrintTable(List<Cell> cells, long[] durations)
        {
            Console.WriteLine();
            Console.WriteLine("error = caller's CLOCK_MONOTONIC reading after the call - deadline; return = that reading - the method's own last reading (\u2014: it has none); CPU over the measured samples");
            Console.WriteLine("{0,-15} {1,9} {2,7} {3,11} {4,11} {5,11} {6,6} {7,19} {8,8} {9,8}", "method", "duration", "n", "p50 us", "p99 us", "max us", "early", "return p50 \u00b7 p90", "thread%", "process%");
            foreach (var d in durations)
                foreach (var c in cells.Where(x => x.DurationNs == d))
                {
                    var s = Sorted(c);
                    Console.WriteLine("{0,-15} {1,9} {2,7} {3,11} {4,11} {5,11} {6,6} {7,19} {8,8} {9,8}", c.Method.Name,
                        d >= 1000000 ? (d / 1000000) + " ms" : (d / 1000) + " us", c.N, Us(Rank(s, 500)), Us(Rank(s, 990)), Us(s[s.Length - 1]),
                        s.Count(e => e < 0), Returns.Text(c.Return), c.HasThreadCpu ? Pct(c.ThreadCpuNs, c.WallNs).ToString("0.0", CultureInfo.InvariantCulture) : "-",
                        Pct(c.ProcessCpuNs, c.WallNs).ToString("0.0", CultureInfo.InvariantCulture));
                }
        }

        /// <summary>
        /// One line per keeptime cell under the table: what its sleeper says it spent on
        /// the measured sleeps (SleeperAccount.Line, the Rust bench's sleeper_line), against
        /// the thread CPU the bench measured for the cell.
        /// </summary>
        private static void PrintSleepers(List<Cell> cells)
        {
            var mine = cells.Where(c => c.Sleeper != null).ToList();
            if (mine.Count == 0) return;
            Console.WriteLine();
            Console.WriteLine("the sleeper's own account of the measured sleeps (Sleeper.Stats, reset after the warm-up; measured: thread CPU):");
            foreach (var c in mine)
            {
                long d = c.DurationNs;
                string label = c.Method.Name + " " + (d >= 1000000 ? (d / 1000000) + " ms" : (d / 1000) + " us");
                Console.WriteLine(c.Sleeper.Value.Line(label, d, Pct(c.ThreadCpuNs, c.WallNs)));
            }
        }

        private static int PrintTargets(List<Cell> cells)
        {
            Console.WriteLine();
            int missed = 0;
            Action<bool, string> line = (ok, text) => { Console.WriteLine((ok ? "met    " : "MISSED ") + text); if (!ok) missed++; };
            Func<string, long, Cell> cell = (m, d) => cells.First(c => c.Method.Name == m && c.DurationNs == d);
            foreach (var d in new long[] { 100000, 1000000, 10000000 })
            {
                long p50 = Rank(Sorted(cell("keeptime", d)), 500);
                line(p50 <= 1000, string.Format("Sleeper.SleepUntilNs p50 <= 1 us at {0} us: {1} ns", d / 1000, p50));
            }
            foreach (var d in new long[] { 1000000, 10000000 })
            {
                Cell k = cell("keeptime", d), b = cell("busy-loop", d);
                double kp = Pct(k.ThreadCpuNs, k.WallNs), bp = Pct(b.ThreadCpuNs, b.WallNs);
                line(kp * 5 <= bp, string.Format(CultureInfo.InvariantCulture, "Sleeper.SleepUntilNs thread CPU <= 1/5 of the busy loop's at {0} ms: {1:0.0} % vs {2:0.0} %", d / 1000000, kp, bp));
            }
            foreach (var d in new long[] { 100000, 1000000, 10000000 })
            {
                var s = Sorted(cell("keeptime-delay", d));
                long p50 = Rank(s, 500);
                int early = s.Count(e => e < 0);
                line(p50 <= 5000 && early == 0, string.Format("KeepTime.DelayUntil p50 <= 5 us and never early at {0} us: p50 {1} ns, {2} early", d / 1000, p50, early));
            }
            int kEarly = cells.Where(c => c.Method.IsKeepTime).Sum(c => c.Errors.Count(e => e < 0));
            line(kEarly == 0, "zero early returns for keeptime methods: " + kEarly);
            return missed;
        }

        // ---- JSON (spec/bench-result.md) ----

        private static string Q(string s)
        {
            if (s == null) return "null";
            var sb = new StringBuilder("\"");
            foreach (char ch in s)
            {
                if (ch == '"' || ch == '\\') sb.Append('\\').Append(ch);
                else if (ch < 0x20) sb.AppendFormat("\\u{0:x4}", (int)ch);
                else sb.Append(ch);
            }
            return sb.Append('"').ToString();
        }

        private static string F(double v) { return v.ToString("R", CultureInfo.InvariantCulture); }

        private static int Bits(long x) { int b = 0; while (x > 0) { b++; x >>= 1; } return b; }
        private static long Down(long x) { int b = Bits(x); return b <= 4 ? x : (x >> (b - 4)) << (b - 4); }
        private static long Up(long x) { long d = Down(x); return d == x ? d : d + (1L << (Bits(x) - 4)); }
        private static long Le(long v) { return v == 0 ? 0 : v > 0 ? Up(v) : -Down(-v); }
        private static long Gt(long le) { return le == 0 ? -1 : le > 0 ? Down(le - 1) : -Up(-le + 1); }

        private static string ReadFirst(string path)
        {
            try { return File.ReadAllText(path).Trim(); } catch (Exception) { return null; }
        }

        private static string CpuModel()
        {
            try
            {
                foreach (var l in File.ReadAllLines("/proc/cpuinfo"))
                    if (l.StartsWith("model name")) return l.Substring(l.IndexOf(':') + 1).Trim();
            }
            catch (Exception) { }
            return null;
        }

        private static string Json(DateTime created, long slack, string clocks, List<Method> methods, long[] durations, List<Cell> cells, double scale, int? warmup)
        {
            var sb = new StringBuilder();
            var clockDoc = clocks;
            string virt = null, preempt = null;
            int vi = clockDoc.IndexOf("\"hypervisor\":\"");
            if (vi >= 0) { int s = vi + 14; virt = clockDoc.Substring(s, clockDoc.IndexOf('"', s) - s); }
            int pi = clockDoc.IndexOf("\"preemption\":\"");
            if (pi >= 0) { int s = pi + 14; preempt = clockDoc.Substring(s, clockDoc.IndexOf('"', s) - s); }
            sb.Append("{\"format\":\"keeptime-bench\",\"version\":2,");
            sb.Append("\"created\":").Append(Q(created.ToString("yyyy-MM-ddTHH:mm:ssZ", CultureInfo.InvariantCulture))).Append(',');
            sb.Append("\"tool\":{\"name\":\"keeptime-bench-dotnet\",\"version\":").Append(Q(KeepTime.NativeVersion)).Append("},");
            sb.Append("\"runtime\":{\"language\":\"csharp\",\"name\":").Append(Q(RuntimeName().ToLowerInvariant())).Append(",\"version\":").Append(Q(Environment.Version.ToString())).Append("},");
            sb.Append("\"machine\":{\"os\":\"linux\",\"arch\":\"x86_64\",\"kernel\":").Append(Q(ReadFirst("/proc/sys/kernel/osrelease")))
              .Append(",\"cpu_model\":").Append(Q(CpuModel())).Append(",\"cpus\":").Append(Environment.ProcessorCount)
              .Append(",\"clocksource\":").Append(Q(ReadFirst("/sys/devices/system/clocksource/clocksource0/current_clocksource")))
              .Append(",\"timer_slack_ns\":").Append(slack).Append(",\"virtualization\":").Append(Q(virt)).Append(",\"preemption\":").Append(Q(preempt)).Append("},");
            sb.Append("\"parameters\":{\"schedule\":\"sleep\",\"cpu_clock\":\"process\",\"durations_ns\":[").Append(string.Join(",", durations)).Append("],");
            sb.Append("\"methods\":[").Append(string.Join(",", methods.Select(m => Q(m.Name)))).Append("],");
            // samples: null, the bench chose them (per cell, below); warmup: --warmup's count, or null when the bench chose them
            sb.Append("\"samples\":null,\"warmup\":").Append(warmup == null ? "null" : warmup.Value.ToString(CultureInfo.InvariantCulture)).Append(",\"budget_ns\":null,\"pin_cpu\":null,\"priority\":null,\"scale\":").Append(F(scale)).Append("},");
            sb.Append("\"methods\":[").Append(string.Join(",", methods.Select(m => "{\"name\":" + Q(m.Name) + ",\"description\":" + Q(m.Description) +
                ",\"family\":" + Q(m.Family) + ",\"may_return_early\":" + (m.MayReturnEarly ? "true" : "false") + "}"))).Append("],");
            sb.Append("\"results\":[");
            bool first = true;
            foreach (var c in cells)
            {
                var s = Sorted(c);
                long n = s.Length;
                double mean = s.Average(x => (double)x);
                double sd = n > 1 ? Math.Sqrt(s.Sum(x => (x - mean) * (x - mean)) / (n - 1)) : 0;
                var hist = new SortedDictionary<long, long>();
                foreach (var e in s) { long le = Le(e); long cnt; hist.TryGetValue(le, out cnt); hist[le] = cnt + 1; }
                if (!first) sb.Append(',');
                first = false;
                sb.Append("{\"method\":").Append(Q(c.Method.Name)).Append(",\"duration_ns\":").Append(c.DurationNs)
                  .Append(",\"warmup\":").Append(c.Warmup).Append(",\"timer_slack_ns\":").Append(c.SlackNs)
                  .Append(",\"samples\":").Append(n).Append(",\"min_ns\":").Append(s[0]).Append(",\"mean_ns\":").Append(F(mean))
                  .Append(",\"stddev_ns\":").Append(F(sd))
                  .Append(",\"p50_ns\":").Append(Rank(s, 500)).Append(",\"p90_ns\":").Append(Rank(s, 900))
                  .Append(",\"p99_ns\":").Append(Rank(s, 990)).Append(",\"p999_ns\":").Append(Rank(s, 999))
                  .Append(",\"max_ns\":").Append(s[n - 1]).Append(",\"early\":").Append(s.Count(e => e < 0))
                  .Append(",\"cpu_percent\":").Append(F(Pct(c.ProcessCpuNs, c.WallNs)))
                  .Append(",\"wall_ns\":").Append(c.WallNs).Append(",\"cpu_ns\":").Append(c.ProcessCpuNs);
                if (c.HasThreadCpu) sb.Append(",\"thread_cpu_ns\":").Append(c.ThreadCpuNs);
                // return_p50_ns and return_p90_ns, together, for methods with a reading of their own.
                sb.Append(Returns.Json(c.Return));
                // sleeper: keeptime's cells only, its own account of the measured sleeps.
                if (c.Sleeper != null) sb.Append(c.Sleeper.Value.Json());
                sb.Append(",\"histogram\":[").Append(string.Join(",", hist.Select(h => "{\"gt_ns\":" + Gt(h.Key) + ",\"le_ns\":" + h.Key + ",\"count\":" + h.Value + "}"))).Append("]}");
            }
            sb.Append("],");
            sb.Append("\"clocks\":").Append(clocks).Append('}');
            return sb.ToString();
        }
    }
}
