// Host profiles through the C ABI: written from a sleeper and loaded back,
// refused from another machine (unless asked), bad and cut files refused with
// the line, sleepers started from a profile never early by the caller's own
// clock, the default profile behind the static sleeps (set, cleared,
// refused when disposed, the program's own sleepers left alone), and tickers
// started from a builder's profile or the default one, never early.
using System;
using System.IO;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class ProfileTests
    {
        /// <summary>A temporary file holding the profile of a sleeper that slept 30 times 300 µs.</summary>
        internal static string LearnedProfile()
        {
            string path = Path.GetTempFileName();
            using (var s = new Sleeper())
            {
                for (int i = 0; i < 30; i++) s.Sleep(TimeSpan.FromTicks(3000));
                s.WriteProfile(path);
            }
            return path;
        }

        private static int EarlySleeps(Sleeper s, TimeSpan d, int n)
        {
            int early = 0;
            for (int i = 0; i < n; i++)
            {
                ulong deadline = KeepTime.NowNs() + (ulong)(d.Ticks * 100);
                s.SleepUntilNs(deadline);
                if (KeepTime.NowNs() < deadline) early++;
            }
            return early;
        }

        [Test]
        public void AProfileLoadsAndItsSleepersAreNeverEarly()
        {
            string path = LearnedProfile();
            try
            {
                StringAssert.StartsWith("keeptime-profile 1\n", File.ReadAllText(path));
                using (var p = Profile.Load(path))
                using (var s = Sleeper.Builder().Profile(p).Build())
                {
                    Assert.AreEqual(0, EarlySleeps(s, TimeSpan.FromTicks(3000), 20));
                    Assert.AreEqual(0, EarlySleeps(s, TimeSpan.FromMilliseconds(1), 5));
                    Assert.AreEqual(0, EarlySleeps(s, TimeSpan.FromTicks(200), 20));
                }
            }
            finally { File.Delete(path); }
        }

        [Test]
        public void TheStaticSleepsSleeperWritesWhatItLearned()
        {
            string path = Path.GetTempFileName();
            try
            {
                for (int i = 0; i < 30; i++) KeepTime.Sleep(TimeSpan.FromTicks(3000));
                KeepTime.WriteThreadProfile(path);
                string text = File.ReadAllText(path);
                StringAssert.StartsWith("keeptime-profile 1\n", text);
                StringAssert.Contains("\nbucket ", text);
                using (var p = Profile.Load(path))
                using (var s = Sleeper.Builder().Profile(p).Build())
                    Assert.AreEqual(0, EarlySleeps(s, TimeSpan.FromTicks(3000), 10));
            }
            finally { File.Delete(path); }
            Assert.Throws<ArgumentNullException>(() => KeepTime.WriteThreadProfile(null));
            Assert.Throws<IOException>(() => KeepTime.WriteThreadProfile("/nonexistent-dir/p.profile"));
        }

        [Test]
        public void AProfileOfAnotherMachineIsRefused()
        {
            string path = LearnedProfile();
            try
            {
                string[] lines = File.ReadAllLines(path);
                StringAssert.StartsWith("cpu_vendor ", lines[1]);
                lines[1] = "cpu_vendor SomeOtherVendor";
                File.WriteAllText(path, string.Join("\n", lines) + "\n");
                var e = Assert.Throws<ProfileException>(() => Profile.Load(path));
                StringAssert.Contains("line 2", e.Message);
                StringAssert.Contains("cpu_vendor is \"SomeOtherVendor\" in the profile", e.Message);
                Assert.AreEqual(path, e.Path);
                using (var p = Profile.Load(path, ignoreMachine: true))
                using (var s = Sleeper.Builder().Profile(p).Build())
                    Assert.AreEqual(0, EarlySleeps(s, TimeSpan.FromTicks(3000), 10));
            }
            finally { File.Delete(path); }
        }

        [Test]
        public void BadAndCutFilesNameTheLine()
        {
            string path = LearnedProfile();
            try
            {
                string text = File.ReadAllText(path);
                File.WriteAllText(path, text.Substring(0, text.LastIndexOf("end", StringComparison.Ordinal)));
                var e = Assert.Throws<ProfileException>(() => Profile.Load(path));
                StringAssert.Contains("cut short", e.Message);
                StringAssert.Contains("line ", e.Message);
                File.WriteAllText(path, "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n");
                e = Assert.Throws<ProfileException>(() => Profile.Load(path));
                StringAssert.Contains("line 1: not a keeptime profile", e.Message);
                Assert.IsInstanceOf<IOException>(e);
            }
            finally { File.Delete(path); }
            Assert.Throws<FileNotFoundException>(() => Profile.Load(path));
            Assert.Throws<ArgumentNullException>(() => Profile.Load(null));
            using (var s = new Sleeper())
                Assert.Throws<IOException>(() => s.WriteProfile("/nonexistent-dir/p.profile"));
            var disposed = Profile.Load(LearnedProfileAndKeep());
            disposed.Dispose();
            Assert.Throws<ObjectDisposedException>(() => Sleeper.Builder().Profile(disposed).Build());
        }

        /// <summary>Static sleeps (the calling thread's default sleeper): how many ended before their deadline by NowNs.</summary>
        private static int EarlyStaticSleeps(TimeSpan d, int n)
        {
            int early = 0;
            ulong ns = (ulong)(d.Ticks * 100);
            for (int i = 0; i < n; i++)
            {
                ulong start = KeepTime.NowNs();
                KeepTime.Sleep(d);
                if (KeepTime.NowNs() - start < ns) early++;
                ulong deadline = KeepTime.NowNs() + ns;
                KeepTime.SleepUntilNs(deadline);
                if (KeepTime.NowNs() < deadline) early++;
            }
            return early;
        }

        [Test]
        public void StaticSleepsFromADefaultProfileAreNeverEarly()
        {
            string path = LearnedProfile();
            try
            {
                using (var p = Profile.Load(path))
                    KeepTime.SetDefaultProfile(p);
                // The native side kept its own copy: p is disposed from here on.
                Assert.AreEqual(0, EarlyStaticSleeps(TimeSpan.FromTicks(3000), 20));
                Assert.AreEqual(0, EarlyStaticSleeps(TimeSpan.FromTicks(200), 20));
                Assert.AreEqual(0, EarlyStaticSleeps(TimeSpan.FromMilliseconds(1), 5));
                int otherThread = -1;
                var t = new System.Threading.Thread(() => otherThread = EarlyStaticSleeps(TimeSpan.FromTicks(3000), 20));
                t.Start();
                t.Join();
                Assert.AreEqual(0, otherThread, "early static sleeps on a new thread");
                for (int i = 0; i < 10; i++)
                {
                    ulong deadline = KeepTime.NowNs() + 300000;
                    KeepTime.Delay(TimeSpan.FromTicks(3000)).Wait();
                    Assert.That(KeepTime.NowNs(), Is.GreaterThanOrEqualTo(deadline), "early delay");
                }

                KeepTime.SetDefaultProfile(null);
                Assert.AreEqual(0, EarlyStaticSleeps(TimeSpan.FromTicks(3000), 20));
                KeepTime.SetDefaultProfile(null);
                Assert.AreEqual(0, EarlyStaticSleeps(TimeSpan.FromTicks(200), 10));
            }
            finally
            {
                KeepTime.SetDefaultProfile(null);
                File.Delete(path);
            }
        }

        [Test]
        public void ADefaultProfileLeavesTheProgramsSleepersAlone()
        {
            string path = LearnedProfile();
            try
            {
                using (var s = new Sleeper())
                using (var p = Profile.Load(path))
                {
                    // Counts compared with themselves, not with 5 and 10: a real 300 us sleep
                    // whose deadline passed before it began (its thread descheduled) is no sleep.
                    Assert.AreEqual(0, EarlySleeps(s, TimeSpan.FromTicks(3000), 5));
                    long first = s.Stats.Sleeps;
                    KeepTime.SetDefaultProfile(p);
                    KeepTime.Sleep(TimeSpan.FromTicks(3000));
                    Assert.AreEqual(first, s.Stats.Sleeps, "the program's own sleeper kept its stats");
                    Assert.AreEqual(0, EarlySleeps(s, TimeSpan.FromTicks(3000), 5));
                    long second = s.Stats.Sleeps;
                    Assert.That(second, Is.InRange(first, first + 5), "it went on counting");
                    KeepTime.SetDefaultProfile(null);
                    Assert.AreEqual(second, s.Stats.Sleeps);
                }
            }
            finally
            {
                KeepTime.SetDefaultProfile(null);
                File.Delete(path);
            }
        }

        [Test]
        public void ADisposedDefaultProfileIsRefused()
        {
            var disposed = Profile.Load(LearnedProfileAndKeep());
            disposed.Dispose();
            try
            {
                Assert.Throws<ObjectDisposedException>(() => KeepTime.SetDefaultProfile(disposed));
                Assert.DoesNotThrow(() => KeepTime.SetDefaultProfile(null));
                Assert.AreEqual(0, EarlyStaticSleeps(TimeSpan.FromTicks(3000), 5));
            }
            finally { KeepTime.SetDefaultProfile(null); }
        }

        /// <summary>
        /// Waits for <paramref name="n"/> ticks: each delivered no earlier than its
        /// slot by NowNs, slots in order one after another (Burst) on the schedule
        /// start + k·period.
        /// </summary>
        private static void AssertTicksNeverEarlyAndInOrder(Ticker t, ulong periodNs, int n)
        {
            long lastIndex = 0;
            ulong lastScheduled = 0;
            for (int i = 0; i < n; i++)
            {
                Tick tick = t.Wait();
                ulong now = KeepTime.NowNs();
                Assert.That(now, Is.GreaterThanOrEqualTo(tick.ScheduledNs), "tick " + tick.Index + " early");
                Assert.AreEqual(lastIndex + 1, tick.Index, "slots in order");
                if (lastIndex > 0) Assert.AreEqual(lastScheduled + periodNs, tick.ScheduledNs, "no drift");
                Assert.That(tick.LatenessNs, Is.GreaterThanOrEqualTo(0L));
                lastIndex = tick.Index;
                lastScheduled = tick.ScheduledNs;
            }
            Assert.AreEqual((long)n, t.Stats.Ticks);
        }

        [Test]
        public void ATickerFromABuildersProfileTicksNeverEarlyAndInOrder()
        {
            string path = LearnedProfile();
            try
            {
                var period = TimeSpan.FromTicks(3000); // 300 us
                Ticker built, constructed, spin;
                using (var p = Profile.Load(path))
                {
                    built = Sleeper.Builder().Profile(p).TailTarget(TailTarget.Strict).BuildTicker(period, MissedTicks.Burst);
                    constructed = new Ticker(period, MissedTicks.Burst, Sleeper.Builder().Profile(p).KeepTimerSlack());
                    spin = Sleeper.Builder().Mode(SleepMode.Spin).Profile(p).BuildTicker(period, MissedTicks.Burst);
                }
                // The tickers copied the profile: it is disposed from here on.
                using (built)
                    AssertTicksNeverEarlyAndInOrder(built, 300000, 100);
                using (constructed)
                    AssertTicksNeverEarlyAndInOrder(constructed, 300000, 50);
                using (spin)
                    AssertTicksNeverEarlyAndInOrder(spin, 300000, 20);
            }
            finally { File.Delete(path); }
        }

        [Test]
        public void ABuilderWithADisposedProfileThrowsFromBuildTicker()
        {
            var disposed = Profile.Load(LearnedProfileAndKeep());
            disposed.Dispose();
            var b = Sleeper.Builder().Profile(disposed);
            Assert.Throws<ObjectDisposedException>(() => b.BuildTicker(TimeSpan.FromMilliseconds(1)));
            Assert.Throws<ObjectDisposedException>(() => new Ticker(TimeSpan.FromMilliseconds(1), MissedTicks.Skip, b));
            // Without it the same builder makes a ticker.
            using (var t = b.Profile(null).BuildTicker(TimeSpan.FromTicks(2000), MissedTicks.Burst))
                AssertTicksNeverEarlyAndInOrder(t, 200000, 3);
        }

        [Test]
        public void ATickerMadeAfterADefaultProfileTicksNeverEarly()
        {
            string path = LearnedProfile();
            try
            {
                using (var p = Profile.Load(path))
                    KeepTime.SetDefaultProfile(p);
                var period = TimeSpan.FromTicks(3000);
                using (var t = new Ticker(period, MissedTicks.Burst))
                using (var b = Sleeper.Builder().TailTarget(TailTarget.Relaxed).BuildTicker(period, MissedTicks.Burst))
                {
                    AssertTicksNeverEarlyAndInOrder(t, 300000, 50);
                    AssertTicksNeverEarlyAndInOrder(b, 300000, 50);
                    // A later change of the default leaves existing tickers alone.
                    KeepTime.SetDefaultProfile(null);
                    for (int i = 0; i < 20; i++)
                    {
                        Tick tick = t.Wait();
                        Assert.That(KeepTime.NowNs(), Is.GreaterThanOrEqualTo(tick.ScheduledNs), "tick " + tick.Index + " early");
                    }
                }
            }
            finally
            {
                KeepTime.SetDefaultProfile(null);
                File.Delete(path);
            }
        }

        private static string s_kept;

        private static string LearnedProfileAndKeep()
        {
            s_kept = LearnedProfile();
            return s_kept;
        }

        [TearDown]
        public void RemoveKept()
        {
            KeepTime.SetDefaultProfile(null);
            if (s_kept != null) File.Delete(s_kept);
            s_kept = null;
        }
    }
}
