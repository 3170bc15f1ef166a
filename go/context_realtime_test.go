package keeptime

import (
	"context"
	"errors"
	"math/rand"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Sleeps under a context on the real clock. As in realtime_test.go, only
// what must always hold is asserted, never a timing threshold: a 10 s sleep
// cancelled by another goroutine returns the context's error before its
// deadline (a 10 s margin for a wake-up that takes µs), an uncancelled one
// never returns before its deadline, and the counters go back to zero.
// (Under -tags keeptime_fallback the same tests run on the relative wait.)

const longSleep = 10 * time.Second

// ctxWaits are the context-taking waits, each sleeping until deadline.
var ctxWaits = []struct {
	name string
	wait func(ctx context.Context, deadline time.Time) error
}{
	{"SleepContext", func(ctx context.Context, d time.Time) error { return SleepContext(ctx, time.Until(d)) }},
	{"SleepUntilContext", SleepUntilContext},
	{"Sleeper.SleepContext", func(ctx context.Context, d time.Time) error {
		return NewSleeper(Exact).SleepContext(ctx, time.Until(d))
	}},
	{"Sleeper.SleepUntilContext", func(ctx context.Context, d time.Time) error {
		return NewSleeper(Exact).SleepUntilContext(ctx, d)
	}},
	{"Spin Sleeper.SleepUntilContext", func(ctx context.Context, d time.Time) error {
		return NewSleeper(Spin).SleepUntilContext(ctx, d)
	}},
	{"Efficient Sleeper.SleepUntilContext", func(ctx context.Context, d time.Time) error {
		return NewSleeper(Efficient).SleepUntilContext(ctx, d)
	}},
	{"Ticker.WaitContext", func(ctx context.Context, d time.Time) error {
		tk, err := NewTicker(time.Until(d), Skip)
		if err != nil {
			return err
		}
		_, err = tk.WaitContext(ctx)
		return err
	}},
}

func checkNothingHeld(t *testing.T) {
	t.Helper()
	if n := spinners.Load(); n != 0 {
		t.Fatalf("%d spin slots still held", n)
	}
	if n := sleepers.Load(); n != 0 {
		t.Fatalf("%d sleepers still counted", n)
	}
}

// A 10 s wait cancelled by another goroutine after ~10 ms, and one under a
// 10 ms timeout: the context's error, before the deadline.
func TestACancelledLongWaitReturnsTheContextsErrorBeforeItsDeadline(t *testing.T) {
	for _, w := range ctxWaits {
		for _, timeout := range []bool{false, true} {
			deadline := time.Now().Add(longSleep)
			var ctx context.Context
			var cancel context.CancelFunc
			want := context.Canceled
			if timeout {
				ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
				want = context.DeadlineExceeded
			} else {
				ctx, cancel = context.WithCancel(context.Background())
				go func() {
					time.Sleep(10 * time.Millisecond)
					cancel()
				}()
			}
			err := w.wait(ctx, deadline)
			returned := time.Now()
			cancel()
			if !errors.Is(err, want) {
				t.Fatalf("%s (timeout %v): %v, want %v", w.name, timeout, err, want)
			}
			if !returned.Before(deadline) {
				t.Fatalf("%s (timeout %v): returned %v after its deadline", w.name, timeout, returned.Sub(deadline))
			}
		}
	}
	checkNothingHeld(t)
}

// A crowd: more goroutines in a 10 s SleepContext than Ps, so that the OS
// waits of those that enter once the count reaches GOMAXPROCS hand their
// P off (the nosplit futex wait, sleepersMayHoldEveryP); one cancel ends
// them all with its error, before the deadline.
func TestACancelledCrowdReturnsTheContextsErrorBeforeItsDeadline(t *testing.T) {
	n := 2*availableCPUs() + 2
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deadline := time.Now().Add(longSleep)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			if i%2 == 0 {
				errs <- SleepUntilContext(ctx, deadline)
			} else {
				errs <- NewSleeper(Exact).SleepUntilContext(ctx, deadline)
			}
		}(i)
	}
	// Wait (without a time limit of our own: the sleeps end at the deadline
	// anyway) until every goroutine is inside its sleep.
	for sleepers.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	mayHold := sleepersMayHoldEveryP()
	cancel()
	for i := 0; i < n; i++ {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("sleeper %d: %v", i, err)
		}
	}
	if returned := time.Now(); !returned.Before(deadline) {
		t.Fatalf("the crowd returned %v after its deadline", returned.Sub(deadline))
	}
	if !mayHold {
		t.Fatalf("%d sleepers on %d CPUs: the crowd never reached the P hand-off", sleepers.Load(), availableCPUs())
	}
	checkNothingHeld(t)
}

// A context already done returns its error without sleeping (a 10 s wait
// that slept would take 10 s, and a Sleeper would count it).
func TestADoneContextNeverSleeps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, w := range ctxWaits {
		if err := w.wait(ctx, time.Now().Add(longSleep)); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v", w.name, err)
		}
	}
	s := NewSleeper(Exact)
	for _, d := range []time.Duration{-1, 0, longSleep} {
		if err := s.SleepContext(ctx, d); err != context.Canceled {
			t.Fatalf("SleepContext(%v): %v", d, err)
		}
	}
	if st := s.Stats(); st != (SleeperStats{}) {
		t.Fatalf("stats %+v", st)
	}
}

