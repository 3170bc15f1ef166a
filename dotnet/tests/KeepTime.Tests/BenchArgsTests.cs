// The C# bench's command line (dotnet/bench/BenchArgs.cs, compiled into this
// suite by mk/dotnet.mk): --warmup, --scale, --json, --help and the usage
// errors, with the exit codes Main returns.
using System;
using System.IO;
using Dev.KeepTime.Bench;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class BenchArgsTests
    {
        private static string UsageError(params string[] args)
        {
            var e = Assert.Throws<UsageException>(() => BenchArgs.Parse(args));
            return e.Message;
        }

        [Test]
        public void NoArgumentsLeaveTheBenchToChoose()
        {
            var a = BenchArgs.Parse(new string[0]);
            Assert.IsNull(a.Warmup);   // WarmupRule per cell; the JSON's parameters.warmup is null
            Assert.AreEqual(1.0, a.Scale);
            Assert.IsNull(a.Json);
            Assert.IsFalse(a.ShowHelp);
        }

        [Test]
        public void WarmupTakesAWholeNumberOfWaits()
        {
            Assert.AreEqual(20, BenchArgs.Parse(new[] { "--warmup", "20" }).Warmup);
            Assert.AreEqual(0, BenchArgs.Parse(new[] { "--warmup", "0" }).Warmup);
            Assert.AreEqual(int.MaxValue, BenchArgs.Parse(new[] { "--warmup", "2147483647" }).Warmup);
            Assert.AreEqual(7, BenchArgs.Parse(new[] { "--warmup", "007" }).Warmup);
            Assert.AreEqual(5, BenchArgs.Parse(new[] { "--warmup", "9", "--warmup", "5" }).Warmup); // the last one counts
        }

        [Test]
        public void WarmupGoesWithTheOtherOptions()
        {
            var a = BenchArgs.Parse(new[] { "--scale", "0.25", "--warmup", "50", "--json", "out.json" });
            Assert.AreEqual(50, a.Warmup);
            Assert.AreEqual(0.25, a.Scale);
            Assert.AreEqual("out.json", a.Json);
        }

        [Test]
        public void ANegativeWarmupIsRefused()
        {
            Assert.AreEqual("--warmup: negative warm-up count '-1': expected a whole number, e.g. 20", UsageError("--warmup", "-1"));
            StringAssert.Contains("negative warm-up count '-20'", UsageError("--scale", "2", "--warmup", "-20"));
        }

        [Test]
        public void AWarmupThatIsNotAWholeNumberIsRefused()
        {
            foreach (var bad in new[] { "abc", "1.5", "1e3", "+3", " 3", "3 ", "0x10", "20ms", "--json", "-", "\u0663" })
                Assert.AreEqual("--warmup: invalid warm-up count '" + bad + "': expected a whole number, e.g. 20", UsageError("--warmup", bad), bad);
            Assert.AreEqual("--warmup: empty warm-up count: expected a whole number, e.g. 20", UsageError("--warmup", ""));
        }

        [Test]
        public void AWarmupPastIntMaxValueIsRefused()
        {
            Assert.AreEqual("--warmup: warm-up count '2147483648' is too large: at most 2147483647", UsageError("--warmup", "2147483648"));
            StringAssert.Contains("too large", UsageError("--warmup", "99999999999999999999999"));
        }

        [Test]
        public void AnOptionWithoutItsValueIsRefused()
        {
            Assert.AreEqual("--warmup needs a value: a whole number of warm-up waits per cell, e.g. 20", UsageError("--warmup"));
            Assert.AreEqual("--warmup needs a value: a whole number of warm-up waits per cell, e.g. 20", UsageError("--scale", "1", "--warmup"));
            StringAssert.StartsWith("--scale needs a value", UsageError("--scale"));
            StringAssert.StartsWith("--json needs a value", UsageError("--json"));
        }

        [Test]
        public void BadScalesAndUnknownArgumentsAreRefused()
        {
            StringAssert.Contains("not positive", UsageError("--scale", "0"));
            StringAssert.Contains("not positive", UsageError("--scale", "-1"));
            StringAssert.Contains("invalid scale 'NaN'", UsageError("--scale", "NaN"));
            StringAssert.Contains("invalid scale 'Infinity'", UsageError("--scale", "Infinity"));
            StringAssert.Contains("invalid scale 'x'", UsageError("--scale", "x"));
            Assert.AreEqual("unknown argument '--warmups'", UsageError("--warmups", "3"));
            Assert.AreEqual("unknown argument '20'", UsageError("20"));
        }

        [Test]
        public void MainExitsTwoWithTheErrorAndTheUsageOnStderr()
        {
            var stdout = new StringWriter();
            var stderr = new StringWriter();
            BenchArgs parsed;
            int? exit = BenchArgs.FromCommandLine(new[] { "--warmup", "-5" }, stdout, stderr, out parsed);
            Assert.AreEqual(2, exit);
            Assert.IsNull(parsed);
            Assert.AreEqual("", stdout.ToString());
            var lines = stderr.ToString().Split(new[] { Environment.NewLine }, StringSplitOptions.RemoveEmptyEntries);
            Assert.AreEqual("keeptime-bench: --warmup: negative warm-up count '-5': expected a whole number, e.g. 20", lines[0]);
            Assert.AreEqual(BenchArgs.Usage, lines[1]);
        }

        [Test]
        public void HelpExitsZeroAndDocumentsWarmup()
        {
            var stdout = new StringWriter();
            var stderr = new StringWriter();
            BenchArgs parsed;
            // --help wins over what follows it, even a bad value.
            int? exit = BenchArgs.FromCommandLine(new[] { "--help", "--warmup", "-1" }, stdout, stderr, out parsed);
            Assert.AreEqual(0, exit);
            Assert.IsNull(parsed);
            Assert.AreEqual("", stderr.ToString());
            StringAssert.StartsWith(BenchArgs.Usage, stdout.ToString());
            StringAssert.Contains("--warmup N", stdout.ToString());
            Assert.IsTrue(BenchArgs.Parse(new[] { "-h" }).ShowHelp);
        }

        [Test]
        public void AGoodCommandLineRuns()
        {
            var stdout = new StringWriter();
            var stderr = new StringWriter();
            BenchArgs parsed;
            int? exit = BenchArgs.FromCommandLine(new[] { "--warmup", "3", "--json", "b.json" }, stdout, stderr, out parsed);
            Assert.IsNull(exit);
            Assert.AreEqual(3, parsed.Warmup);
            Assert.AreEqual("b.json", parsed.Json);
            Assert.AreEqual("", stdout.ToString() + stderr.ToString());
        }
    }
}
