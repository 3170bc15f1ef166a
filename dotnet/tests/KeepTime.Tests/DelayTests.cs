// KeepTime.Delay: never early by each caller's own Stopwatch reading,
// cancellation, no thread held for the wait, and many at once.
using System;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class DelayTests
    {
        private static readonly TimeSpan[] Lengths =
        {
            TimeSpan.Zero, TimeSpan.FromTicks(1), TimeSpan.FromTicks(10), TimeSpan.FromTicks(50), TimeSpan.FromTicks(200),
            TimeSpan.FromTicks(1000), TimeSpan.FromTicks(3000), TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(5),
        };

        /// <summary>Awaits one delay; returns how far past its deadline the caller's own reading was (negative: early).</summary>
        private static async Task<long> OneDelay(TimeSpan d)
        {
            long deadline = Stopwatch.GetTimestamp() + SleepTests.SwTicks(d);
            await KeepTime.Delay(d);
            return Stopwatch.GetTimestamp() - deadline;
        }

        [Test]
        public void DelayIsNeverEarly()
        {
            var errors = Task.Run(async () =>
            {
                var list = new System.Collections.Generic.List<long>();
                for (int r = 0; r < 5; r++)
                    foreach (var d in Lengths) list.Add(await OneDelay(d));
                return list;
            }).Result;
            Assert.AreEqual(0, errors.Count(e => e < 0), "early delays");
        }

        [Test]
        public void DelayWaitedSynchronouslyIsNeverEarly()
        {
            foreach (var d in Lengths)
            {
                long deadline = Stopwatch.GetTimestamp() + SleepTests.SwTicks(d);
                KeepTime.Delay(d).Wait();
                Assert.That(Stopwatch.GetTimestamp(), Is.GreaterThanOrEqualTo(deadline));
            }
        }

        [Test]
        public void DelayUntilAStopwatchTimestampIsNeverEarly()
        {
            for (int i = 0; i < 20; i++)
            {
                long deadline = Stopwatch.GetTimestamp() + SleepTests.SwTicks(TimeSpan.FromTicks(1000 + 500 * i));
                KeepTime.DelayUntil(deadline).Wait();
                Assert.That(Stopwatch.GetTimestamp(), Is.GreaterThanOrEqualTo(deadline));
            }
        }

        [Test]
        public void ACallersThreadKeepsItsForegroundState()
        {
            // A delay already due calls back from inside Delay, on this thread:
            // only keeptime's own waiter thread is marked background.
            bool background = true;
            var t = new Thread(() =>
            {
                for (int i = 0; i < 20; i++) KeepTime.Delay(TimeSpan.Zero).Wait();
                background = Thread.CurrentThread.IsBackground;
            });
            t.Start();
            t.Join();
            Assert.IsFalse(background);
        }

        [Test]
        public void ACancelledTokenCancelsBeforeStarting()
        {
            var cts = new CancellationTokenSource();
            cts.Cancel();
            var t = KeepTime.Delay(TimeSpan.FromSeconds(10), cts.Token);
            Assert.IsTrue(t.IsCanceled);
            var e = Assert.Throws<AggregateException>(() => t.Wait());
            Assert.IsInstanceOf<TaskCanceledException>(e.InnerException);
        }

        [Test]
        public void CancellingEndsALongDelayWithTaskCanceled()
        {
            var cts = new CancellationTokenSource();
            var t = KeepTime.Delay(TimeSpan.FromSeconds(30), cts.Token);
            Assert.IsFalse(t.IsCompleted);
            long before = Stopwatch.GetTimestamp();
            cts.Cancel();
            var e = Assert.Throws<AggregateException>(() => t.Wait());
            Assert.IsInstanceOf<OperationCanceledException>(e.InnerException);
            Assert.IsInstanceOf<TaskCanceledException>(e.InnerException);
            Assert.IsTrue(t.IsCanceled);
            Assert.Less(Stopwatch.GetTimestamp() - before, Stopwatch.Frequency * 20, "cancel did not end the 30 s wait");
        }

        [Test]
        public void CancellingAfterCompletionChangesNothing()
        {
            var cts = new CancellationTokenSource();
            var t = KeepTime.Delay(TimeSpan.FromTicks(500), cts.Token);
            t.Wait();
            cts.Cancel();
            Assert.IsTrue(t.Status == TaskStatus.RanToCompletion);
        }

        [Test]
        public void CancellationRacingCompletionEndsOneWayOrTheOther()
        {
            int done = 0, canceled = 0;
            for (int i = 0; i < 300; i++)
            {
                var cts = new CancellationTokenSource();
                long deadline = Stopwatch.GetTimestamp() + SleepTests.SwTicks(TimeSpan.FromTicks(200));
                var t = KeepTime.Delay(TimeSpan.FromTicks(200), cts.Token);
                KeepTime.SleepUntil(deadline - SleepTests.SwTicks(TimeSpan.FromTicks(i % 3)));
                cts.Cancel();
                try
                {
                    t.Wait();
                    done++;
                    Assert.That(Stopwatch.GetTimestamp(), Is.GreaterThanOrEqualTo(deadline));
                }
                catch (AggregateException e)
                {
                    Assert.IsInstanceOf<TaskCanceledException>(e.InnerException);
                    canceled++;
                }
            }
            Assert.AreEqual(300, done + canceled);
        }

        [Test]
        public void NoPoolThreadIsHeldForTheWait()
        {
            int maxWorkers, maxIo, freeWorkers, freeIo;
            ThreadPool.GetMaxThreads(out maxWorkers, out maxIo);
            ulong start = KeepTime.NowNs();
            var tasks = Enumerable.Range(0, 200).Select(_ => KeepTime.Delay(TimeSpan.FromMilliseconds(300))).ToArray();
            // Well before the earliest callback (at most 200 us before the
            // deadline) no pool thread may be busy on the delays' behalf.
            KeepTime.SleepUntilNs(start + 150000000);
            ThreadPool.GetAvailableThreads(out freeWorkers, out freeIo);
            bool stillWaiting = KeepTime.NowNs() < start + 250000000;
            Task.WaitAll(tasks);
            if (!stillWaiting) Assert.Inconclusive("the machine was too slow to look inside the wait");
            Assert.That(maxWorkers - freeWorkers, Is.LessThanOrEqualTo(1), "pool threads busy during the wait");
        }

        [Test]
        public void AThousandConcurrentDelaysAllCompleteNoneEarly()
        {
            var rnd = new Random(7);
            var lengths = Enumerable.Range(0, 1000).Select(_ => TimeSpan.FromTicks(rnd.Next(0, 200000))).ToArray(); // 0-20 ms
            var tasks = lengths.Select(d => Task.Run(() => OneDelay(d))).ToArray();
            Assert.IsTrue(Task.WaitAll(tasks, TimeSpan.FromMinutes(2)), "not all delays completed");
            var errors = tasks.Select(t => t.Result).ToArray();
            Assert.AreEqual(1000, errors.Length);
            Assert.AreEqual(0, errors.Count(e => e < 0), "early delays");
            // Past the waiter's capacity the rest completed on a plain OS wait:
            // whatever it states, it is a positive rate.
            Assert.That(KeepTime.DelayCapacityPerSecond, Is.GreaterThanOrEqualTo(1));
        }
    }
}
