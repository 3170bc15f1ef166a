// KEEPTIME_PROFILE through the C ABI (spec/estimator.md, Default sleepers,
// From the environment): the static sleeps' sleeper starts from the profile
// the variable names, a file that cannot be loaded is one line on stderr and
// they start fresh, and a program that sets or clears the default first never
// reads it. The variable is read once per process, so each case runs a child
// process, keeptime-env-child.exe (tests/EnvProfileChild, built beside this
// assembly by make test-dotnet), with the variable in its environment.
using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class EnvProfileTests
    {
        private const string Suffix = "; keeptime's own sleepers start fresh\n";

        /// <summary>What a child run gave: its exit code, output, stderr and the two profiles it wrote.</summary>
        private sealed class ChildRun
        {
            public int ExitCode;
            public string Stdout, Stderr, Before, After;

            public override string ToString()
            {
                return "exit code " + ExitCode + ", stdout \"" + Stdout + "\", stderr \"" + Stderr + "\"";
            }
        }

        /// <summary>
        /// Runs the child with KEEPTIME_PROFILE=<paramref name="keeptimeProfile"/>
        /// (and, if <paramref name="programFirst"/> is not null, --program-first
        /// with it): what it gave, after checking that it slept 20 times, never
        /// early, and exited 0.
        /// </summary>
        private static ChildRun RunChild(string keeptimeProfile, string programFirst = null)
        {
            string dir = Path.GetDirectoryName(typeof(EnvProfileTests).Assembly.Location);
            string exe = Path.Combine(dir, "keeptime-env-child.exe");
            Assert.That(File.Exists(exe), "the child program " + exe + " (make test-dotnet builds it)");
            string before = Path.GetTempFileName(), after = Path.GetTempFileName();
            File.Delete(before);
            File.Delete(after);
            var args = new[] { "--debug", exe }
                .Concat(programFirst != null ? new[] { "--program-first", programFirst } : new string[0])
                .Concat(new[] { before, after });
            var psi = new ProcessStartInfo("mono", string.Join(" ", args.Select(a => "\"" + a + "\"")))
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            psi.EnvironmentVariables["KEEPTIME_PROFILE"] = keeptimeProfile;
            var run = new ChildRun();
            try
            {
                using (var p = Process.Start(psi))
                {
                    Task<string> stderr = p.StandardError.ReadToEndAsync();
                    run.Stdout = p.StandardOutput.ReadToEnd();
                    // Not a timed check: only that a hung child does not hang the suite.
                    if (!p.WaitForExit(120000))
                    {
                        p.Kill();
                        Assert.Fail("the child did not exit in 120 s");
                    }
                    run.Stderr = stderr.Result;
                    run.ExitCode = p.ExitCode;
                }
                run.Before = File.Exists(before) ? File.ReadAllText(before) : null;
                run.After = File.Exists(after) ? File.ReadAllText(after) : null;
            }
            finally
            {
                File.Delete(before);
                File.Delete(after);
            }
            Assert.AreEqual(0, run.ExitCode, "the child: " + run);
            Assert.AreEqual("early 0\n", run.Stdout, "the child's sleeps: " + run);
            Assert.IsNotNull(run.Before, "the child wrote its thread profile before sleeping: " + run);
            Assert.IsNotNull(run.After, "the child wrote its thread profile after sleeping: " + run);
            StringAssert.StartsWith("keeptime-profile 1\n", run.Before);
            StringAssert.StartsWith("keeptime-profile 1\n", run.After);
            return run;
        }

        /// <summary>A profile text's sections: bucket, then its sample lines oldest first.</summary>
        private static Tuple<int, string[]>[] Sections(string text)
        {
            string[] lines = text.Split('\n');
            var sections = new System.Collections.Generic.List<Tuple<int, string[]>>();
            for (int i = 0; i < lines.Length; i++)
            {
                if (!lines[i].StartsWith("bucket ", StringComparison.Ordinal)) continue;
                string[] f = lines[i].Split(' ');
                int n = int.Parse(f[2]);
                sections.Add(Tuple.Create(int.Parse(f[1]), lines.Skip(i + 1).Take(n).ToArray()));
                i += n;
            }
            return sections.ToArray();
        }

        [Test]
        public void TheStaticSleepsStartFromTheProfileKeeptimeProfileNames()
        {
            string good = ProfileTests.LearnedProfile();
            try
            {
                string file = File.ReadAllText(good);
                var fileSections = Sections(file);
                Assert.That(fileSections.Length, Is.GreaterThan(0), "the profile has samples");
                ChildRun run = RunChild(good);
                Assert.AreEqual("", run.Stderr, "nothing said of a good file");
                // Before its first sleep, the thread's sleeper is the file's profile as it starts.
                Assert.AreEqual(file, run.Before, "the thread's profile before its first sleep");
                // After: every bucket of the file is still there, with the file's
                // samples and what it learned on top, or, if its own wake-ups proved
                // them stale, its own (spec/estimator.md, a stale bucket).
                var after = Sections(run.After);
                foreach (var s in fileSections)
                {
                    var same = after.FirstOrDefault(a => a.Item1 == s.Item1);
                    Assert.IsNotNull(same, "bucket " + s.Item1 + " is still there: " + run.After);
                    Assert.That(same.Item2.Length, Is.GreaterThan(0), "bucket " + s.Item1 + " has samples");
                }
                // A profile of this machine.
                string path = Path.GetTempFileName();
                try
                {
                    File.WriteAllText(path, run.After);
                    using (Profile.Load(path)) { }
                }
                finally { File.Delete(path); }
            }
            finally { File.Delete(good); }
        }

        /// <summary>Checks the one line a child wrote for a KEEPTIME_PROFILE of <paramref name="path"/> that cannot be loaded; returns its MESSAGE.</summary>
        private static string TheOneLine(ChildRun run, string path)
        {
            string prefix = "keeptime: KEEPTIME_PROFILE=" + path + ": ";
            StringAssert.StartsWith(prefix, run.Stderr, "the line's start");
            StringAssert.EndsWith(Suffix, run.Stderr, "the line's end");
            Assert.AreEqual(run.Stderr.Length - 1, run.Stderr.IndexOf('\n'), "one line: " + run.Stderr);
            Assert.That(run.Stderr.Length, Is.GreaterThan(prefix.Length + Suffix.Length), "a message: " + run.Stderr);
            return run.Stderr.Substring(prefix.Length, run.Stderr.Length - prefix.Length - Suffix.Length);
        }

        [Test]
        public void AFileKeeptimeProfileCannotLoadIsOneLineOnStderrAndTheSleepsStartFresh()
        {
            string good = ProfileTests.LearnedProfile();
            string missing = Path.GetTempFileName();
            File.Delete(missing);
            try
            {
                // Missing: the loader's message names the file again.
                ChildRun run = RunChild(missing);
                string message = TheOneLine(run, missing);
                StringAssert.Contains(missing, message);
                StringAssert.DoesNotContain("\nbucket ", run.Before, "started fresh");

                // Cut short: the loader's message, the one Profile.Load gives.
                string text = File.ReadAllText(good);
                File.WriteAllText(good, text.Substring(0, text.LastIndexOf("end", StringComparison.Ordinal)));
                var e = Assert.Throws<ProfileException>(() => Profile.Load(good));
                run = RunChild(good);
                Assert.AreEqual(
                    "keeptime: KEEPTIME_PROFILE=" + good + ": " + e.Message.Substring("keeptime: ".Length) + Suffix,
                    run.Stderr, "the one line for a cut file");
                StringAssert.DoesNotContain("\nbucket ", run.Before, "started fresh");
            }
            finally { File.Delete(good); }
        }

        [Test]
        public void AProgramThatSetsTheDefaultFirstNeverReadsKeeptimeProfile()
        {
            string good = ProfileTests.LearnedProfile();
            string missing = Path.GetTempFileName();
            File.Delete(missing);
            try
            {
                // Cleared first: a good file is not read; the sleeps start fresh.
                ChildRun run = RunChild(good, "-");
                Assert.AreEqual("", run.Stderr, "nothing said: the variable is not read");
                StringAssert.DoesNotContain("\nbucket ", run.Before, "started fresh");
                // Set first: a missing file is not read, not even to say so.
                run = RunChild(missing, good);
                Assert.AreEqual("", run.Stderr, "nothing said: the variable is not read");
                Assert.AreEqual(File.ReadAllText(good), run.Before, "started from the program's profile");
            }
            finally { File.Delete(good); }
        }
    }
}
