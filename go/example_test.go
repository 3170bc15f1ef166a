package keeptime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	keeptime "github.com/keeptime/keeptime/go"
)

func ExampleSleep() {
	start := time.Now()
	keeptime.Sleep(100 * time.Microsecond) // time.Sleep would take ~1 ms on Linux
	fmt.Println(time.Since(start) >= 100*time.Microsecond)
	// Output: true
}

func ExampleSleepUntil() {
	deadline := time.Now().Add(250 * time.Microsecond)
	keeptime.SleepUntil(deadline)
	fmt.Println("early:", time.Now().Before(deadline))
	// Output: early: false
}

func ExampleSleepContext() {
	// A wait that ends with its context: a timeout here, a cancel from
	// another goroutine (a shutdown) the same way.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := keeptime.SleepContext(ctx, time.Hour) // returns soon after the 10 ms
	fmt.Println(err, errors.Is(err, context.DeadlineExceeded))

	// Uncancelled, it is Sleep: nil, never early.
	live, stop := context.WithCancel(context.Background())
	defer stop()
	start := time.Now()
	err = keeptime.SleepContext(live, 250*time.Microsecond)
	fmt.Println(err, time.Since(start) >= 250*time.Microsecond)

	// A context already done: its error at once, whatever the duration.
	stop()
	fmt.Println(keeptime.SleepContext(live, 0))
	// Output:
	// context deadline exceeded true
	// <nil> true
	// context canceled
}

func ExampleSleeper_SleepUntilContext() {
	s := keeptime.NewSleeper(keeptime.Exact)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(5 * time.Millisecond) // say, a shutdown signal
		cancel()
	}()
	deadline := time.Now().Add(10 * time.Second)
	err := s.SleepUntilContext(ctx, deadline)
	fmt.Println(err, time.Now().Before(deadline))
	// A cancelled sleep counts as a sleep, never as a late one.
	st := s.Stats()
	fmt.Println("sleeps:", st.Sleeps, "late:", st.Late)
	// Output:
	// context canceled true
	// sleeps: 1 late: 0
}

func ExampleTicker_WaitContext() {
	t, err := keeptime.NewTicker(time.Millisecond, keeptime.Skip) // 1 kHz
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	for {
		tick, err := t.WaitContext(ctx)
		if err != nil {
			// The wait that the context ended consumed no slot: the next
			// Wait would deliver the slot it was waiting for.
			fmt.Println("stopped:", err)
			break
		}
		_ = tick // ... the loop body
	}
	// Output: stopped: context deadline exceeded
}

func ExampleNewTicker() {
	t, err := keeptime.NewTicker(time.Millisecond, keeptime.Skip) // 1 kHz
	if err != nil {
		panic(err)
	}
	for i := 0; i < 5; i++ {
		tick := t.Wait() // blocks until start + k·1 ms; no channel hop
		// ... the loop body; tick.Lateness says how late this slot was served,
		// tick.Skipped how many slots an overrun dropped.
		_ = tick
	}
	fmt.Println("ticks:", t.Stats().Ticks)

	_, err = keeptime.NewTicker(0, keeptime.Skip)
	fmt.Println(err)
	// Output:
	// ticks: 5
	// keeptime: ticker period must be positive (got 0s)
}

func ExampleNewSleeper() {
	// One Sleeper per goroutine; it learns this machine's wake-up latency.
	exact := keeptime.NewSleeper(keeptime.Exact)
	exact.Sleep(500 * time.Microsecond) // never early, a fraction of a µs late

	// The compensated sleep: no spin, almost no CPU, may end a few µs early.
	cheap := keeptime.NewSleeper(keeptime.Efficient)
	cheap.Sleep(500 * time.Microsecond)
	fmt.Println(exact.Mode(), cheap.Mode())
	// Output: exact efficient
}

// InspectClocks takes about 0.1 s and its numbers are the machine's, so
// this example is compiled but not run by go test.
func ExampleInspectClocks() {
	report, err := keeptime.InspectClocks()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range report.Clocks {
		if !c.Available {
			fmt.Printf("%-18s unavailable: %s\n", c.Name, c.Error)
			continue
		}
		step := "never stepped"
		if c.GranularityNs != nil {
			step = fmt.Sprintf("steps of %d ns", *c.GranularityNs)
		}
		fmt.Printf("%-18s %-32s read %6.1f ns, %s\n", c.Name, c.Reader, c.ReadCostNs, step)
	}
	fmt.Println("clocksource:", report.Machine.Clocksource)
	for _, f := range report.Findings {
		fmt.Printf("- %s %s: %s\n", f.Severity, f.Code, f.Message)
	}
}

func ExampleSleeper_SetTailTarget() {
	s := keeptime.NewSleeper(keeptime.Exact)
	fmt.Println("default:", s.TailTarget())

	// At most 0.1 % of sleeps may end late; keeptime spins longer for it.
	s.SetTailTarget(keeptime.TailStrict)
	for i := 0; i < 20; i++ {
		s.Sleep(300 * time.Microsecond)
	}
	st := s.Stats()
	// (A sleep whose deadline passed before it began, say in a preemption,
	// is no sleep: Sleeps counts those that had to wait.)
	fmt.Println("target:", s.TailTarget(), "late <= sleeps <= 20:", st.Late <= st.Sleeps && st.Sleeps <= 20)
	// What precision costs on this machine: st.LateShare(), st.OSWaits per
	// sleep, st.CPUEstimate over the time slept.
	s.ResetStats()
	fmt.Println("after reset:", s.Stats().Sleeps)
	// Output:
	// default: 1%
	// target: 0.1% late <= sleeps <= 20: true
	// after reset: 0
}

