// The C# bench's deadlines and returns (dotnet/bench/Methods.cs and Cells.cs,
// compiled into this suite by mk/dotnet.mk): every method waits for the
// deadline the bench measures against (start + d) where its API takes one,
// and a method that ends on a clock reading of its own gives it back for the
// return column (caller's first reading after the call − that reading). No
// timing assertions: deadlines in the past, never-early checks, and
// synthetic numbers.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using Dev.KeepTime.Bench;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class BenchReturnTests
    {
        private static long Now() { return (long)KeepTime.NowNs(); }

        private static Method ByName(string name) { return Methods.All().Single(m => m.Name == name); }

        [Test]
        public void TheKeeptimeWaiterSleepsUntilTheDeadlineItIsGiven()
        {
            using (var w = new SleeperWaiter())
            {
                // start 1 s ago, d = 0.5 s: the deadline passed 0.5 s ago. A waiter
                // that slept d from its own call (Sleeper.Sleep(d)) would make a sleep
                // of 0.5 s; one that sleeps until start + d returns at once, without
                // a sleep that had to wait (Stats.Sleeps counts only those).
                long start = Now() - 1000000000L, d = 500000000L;
                long? own = w.Wait(start, d);
                long after = Now();
                Assert.IsTrue(own.HasValue, "keeptime returns the reading it woke at");
                Assert.GreaterOrEqual(w.OwnNs(own.Value), start + d);
                Assert.LessOrEqual(w.OwnNs(own.Value), after);
                Assert.AreEqual(0, w.Sleeper.Stats.Sleeps, "a deadline in the past is no sleep");

                // A deadline ahead: never early, and the reading is its own (between
                // the deadline and the caller's reading). 50 ms, which no preemption
                // outlasts, so that the sleep surely has to wait and is counted.
                start = Now();
                d = 50000000;
                own = w.Wait(start, d);
                after = Now();
                Assert.GreaterOrEqual(own.Value, start + d);
                Assert.LessOrEqual(own.Value, after);
                Assert.AreEqual(1, w.Sleeper.Stats.Sleeps);
            }
        }

        [Test]
        public void MethodsWithAReadingOfTheirOwnAreTheLoopsAndKeeptime()
        {
            CollectionAssert.AreEquivalent(new[] { "busy-loop", "spin-pause", "yield-loop", "hybrid-1ms", "keeptime" },
                Methods.All().Where(m => m.ReturnsReading).Select(m => m.Name).ToArray());
            // Tasks carry no reading: no async method claims one.
            Assert.IsFalse(Methods.All().Any(m => m.Async && m.ReturnsReading));
        }

        [Test]
        public void EverySyncWaiterGivesItsReadingOrNoneAsItsMethodSays()
        {
            foreach (var m in Methods.All().Where(x => !x.Async))
            {
                Waiter w = m.NewWaiter();
                try
                {
                    // A deadline in the past (1 ms ago; d = 1 ms, so the hybrid does
                    // not sleep; thread-sleep sleeps d from its call).
                    long start = Now() - 2000000, d = 1000000;
                    long? own = w.Wait(start, d);
                    long after = Now();
                    Assert.AreEqual(m.ReturnsReading, own.HasValue, m.Name);
                    if (own.HasValue)
                    {
                        Assert.GreaterOrEqual(w.OwnNs(own.Value), start + d, m.Name);
                        Assert.LessOrEqual(w.OwnNs(own.Value), after, m.Name);
                    }
                    if (m.MayReturnEarly) continue;
                    // A deadline ahead: the loops and keeptime end on a reading at or
                    // after start + d, and the caller's reading is later still.
                    start = Now();
                    d = 100000;
                    own = w.Wait(start, d);
                    after = Now();
                    Assert.GreaterOrEqual(after, start + d, m.Name + ": never early");
                    if (own.HasValue)
                    {
                        Assert.GreaterOrEqual(w.OwnNs(own.Value), start + d, m.Name);
                        Assert.LessOrEqual(w.OwnNs(own.Value), after, m.Name);
                        Assert.GreaterOrEqual(Returns.Of(after, w.OwnNs(own.Value)), 0, m.Name);
                    }
                }
                finally { w.Dispose(); }
            }
        }

        [Test]
        public void KeeptimeDelayWaitsForTheBenchsDeadline()
        {
            Waiter w = ByName("keeptime-delay").NewWaiter();
            try
            {
                // Past: start at 0 on the clock, d half of now, so the deadline is
                // hours behind on a machine up for hours. A delay that counted d
                // from its call would not complete for as long again; one that
                // waits for start + d completes at once (30 s only bounds a failure).
                long start = 0, d = Now() / 2;
                Assert.IsTrue(w.WaitAsync(start, d).Wait(TimeSpan.FromSeconds(30)), "a deadline in the past completes");
                Assert.GreaterOrEqual(Now(), start + d);
                // Ahead: never early.
                start = Now();
                d = 300000;
                Assert.IsTrue(w.WaitAsync(start, d).Wait(TimeSpan.FromSeconds(30)));
                Assert.GreaterOrEqual(Now(), start + d);
            }
            finally { w.Dispose(); }
        }

        [Test]
        public void StopwatchDeadlinesAndReadingsMapToNanoseconds()
        {
            long f = Stopwatch.Frequency, tick = (1000000000L + f - 1) / f;
            foreach (long dl in new[] { 1L, 99L, 100L, 101L, 123456789L, 987654321012L })
            {
                long ts = Methods.SwDeadline(dl, 0);
                // The first tick at or after the deadline: its first ns is not before
                // it and less than one tick after it.
                Assert.GreaterOrEqual(Methods.SwNs(ts), dl);
                Assert.Less(Methods.SwNs(ts) - dl, tick);
                Assert.Less(Methods.SwNs(ts - 1), dl);
            }
            if (f == 10000000) Assert.AreEqual(123400, Methods.SwNs(1234)); // Mono: 100 ns ticks
            // A Stopwatch reading's first ns is never after the clock read after it.
            for (int i = 0; i < 1000; i++)
            {
                long ts = Stopwatch.GetTimestamp();
                Assert.LessOrEqual(Methods.SwNs(ts), Now());
            }
        }

        [Test]
        public void TheReturnIsTheCallersReadingMinusTheMethods()
        {
            Assert.AreEqual(40, Returns.Of(1000040, 1000000));
            Assert.AreEqual(0, Returns.Of(5, 5));
            Assert.AreEqual(-3, Returns.Of(2, 5)); // never from a real wait, but not hidden
        }

        [Test]
        public void ReturnPercentilesAreNearestRank()
        {
            // The Rust bench's hand-made returns: sorted 10 20 30 40 50 60 500,
            // p50 = the 4th, p90 = the 7th.
            var r = Returns.Percentiles(new long[] { 30, 10, 60, 20, 50, 40, 500 }, 7).Value;
            Assert.AreEqual(40, r.P50Ns);
            Assert.AreEqual(500, r.P90Ns);
            // 1..10: ceil(5) = 5th, ceil(9) = 9th.
            r = Returns.Percentiles(new long[] { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 }, 10).Value;
            Assert.AreEqual(5, r.P50Ns);
            Assert.AreEqual(9, r.P90Ns);
            // One sample: both are it.
            r = Returns.Percentiles(new long[] { 77 }, 1).Value;
            Assert.AreEqual(77, r.P50Ns);
            Assert.AreEqual(77, r.P90Ns);
            // Only the first n count, and the array is left as it was.
            var part = new long[] { 3, 1, 2, 1000000, 1000000 };
            r = Returns.Percentiles(part, 3).Value;
            Assert.AreEqual(2, r.P50Ns);
            Assert.AreEqual(3, r.P90Ns);
            CollectionAssert.AreEqual(new long[] { 3, 1, 2, 1000000, 1000000 }, part);
            // No returns: no percentiles.
            Assert.IsNull(Returns.Percentiles(null, 0));
            Assert.IsNull(Returns.Percentiles(new long[4], 0));
        }

        [Test]
        public void CellsRecordReturnsOnlyForMethodsWithAReading()
        {
            var cells = BenchCellsTests.OneDuration();
            try
            {
                foreach (var c in cells)
                {
                    Assert.AreEqual(c.Method.ReturnsReading, c.ReturnsNs != null, c.Method.Name);
                    if (c.ReturnsNs != null) Assert.AreEqual(c.Errors.Length, c.ReturnsNs.Length, c.Method.Name);
                    Assert.IsNull(c.Return, c.Method.Name + ": nothing recorded yet");
                }
                // A block of 10 recorded waits, as the bench records them: p50 and
                // p90 over those only.
                Cell k = cells.Single(c => c.Method.Name == "keeptime");
                for (int i = 0; i < 10; i++) k.ReturnsNs[i] = 100 * (i + 1);
                k.AddBlock(10, 1000000, 1000, 1000);
                Assert.AreEqual(500, k.Return.Value.P50Ns);
                Assert.AreEqual(900, k.Return.Value.P90Ns);
                Assert.IsNull(cells.Single(c => c.Method.Name == "thread-sleep").Return);
            }
            finally { Cells.DisposeWaiters(cells); }
        }

        [Test]
        public void TheReturnFieldsAreTheSpecsAndComeTogether()
        {
            // What the bench appends to a cell's object, in a cell of its own.
            string with = "{\"method\":\"keeptime\"" + Returns.Json(new ReturnPercentiles { P50Ns = 31, P90Ns = 58 }) + "}";
            var cell = Json.Parse(with);
            CollectionAssert.AreEquivalent(new[] { "method", "return_p50_ns", "return_p90_ns" }, cell.Fields.Keys.ToArray());
            Assert.AreEqual(Json.Kind.Number, cell["return_p50_ns"].Type);
            Assert.AreEqual("31", cell["return_p50_ns"].Text);
            Assert.AreEqual("58", cell["return_p90_ns"].Text);
            // Negative and large values are plain integers.
            cell = Json.Parse("{" + Returns.Json(new ReturnPercentiles { P50Ns = -7, P90Ns = 12345678901 }).Substring(1) + "}");
            Assert.AreEqual("-7", cell["return_p50_ns"].Text);
            Assert.AreEqual("12345678901", cell["return_p90_ns"].Text);
            // A method without a reading: neither field.
            Assert.AreEqual("", Returns.Json(null));

            // The names and types are the spec's: integer properties of a cell,
            // each requiring the other (spec/bench-result.schema.json).
            var schema = Json.Parse(File.ReadAllText(Path.Combine(VectorTests.SpecDir, "bench-result.schema.json")));
            var def = schema["$defs"]["cell"];
            foreach (var name in new[] { "return_p50_ns", "return_p90_ns" })
                Assert.AreEqual("integer", def["properties"][name]["type"].Text, name);
            Assert.AreEqual("return_p90_ns", def["dependentRequired"]["return_p50_ns"].Items.Single().Text);
            Assert.AreEqual("return_p50_ns", def["dependentRequired"]["return_p90_ns"].Items.Single().Text);
            Assert.IsFalse(def["required"].Items.Any(i => i.Text.StartsWith("return_")), "optional in the format");
        }

        [Test]
        public void TheTableShowsP50AndP90OrADash()
        {
            Assert.AreEqual("0.03 \u00b7 0.06", Returns.Text(new ReturnPercentiles { P50Ns = 31, P90Ns = 58 }));
            Assert.AreEqual("10.63 \u00b7 12.00", Returns.Text(new ReturnPercentiles { P50Ns = 10630, P90Ns = 12000 }));
            Assert.AreEqual("\u2014", Returns.Text(null));
        }
    }
}
