// The child process of EnvProfileTests (KEEPTIME_PROFILE is read once per
// process, so each case is a process of its own, started with the variable in
// its environment). It writes what the static sleeps' sleeper starts from,
// sleeps with KeepTime.Sleep, writes what that sleeper has then, and prints
// how many sleeps ended before their deadline by NowNs; the test checks the
// files, the output and stderr.
//
//   keeptime-env-child.exe [--program-first PROFILE|-] BEFORE AFTER
//
// --program-first sets the default profile (PROFILE) or clears it (-) before
// anything else, as a program that chooses its own does.
using System;
using Dev.KeepTime;

namespace Dev.KeepTime.Tests
{
    internal static class EnvProfileChild
    {
        private static int Main(string[] args)
        {
            int at = 0;
            if (args.Length == 4 && args[0] == "--program-first")
            {
                if (args[1] == "-") KeepTime.SetDefaultProfile(null);
                else using (var p = Profile.Load(args[1])) KeepTime.SetDefaultProfile(p);
                at = 2;
            }
            else if (args.Length != 2)
            {
                Console.Error.WriteLine("usage: keeptime-env-child.exe [--program-first PROFILE|-] BEFORE AFTER");
                return 2;
            }
            KeepTime.WriteThreadProfile(args[at]);
            int early = 0;
            for (int i = 0; i < 20; i++)
            {
                ulong deadline = KeepTime.NowNs() + 1000000;
                KeepTime.Sleep(TimeSpan.FromMilliseconds(1));
                if (KeepTime.NowNs() < deadline) early++;
            }
            KeepTime.WriteThreadProfile(args[at + 1]);
            Console.WriteLine("early " + early);
            return early == 0 ? 0 : 1;
        }
    }
}