func ExampleNewTailTarget() {
	t, err := keeptime.NewTailTarget(0.002) // 0.2 %
	fmt.Println(t, t.PPM(), err)

	_, err = keeptime.NewTailTarget(1.5) // not a share: an error, never clamped
	fmt.Println(errors.Is(err, keeptime.ErrInvalidTailTarget))

	t, err = keeptime.ParseTailTarget("strict")
	fmt.Println(t, err)
	// Output:
	// 0.2% 2000 <nil>
	// true
	// 0.1% <nil>
}

func ExampleSleeper_SetIdleHint() {
	s := keeptime.NewSleeper(keeptime.Exact)
	// Ask the kernel to keep CPU wake-up latency at 0 µs while s holds the
	// hint. PRICE: idle CPUs poll instead of sleeping (more power; a VM's
	// host sees its vCPUs busy). Needs root or write access to
	// /dev/cpu_dma_latency; a refusal is logged once and s works without it.
	s.SetIdleHint(keeptime.IdleHintZero)
	defer s.Close() // holds the hint until Close

	st := s.IdleHintStatus() // e.g. "held: 0 µs in force (asked 0 µs)"
	switch st.State {
	case keeptime.IdleHintHeld, keeptime.IdleHintRefused: // st.Err says why
		deadline := time.Now().Add(time.Millisecond)
		s.SleepUntil(deadline)
		fmt.Println("early:", time.Now().Before(deadline))
	}
	// Output: early: false
}

func ExampleNewIdleHint() {
	h, err := keeptime.NewIdleHint(20 * time.Microsecond)
	fmt.Println(h, err)

	h, err = keeptime.NewIdleHint(1900 * time.Nanosecond) // whole µs, truncated: a stricter bound
	fmt.Println(h, err)

	_, err = keeptime.IdleHintMicros(-1) // an error, never clamped
	fmt.Println(err)
	fmt.Println(errors.Is(err, keeptime.ErrInvalidIdleHint))
	// Output:
	// 20 µs <nil>
	// 1 µs <nil>
	// keeptime: idle-latency hint must be 0 to 2147483647 µs (got -1 µs)
	// true
}

// A host profile: what one run learned on this machine, so that the next
// run's sleepers start from it instead of from nothing.
func ExampleLoadProfile() {
	path := filepath.Join(os.TempDir(), "keeptime-example.profile")
	defer os.Remove(path)

	first := keeptime.NewSleeper(keeptime.Exact)
	for i := 0; i < 20; i++ {
		first.Sleep(300 * time.Microsecond)
	}
	if err := first.WriteProfile(path); err != nil {
		panic(err)
	}

	// A later run: refused (a *ProfileError naming the key) if the file
	// was made on another machine; keeptime.IgnoreMachine() loads it anyway.
	p, err := keeptime.LoadProfile(path)
	if err != nil {
		var pe *keeptime.ProfileError
		if errors.As(err, &pe) {
			fmt.Println(pe.Code, pe.Line, pe.Key)
		}
		return
	}
	next := keeptime.NewSleeper(keeptime.Exact)
	if err := next.UseProfile(p); err != nil { // before its first sleep
		panic(err)
	}
	t, _ := keeptime.NewTickerWith(next, time.Millisecond, keeptime.Skip) // starts from the profile too
	t.Wait()

	fmt.Println(p.Samples() == first.Profile().Samples())
	fmt.Println(errors.Is(next.UseProfile(p), keeptime.ErrSleeperHasSlept))
	// Output:
	// true
	// true
}

func ExampleSetDefaultProfile() {
	path := filepath.Join(os.TempDir(), "keeptime-example-default.profile")
	defer os.Remove(path)

	earlier := keeptime.NewSleeper(keeptime.Exact) // an earlier run's sleeper
	for i := 0; i < 20; i++ {
		earlier.Sleep(300 * time.Microsecond)
	}
	if err := earlier.WriteProfile(path); err != nil {
		panic(err)
	}

	// A later run, at start-up, before its first sleep: Sleep and
	// SleepUntil start from the profile instead of from nothing.
	p, err := keeptime.LoadProfile(path)
	if err != nil {
		fmt.Println("starting fresh:", err)
	} else {
		keeptime.SetDefaultProfile(p)
	}
	defer keeptime.SetDefaultProfile(nil) // this example's clean-up: fresh again

	start := time.Now()
	keeptime.Sleep(300 * time.Microsecond)
	fmt.Println(time.Since(start) >= 300*time.Microsecond)
	// Output:
	// true
}

// At the end of a run, what Sleep and SleepUntil learned, for the next
// run: there, KEEPTIME_PROFILE=app.profile (or LoadProfile and
// SetDefaultProfile) starts them from it.
func ExampleSharedProfile() {
	dir, err := os.MkdirTemp("", "keeptime-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.profile")

	for i := 0; i < 20; i++ { // the program's own sleeps
		keeptime.Sleep(300 * time.Microsecond)
	}
	err = keeptime.SharedProfile().WriteFile(path)
	fmt.Println("saved:", err)

	// The next run: KEEPTIME_PROFILE=app.profile ./app, which loads it so.
	_, err = keeptime.LoadProfile(path)
	fmt.Println("loaded:", err)
	// Output:
	// saved: <nil>
	// loaded: <nil>
}
