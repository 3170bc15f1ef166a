// Real sleeps: only what must always hold, checked with the caller's own
// Stopwatch reading after the call returns (never early, no drift). No
// timing assertions: the machines are shared and noisy.
using System;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class SleepTests
    {
        internal static readonly TimeSpan[] Durations =
        {
            TimeSpan.Zero, TimeSpan.FromTicks(1), TimeSpan.FromTicks(10), TimeSpan.FromTicks(50),
            TimeSpan.FromTicks(200), TimeSpan.FromTicks(1000), TimeSpan.FromTicks(2500), TimeSpan.FromMilliseconds(1),
        };

        /// <summary>A duration in Stopwatch ticks, rounded up.</summary>
        internal static long SwTicks(TimeSpan d)
        {
            return (long)Math.Ceiling((decimal)d.Ticks * Stopwatch.Frequency / TimeSpan.TicksPerSecond);
        }

        private static int Reps(TimeSpan d) { return d >= TimeSpan.FromMilliseconds(1) ? 5 : 20; }

        [Test]
        public void StopwatchIsClockMonotonicAtItsFrequency()
        {
            Assert.IsTrue(Stopwatch.IsHighResolution);
            for (int i = 0; i < 5000; i++)
            {
                long a = Stopwatch.GetTimestamp();
                ulong n = KeepTime.NowNs();
                long b = Stopwatch.GetTimestamp();
                long mid = KeepTime.StopwatchTimestampOfNs(n);
                Assert.That(mid, Is.InRange(a, b));
            }
        }

        [Test]
        public void StopwatchConversionRoundsDeadlinesUp()
        {
            // ns -> timestamp is a floor; one ns before the start of a tick is the tick before.
            long f = Stopwatch.Frequency;
            ulong tickStartNs = (ulong)Math.Ceiling(12345m * 1000000000m / f);
            Assert.AreEqual(12345, KeepTime.StopwatchTimestampOfNs(tickStartNs));
            Assert.AreEqual(12344, KeepTime.StopwatchTimestampOfNs(tickStartNs - 1));
        }

        [Test]
        public void SleepIsNeverEarly()
        {
            int early = 0, n = 0;
            foreach (var d in Durations)
                for (int r = 0; r < Reps(d); r++)
                {
                    long before = Stopwatch.GetTimestamp();
                    KeepTime.Sleep(d);
                    long after = Stopwatch.GetTimestamp();
                    if (after - before < SwTicks(d)) early++;
                    n++;
                }
            Assert.AreEqual(0, early, "early of " + n);
        }

        [Test]
        public void SleepUntilIsNeverEarly()
        {
            int early = 0;
            foreach (var d in Durations)
                for (int r = 0; r < Reps(d); r++)
                {
                    long deadline = Stopwatch.GetTimestamp() + SwTicks(d);
                    KeepTime.SleepUntil(deadline);
                    if (Stopwatch.GetTimestamp() < deadline) early++;
                }
            Assert.AreEqual(0, early);
        }

        [Test]
        public void SleepUntilThePastReturns()
        {
            KeepTime.SleepUntil(0);
            KeepTime.SleepUntil(long.MinValue);
            KeepTime.SleepUntil(Stopwatch.GetTimestamp() - 1000);
        }

        [TestCase(SleepMode.Exact)]
        [TestCase(SleepMode.Spin)]
        public void SleeperModesAreNeverEarly(SleepMode mode)
        {
            using (var s = new SleeperBuilder().Mode(mode).TailTarget(TailTarget.Strict).MinSpin(TimeSpan.FromTicks(20)).Build())
            {
                int early = 0, n = 0;
                foreach (var d in Durations)
                    for (int r = 0; r < Reps(d); r++)
                    {
                        long before = Stopwatch.GetTimestamp();
                        s.Sleep(d);
                        if (Stopwatch.GetTimestamp() - before < SwTicks(d)) early++;
                        long deadline = Stopwatch.GetTimestamp() + SwTicks(d);
                        s.SleepUntil(deadline);
                        if (Stopwatch.GetTimestamp() < deadline) early++;
                        n += 2;
                    }
                Assert.AreEqual(0, early);
                var st = s.Stats;
                Assert.That(st.Sleeps, Is.InRange(1, n));
                Assert.That(st.Late, Is.InRange(0, st.Sleeps));
                if (mode == SleepMode.Spin) Assert.AreEqual(0, st.OsWaits);
                s.ResetStats();
                Assert.AreEqual(0, s.Stats.Sleeps);
            }
        }

        [Test]
        public void SleeperKnobsRoundTrip()
        {
            using (var s = Sleeper.Builder().Mode(SleepMode.Efficient).TailTarget(0.002).MinSpin(TimeSpan.FromTicks(30)).Build())
            {
                Assert.AreEqual(SleepMode.Efficient, s.Mode);
                Assert.AreEqual(0.002, s.TailTarget.Share, 1e-12);
                Assert.AreEqual(TimeSpan.FromTicks(30), s.MinSpin);
                s.Mode = SleepMode.Spin;
                s.TailTarget = TailTarget.Relaxed;
                s.MinSpin = TimeSpan.Zero;
                Assert.AreEqual(SleepMode.Spin, s.Mode);
                Assert.AreEqual(TailTarget.Relaxed, s.TailTarget);
                Assert.AreEqual(TimeSpan.Zero, s.MinSpin);
                Assert.AreEqual(IdleHintState.NotAsked, s.IdleHint);
            }
        }

        [Test]
        public void TickerIsNeverEarlyAndDoesNotDrift()
        {
            var period = TimeSpan.FromTicks(5000); // 500 us
            using (var t = new SleeperBuilder().TailTarget(TailTarget.Balanced).BuildTicker(period, MissedTicks.Burst))
            {
                ulong first = 0;
                int n = 0;
                foreach (var tick in t)
                {
                    ulong now = KeepTime.NowNs();
                    Assert.That(now, Is.GreaterThanOrEqualTo(tick.ScheduledNs), "tick " + tick.Index + " early");
                    if (first == 0) first = tick.ScheduledNs - 500000;
                    // Slot k is due at start + k * period exactly: no drift.
                    Assert.AreEqual(first + (ulong)tick.Index * 500000, tick.ScheduledNs);
                    if (++n == 200) break;
                }
                var st = t.Stats;
                Assert.AreEqual(200, st.Ticks);
                Assert.AreEqual(period, t.Period);
            }
        }

        [Test]
        public void TickerSkipReportsSkippedSlots()
        {
            using (var t = new Ticker(TimeSpan.FromMilliseconds(1), MissedTicks.Skip))
            {
                t.Wait();
                // Overrun by at least 5 whole periods, on the library's own clock.
                KeepTime.SleepUntilNs(t.NextDeadlineNs + 4500000);
                var late = t.Wait();
                Assert.That(late.Skipped, Is.GreaterThanOrEqualTo(4));
                Assert.That(t.Stats.Skipped, Is.EqualTo(late.Skipped));
            }
        }

        [Test]
        public void TickerEnumerationEndsOnDispose()
        {
            var t = new Ticker(TimeSpan.FromTicks(2000));
            int n = 0;
            foreach (var tick in t)
            {
                if (++n == 3) t.Dispose();
            }
            Assert.AreEqual(3, n);
        }

        [Test]
        public void ClockReportHasTheCoresFindingsAndTheStopwatch()
        {
            string json = KeepTime.ClocksJson();
            var doc = Json.Parse(json);
            Assert.IsNotNull(doc["clocks"]);
            Assert.IsNotNull(doc["findings"]);
            Assert.IsNotNull(doc["machine"]);
            var dn = doc["dotnet"];
            Assert.AreEqual(Stopwatch.Frequency.ToString(), dn["stopwatch_frequency"].Text);
            Assert.AreEqual(Stopwatch.IsHighResolution, dn["stopwatch_is_high_resolution"].Bool);
            Assert.IsTrue(dn["stopwatch_is_clock_monotonic"].Bool);
            Assert.IsTrue(doc["clocks"].Items.Any(c => c["name"].Text == "MONOTONIC"));
        }
    }
}