// Uncancelled: 8 goroutines × 100 waits of 50–500 µs under a live context
// (a cancel func never called, or a far timeout) through every
// context-taking call: nil, never before the deadline by the monotonic
// clock.
func TestAnUncancelledContextWaitIsNeverEarly(t *testing.T) {
	const goroutines, sleeps = 8, 100
	never, cancel := context.WithCancel(context.Background())
	defer cancel()
	far, stop := context.WithTimeout(context.Background(), time.Hour)
	defer stop()
	var wg sync.WaitGroup
	var early, failed atomic.Int64
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			own := NewSleeper(Exact)
			spin := NewSleeper(Spin)
			tk, err := NewTicker(time.Duration(50_000+rng.Int63n(450_000)), Skip)
			if err != nil {
				failed.Add(1)
				return
			}
			for i := 0; i < sleeps; i++ {
				ctx := never
				if i%2 == 1 {
					ctx = far
				}
				d := time.Duration(50_000 + rng.Int63n(450_000))
				deadline := time.Now().Add(d)
				switch (g + i) % 5 {
				case 0:
					err = SleepContext(ctx, d)
				case 1:
					err = SleepUntilContext(ctx, deadline)
				case 2:
					err = own.SleepContext(ctx, d)
				case 3:
					err = spin.SleepUntilContext(ctx, deadline)
				default:
					deadline = tk.NextDeadline() // or a later slot, delivered when due
					_, err = tk.WaitContext(ctx)
				}
				if err != nil {
					failed.Add(1)
				}
				if time.Now().Before(deadline) {
					early.Add(1)
				}
			}
		}(g)
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d waits under a live context failed", n)
	}
	if n := early.Load(); n > 0 {
		t.Fatalf("%d of %d waits returned early", n, goroutines*sleeps)
	}
	checkNothingHeld(t)
}

// Cancellations racing the waits: many short sleeps, each cancelled at a
// random point of it, or not at all. Whatever wins, nil means the deadline
// was reached, and the only error is the context's; under -race this also
// exercises the wake racing the end of the wait.
func TestCancellationsRacingTheirWaitsKeepTheContract(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	s := NewSleeper(Exact)
	for i := 0; i < 300; i++ {
		d := time.Duration(20_000 + rng.Int63n(980_000))
		ctx, cancel := context.WithCancel(context.Background())
		after := time.Duration(rng.Int63n(int64(2 * d)))
		timer := time.AfterFunc(after, cancel)
		deadline := time.Now().Add(d)
		err := s.SleepUntilContext(ctx, deadline)
		returned := time.Now()
		timer.Stop()
		cancel()
		switch {
		case err == nil && returned.Before(deadline):
			t.Fatalf("sleep %d: nil before its deadline", i)
		case err != nil && !errors.Is(err, context.Canceled):
			t.Fatalf("sleep %d: %v", i, err)
		}
	}
	if st := s.Stats(); st.Late > st.Sleeps || st.Sleeps > 300 {
		t.Fatalf("stats %+v", st)
	}
	runtime.GC() // wakes that outlived their sleeps touch nothing freed
	checkNothingHeld(t)
}

// BenchmarkCancelLatency measures how soon a cancelled 1 s wait returns:
// per iteration a wait of 1 s cancelled at a uniformly random point from
// 1 ms to 980 ms into it (so that even a spin, checked every 10 ms, sees it
// before its deadline), the time from just before cancel() (in a
// time.AfterFunc goroutine) to the waiting goroutine's first reading after
// the return.
// Reported as p50, p99 and max in µs; not run by go test without -bench:
//
//	go test -run '^$' -bench CancelLatency -benchtime 200x .
//
// alone: SleepContext with no other sleeper (the thread-locked futex wait);
// crowd: 2·CPUs + 2 goroutines in SleepContext under one context (the
// futex wait that hands its P off), every goroutine's latency counted;
// spin: a Spin-mode Sleeper (noticed by the 10 ms check while it yields);
// select: the baseline of a time.Timer raced against ctx.Done().
func BenchmarkCancelLatency(b *testing.B) {
	const length = time.Second
	run := func(b *testing.B, waiters int, wait func(ctx context.Context) error) {
		rng := rand.New(rand.NewSource(5))
		var lat []time.Duration
		var mu sync.Mutex
		for i := 0; i < b.N; i++ {
			ctx, cancel := context.WithCancel(context.Background())
			var cancelledAt atomic.Int64 // ns since start
			start := time.Now()
			after := time.Millisecond + time.Duration(rng.Int63n(int64(length-21*time.Millisecond)))
			timer := time.AfterFunc(after, func() {
				cancelledAt.Store(int64(time.Since(start)))
				cancel()
			})
			var wg sync.WaitGroup
			for w := 0; w < waiters; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := wait(ctx)
					returned := time.Since(start)
					if !errors.Is(err, context.Canceled) {
						b.Errorf("%v", err)
						return
					}
					mu.Lock()
					lat = append(lat, returned-time.Duration(cancelledAt.Load()))
					mu.Unlock()
				}()
			}
			wg.Wait()
			timer.Stop()
			cancel()
		}
		if len(lat) == 0 {
			return
		}
		slices.Sort(lat)
		q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e3 }
		b.ReportMetric(q(0.5), "p50_µs")
		b.ReportMetric(q(0.99), "p99_µs")
		b.ReportMetric(q(1), "max_µs")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("alone", func(b *testing.B) {
		run(b, 1, func(ctx context.Context) error { return SleepContext(ctx, length) })
	})
	b.Run("crowd", func(b *testing.B) {
		run(b, 2*availableCPUs()+2, func(ctx context.Context) error { return SleepContext(ctx, length) })
	})
	b.Run("spin", func(b *testing.B) {
		run(b, 1, func(ctx context.Context) error { return NewSleeper(Spin).SleepContext(ctx, length) })
	})
	b.Run("select", func(b *testing.B) {
		run(b, 1, func(ctx context.Context) error {
			t := time.NewTimer(length)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})
}
