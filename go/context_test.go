package keeptime

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// Sleeps under a context on simulated time, every number exact: the
// interrupt check of spec/sleep.md ("Signals", "spin"). A scripted interrupt
// stands for the wake-up a done context sends; the hooks cancel the context
// at a chosen point of the sleep.

// liveSampleCount is the number of wake-ups the sleeper remembers.
func liveSampleCount(s *Sleeper) int {
	n := 0
	for b := 0; b < buckets; b++ {
		n += s.est.liveSamples(b)
	}
	return n
}

// checkBackToRest fails unless the sleep gave back everything it took: the
// thread lock, the spin slot, the crowd count.
func checkBackToRest(t *testing.T, sim *simPlatform) {
	t.Helper()
	if sim.locked != 0 || sim.spinning || sim.sleepers != 0 {
		t.Fatalf("left behind: thread locked %d, slot held %v, %d sleepers counted", sim.locked, sim.spinning, sim.sleepers)
	}
}

// A context done during an OS wait: the wait reports interrupted (here a
// scripted interrupt 10 µs in), the check finds the context done, and the
// sleep ends there with its error. The list of OS waits ends with the
// interrupted one; it is not counted and teaches nothing.
func TestAContextDoneDuringAnOSWaitEndsTheSleepWithItsError(t *testing.T) {
	sim := newSim(0)
	sim.interrupts = []uint64{10_000}
	s := newSleeperOn(sim, Exact)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim.atWait = cancel
	ic, err := interruptCheckOf(ctx)
	if ic == nil || err != nil {
		t.Fatalf("interruptCheckOf(a live context) = %v, %v", ic, err)
	}
	got, err := s.sleepUntilNsCtx(1_000_000, ic)
	if !errors.Is(err, context.Canceled) || got != 10_000 {
		t.Fatalf("returned %d, %v; want 10000, context.Canceled", got, err)
	}
	// Nothing learned: one OS wait ending the default 50 µs margin early.
	if want := []simWait{{0, 950_000, 10_000, true}}; !reflect.DeepEqual(sim.waits, want) {
		t.Fatalf("waits %v, want %v", sim.waits, want)
	}
	if sim.cancellableWaits != 1 {
		t.Fatalf("%d cancellable OS waits, want 1", sim.cancellableWaits)
	}
	// Counted as a sleep (it had to wait), not late, no OS wait (the one cut
	// short is not), no spin; its plan rested on the default margin, so it
	// is unproven, as a completed one would have been.
	if st := s.stats; st != (sleepStats{sleeps: 1, unprovenSleeps: 1}) {
		t.Fatalf("stats %+v", st)
	}
	if n := liveSampleCount(s); n != 0 {
		t.Fatalf("%d samples recorded from a cancelled wait", n)
	}
	// The wait was the sampled one (the first of eight): its thread lock
	// is given back.
	checkBackToRest(t, sim)
	if s.waitsPlanned != 1 || sim.cpuReads != 1 {
		t.Fatalf("%d waits planned, %d thread CPU reads", s.waitsPlanned, sim.cpuReads)
	}

	// The sleeper sleeps on as before, the cancelled sleep counted once.
	sim.atWait = nil
	sim.waits = nil
	if got := s.sleepUntilNs(2_000_000); got < 2_000_000 {
		t.Fatalf("the next sleep returned early: %d", got)
	}
	if st := s.Stats(); st.Sleeps != 2 || st.Late != 0 || st.OSWaits != uint64(len(sim.waits)) {
		t.Fatalf("stats %+v after %d OS waits", st, len(sim.waits))
	}
}

