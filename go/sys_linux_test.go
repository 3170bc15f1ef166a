//go:build linux && !keeptime_fallback

package keeptime

import (
	"context"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestClockIsCalibratedAgainstClockMonotonic(t *testing.T) {
	c := clk()
	if !c.absolute {
		t.Fatal("the offset to CLOCK_MONOTONIC could not be calibrated")
	}
	// keeptime's clock reads CLOCK_MONOTONIC plus a small non-negative error.
	for i := 0; i < 1000; i++ {
		m, err := clockMonotonicNs()
		if err != nil {
			t.Fatal(err)
		}
		if k := c.nowNs(); k < m {
			t.Fatalf("keeptime clock %d behind CLOCK_MONOTONIC %d", k, m)
		}
	}
}

func TestDeadlineConversionIsExact(t *testing.T) {
	c := clk()
	for _, d := range []time.Duration{-time.Millisecond, -1, 0, 1, time.Millisecond, 1000 * time.Hour} {
		deadline := time.Now().Add(d)
		if got, want := c.deadlineNs(deadline), c.fromAnchor(deadline.Sub(c.anchor)); got != want {
			t.Fatalf("deadline %v: %d, want %d", d, got, want)
		}
		back := c.timeOf(c.deadlineNs(deadline))
		if !back.Equal(deadline) || back.Sub(deadline) != 0 {
			t.Fatalf("round trip of %v moved it by %v", d, back.Sub(deadline))
		}
	}
}

// The OS wait keeps the platform contract: when it reports completion,
// keeptime's clock reads at least the target.
func TestOSWaitNeverWakesBeforeItsTarget(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	c := clk()
	for i := 0; i < 200; i++ {
		target := c.nowNs() + uint64(5_000+rng.Int63n(195_000))
		if osWaitUntil(target, true) == waitCompleted {
			if now := c.nowNs(); now < target {
				t.Fatalf("woke %d ns before the target", target-now)
			}
		}
	}
}

// The same with the P handed off (as many sleepers as CPUs, and only then):
// the contract holds, and a wait for a target long past returns no error.
func TestOSWaitHandingOffItsPNeverWakesBeforeItsTarget(t *testing.T) {
	if sleepersMayHoldEveryP() {
		t.Fatalf("%d sleepers counted outside any sleep", sleepers.Load())
	}
	k := int64(availableCPUs())
	sleepers.Add(k - 1)
	if sleepersMayHoldEveryP() {
		t.Fatalf("%d sleepers on %d CPUs may hold every P", k-1, k)
	}
	sleepers.Add(1)
	defer sleepers.Add(-k)
	if !sleepersMayHoldEveryP() {
		t.Fatalf("%d sleepers on %d CPUs may not hold every P", k, k)
	}
	rng := rand.New(rand.NewSource(2))
	c := clk()
	for i := 0; i < 200; i++ {
		target := c.nowNs() + uint64(5_000+rng.Int63n(195_000))
		if osWaitUntil(target, true) == waitCompleted {
			if now := c.nowNs(); now < target {
				t.Fatalf("woke %d ns before the target", target-now)
			}
		}
	}
	if err := clockNanosleepHandingOffP(&unix.Timespec{}, true); err != 0 {
		t.Fatalf("a wait until CLOCK_MONOTONIC 0: %v", err)
	}
}

func TestTimerSlackIsSetOnTheWaitingThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := timerSlackNs()
	if err != nil {
		t.Skip("PR_GET_TIMERSLACK:", err)
	}
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(before), 0, 0, 0)
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 50_000, 0, 0, 0); err != nil {
		t.Skip("PR_SET_TIMERSLACK:", err)
	}
	ensureTimerSlack1ns()
	if got, _ := timerSlackNs(); got != 1 {
		t.Fatalf("slack %d after ensureTimerSlack1ns", got)
	}
	// A wait on this (locked) thread leaves it at 1 ns; opting out leaves it alone.
	unix.Prctl(unix.PR_SET_TIMERSLACK, 50_000, 0, 0, 0)
	s := NewSleeper(Exact)
	s.SetTimerSlack(false)
	s.Sleep(100 * time.Microsecond)
	if got, _ := timerSlackNs(); got != 50_000 {
		t.Fatalf("SetTimerSlack(false) changed the slack to %d", got)
	}
	// A fresh sleeper: the one above learned the 50 µs slack and may no
	// longer plan an OS wait for 100 µs at all.
	s = NewSleeper(Exact)
	s.Sleep(2 * time.Millisecond)
	if got, _ := timerSlackNs(); got != 1 {
		t.Fatalf("slack %d after a sleep on this thread", got)
	}
}

// The cancellable OS wait (a futex wait to the absolute target), on both of
// its paths: a sleeper alone (thread lock, P kept) and as many sleepers as
// CPUs (nosplit, P handed off). It keeps the platform contract; a word set
// before the wait makes it report interrupted without waiting; the wake
// from another goroutine ends a 10 s wait, reported interrupted; a target
// long past completes.
func TestCancellableOSWaitKeepsTheContractOnBothPaths(t *testing.T) {
	if sleepersMayHoldEveryP() {
		t.Fatalf("%d sleepers counted outside any sleep", sleepers.Load())
	}
	c := clk()
	for _, handOff := range []bool{false, true} {
		if handOff {
			k := int64(availableCPUs())
			sleepers.Add(k)
			defer sleepers.Add(-k)
		}
		if got := sleepersMayHoldEveryP(); got != handOff {
			t.Fatalf("hand-off %v: sleepersMayHoldEveryP %v", handOff, got)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ic, _ := interruptCheckOf(ctx)
		rng := rand.New(rand.NewSource(4))
		for i := 0; i < 200; i++ {
			target := c.nowNs() + uint64(5_000+rng.Int63n(195_000))
			if osWaitUntilCtx(target, true, ic) == waitCompleted {
				if now := c.nowNs(); now < target {
					t.Fatalf("hand-off %v: woke %d ns before the target", handOff, target-now)
				}
			}
		}
		if got := osWaitUntilCtx(c.nowNs()-1, true, ic); got != waitCompleted {
			t.Fatalf("hand-off %v: a past target: %v", handOff, got)
		}
		// Woken from another goroutine: cancel runs ic.wakeFutex, armed by
		// the waits above.
		target := c.nowNs() + uint64(10*time.Second)
		go func() {
			time.Sleep(10 * time.Millisecond)
			cancel()
		}()
		if got := osWaitUntilCtx(target, true, ic); got != waitInterrupted || c.nowNs() >= target {
			t.Fatalf("hand-off %v: a woken wait reported %v", handOff, got)
		}
		if ic.check() != context.Canceled {
			t.Fatalf("hand-off %v: the check after the wake: %v", handOff, ic.check())
		}
		// The word stays set: the next wait does not block at all.
		if got := osWaitUntilCtx(target, true, ic); got != waitInterrupted || c.nowNs() >= target {
			t.Fatalf("hand-off %v: a wait after the wake reported %v", handOff, got)
		}
		ic.release()
	}
}
