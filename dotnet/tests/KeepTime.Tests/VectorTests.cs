// The spec's ticker vectors (spec/vectors/ticker.json), replayed through the
// C ABI's schedule as the C tests do: one NUnit case per vector.
using System;
using System.Collections.Generic;
using System.IO;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class VectorTests
    {
        internal static string SpecDir
        {
            get
            {
                string dir = Environment.GetEnvironmentVariable("KEEPTIME_SPEC_DIR");
                if (string.IsNullOrEmpty(dir)) throw new InvalidOperationException("KEEPTIME_SPEC_DIR is not set (make test-dotnet sets it)");
                return dir;
            }
        }

        public static IEnumerable<TestCaseData> Cases()
        {
            var doc = Json.Parse(File.ReadAllText(Path.Combine(SpecDir, "vectors", "ticker.json")));
            foreach (var c in doc["cases"].Items)
                yield return new TestCaseData(c).SetName("ticker_vector_" + c["name"].Text);
        }

        private static MissedTicks Policy(string name)
        {
            switch (name)
            {
                case "skip": return MissedTicks.Skip;
                case "burst": return MissedTicks.Burst;
                case "delay": return MissedTicks.Delay;
                default: throw new ArgumentException("unknown policy " + name);
            }
        }

        [Test]
        public void TheVectorFileHasCases()
        {
            var doc = Json.Parse(File.ReadAllText(Path.Combine(SpecDir, "vectors", "ticker.json")));
            Assert.That(doc["cases"].Items.Count, Is.GreaterThan(5));
        }

        [TestCaseSource("Cases")]
        public void Replay(object vector)
        {
            var c = (Json)vector;
            using (var s = new Schedule(c["start_ns"].U64, c["period_ns"].U64, Policy(c["policy"].Text)))
            {
                int i = 0;
                foreach (var step in c["steps"].Items)
                {
                    string at = "step " + i++;
                    if (step.Has("tick_at"))
                    {
                        var expect = step["expect"];
                        var st = s.Poll(step["tick_at"].U64);
                        Tick tick;
                        if (expect["wait_until_ns"].Type == Json.Kind.Null)
                        {
                            Assert.IsFalse(st.Wait, at);
                            tick = st.Tick;
                        }
                        else
                        {
                            Assert.IsTrue(st.Wait, at);
                            Assert.AreEqual(expect["wait_until_ns"].U64, st.DeadlineNs, at);
                            tick = s.Woke(step["wake_ns"].U64);
                        }
                        Assert.AreEqual(expect["index"].U64, (ulong)tick.Index, at + " index");
                        Assert.AreEqual(expect["scheduled_ns"].U64, tick.ScheduledNs, at + " scheduled");
                        Assert.AreEqual(expect["lateness_ns"].U64, (ulong)tick.LatenessNs, at + " lateness");
                        Assert.AreEqual(expect["skipped"].U64, (ulong)tick.Skipped, at + " skipped");
                    }
                    else if (step.Has("reset_at"))
                    {
                        s.Reset(step["reset_at"].U64);
                    }
                    else if (step.Has("set_period"))
                    {
                        ulong p = step["set_period"].U64;
                        if (step["expect_error"].Bool)
                            Assert.Throws<ArgumentOutOfRangeException>(() => s.SetPeriod(p), at);
                        else
                            s.SetPeriod(p);
                    }
                    else if (step.Has("expect_stats"))
                    {
                        var e = step["expect_stats"];
                        var got = s.Stats;
                        Assert.AreEqual(e["ticks"].U64, (ulong)got.Ticks, at + " ticks");
                        Assert.AreEqual(e["missed"].U64, (ulong)got.Missed, at + " missed");
                        Assert.AreEqual(e["skipped"].U64, (ulong)got.Skipped, at + " skipped");
                        Assert.AreEqual(e["worst_lateness_ns"].U64, (ulong)got.WorstLatenessNs, at + " worst");
                    }
                    else
                    {
                        Assert.Fail(at + ": a step kind this replayer does not know (the spec changed)");
                    }
                }
            }
        }
    }
}
