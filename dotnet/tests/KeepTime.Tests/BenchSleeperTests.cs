// The C# bench's sleeper account (dotnet/bench/Cells.cs and Methods.cs,
// compiled into this suite by mk/dotnet.mk): a keeptime cell's Sleeper says
// what it spent on the measured sleeps, in a line under the table worded as
// the Rust bench's sleeper_line, and as the cell's optional "sleeper" object
// of spec/bench-result.md. No timing assertions: synthetic stats, counts,
// and a deadline in the past or a short sleep whose length is not checked.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Dev.KeepTime.Bench;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class BenchSleeperTests
    {
        // The Rust bench's test case (crates/keeptime-cli/src/output/mod.rs,
        // the_sleeper_line_says_when_it_is_still_learning): 200 sleeps at 10 ms.
        private static SleepStats Synthetic(long unproven)
        {
            return new SleepStats
            {
                Sleeps = 200,
                Late = 2,
                OsWaits = 206,
                Spin = TimeSpan.FromTicks(200 * 29000), // 200 × 2.9 ms
                CpuEstimateNs = 200 * 2910000L,
                UnprovenSleeps = unproven,
            };
        }

        private const string Proven =
            "keeptime 10 ms (tail target 1 %): 1.00 % of sleeps late by the OS (woke after the deadline), " +
            "1.03 OS waits and 2.9 ms of spin per sleep, estimated CPU 29.10 % (measured 31.25 %)";

        [Test]
        public void TheAccountTakesTheStatsFieldsAndTheTarget()
        {
            var a = SleeperAccount.From(Synthetic(187), TailTarget.Balanced);
            Assert.AreEqual(10000, a.TailTargetPpm);
            Assert.AreEqual(200, a.Sleeps);
            Assert.AreEqual(2, a.Late);
            Assert.AreEqual(206, a.OsWaits);
            Assert.AreEqual(580000000L, a.SpinNs, "Spin (a TimeSpan) in ns");
            Assert.AreEqual(582000000L, a.CpuEstimateNs);
            Assert.AreEqual(187, a.UnprovenSleeps);
            Assert.AreEqual(1000, SleeperAccount.From(Synthetic(0), TailTarget.Strict).TailTargetPpm);
            Assert.AreEqual(50000, SleeperAccount.From(Synthetic(0), TailTarget.Relaxed).TailTargetPpm);
            Assert.AreEqual(2000, SleeperAccount.From(Synthetic(0), TailTarget.FromShare(0.002)).TailTargetPpm);
            Assert.AreEqual(1, SleeperAccount.From(Synthetic(0), TailTarget.FromShare(0.000001)).TailTargetPpm);
        }

        [Test]
        public void TheLineIsTheRustBenchsWithoutUnprovenSleeps()
        {
            var a = SleeperAccount.From(Synthetic(0), TailTarget.Balanced);
            string line = a.Line("keeptime 10 ms", 10000000, 31.25);
            Assert.AreEqual(Proven, line);
            StringAssert.DoesNotContain("not yet established", line);
        }

        [Test]
        public void TheLineSaysWhenTheSleeperIsStillLearning()
        {
            var a = SleeperAccount.From(Synthetic(187), TailTarget.Balanced);
            Assert.AreEqual(Proven + "; 187 of 200 sleeps planned on margins not yet established at the target " +
                "(still learning: a larger --warmup measures its steady state)", a.Line("keeptime 10 ms", 10000000, 31.25));
        }

        [Test]
        public void TheLineWritesOtherTargetsAndShortSpins()
        {
            // 0.1 %, 3 sleeps at 100 µs: 1 late, 4 OS waits, 2.5 µs of spin and
            // 30 µs of CPU estimate per sleep (100 ns ticks of spin: 7.5 µs in all).
            var st = new SleepStats { Sleeps = 3, Late = 1, OsWaits = 4, Spin = TimeSpan.FromTicks(75), CpuEstimateNs = 90000, UnprovenSleeps = 3 };
            Assert.AreEqual("keeptime 100 us (tail target 0.1 %): 33.33 % of sleeps late by the OS (woke after the deadline), " +
                "1.33 OS waits and 2.5 \u00b5s of spin per sleep, estimated CPU 30.00 % (measured 75.90 %); " +
                "3 of 3 sleeps planned on margins not yet established at the target (still learning: a larger --warmup measures its steady state)",
                SleeperAccount.From(st, TailTarget.Strict).Line("keeptime 100 us", 100000, 75.9));
            // No sleep at all (every deadline already past): no division by zero.
            Assert.AreEqual("keeptime 1 ms (tail target 5 %): 0.00 % of sleeps late by the OS (woke after the deadline), " +
                "0.00 OS waits and 0 ns of spin per sleep, estimated CPU 0.00 % (measured 0.00 %)",
                SleeperAccount.From(new SleepStats(), TailTarget.Relaxed).Line("keeptime 1 ms", 1000000, 0));
        }

        [Test]
        public void DurationsAreWrittenAsTheRustBenchWritesThem()
        {
            Assert.AreEqual("0 ns", SleeperAccount.Duration(0));
            Assert.AreEqual("850 ns", SleeperAccount.Duration(850));
            Assert.AreEqual("1 \u00b5s", SleeperAccount.Duration(1000));
            Assert.AreEqual("12.345 \u00b5s", SleeperAccount.Duration(12345));
            Assert.AreEqual("2.9 ms", SleeperAccount.Duration(2900000));
            Assert.AreEqual("1.000001 ms", SleeperAccount.Duration(1000001));
            Assert.AreEqual("3 s", SleeperAccount.Duration(3000000000L));
        }

        [Test]
        public void TheJsonObjectIsTheSchemasSleeper()
        {
            var a = SleeperAccount.From(Synthetic(187), TailTarget.Balanced);
            // What the bench appends to a cell's object, in a cell of its own.
            var cell = Json.Parse("{\"method\":\"keeptime\"" + a.Json() + "}");
            CollectionAssert.AreEquivalent(new[] { "method", "sleeper" }, cell.Fields.Keys.ToArray());
            var obj = cell["sleeper"];
            Assert.AreEqual(Json.Kind.Object, obj.Type);
            var expected = new Dictionary<string, string>
            {
                { "tail_target_ppm", "10000" }, { "sleeps", "200" }, { "late", "2" }, { "os_waits", "206" },
                { "spin_ns", "580000000" }, { "cpu_estimate_ns", "582000000" }, { "unproven_sleeps", "187" },
            };
            CollectionAssert.AreEquivalent(expected.Keys.ToArray(), obj.Fields.Keys.ToArray());
            foreach (var kv in expected) Assert.AreEqual(kv.Value, obj[kv.Key].Text, kv.Key);

            // Against spec/bench-result.schema.json: the cell's "sleeper" property,
            // every field one of its properties, every required one there, each an
            // integer (no sign, point or exponent) within its minimum and maximum.
            var schema = Json.Parse(File.ReadAllText(Path.Combine(VectorTests.SpecDir, "bench-result.schema.json")));
            var cellDef = schema["$defs"]["cell"];
            Assert.IsFalse(cellDef["required"].Items.Any(i => i.Text == "sleeper"), "optional in the format");
            var def = cellDef["properties"]["sleeper"];
            Assert.AreEqual("object", def["type"].Text);
            CollectionAssert.AreEquivalent(def["properties"].Fields.Keys.ToArray(), obj.Fields.Keys.ToArray(),
                "the schema's fields, unproven_sleeps (optional) included");
            foreach (var req in def["required"].Items) Assert.IsTrue(obj.Has(req.Text), req.Text);
            CollectionAssert.DoesNotContain(def["required"].Items.Select(i => i.Text).ToArray(), "unproven_sleeps");
            foreach (var kv in obj.Fields)
            {
                var p = def["properties"][kv.Key];
                Assert.AreEqual("integer", p["type"].Text, kv.Key);
                Assert.AreEqual(Json.Kind.Number, kv.Value.Type, kv.Key);
                ulong v = kv.Value.U64; // throws on a sign, point or exponent
                if (p.Has("minimum")) Assert.GreaterOrEqual(v, p["minimum"].U64, kv.Key);
                if (p.Has("maximum")) Assert.LessOrEqual(v, p["maximum"].U64, kv.Key);
            }
        }

        [Test]
        public void OnlyKeeptimesCellsHaveAnAccountAndItStartsAfreshOnReset()
        {
            var cells = BenchCellsTests.OneDuration();
            try
            {
                foreach (var c in cells)
                {
                    Assert.IsNull(c.Sleeper, c.Method.Name + ": nothing read yet");
                    Assert.AreEqual(c.Method.Name == "keeptime", c.Waiter.Account() != null, c.Method.Name);
                    c.Waiter.ResetAccount(); // nothing for the others
                }
                Waiter w = cells.Single(c => c.Method.Name == "keeptime").Waiter;
                SleeperAccount a = w.Account().Value;
                Assert.AreEqual(10000, a.TailTargetPpm, "the default sleeper's target, 1 %");
                Assert.AreEqual(0, a.Sleeps);
                // One sleep that has to wait (50 ms, which no preemption outlasts; its
                // length is not checked): counted, then gone after a reset, as after
                // the bench's warm-up.
                long start = (long)KeepTime.NowNs();
                w.Wait(start, 50000000);
                a = w.Account().Value;
                Assert.AreEqual(1, a.Sleeps);
                Assert.GreaterOrEqual(a.OsWaits + a.SpinNs, 1, "it waited somehow");
                w.ResetAccount();
                a = w.Account().Value;
                Assert.AreEqual(0, a.Sleeps);
                Assert.AreEqual(0, a.OsWaits);
                Assert.AreEqual(0, a.SpinNs);
                Assert.AreEqual(0, a.CpuEstimateNs);
                Assert.AreEqual(10000, a.TailTargetPpm, "the target stays");
                // The cells take it as the bench does after the last round: keeptime's only.
                foreach (var c in cells)
                {
                    c.TakeAccount();
                    Assert.AreEqual(c.Method.Name == "keeptime", c.Sleeper != null, c.Method.Name);
                }
            }
            finally { Cells.DisposeWaiters(cells); }
        }
    }
}