// A context still live when a wait is interrupted: the wait resumes toward
// the same absolute target (the existing behaviour); done at the second
// interrupt, the sleep ends there, the list of waits ending with it.
func TestALiveContextResumesTheWaitTowardTheSameTarget(t *testing.T) {
	sim := newSim(0)
	sim.interrupts = []uint64{10_000, 10_000}
	s := newSleeperOn(sim, Exact)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waits := 0
	sim.atWait = func() {
		waits++
		if waits == 2 {
			cancel()
		}
	}
	ic, _ := interruptCheckOf(ctx)
	got, err := s.sleepUntilNsCtx(1_000_000, ic)
	if !errors.Is(err, context.Canceled) || got != 20_000 {
		t.Fatalf("returned %d, %v; want 20000, context.Canceled", got, err)
	}
	want := []simWait{{0, 950_000, 10_000, true}, {10_000, 950_000, 20_000, true}}
	if !reflect.DeepEqual(sim.waits, want) {
		t.Fatalf("waits %v, want %v", sim.waits, want)
	}
	if st := s.stats; st != (sleepStats{sleeps: 1, unprovenSleeps: 1}) {
		t.Fatalf("stats %+v", st)
	}
	checkBackToRest(t, sim)
}

// A context that is never done changes nothing: the same sleeps on two
// identical worlds, interrupts and overshoots scripted, one with a check
// and one without, make the same OS waits, return the same readings and
// leave the same stats and the same learned model.
func TestALiveContextSleepsExactlyAsThePlainCall(t *testing.T) {
	world := func() *simPlatform {
		sim := newSim(0)
		sim.interrupts = []uint64{100_000, 50_000, 700_000}
		sim.overshoots = []uint64{10_000, 3_000, 80_000, 2_000, 4_000}
		sim.defaultOvershoot = 3_000
		return sim
	}
	plainSim, ctxSim := world(), world()
	plain, withCtx := newSleeperOn(plainSim, Exact), newSleeperOn(ctxSim, Exact)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i, d := range []uint64{1_000_000, 250_000, 2_500_000, 100_000, 30_000, 10_000_000} {
		ic, _ := interruptCheckOf(ctx)
		a := plain.sleepUntilNs(plainSim.now() + d)
		b, err := withCtx.sleepUntilNsCtx(ctxSim.now()+d, ic)
		if err != nil || a != b {
			t.Fatalf("sleep %d: plain %d, with a live context %d, %v", i, a, b, err)
		}
		if !reflect.DeepEqual(plainSim.waits, ctxSim.waits) {
			t.Fatalf("sleep %d: waits\n plain %v\n   ctx %v", i, plainSim.waits, ctxSim.waits)
		}
	}
	if plain.stats != withCtx.stats || plain.est != withCtx.est {
		t.Fatalf("stats or model differ: plain %+v, with a context %+v", plain.stats, withCtx.stats)
	}
	if plainSim.cancellableWaits != 0 || ctxSim.cancellableWaits != len(ctxSim.waits) {
		t.Fatalf("cancellable OS waits: plain %d, with a context %d of %d", plainSim.cancellableWaits, ctxSim.cancellableWaits, len(ctxSim.waits))
	}
}

