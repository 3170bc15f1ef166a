// keeptime-bench for .NET: every common way of waiting in C# against
// KeepTime.Sleep and KeepTime.Delay, in one run, in interleaved rounds,
// measured from the caller: error = the caller's CLOCK_MONOTONIC reading right
// after the wait returns - the deadline. Writes spec/bench-result.md's JSON.
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

    internal sealed class Method
    {
        public string Name, Description, Family;
        public bool Async, MayReturnEarly, IsKeepTime;
        public bool Learns;                        // its sleeper learns from its own waits: a longer warm-up (WarmupRule)
        public Action<long, long> Wait;            // sync: (start ns, duration ns), returns at/after the deadline
        public Func<long, Task> WaitAsync;         // async: (duration ns)
    }

    internal sealed class Cell
    {
        public Method Method;
        public long DurationNs;
        public int Warmup;                         // unrecorded waits before the cell
        public long[] Errors;
        public int N;
        public long ThreadCpuNs, ProcessCpuNs, WallNs, SlackNs;
        public bool HasThreadCpu;
    }

    /// <summary>A thread of its own per synchronous method, so each keeps its own timer slack and CPU clock.</summary>
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

        private static long SwDeadline(long startNs, long durNs)
        {
            // The Stopwatch reading at which CLOCK_MONOTONIC is at or past start + d.
            return (long)Math.Ceiling((decimal)(startNs + durNs) * Freq / 1000000000m);
        }

        private static List<Method> Methods()
        {
            return new List<Method>
            {
                new Method { Name = "busy-loop", Family = "busy loop", Description = "while (Stopwatch.GetTimestamp() < deadline) {} (a whole core)",
                    Wait = (s, d) => { long dl = SwDeadline(s, d); while (Stopwatch.GetTimestamp() < dl) { } } },
                new Method { Name = "spin-pause", Family = "spin with pause", Description = "Thread.SpinWait(1) in a loop on Stopwatch (the CPU's pause hint)",
                    Wait = (s, d) => { long dl = SwDeadline(s, d); while (Stopwatch.GetTimestamp() < dl) Thread.SpinWait(1); } },
                new Method { Name = "yield-loop", Family = "yield loop", Description = "Thread.Yield() in a loop on Stopwatch",
                    Wait = (s, d) => { long dl = SwDeadline(s, d); while (Stopwatch.GetTimestamp() < dl) Thread.Yield(); } },
                new Method { Name = "thread-sleep", Family = "OS sleep", MayReturnEarly = true, Description = "Thread.Sleep(TimeSpan) (Mono truncates to whole ms and can return early)",
                    Wait = (s, d) => Thread.Sleep(TimeSpan.FromTicks(d / 100)) },
                new Method { Name = "hybrid-1ms", Family = "sleep-then-spin hybrid", Description = "the 1 ms sleep-then-spin hybrid: Thread.Sleep to 1 ms before the deadline, then a busy loop",
                    Wait = (s, d) => { long dl = SwDeadline(s, d); if (d > 1000000) Thread.Sleep(TimeSpan.FromTicks((d - 1000000) / 100)); while (Stopwatch.GetTimestamp() < dl) { } } },
                new Method { Name = "keeptime", IsKeepTime = true, Learns = true, Family = "keeptime", Description = "KeepTime.Sleep(TimeSpan): the thread's exact sleeper (OS wait to a learned margin, then a spin)",
                    Wait = (s, d) => KeepTime.Sleep(TimeSpan.FromTicks(d / 100)) },
                new Method { Name = "task-delay", Async = true, Family = "async timer", Description = "await Task.Delay(TimeSpan) on the thread pool",
                    WaitAsync = d => Task.Delay(TimeSpan.FromTicks(d / 100)) },
                new Method { Name = "keeptime-delay", Async = true, IsKeepTime = true, Learns = true, Family = "keeptime", Description = "await KeepTime.Delay(TimeSpan) on the thread pool: keeptime's waiter calls back a learned lead early, a pool thread spins the rest",
                    WaitAsync = d => KeepTime.Delay(TimeSpan.FromTicks(d / 100)) },
            };
        }

        private static int Main(string[] args)
        {
            double scale = 1;
            string json = null;
            for (int i = 0; i < args.Length; i++)
            {
                if (args[i] == "--scale") scale = double.Parse(args[++i], CultureInfo.InvariantCulture);
                else if (args[i] == "--json") json = args[++i];
                else { Console.Error.WriteLine("usage: keeptime-bench [--scale F] [--json FILE]"); return 2; }
            }
            if (!(scale > 0)) { Console.Error.WriteLine("--scale must be positive"); return 2; }
            DateTime created = DateTime.UtcNow;
            long startSlack = Sys.TimerSlackNs();
            string clocks = KeepTime.ClocksJson(); // before any keeptime sleep on this thread

            long[] durations = { 100000, 1000000, 10000000 };
            var samples = new Dictionary<long, int> { { 100000, 4000 }, { 1000000, 2000 }, { 10000000, 300 } };
            const int rounds = 10;
            var methods = Methods();
            var workers = methods.Where(m => !m.Async).ToDictionary(m => m.Name, m => new Worker("bench-" + m.Name));
            var cells = new List<Cell>();
            foreach (var d in durations)
                foreach (var m in methods)
                {
                    int n = Math.Max(rounds, (int)(samples[d] * scale) / rounds * rounds);
                    cells.Add(new Cell { Method = m, DurationNs = d, Warmup = WarmupRule.Default(m.Learns, d), Errors = new long[n], SlackNs = startSlack });
                }

            Console.WriteLine("keeptime-bench (.NET): {0}, Stopwatch {1} Hz, {2} methods x {3} durations, {4} interleaved rounds",
                KeepTime.NativeVersion == null ? "" : RuntimeName(), Freq, methods.Count, durations.Length, rounds);
            Console.WriteLine("warm-up per cell, not recorded: about 1 s of waits (at most 3000) for {0}, which learn; about 50 ms (at most 1000) for the others",
                string.Join(" and ", methods.Where(m => m.Learns).Select(m => m.Name)));
            // Warm-up: every cell, not recorded.
            foreach (var c in cells) RunBlock(c, c.Warmup, workers, record: false);
            for (int r = 0; r < rounds; r++)
                foreach (var c in cells) RunBlock(c, c.Errors.Length / rounds, workers, record: true);
            foreach (var c in cells) if (c.Method.Name == "keeptime") c.SlackNs = 1;

            PrintTable(cells, durations);
            PrintTargets(cells);
            if (json != null)
            {
                File.WriteAllText(json, Json(created, startSlack, clocks, methods, durations, cells, scale));
                Console.WriteLine("wrote " + json);
            }
            return 0;
        }

        private static string RuntimeName() { return Type.GetType("Mono.Runtime") != null ? "Mono" : ".NET"; }

        private static void RunBlock(Cell c, int n, Dictionary<string, Worker> workers, bool record)
        {
            long d = c.DurationNs;
            long[] errs = c.Errors;
            if (!c.Method.Async)
            {
                var wait = c.Method.Wait;
                workers[c.Method.Name].Run(() =>
                {
                    long cpu0 = Sys.ThreadCpuNs(), p0 = Sys.ProcessCpuNs(), w0 = (long)KeepTime.NowNs();
                    for (int i = 0; i < n; i++)
                    {
                        long start = (long)KeepTime.NowNs();
                        wait(start, d);
                        long after = (long)KeepTime.NowNs();
                        if (record) errs[c.N + i] = after - (start + d);
                    }
                    long w1 = (long)KeepTime.NowNs(), cpu1 = Sys.ThreadCpuNs(), p1 = Sys.ProcessCpuNs();
                    if (record) { c.ThreadCpuNs += cpu1 - cpu0; c.ProcessCpuNs += p1 - p0; c.WallNs += w1 - w0; c.HasThreadCpu = true; }
                });
            }
            else
            {
                var waitAsync = c.Method.WaitAsync;
                long p0 = Sys.ProcessCpuNs(), w0 = (long)KeepTime.NowNs();
                Task.Run(async () =>
                {
                    for (int i = 0; i < n; i++)
                    {
                        long start = (long)KeepTime.NowNs();
                        await waitAsync(d);
                        long after = (long)KeepTime.NowNs();
                        if (record) errs[c.N + i] = after - (start + d);
                    }
                }).Wait();
                long w1 = (long)KeepTime.NowNs(), p1 = Sys.ProcessCpuNs();
                if (record) { c.ProcessCpuNs += p1 - p0; c.WallNs += w1 - w0; }
            }
            if (record) c.N += n;
        }

        // Nearest rank: x[max(ceil(q*n/1000), 1) - 1], in integers.
        internal static long Rank(long[] sorted, int permille)
        {
            long n = sorted.Length;
            long k = Math.Max((permille * n + 999) / 1000, 1);
            return sorted[k - 1];
        }

        private static long[] Sorted(Cell c) { var s = (long[])c.Errors.Clone(); Array.Sort(s); return s; }
        private static double Pct(long cpu, long wall) { return wall > 0 ? 100.0 * cpu / wall : 0; }

        private static string Us(long ns) { return (ns / 1000.0).ToString("0.0", CultureInfo.InvariantCulture); }

        private static void PrintTable(List<Cell> cells, long[] durations)
        {
            Console.WriteLine();
            Console.WriteLine("error = caller's CLOCK_MONOTONIC reading after the call - deadline; CPU over the measured samples");
            Console.WriteLine("{0,-15} {1,9} {2,7} {3,11} {4,11} {5,11} {6,6} {7,8} {8,8}", "method", "duration", "n", "p50 us", "p99 us", "max us", "early", "thread%", "process%");
            foreach (var d in durations)
                foreach (var c in cells.Where(x => x.DurationNs == d))
                {
                    var s = Sorted(c);
                    Console.WriteLine("{0,-15} {1,9} {2,7} {3,11} {4,11} {5,11} {6,6} {7,8} {8,8}", c.Method.Name,
                        d >= 1000000 ? (d / 1000000) + " ms" : (d / 1000) + " us", c.N, Us(Rank(s, 500)), Us(Rank(s, 990)), Us(s[s.Length - 1]),
                        s.Count(e => e < 0), c.HasThreadCpu ? Pct(c.ThreadCpuNs, c.WallNs).ToString("0.0", CultureInfo.InvariantCulture) : "-",
                        Pct(c.ProcessCpuNs, c.WallNs).ToString("0.0", CultureInfo.InvariantCulture));
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
                line(p50 <= 1000, string.Format("KeepTime.Sleep p50 <= 1 us at {0} us: {1} ns", d / 1000, p50));
            }
            foreach (var d in new long[] { 1000000, 10000000 })
            {
                Cell k = cell("keeptime", d), b = cell("busy-loop", d);
                double kp = Pct(k.ThreadCpuNs, k.WallNs), bp = Pct(b.ThreadCpuNs, b.WallNs);
                line(kp * 5 <= bp, string.Format(CultureInfo.InvariantCulture, "KeepTime.Sleep thread CPU <= 1/5 of the busy loop's at {0} ms: {1:0.0} % vs {2:0.0} %", d / 1000000, kp, bp));
            }
            foreach (var d in new long[] { 100000, 1000000, 10000000 })
            {
                var s = Sorted(cell("keeptime-delay", d));
                long p50 = Rank(s, 500);
                int early = s.Count(e => e < 0);
                line(p50 <= 5000 && early == 0, string.Format("KeepTime.Delay p50 <= 5 us and never early at {0} us: p50 {1} ns, {2} early", d / 1000, p50, early));
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

        private static string Json(DateTime created, long slack, string clocks, List<Method> methods, long[] durations, List<Cell> cells, double scale)
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
            // samples and warmup: null, the bench chose them (per cell, below)
            sb.Append("\"samples\":null,\"warmup\":null,\"budget_ns\":null,\"pin_cpu\":null,\"priority\":null,\"scale\":").Append(F(scale)).Append("},");
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
                sb.Append(",\"histogram\":[").Append(string.Join(",", hist.Select(h => "{\"gt_ns\":" + Gt(h.Key) + ",\"le_ns\":" + h.Key + ",\"count\":" + h.Value + "}"))).Append("]}");
            }
            sb.Append("],");
            sb.Append("\"clocks\":").Append(clocks).Append('}');
            return sb.ToString();
        }
    }
}
