package keeptime

import (
	"math"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Real-time tests assert only what must always hold: never early, no drift,
// counters back to zero. No timed assertions: the machines are shared and
// noisy, and accuracy belongs in the benchmark.

// 8 goroutines × 200 sleeps of 50–500 µs through the shared sleepers and
// through their own, by duration and by deadline: none returns early.
func TestSleepIsNeverEarlyUnderConcurrency(t *testing.T) {
	const goroutines, sleeps = 8, 200
	var wg sync.WaitGroup
	var early atomic.Int64
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			own := NewSleeper(Exact)
			for i := 0; i < sleeps; i++ {
				d := time.Duration(50_000 + rng.Int63n(450_000))
				start := time.Now()
				deadline := start.Add(d)
				switch (g + i) % 4 {
				case 0:
					Sleep(d)
				case 1:
					SleepUntil(deadline)
				case 2:
					own.Sleep(d)
				default:
					own.SleepUntil(deadline)
				}
				if time.Now().Before(deadline) {
					early.Add(1)
				}
			}
		}(g)
	}
	wg.Wait()
	if n := early.Load(); n > 0 {
		t.Fatalf("%d of %d sleeps returned early", n, goroutines*sleeps)
	}
	if n := spinners.Load(); n != 0 {
		t.Fatalf("%d spin slots still held", n)
	}
	if n := sleepers.Load(); n != 0 {
		t.Fatalf("%d sleepers still counted", n)
	}
}

func TestSpinModeIsNeverEarly(t *testing.T) {
	s := NewSleeper(Spin)
	for i := 0; i < 50; i++ {
		deadline := time.Now().Add(time.Duration(1_000 + i*2_000))
		s.SleepUntil(deadline)
		if time.Now().Before(deadline) {
			t.Fatalf("spin sleep %d returned early", i)
		}
	}
}

// Efficient mode may end early by design; it must still return, and keep
// learning.
func TestEfficientModeReturnsAndLearns(t *testing.T) {
	s := NewSleeper(Efficient)
	for i := 0; i < 20; i++ {
		s.Sleep(200 * time.Microsecond)
	}
	if s.est.seq != 20 {
		t.Fatalf("%d sleeps begun, want 20", s.est.seq)
	}
}

func TestDeadlineWithoutMonotonicReadingIsNeverEarlyByTheWallClock(t *testing.T) {
	for i := 0; i < 20; i++ {
		t0 := time.Now().Add(300 * time.Microsecond).Round(0) // wall clock only
		SleepUntil(t0)
		if time.Now().Before(t0) {
			t.Fatalf("returned before a wall-clock deadline")
		}
	}
}

func TestPastDeadlinesAndNonPositiveDurationsReturn(t *testing.T) {
	Sleep(0)
	Sleep(-time.Second)
	Sleep(math.MinInt64)
	SleepUntil(time.Now().Add(-time.Hour))
	SleepUntil(time.Time{}) // year 1, no monotonic reading
	var zero Sleeper        // the zero value is usable
	zero.Sleep(-1)
	zero.Sleep(20 * time.Microsecond)
	zero.SleepUntil(time.Now())
}

// Ticker deadlines are start + k·period exactly, whatever the loop body
// does: each tick is the deadline announced before it (plus the skipped
// periods), and for Skip and Burst every deadline is the first one plus a
// whole number of periods.
func TestTickerDeadlinesNeverDrift(t *testing.T) {
	const period = 500 * time.Microsecond
	for _, policy := range []MissedTicks{Skip, Burst, Delay} {
		tk, err := NewTicker(period, policy)
		if err != nil {
			t.Fatal(err)
		}
		next := tk.NextDeadline()
		first := tk.Wait()
		if first.Index != 1 || !first.Scheduled.Equal(next) {
			t.Fatalf("%v: first tick %+v, announced %v", policy, first, next)
		}
		prev := first
		for i := 0; i < 100; i++ {
			if i%25 == 24 {
				time.Sleep(1300 * time.Microsecond) // the loop body overruns
			}
			next = tk.NextDeadline()
			tick := tk.Wait()
			now := time.Now() // the caller's own reading, after Wait returned
			if now.Before(tick.Scheduled) {
				t.Fatalf("%v: tick %d delivered before its deadline", policy, tick.Index)
			}
			// The tick's own view (its last reading) is never after the caller's.
			if now.Before(tick.Scheduled.Add(tick.Lateness)) {
				t.Fatalf("%v: tick %d reports a lateness past the caller's reading", policy, tick.Index)
			}
			if tick.Lateness < 0 {
				t.Fatalf("%v: negative lateness", policy)
			}
			if tick.Index != prev.Index+1+tick.Skipped || policy != Skip && tick.Skipped != 0 {
				t.Fatalf("%v: index %d after %d with %d skipped", policy, tick.Index, prev.Index, tick.Skipped)
			}
			if want := next.Add(time.Duration(tick.Skipped) * period); !tick.Scheduled.Equal(want) {
				t.Fatalf("%v: tick %d scheduled at %v, announced %v", policy, tick.Index, tick.Scheduled, want)
			}
			if policy != Delay {
				if got, want := tick.Scheduled.Sub(first.Scheduled), time.Duration(tick.Index-1)*period; got != want {
					t.Fatalf("%v: tick %d is %v after the first, want %v", policy, tick.Index, got, want)
				}
			}
			prev = tick
		}
		st := tk.Stats()
		if st.Ticks != 101 || st.Skipped > st.Missed {
			t.Fatalf("%v: stats %+v", policy, st)
		}
	}
}