// While a long spin yields, the check runs every interruptPollNs (10 ms),
// from the end of its planned pause: a Spin-mode sleep of 100 ms with 1 ms
// yields pauses 50 µs (500 steps of 100 ns), then yields at 0.05, 1.05, …
// ms and checks at 10.05 ms, 20.05 ms, ….
func TestACancelledSpinIsNoticedAtTheInterruptPollCadence(t *testing.T) {
	if interruptPollNs != 10_000_000 {
		t.Fatalf("interruptPollNs %d", interruptPollNs)
	}
	for _, c := range []struct {
		cancelAt, stoppedAt, yields uint64
	}{
		// Cancelled before the first check: noticed at it.
		{3_000_000, 10_050_000, 11},
		// Just after it (the check follows the yield that took the clock
		// from 10.05 to 11.05 ms): noticed at the next one.
		{11_050_001, 20_050_000, 21},
		{15_000_000, 20_050_000, 21},
	} {
		sim := newSim(0)
		sim.yieldStep = 1_000_000
		s := newSleeperOn(sim, Spin)
		ctx, cancel := context.WithCancel(context.Background())
		sim.atYield = func() {
			if sim.clock >= c.cancelAt {
				cancel()
			}
		}
		ic, _ := interruptCheckOf(ctx)
		got, err := s.sleepUntilNsCtx(100_000_000, ic)
		cancel()
		if !errors.Is(err, context.Canceled) || got != c.stoppedAt {
			t.Fatalf("cancelled at %d: returned %d, %v; want %d, context.Canceled", c.cancelAt, got, err, c.stoppedAt)
		}
		if sim.relaxes != 500 || sim.yields != c.yields || len(sim.waits) != 0 {
			t.Fatalf("cancelled at %d: %d relaxes, %d yields, %d waits", c.cancelAt, sim.relaxes, sim.yields, len(sim.waits))
		}
		// The spin until the check counts; the sleep is not late.
		if st := s.stats; st != (sleepStats{sleeps: 1, spinNs: c.stoppedAt, cpuEstimateNs: c.stoppedAt}) {
			t.Fatalf("cancelled at %d: stats %+v", c.cancelAt, st)
		}
	}
	// The pause near the deadline is never checked: a 15 µs Spin-mode sleep
	// (pause only) with a context that is done by then still ends at its
	// deadline, nil.
	sim := newSim(0)
	s := newSleeperOn(sim, Spin)
	ctx, cancel := context.WithCancel(context.Background())
	ic, _ := interruptCheckOf(ctx)
	cancel()
	if got, err := s.sleepUntilNsCtx(15_000, ic); err != nil || got != 15_000 {
		t.Fatalf("a pause-only spin returned %d, %v", got, err)
	}
}

// A follower (no spin slot) of an Exact sleep checks as it yields too.
func TestACancelledFollowerStopsAtTheInterruptPollCadence(t *testing.T) {
	sim := newSim(0)
	sim.slotsFree = false
	sim.yieldStep = 1_000_000
	s := newSleeperOn(sim, Exact)
	s.minSpinNs = 30_000_000 // a spin of at least 30 ms asked for: no OS wait fits in 25 ms
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim.atYield = func() {
		if sim.clock >= 2_000_000 {
			cancel()
		}
	}
	ic, _ := interruptCheckOf(ctx)
	got, err := s.sleepUntilNsCtx(25_000_000, ic)
	// A follower yields from the start (no pause): checks at 10, 20 ms.
	if !errors.Is(err, context.Canceled) || got != 10_000_000 {
		t.Fatalf("returned %d, %v; want 10000000, context.Canceled", got, err)
	}
	if len(sim.waits) != 0 || sim.relaxes != 0 || sim.yields != 11 {
		t.Fatalf("%d waits, %d relaxes, %d yields", len(sim.waits), sim.relaxes, sim.yields)
	}
	if st := s.stats; st != (sleepStats{sleeps: 1, spinNs: 10_000_000, cpuEstimateNs: 10_000_000}) {
		t.Fatalf("stats %+v", st)
	}
	checkBackToRest(t, sim)
}

// In a crowd and in Efficient mode the OS wait is cancellable as well, and
// a cancelled sleep leaves the crowd count and the slot as it found them.
func TestCancelledCrowdAndEfficientSleepsGiveBackWhatTheyTook(t *testing.T) {
	sim := crowdWorld(2, 63)
	sim.interrupts = []uint64{10_000}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim.atWait = cancel
	s := newSleeperOn(sim, Exact)
	ic, _ := interruptCheckOf(ctx)
	got, err := s.sleepUntilNsCtx(1_000_000, ic)
	if !errors.Is(err, context.Canceled) || got != 10_000 {
		t.Fatalf("crowd: returned %d, %v", got, err)
	}
	if want := []simWait{{0, 1_000_000 - 10_625, 10_000, true}}; !reflect.DeepEqual(sim.waits, want) {
		t.Fatalf("crowd: waits %v, want %v", sim.waits, want)
	}
	if st := s.stats; st != (sleepStats{sleeps: 1}) {
		t.Fatalf("crowd: stats %+v", st)
	}
	checkBackToRest(t, sim)

	sim = newSim(0)
	sim.interrupts = []uint64{10_000}
	ctx, cancel = context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	sim.atWait = cancel
	e := newSleeperOn(sim, Efficient)
	e.est.observe(100_000, 1_000) // something to compensate with
	ic, _ = interruptCheckOf(ctx)
	got, err = e.sleepUntilNsCtx(100_000, ic)
	if !errors.Is(err, context.Canceled) || got != 10_000 || len(sim.waits) != 1 || !sim.waits[0].interrupted {
		t.Fatalf("efficient: returned %d, %v after waits %v", got, err, sim.waits)
	}
	if st := e.stats; st != (sleepStats{sleeps: 1}) || liveSampleCount(e) != 1 {
		t.Fatalf("efficient: stats %+v, %d samples", st, liveSampleCount(e))
	}
	checkBackToRest(t, sim)
}

