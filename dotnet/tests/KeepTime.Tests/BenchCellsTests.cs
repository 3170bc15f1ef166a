// The C# bench's cells (dotnet/bench/Cells.cs and Methods.cs, compiled into
// this suite by mk/dotnet.mk): every (method, duration) cell gets a waiter of
// its own, and its warm-up count from WarmupRule or --warmup. Nothing here
// waits: Cells.Build only makes waiters.
using System.Collections.Generic;
using System.Linq;
using Dev.KeepTime.Bench;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class BenchCellsTests
    {
        private static readonly long[] Durations = { 100000, 1000000, 10000000 };
        private static readonly Dictionary<long, int> Samples = new Dictionary<long, int> { { 100000, 4000 }, { 1000000, 2000 }, { 10000000, 300 } };

        private static List<Cell> Build(int? warmup)
        {
            return Cells.Build(Methods.All(), Durations, Samples, 10, 1.0, warmup, 50000);
        }

        /// <summary>Every method's cell at one duration, 100 µs (40 samples,
        /// no warm-up): the fixture of the return and sleeper-account tests.</summary>
        internal static List<Cell> OneDuration()
        {
            var samples = new Dictionary<long, int> { { 100000, 40 } };
            return Cells.Build(Methods.All(), new long[] { 100000 }, samples, 10, 1.0, 0, 1);
        }

        [Test]
        public void EveryCellHasAWaiterOfItsOwn()
        {
            var cells = Build(null);
            try
            {
                var methods = Methods.All();
                Assert.AreEqual(methods.Count * Durations.Length, cells.Count);
                foreach (var c in cells) Assert.IsNotNull(c.Waiter, c.Method.Name);
                // No waiter object is in two cells.
                var distinct = new HashSet<Waiter>(cells.Select(c => c.Waiter), ReferenceEqualityComparer.Instance);
                Assert.AreEqual(cells.Count, distinct.Count);
                // Per method: one cell per duration, each with another waiter.
                foreach (var m in methods)
                {
                    var mine = cells.Where(c => c.Method.Name == m.Name).ToList();
                    CollectionAssert.AreEqual(Durations, mine.Select(c => c.DurationNs).ToArray(), m.Name);
                    for (int i = 0; i < mine.Count; i++)
                        for (int j = i + 1; j < mine.Count; j++)
                            Assert.AreNotSame(mine[i].Waiter, mine[j].Waiter, m.Name + " at " + mine[i].DurationNs + " and " + mine[j].DurationNs + " ns");
                }
            }
            finally { Cells.DisposeWaiters(cells); }
        }

        [Test]
        public void KeeptimeCellsAtTwoDurationsSleepOnTwoSleepers()
        {
            var cells = Build(null);
            try
            {
                Cell at100us = cells.Single(c => c.Method.Name == "keeptime" && c.DurationNs == 100000);
                Cell at1ms = cells.Single(c => c.Method.Name == "keeptime" && c.DurationNs == 1000000);
                Assert.IsInstanceOf<SleeperWaiter>(at100us.Waiter);
                Assert.IsInstanceOf<SleeperWaiter>(at1ms.Waiter);
                Sleeper a = ((SleeperWaiter)at100us.Waiter).Sleeper, b = ((SleeperWaiter)at1ms.Waiter).Sleeper;
                Assert.AreNotSame(a, b);
                // Fresh: neither has slept yet.
                Assert.AreEqual(0, a.Stats.Sleeps);
                Assert.AreEqual(0, b.Stats.Sleeps);
                Assert.AreEqual(SleepMode.Exact, a.Mode);
                Assert.AreEqual(TailTarget.Balanced, a.TailTarget);
                var sleepers = cells.Where(c => c.Method.Name == "keeptime").Select(c => ((SleeperWaiter)c.Waiter).Sleeper);
                Assert.AreEqual(Durations.Length, new HashSet<Sleeper>(sleepers, ReferenceEqualityComparer.Instance).Count);
            }
            finally { Cells.DisposeWaiters(cells); }
        }

        [Test]
        public void NewWaiterMakesANewOneEachCall()
        {
            foreach (var m in Methods.All())
            {
                Waiter a = m.NewWaiter(), b = m.NewWaiter();
                try { Assert.AreNotSame(a, b, m.Name); }
                finally { a.Dispose(); b.Dispose(); }
            }
        }

        [Test]
        public void DisposingTheCellsDisposesTheirSleepers()
        {
            var cells = Build(null);
            Cells.DisposeWaiters(cells);
            foreach (var c in cells.Where(c => c.Method.Name == "keeptime"))
                Assert.Throws<System.ObjectDisposedException>(() => ((SleeperWaiter)c.Waiter).Sleeper.ResetStats());
        }

        [Test]
        public void OnlyKeeptimeDelayLearnsInTheProcess()
        {
            // KeepTime.Delay has one waiter per process: its cells cannot be given
            // fresh ones, and the bench says so; every other method's state is its waiter's.
            CollectionAssert.AreEqual(new[] { "keeptime-delay" }, Methods.All().Where(m => m.LearnsProcessWide).Select(m => m.Name).ToArray());
        }

        [Test]
        public void WithoutWarmupEachCellWarmsUpByTheRule()
        {
            var cells = Build(null);
            try
            {
                foreach (var c in cells)
                    Assert.AreEqual(WarmupRule.Default(c.Method.Learns, c.DurationNs), c.Warmup, c.Method.Name + " " + c.DurationNs);
                Assert.AreEqual(3000, cells.Single(c => c.Method.Name == "keeptime" && c.DurationNs == 100000).Warmup);
                Assert.AreEqual(47, cells.Single(c => c.Method.Name == "busy-loop" && c.DurationNs == 1000000).Warmup);
            }
            finally { Cells.DisposeWaiters(cells); }
        }

        [Test]
        public void WarmupSetsEveryCellsCount()
        {
            foreach (int w in new[] { 0, 1, 20, 5000 })
            {
                var cells = Build(w);
                try { foreach (var c in cells) Assert.AreEqual(w, c.Warmup, c.Method.Name + " " + c.DurationNs); }
                finally { Cells.DisposeWaiters(cells); }
            }
        }

        [Test]
        public void EveryRoundRunsTheSameShareOfACell()
        {
            var cells = Cells.Build(Methods.All(), Durations, Samples, 10, 0.05, null, 50000);
            try
            {
                // 4000 x 0.05 = 200, 2000 x 0.05 = 100, 300 x 0.05 = 15 -> 10: multiples of 10 rounds, at least 10.
                foreach (var c in cells)
                {
                    Assert.AreEqual(0, c.Errors.Length % 10);
                    Assert.AreEqual(c.DurationNs == 100000 ? 200 : c.DurationNs == 1000000 ? 100 : 10, c.Errors.Length);
                }
            }
            finally { Cells.DisposeWaiters(cells); }
        }

        /// <summary>Identity, whatever Equals says (C# 7 on Mono has no ReferenceEqualityComparer of its own).</summary>
        private sealed class ReferenceEqualityComparer : IEqualityComparer<object>
        {
            public static readonly ReferenceEqualityComparer Instance = new ReferenceEqualityComparer();
            public new bool Equals(object x, object y) { return ReferenceEquals(x, y); }
            public int GetHashCode(object o) { return System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(o); }
        }
    }
}
