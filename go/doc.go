// Package keeptime waits precisely: the accuracy of a spin at the CPU cost of
// a sleep, plus fixed-rate tickers and an inspection of the machine's clocks.
//
// On Linux, time.Sleep(100 * time.Microsecond) returns after about 1 ms
// (Go's timers are serviced with millisecond resolution), and
// syscall.Nanosleep pays the kernel's 50 µs timer slack. keeptime waits in
// the OS with an absolute deadline until a learned margin before it, then
// spins the last stretch, choosing for each sleep the cheapest plan that
// keeps the share of late sleeps under a tail target (default 1 %):
//
//	keeptime.Sleep(100 * time.Microsecond)        // 100 µs, to a fraction of a µs
//	keeptime.SleepUntil(deadline)                 // never before deadline
//
//	t, err := keeptime.NewTicker(time.Millisecond, keeptime.Skip) // 1 kHz, no drift
//	for {
//		tick := t.Wait() // blocks; no channel, no background timer
//		_ = tick.Lateness
//	}
//
//	err := keeptime.SleepContext(ctx, time.Second) // ctx.Err() once ctx is done, else nil at the deadline
//	tick, err := t.WaitContext(ctx)                // the same; a cancelled wait consumes no slot
//
//	s := keeptime.NewSleeper(keeptime.Exact)
//	s.SetTailTarget(keeptime.TailStrict)         // at most 0.1 % of sleeps late
//	st := s.Stats()                              // sleeps, late, OS waits, spin, CPU, unproven
//	e := keeptime.NewSleeper(keeptime.Efficient) // no spin; may end a few µs early
//	report, err := keeptime.InspectClocks()      // clock_getres, read cost, clocksource, slack
//	s.SetIdleHint(keeptime.IdleHintZero)         // opt-in PM QoS request; idle CPUs poll (power!)
//	defer s.Close()                              // holds the hint until Close
//
// # The contract
//
//   - SleepUntil never returns before its deadline by time.Now's monotonic
//     reading (CLOCK_MONOTONIC on Linux), and returns as soon after it as it
//     can; Sleep(d) is SleepUntil(now + d). Efficient mode is the one,
//     explicitly named, exception.
//   - OS waits use an absolute deadline (clock_nanosleep with TIMER_ABSTIME on
//     CLOCK_MONOTONIC), so a signal (EINTR) resumes toward the same deadline.
//   - What the OS's wake-ups look like, per OS-wait length, and what an OS
//     wait costs the thread are learned online, per Sleeper
//     (spec/estimator.md in the repository); the planner (spec/sleep.md)
//     takes the plan with the least expected CPU whose predicted share of
//     late sleeps meets the Sleeper's TailTarget. This package replays the
//     spec's JSON vectors bit for bit, like the Rust core and the Java
//     library.
//   - A spin-finished wait does all its bookkeeping (stats, spin slot, crowd
//     count, the borrowed shared sleeper) before its last 5 µs, which the
//     exported call spins itself: the loop's exit is the return to the
//     caller, so nothing cold runs between the deadline and the caller's
//     next instruction (spec/sleep.md, "Hand-off").
//   - The OS thread that does an OS wait gets a 1 ns Linux timer slack
//     (Sleeper.SetTimerSlack opts out).
//   - At most max(1, runtime.NumCPU()-1) goroutines spin with the pause
//     hint at once, process-wide, so a goroutine woken from its OS wait
//     always finds a CPU no pausing spinner holds; the others follow: they
//     spin with a yield on every iteration, never late by an OS wake-up.
//   - Crowds: with more goroutines inside an Exact sleep than CPUs
//     (min(runtime.NumCPU(), GOMAXPROCS)), each sleep's spin is capped at
//     its share of half the CPUs less the learned cost of its OS wait, so a
//     crowd never snowballs into everyone spinning; a wake-up later than
//     the capped margin makes that sleep late (the cap overrides the tail
//     target).
//   - SleepContext, SleepUntilContext (also on a Sleeper) and
//     Ticker.WaitContext end early with ctx.Err() once their context is
//     done: on Linux the OS wait under a context is a futex wait to the same
//     absolute deadline that context.AfterFunc wakes (about 70 µs from
//     cancel to return at the median on a 2-vCPU VM, see the README), and a
//     long yielding spin checks the context every 10 ms. A context already
//     done returns its error at once, whatever the duration; a nil one
//     counts as context.Background, and one that can never be done takes
//     the plain path at its cost.
//   - Bad input follows Go's conventions: a negative or zero duration returns
//     at once, like time.Sleep; a zero or negative ticker period is an error
//     from NewTicker; a tail target outside [10⁻⁶, 1) or NaN is an error
//     from NewTailTarget, never clamped or rounded up; an idle-latency
//     hint below 0 or past 2147483647 µs is an error from NewIdleHint or
//     IdleHintMicros; nothing panics.
//
// # The idle-latency hint
//
// Sleeper.SetIdleHint and Ticker.SetIdleHint hold a PM QoS CPU latency
// request on /dev/cpu_dma_latency (Linux) until Close, reference-counted
// per process, the strictest live value in force. On hosts whose cpuidle
// driver has deep or polling states (haltpoll, intel_idle, acpi_idle) OS
// waits then wake sooner and exact sleeps cost less CPU. The price: idle
// CPUs poll instead of sleeping, more power, and a virtual machine's host
// sees its vCPUs as busy. A refusal (not root, no device) is logged once
// per process and never fails a sleep. InspectIdleLatency reports the
// cpuidle driver, the value in force and whether this process may hold
// the request.
//
// # Goroutines and threads
//
// The package functions Sleep and SleepUntil are safe for concurrent use;
// they borrow a Sleeper from a shared free list for each call. Sleeper and
// Ticker values are not: give each goroutine its own.
//
// A host profile (Profile: what an earlier run on this machine learned)
// starts a Sleeper of your own with Sleeper.UseProfile, and the shared
// sleepers behind Sleep and SleepUntil, and those of the tickers NewTicker
// makes from then on, with SetDefaultProfile, called once at start-up;
// otherwise from the profile the environment variable KEEPTIME_PROFILE
// names, if any, or fresh. SharedProfile saves what the shared sleepers
// learned, for the next run.
//
// A precise wake-up needs a free P (GOMAXPROCS slot) at the moment the OS
// wait ends. If every P is busy running other goroutines, the Go scheduler
// decides when the sleeper runs again, which can be milliseconds later; the
// margins then grow to cover it, and the wait stays never-early.
//
// # Other operating systems
//
// Off Linux the OS wait is time.Sleep of the remaining time (relative, with
// the Go runtime's timer granularity: ~1 ms, up to 15.6 ms on Windows) and
// there is no timer slack; the spin still finishes every wait, so waits stay
// never-early and precise at a higher CPU cost.
package keeptime