// A cancelled WaitContext consumes no slot: the next Wait delivers the slot
// it would have, as if the cancelled call had not happened.
func TestACancelledTickerWaitConsumesNoSlot(t *testing.T) {
	sim := newSim(0)
	sim.defaultOvershoot = 3_000
	tk, err := newTickerOn(newSleeperOn(sim, Exact), time.Millisecond, Skip)
	if err != nil {
		t.Fatal(err)
	}
	at := func(ns uint64) time.Time { return time.Unix(0, 0).Add(time.Duration(ns)) }
	ctx, cancel := context.WithCancel(context.Background())
	sim.interrupts = []uint64{10_000}
	sim.atWait = cancel
	if tick, err := tk.WaitContext(ctx); !errors.Is(err, context.Canceled) || tick != (Tick{}) {
		t.Fatalf("WaitContext = %+v, %v; want the zero Tick, context.Canceled", tick, err)
	}
	if want := []simWait{{0, 950_000, 10_000, true}}; !reflect.DeepEqual(sim.waits, want) {
		t.Fatalf("waits %v, want %v", sim.waits, want)
	}
	if st := tk.Stats(); st != (TickerStats{}) || !tk.NextDeadline().Equal(at(1_000_000)) {
		t.Fatalf("a cancelled wait changed the ticker: stats %+v, next %v", st, tk.NextDeadline())
	}
	sim.atWait = nil
	tick := tk.Wait()
	if tick.Index != 1 || !tick.Scheduled.Equal(at(1_000_000)) || tick.Skipped != 0 {
		t.Fatalf("the next Wait delivered %+v, want slot 1 at 1 ms", tick)
	}
	// A done context before a slot that is already due: the error, the
	// slot still due and delivered by the next wait.
	sim.advanceTo(2_500_000)
	if tick, err := tk.WaitContext(ctx); !errors.Is(err, context.Canceled) || tick != (Tick{}) {
		t.Fatalf("WaitContext(done) = %+v, %v", tick, err)
	}
	live, stop := context.WithCancel(context.Background())
	defer stop()
	tick, err = tk.WaitContext(live)
	if err != nil || tick.Index != 2 || !tick.Scheduled.Equal(at(2_000_000)) || tick.Lateness != 500*time.Microsecond {
		t.Fatalf("WaitContext(live) = %+v, %v; want slot 2, 0.5 ms late", tick, err)
	}
	// With a live context a wait runs as Wait does.
	tick, err = tk.WaitContext(live)
	if err != nil || tick.Index != 3 || tick.Lateness < 0 || sim.now() < 3_000_000 {
		t.Fatalf("WaitContext(live) = %+v, %v at %d", tick, err, sim.now())
	}
	if st := tk.Stats(); st.Ticks != 3 || st.Missed != 1 {
		t.Fatalf("ticker stats %+v", st)
	}
}

