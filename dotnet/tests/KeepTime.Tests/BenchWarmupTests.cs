// The C# bench's warm-up counts (dotnet/bench/WarmupRule.cs, compiled here
// through the link BenchWarmupRule.cs): the rule of every runtime's bench.
using Dev.KeepTime.Bench;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class BenchWarmupTests
    {
        [Test]
        public void MethodsThatLearnWarmUpAboutASecond()
        {
            // keeptime and keeptime-delay: 1 s / (d + the 60 us planning overhead), 10 to 3000.
            Assert.AreEqual(3000, WarmupRule.Default(true, 100000));    // 6250, at most 3000
            Assert.AreEqual(943, WarmupRule.Default(true, 1000000));    // 1 s / 1.06 ms
            Assert.AreEqual(300, WarmupRule.Default(true, 10000000));   // 1 s is 99: the floor of 300 (3 s)
            Assert.AreEqual(249, WarmupRule.Default(true, 20000000));   // 300 would take 6 s: 5 s / 20.06 ms
            Assert.AreEqual(49, WarmupRule.Default(true, 100000000));   // 5 s / 100.06 ms
            Assert.AreEqual(10, WarmupRule.Default(true, 20000000000)); // at least 10
        }

        [Test]
        public void TheOtherMethodsWarmUpAboutFiftyMs()
        {
            // 50 ms / (d + 60 us), 10 to 1000.
            Assert.AreEqual(312, WarmupRule.Default(false, 100000));
            Assert.AreEqual(47, WarmupRule.Default(false, 1000000));
            Assert.AreEqual(10, WarmupRule.Default(false, 10000000));   // 4, at least 10
            Assert.AreEqual(714, WarmupRule.Default(false, 10000));     // 50 ms / 70 us
        }
    }
}
