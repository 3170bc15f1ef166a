// The C# bench's command line. In a file of its own, using nothing but
// System, so that the NUnit suite compiles it too (mk/dotnet.mk's
// test-dotnet).
using System;
using System.Globalization;
using System.IO;

namespace Dev.KeepTime.Bench
{
    /// <summary>A command line the bench refuses; the message says why.</summary>
    internal sealed class UsageException : Exception
    {
        public UsageException(string message) : base(message) { }
    }

    internal sealed class BenchArgs
    {
        public const string Usage = "usage: keeptime-bench [--scale F] [--warmup N] [--json FILE] [--help]";

        public const string Help = Usage + @"

Every common way of waiting in C# against keeptime, in interleaved rounds;
each (method, duration) cell waits with a waiter made for it alone, warmed up,
then measured.

options:
  --scale F      scale every cell's sample count by F (> 0; default 1)
  --warmup N     warm-up waits per cell, a whole number 0 to 2147483647, for
                 every method (default: about 50 ms of waits, 10 to 1000; about
                 1 s, 10 to 3000, for keeptime and keeptime-delay, which learn)
  --json FILE    write the results to FILE (spec/bench-result.md)
  --help, -h     print this and exit";

        /// <summary>--scale: the sample counts' factor.</summary>
        public double Scale = 1;
        /// <summary>--json: where to write the results, or null.</summary>
        public string Json;
        /// <summary>--warmup: the warm-up count of every cell, or null for WarmupRule's.</summary>
        public int? Warmup;
        /// <summary>--help was given: print <see cref="Help"/> and exit 0.</summary>
        public bool ShowHelp;

        /// <summary>
        /// Parses the command line. Throws <see cref="UsageException"/> for an
        /// unknown option, an option without its value or a bad value.
        /// --help (-h) stops parsing: what follows it is not looked at.
        /// </summary>
        public static BenchArgs Parse(string[] args)
        {
            var a = new BenchArgs();
            for (int i = 0; i < args.Length; i++)
            {
                string arg = args[i];
                if (arg == "--help" || arg == "-h") { a.ShowHelp = true; return a; }
                if (arg == "--scale") a.Scale = ParseScale(Value(args, ref i));
                else if (arg == "--warmup") a.Warmup = ParseWarmup(Value(args, ref i));
                else if (arg == "--json") a.Json = Value(args, ref i);
                else throw new UsageException("unknown argument " + Quoted(arg));
            }
            return a;
        }

        /// <summary>
        /// Parses the command line for Main: null to run with <paramref name="parsed"/>;
        /// else the exit code, after the help on <paramref name="stdout"/> (0) or the
        /// error and the usage on <paramref name="stderr"/> (2).
        /// </summary>
        public static int? FromCommandLine(string[] args, TextWriter stdout, TextWriter stderr, out BenchArgs parsed)
        {
            parsed = null;
            BenchArgs a;
            try
            {
                a = Parse(args);
            }
            catch (UsageException e)
            {
                stderr.WriteLine("keeptime-bench: " + e.Message);
                stderr.WriteLine(Usage);
                stderr.WriteLine("keeptime-bench --help lists the options");
                return 2;
            }
            if (a.ShowHelp)
            {
                stdout.WriteLine(Help);
                return 0;
            }
            parsed = a;
            return null;
        }

        /// <summary>The value after option args[i]; i moves onto it.</summary>
        private static string Value(string[] args, ref int i)
        {
            if (i + 1 >= args.Length)
                throw new UsageException(args[i] + " needs a value: " + (args[i] == "--warmup" ? "a whole number of warm-up waits per cell, e.g. 20"
                    : args[i] == "--scale" ? "a positive number, e.g. 0.25" : "a file name"));
            return args[++i];
        }

        /// <summary>--warmup's value: a whole number, 0 to int.MaxValue, digits only.</summary>
        internal static int ParseWarmup(string s)
        {
            string q = Quoted(s);
            if (s.StartsWith("-", StringComparison.Ordinal) && s.Length > 1 && char.IsDigit(s[1]))
                throw new UsageException("--warmup: negative warm-up count " + q + ": expected a whole number, e.g. 20");
            if (s.Length == 0)
                throw new UsageException("--warmup: empty warm-up count: expected a whole number, e.g. 20");
            foreach (char c in s)
                if (c < '0' || c > '9')
                    throw new UsageException("--warmup: invalid warm-up count " + q + ": expected a whole number, e.g. 20");
            int n;
            if (!int.TryParse(s, NumberStyles.None, CultureInfo.InvariantCulture, out n))
                throw new UsageException("--warmup: warm-up count " + q + " is too large: at most " + int.MaxValue);
            return n;
        }

        /// <summary>--scale's value: a finite number above 0.</summary>
        internal static double ParseScale(string s)
        {
            double v;
            if (!double.TryParse(s, NumberStyles.Float, CultureInfo.InvariantCulture, out v) || double.IsNaN(v) || double.IsInfinity(v))
                throw new UsageException("--scale: invalid scale " + Quoted(s) + ": expected a positive number, e.g. 0.25");
            if (!(v > 0))
                throw new UsageException("--scale: scale " + Quoted(s) + " is not positive: expected a positive number, e.g. 0.25");
            return v;
        }

        private static string Quoted(string s) { return "'" + s + "'"; }
    }
}