// A context already done returns its error at once, whatever the duration
// or deadline: no clock read past the check, no sleep counted, no wait, no
// spin. Background (Done is nil) and a nil context take the plain path.
func TestADoneContextReturnsAtOnceAndANeverDoneOneIsThePlainCall(t *testing.T) {
	sim := newSim(1_000_000)
	s := newSleeperOn(sim, Exact)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, stop := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer stop()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		for _, d := range []time.Duration{-time.Second, 0, time.Nanosecond, time.Hour} {
			if err := s.SleepContext(c.ctx, d); err != c.want {
				t.Errorf("SleepContext(%v) = %v, want %v", d, err, c.want)
			}
			if err := s.SleepUntilContext(c.ctx, time.Now().Add(d)); err != c.want {
				t.Errorf("SleepUntilContext(now%+v) = %v, want %v", d, err, c.want)
			}
		}
	}
	if sim.now() != 1_000_000 || len(sim.waits) != 0 || sim.relaxes != 0 || sim.yields != 0 || sim.prepares != 0 || s.stats != (sleepStats{}) || s.est.seq != 0 {
		t.Fatalf("a done context did work: clock %d, %d waits, %d relaxes, %d yields, stats %+v",
			sim.now(), len(sim.waits), sim.relaxes, sim.yields, s.stats)
	}

	// Never done: the plain sleep, with plain OS waits.
	var nilCtx context.Context
	for _, ctx := range []context.Context{nilCtx, context.Background(), context.TODO(), context.WithoutCancel(cancelled)} {
		start := sim.now()
		if err := s.SleepContext(ctx, time.Millisecond); err != nil || sim.now() < start+1_000_000 {
			t.Fatalf("SleepContext(%v) = %v, returned at %d for a deadline of %d", ctx, err, sim.now(), start+1_000_000)
		}
		start = sim.now()
		if err := s.SleepContext(ctx, 0); err != nil || sim.now() != start {
			t.Fatalf("SleepContext(%v, 0) = %v", ctx, err)
		}
	}
	if len(sim.waits) == 0 || sim.cancellableWaits != 0 {
		t.Fatalf("%d waits, %d of them cancellable", len(sim.waits), sim.cancellableWaits)
	}
	// A context that can be done: cancellable waits; a non-positive d with
	// it live returns nil at once.
	live, cancelLive := context.WithCancel(context.Background())
	defer cancelLive()
	start := sim.now()
	if err := s.SleepContext(live, 0); err != nil || sim.now() != start {
		t.Fatalf("SleepContext(live, 0) = %v", err)
	}
	if err := s.SleepUntilContext(live, time.Unix(0, 0)); err != nil || sim.now() != start {
		t.Fatalf("SleepUntilContext(live, long ago) = %v", err)
	}
	waits := len(sim.waits)
	if err := s.SleepContext(live, time.Millisecond); err != nil || sim.now() < start+1_000_000 {
		t.Fatalf("SleepContext(live) = %v at %d", err, sim.now())
	}
	if sim.cancellableWaits != len(sim.waits)-waits || sim.cancellableWaits == 0 {
		t.Fatalf("%d cancellable of %d waits", sim.cancellableWaits, len(sim.waits)-waits)
	}

	// The ticker: the same rules.
	tk, err := newTickerOn(newSleeperOn(sim, Exact), time.Millisecond, Burst)
	if err != nil {
		t.Fatal(err)
	}
	if tick, err := tk.WaitContext(cancelled); err != context.Canceled || tick != (Tick{}) || tk.Stats().Ticks != 0 {
		t.Fatalf("WaitContext(done) = %+v, %v", tick, err)
	}
	if tick, err := tk.WaitContext(nilCtx); err != nil || tick.Index != 1 {
		t.Fatalf("WaitContext(nil) = %+v, %v", tick, err)
	}
}

// A Context whose Done is closed but whose Err is nil breaks the Context
// contract; the check still ends the sleep, with context.Canceled, rather
// than report a sleep that ended early as a success.
func TestABrokenDoneContextStillStops(t *testing.T) {
	ic, err := interruptCheckOf(brokenCtx{})
	if ic != nil || err != context.Canceled {
		t.Fatalf("interruptCheckOf(broken) = %v, %v", ic, err)
	}
}

type brokenCtx struct{ context.Context }

func (brokenCtx) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func (brokenCtx) Err() error { return nil }
