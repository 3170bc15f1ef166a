// How many unrecorded waits come before a cell: the rule of every runtime's
// bench (the Rust bench's default_warmup). In a file of its own, using
// nothing but System, so that the NUnit suite compiles it too
// (mk/dotnet.mk's test-dotnet).
using System;

namespace Dev.KeepTime.Bench
{
    internal static class WarmupRule
    {
        /// <summary>What one wait is assumed to cost beyond its duration when a warm-up time becomes a count, ns.</summary>
        public const long PlanningOverheadNs = 60000;
        /// <summary>The warm-up of a method that learns nothing takes about this long per cell, ns.</summary>
        public const long TargetNs = 50000000;
        /// <summary>Fewest warm-up waits per cell.</summary>
        public const int Min = 10;
        /// <summary>Most warm-up waits per cell of a method that learns nothing.</summary>
        public const int Max = 1000;
        /// <summary>
        /// The warm-up of a method whose sleeper learns from its own waits takes about this
        /// long per cell, ns: a fresh keeptime sleeper plans on the largest wake-ups it has
        /// seen until it has seen a few hundred, and spends several times its later CPU
        /// meanwhile (docs/bench.md).
        /// </summary>
        public const long LearningTargetNs = 1000000000;
        /// <summary>
        /// Fewest warm-up waits per cell of a method that learns, as long as they take at most
        /// <see cref="LearningLimitNs"/>: at the default 1 % target a margin sets its largest
        /// wake-up aside only from 199 of them, and 1 s is about 100 sleeps at 10 ms.
        /// </summary>
        public const int LearningMin = 300;
        /// <summary>The longest the <see cref="LearningMin"/> floor makes a cell's warm-up, ns.</summary>
        public const long LearningLimitNs = 5000000000;
        /// <summary>Most warm-up waits per cell of a method that learns.</summary>
        public const int LearningMax = 3000;

        /// <summary>
        /// The warm-up of a method at <paramref name="durationNs"/>: about 50 ms of waits,
        /// 10 to 1000 of them; when the method learns, about 1 s but at least 300 where they
        /// take at most 5 s, 10 to 3000; each wait counted as its duration + 60 µs.
        /// </summary>
        public static int Default(bool learns, long durationNs)
        {
            long per = durationNs + PlanningOverheadNs;
            if (!learns)
                return (int)Math.Max(Min, Math.Min(Max, TargetNs / per));
            long floor = Math.Min(LearningMin, LearningLimitNs / per);
            return (int)Math.Max(Min, Math.Min(LearningMax, Math.Max(LearningTargetNs / per, floor)));
        }
    }
}
