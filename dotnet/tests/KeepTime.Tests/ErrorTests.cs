// Bad input in .NET idiom, disposal, and one thread at a time.
using System;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class ErrorTests
    {
        [Test]
        public void NegativeDurationsThrowArgumentOutOfRange()
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.Sleep(TimeSpan.FromTicks(-1)));
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.Sleep(Timeout.InfiniteTimeSpan));
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.Sleep(TimeSpan.MinValue));
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.Delay(TimeSpan.FromTicks(-1)));
            using (var s = new Sleeper())
                Assert.Throws<ArgumentOutOfRangeException>(() => s.Sleep(TimeSpan.FromTicks(-5)));
        }

        [Test]
        public void DurationsBeyondTwoToThe63NsThrow()
        {
            // TimeSpan.MaxValue is 2^63-1 ticks of 100 ns: 100 times too long.
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.Sleep(TimeSpan.MaxValue));
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.Delay(TimeSpan.MaxValue));
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.Sleep(TimeSpan.FromTicks(long.MaxValue / 100 + 1)));
        }

        [Test]
        public void NaNDurationsAreRejectedBeforeKeepTime()
        {
            // A TimeSpan cannot hold NaN: the framework refuses to make one.
            Assert.Throws<ArgumentException>(() => TimeSpan.FromSeconds(double.NaN));
        }

        [Test]
        public void StopwatchDeadlinesBeyondTheClockThrow()
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.SleepUntil(long.MaxValue));
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.DelayUntil(long.MaxValue));
        }

        [TestCase(double.NaN)]
        [TestCase(0.0)]
        [TestCase(-0.01)]
        [TestCase(1.0)]
        [TestCase(1.5)]
        [TestCase(0.0000009)]
        [TestCase(double.PositiveInfinity)]
        public void BadTailTargetsThrow(double share)
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => TailTarget.FromShare(share));
            Assert.Throws<ArgumentOutOfRangeException>(() => new SleeperBuilder().TailTarget(share));
        }

        [Test]
        public void BadKnobsThrow()
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => new SleeperBuilder().Mode((SleepMode)7));
            Assert.Throws<ArgumentOutOfRangeException>(() => new SleeperBuilder().MinSpin(TimeSpan.FromTicks(-1)));
            Assert.Throws<ArgumentOutOfRangeException>(() => new SleeperBuilder().IdleHint(TimeSpan.FromTicks(-10)));
            Assert.Throws<ArgumentOutOfRangeException>(() => new SleeperBuilder().IdleHint(TimeSpan.FromTicks(15)));
            Assert.Throws<ArgumentOutOfRangeException>(() => new SleeperBuilder().IdleHint(TimeSpan.FromDays(30)));
            Assert.Throws<ArgumentOutOfRangeException>(() => new Ticker(TimeSpan.Zero));
            Assert.Throws<ArgumentOutOfRangeException>(() => new Ticker(TimeSpan.FromTicks(-1)));
            Assert.Throws<ArgumentOutOfRangeException>(() => new Ticker(TimeSpan.FromMilliseconds(1), (MissedTicks)9));
            Assert.Throws<ArgumentOutOfRangeException>(() => new Schedule(0, 0, MissedTicks.Skip));
            Assert.Throws<ArgumentNullException>(() => new Ticker(TimeSpan.FromMilliseconds(1), MissedTicks.Skip, null));
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.DelayFinishSpin = TimeSpan.FromTicks(39));
            Assert.Throws<ArgumentOutOfRangeException>(() => KeepTime.DelayFinishSpin = TimeSpan.FromTicks(501));
            using (var s = new Sleeper())
            {
                Assert.Throws<ArgumentOutOfRangeException>(() => s.Mode = (SleepMode)(-1));
                Assert.Throws<ArgumentOutOfRangeException>(() => s.MinSpin = TimeSpan.FromTicks(-1));
                Assert.AreEqual(SleepMode.Exact, s.Mode);
            }
            using (var t = new Ticker(TimeSpan.FromMilliseconds(1)))
            {
                Assert.Throws<ArgumentOutOfRangeException>(() => t.Period = TimeSpan.Zero);
                Assert.AreEqual(TimeSpan.FromMilliseconds(1), t.Period);
            }
        }

        [Test]
        public void DisposedObjectsThrowObjectDisposed()
        {
            var s = new Sleeper();
            s.Dispose();
            s.Dispose(); // twice is fine
            Assert.Throws<ObjectDisposedException>(() => s.Sleep(TimeSpan.FromTicks(10)));
            Assert.Throws<ObjectDisposedException>(() => s.SleepUntilNs(0));
            Assert.Throws<ObjectDisposedException>(() => { var x = s.Stats; });
            Assert.Throws<ObjectDisposedException>(() => s.Mode = SleepMode.Spin);
            var t = new Ticker(TimeSpan.FromMilliseconds(1));
            t.Dispose();
            Assert.Throws<ObjectDisposedException>(() => t.Wait());
            Assert.Throws<ObjectDisposedException>(() => t.Reset());
            Assert.Throws<ObjectDisposedException>(() => { var x = t.Stats; });
            var sc = new Schedule(0, 1000, MissedTicks.Burst);
            sc.Dispose();
            Assert.Throws<ObjectDisposedException>(() => sc.Poll(5));
        }

        [Test]
        public void ASleeperIsOneThreadAtATime()
        {
            using (var s = new Sleeper())
            {
                ulong deadline = KeepTime.NowNs() + 300000000; // 300 ms
                // The long sleep retries if it meets this thread's short calls.
                var first = Task.Factory.StartNew(() =>
                {
                    while (true)
                    {
                        try { s.SleepUntilNs(deadline); return; }
                        catch (InvalidOperationException) { }
                    }
                }, TaskCreationOptions.LongRunning);
                Exception seen = null;
                while (seen == null && KeepTime.NowNs() < deadline - 50000000)
                {
                    try { s.SleepUntilNs(0); }
                    catch (InvalidOperationException e) { seen = e; }
                }
                first.Wait();
                Assert.IsNotNull(seen, "a second thread entered a busy sleeper without an error");
                StringAssert.Contains("one thread at a time", seen.Message);
                s.Sleep(TimeSpan.FromTicks(10)); // free again
            }
        }
    }
}