// At most spinSlots goroutines hold a spin slot at once, and every slot
// taken is given back.
func TestSpinSlotsNeverExceedTheCap(t *testing.T) {
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 4*runtime.NumCPU()+4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				if !tryBeginSpin() {
					continue
				}
				n := inside.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				runtime.Gosched()
				inside.Add(-1)
				endSpin()
			}
		}()
	}
	wg.Wait()
	if most.Load() > spinSlots || spinners.Load() != 0 {
		t.Fatalf("%d spinners at once (cap %d), %d left", most.Load(), spinSlots, spinners.Load())
	}
}

// The shared sleepers are handed out one goroutine at a time.
func TestSharedSleepersAreNeverShared(t *testing.T) {
	var wg sync.WaitGroup
	var inUse sync.Map
	var clash atomic.Bool
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				s, gen := sharedSleepers.get()
				if _, loaded := inUse.LoadOrStore(s, true); loaded {
					clash.Store(true)
				}
				s.est.beginSleep() // a data race here if two goroutines held s
				inUse.Delete(s)
				sharedSleepers.put(s, gen)
			}
		}()
	}
	wg.Wait()
	if clash.Load() {
		t.Fatal("one sleeper was handed to two goroutines")
	}
	if n := len(sharedSleepers.free); n > maxSharedSleepers {
		t.Fatalf("free list grew to %d", n)
	}
}

// The relative fallback (other operating systems, or a Linux where the
// offset to CLOCK_MONOTONIC could not be found) keeps the OS-wait contract.
func TestRelativeWaitNeverWakesBeforeItsTarget(t *testing.T) {
	c := clk()
	for i := 0; i < 20; i++ {
		target := c.nowNs() + uint64(10_000*i)
		if relativeWaitUntil(target) != waitCompleted || c.nowNs() < target {
			t.Fatalf("relative wait %d woke before its target", i)
		}
	}
}

// Every tail target: never early, and the stats add up (no figures: those
// belong in the benchmark). On Linux the thread CPU clock was sampled, so
// some OS-wait length has a learned cost; the fallback cannot read it and
// keeps the default.
func TestTailTargetsAreNeverEarlyAndStatsAddUp(t *testing.T) {
	for _, target := range []TailTarget{TailRelaxed, TailBalanced, TailStrict} {
		s := NewSleeper(Exact)
		s.SetTailTarget(target)
		const n = 60
		for i := 0; i < n; i++ {
			deadline := time.Now().Add(time.Duration(100_000 + i*10_000))
			s.SleepUntil(deadline)
			if time.Now().Before(deadline) {
				t.Fatalf("target %v: sleep %d returned early", target, i)
			}
		}
		st := s.Stats()
		// A deadline can pass before the call (a preemption): no sleep then.
		if st.Sleeps == 0 || st.Sleeps > n || st.Late > st.Sleeps || st.CPUEstimate < st.Spin || st.Spin < 0 {
			t.Fatalf("target %v: stats %+v", target, st)
		}
		if st.OSWaits > 0 {
			sampled := false
			for b := 0; b < buckets; b++ {
				sampled = sampled || s.est.buckets[b].hasCost
			}
			if sampled != hasAbsoluteWait {
				t.Fatalf("target %v: thread CPU sampled %v, absolute waits %v", target, sampled, hasAbsoluteWait)
			}
		}
		if s.TailTarget() != target {
			t.Fatalf("TailTarget() = %v, want %v", s.TailTarget(), target)
		}
	}
	if n := spinners.Load(); n != 0 {
		t.Fatalf("%d spin slots still held", n)
	}
}

// A real crowd: more goroutines sleeping at once than CPUs, each with its
// own Exact sleeper. Never early, and every sleeper leaves the crowd count
// and its spin slot (no figures: those belong in the benchmark).
func TestACrowdIsNeverEarlyAndLeavesTheCounts(t *testing.T) {
	goroutines := 4*availableCPUs() + 2
	const sleeps = 100
	var wg sync.WaitGroup
	var early, most atomic.Int64
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			s := NewSleeper(Exact)
			for i := 0; i < sleeps; i++ {
				deadline := time.Now().Add(time.Duration(100_000 + 50_000*((g+i)%8)))
				s.SleepUntil(deadline)
				if time.Now().Before(deadline) {
					early.Add(1)
				}
				for n := sleepers.Load(); n > most.Load(); n = sleepers.Load() {
					most.Store(n)
				}
			}
		}(g)
	}
	wg.Wait()
	if n := early.Load(); n > 0 {
		t.Fatalf("%d of %d sleeps returned early", n, goroutines*sleeps)
	}
	if n := sleepers.Load(); n != 0 {
		t.Fatalf("%d sleepers still counted", n)
	}
	if n := spinners.Load(); n != 0 {
		t.Fatalf("%d spin slots still held", n)
	}
	if m := most.Load(); m > int64(goroutines) {
		t.Fatalf("%d sleepers counted at once with %d goroutines", m, goroutines)
	}
}

// The CPUs a crowd is measured against: min(NumCPU, GOMAXPROCS), read per
// call, so a change of GOMAXPROCS is followed.
func TestAvailableCPUsFollowsGOMAXPROCS(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	if got, want := availableCPUs(), max(1, min(runtime.NumCPU(), prev)); got != want {
		t.Fatalf("availableCPUs() = %d, want %d", got, want)
	}
	runtime.GOMAXPROCS(1)
	if got := availableCPUs(); got != 1 {
		t.Fatalf("availableCPUs() = %d with GOMAXPROCS 1", got)
	}
	runtime.GOMAXPROCS(runtime.NumCPU() + 3)
	if got := availableCPUs(); got != runtime.NumCPU() {
		t.Fatalf("availableCPUs() = %d with GOMAXPROCS above NumCPU (%d)", got, runtime.NumCPU())
	}
}
