package keeptime

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"
)

// learnedProfile is the profile of a simulated sleeper that has slept 600
// times over four wait lengths: several live buckets, each with a cost.
func learnedProfile(t *testing.T) *Profile {
	t.Helper()
	p := profileOf(&learnedSleeper().est, testMachine)
	if len(p.sections) < 2 || len(p.costs) == 0 {
		t.Fatalf("a near-empty profile: %d sections, %d costs", len(p.sections), len(p.costs))
	}
	return p
}

// learnedSleeper is learnedProfile's simulated sleeper, after its sleeps.
func learnedSleeper() *Sleeper {
	return simulatedSleeper(30_000, 2_000, 7_919, 60_000, []uint64{250_000, 1_000_000, 2_500_000, 10_000_000}, 600)
}

// simulatedSleeper is an Exact sleeper on a simulated clock after sleeps
// sleeps of the lengths in turn, its OS waits waking base + (i·step mod
// span) late (the first 5·sleeps of them), then defaultOvershoot late.
func simulatedSleeper(defaultOvershoot, base, step, span uint64, lengths []uint64, sleeps int) *Sleeper {
	sim := newSim(1_000_000)
	sim.defaultOvershoot = defaultOvershoot
	s := newSleeperOn(sim, Exact)
	for i := uint64(0); i < uint64(5*sleeps); i++ {
		sim.overshoots = append(sim.overshoots, base+(i*step)%span)
	}
	for i := 0; i < sleeps; i++ {
		s.sleepUntilNs(sim.now() + lengths[i%len(lengths)])
	}
	return s
}

// startedFrom is the sleeper the program would build itself from p: Exact,
// the default target, UseProfile before its first sleep.
func startedFrom(t *testing.T, p *Profile) *Sleeper {
	t.Helper()
	s := NewSleeper(Exact)
	if err := s.UseProfile(p); err != nil {
		t.Fatal(err)
	}
	return s
}

// With a default profile, a sleeper the pool makes is the one a program
// builds from that profile: same settings, same model, not slept.
func TestDefaultProfileStartsNewSharedSleepers(t *testing.T) {
	p := learnedProfile(t)
	var pool sleeperPool
	pool.setProfile(p)
	s, gen := pool.get()
	want := startedFrom(t, p)
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("pooled sleeper %+v\nwant one started from the profile %+v", s, want)
	}
	if s.est.seq != 0 || s.waitsPlanned != 0 || s.mode != Exact || s.TailTarget() != TailBalanced {
		t.Fatalf("seq %d, planned %d, mode %v, target %v: not a fresh Exact sleeper", s.est.seq, s.waitsPlanned, s.mode, s.TailTarget())
	}
	live := 0
	for k := 0; k < buckets; k++ {
		live += s.est.liveSamples(k)
	}
	if live == 0 {
		t.Fatal("the pooled sleeper has no samples")
	}
	// Its first plans are the profile's plans.
	for _, rem := range []uint64{250_000, 1_000_000, 2_500_000, 10_000_000} {
		step := planStep{first: true}
		p1, ok1 := planExact(&s.est, rem, 10_000, 0, step)
		p2, ok2 := planExact(&want.est, rem, 10_000, 0, step)
		if p1 != p2 || ok1 != ok2 {
			t.Errorf("plan for %d ns: %+v %v / %+v %v", rem, p1, ok1, p2, ok2)
		}
	}
	// Each new sleeper gets its own copy of the model.
	s.est.beginSleep()
	s.est.observe(1_000_000, 5_000)
	s2, _ := pool.get()
	if !reflect.DeepEqual(s2, want) {
		t.Fatal("a sleeper's learning reached the pool's model")
	}
	// Given back in the same generation, the sleeper is kept, warm.
	pool.put(s, gen)
	if got, _ := pool.get(); got != s {
		t.Fatal("the sleeper given back was not handed out again")
	}
}

// Setting the default drops the free list, and a sleeper borrowed before
// (a sleep under way) is dropped when it is given back.
func TestDefaultProfileDropsTheOldGeneration(t *testing.T) {
	p := learnedProfile(t)
	var pool sleeperPool
	warm, borrowed := NewSleeper(Exact), NewSleeper(Exact)
	warm.est.beginSleep()
	pool.put(warm, pool.gen)
	pool.put(borrowed, pool.gen)
	s, old := pool.get()
	if s != borrowed {
		t.Fatal("LIFO order lost")
	}
	pool.setProfile(p)
	if len(pool.free) != 0 {
		t.Fatalf("free list %v kept across a new default", pool.free)
	}
	pool.put(s, old)
	if len(pool.free) != 0 {
		t.Fatal("a sleeper of the old generation was taken back")
	}
	next, gen := pool.get()
	if next == warm || next == borrowed || !reflect.DeepEqual(next, startedFrom(t, p)) {
		t.Fatal("after the change, the pool did not make a sleeper from the profile")
	}
	pool.put(next, gen)
	if len(pool.free) != 1 || pool.free[0] != next {
		t.Fatalf("free list %v, want the new sleeper back", pool.free)
	}
}

// Clearing the default gives fresh sleepers again, and drops the ones
// started from the profile.
func TestClearingTheDefaultProfileStartsFresh(t *testing.T) {
	p := learnedProfile(t)
	var pool sleeperPool
	pool.setProfile(p)
	s, gen := pool.get()
	pool.put(s, gen)
	loaded, loadedGen := pool.get()
	pool.setProfile(nil)
	if len(pool.free) != 0 {
		t.Fatal("free list kept across clearing the default")
	}
	pool.put(loaded, loadedGen)
	if len(pool.free) != 0 {
		t.Fatal("a sleeper started from the profile was taken back after clearing")
	}
	fresh, _ := pool.get()
	if fresh == loaded || !reflect.DeepEqual(fresh, NewSleeper(Exact)) {
		t.Fatalf("after clearing, pooled sleeper %+v, want a fresh Exact sleeper", fresh)
	}
	// A sleeper the program made itself is never touched.
	own := startedFrom(t, p)
	pool.setProfile(p)
	pool.setProfile(nil)
	if !reflect.DeepEqual(own, startedFrom(t, p)) {
		t.Fatal("a program's own sleeper changed")
	}
}

// Changing the default while goroutines borrow and give back sleepers: no
// sleeper is handed to two goroutines, the list stays bounded, and every
// sleeper handed out after the last change is of that change's model.
func TestDefaultProfileChangesUnderConcurrentSleeps(t *testing.T) {
	p := learnedProfile(t)
	var pool sleeperPool
	var wg sync.WaitGroup
	var inUse sync.Map
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				s, gen := pool.get()
				if _, loaded := inUse.LoadOrStore(s, true); loaded {
					t.Error("one sleeper was handed to two goroutines")
				}
				s.est.beginSleep() // a data race here if two goroutines held s
				inUse.Delete(s)
				pool.put(s, gen)
			}
		}()
	}
	for i := 0; i < 20; i++ {
		if i%2 == 0 {
			pool.setProfile(p)
		} else {
			pool.setProfile(nil)
		}
	}
	pool.setProfile(p)
	wg.Wait()
	if n := len(pool.free); n > maxSharedSleepers {
		t.Fatalf("free list grew to %d", n)
	}
	// Whatever survived in the list was made from the last default.
	want := startedFrom(t, p)
	for _, s := range pool.free {
		if s.est.buckets != want.est.buckets { // the goroutines only begin sleeps
			t.Fatal("a sleeper of an older generation is in the list")
		}
	}
}

// The package function sets the default of Sleep and SleepUntil; a real
// sleep after it is never early.
func TestSetDefaultProfile(t *testing.T) {
	p := learnedProfile(t)
	t.Cleanup(func() { SetDefaultProfile(nil) })
	SetDefaultProfile(p)
	s, gen := sharedSleepers.get()
	if !reflect.DeepEqual(s, startedFrom(t, p)) {
		t.Fatal("Sleep's sleeper was not started from the default profile")
	}
	sharedSleepers.put(s, gen)
	for _, d := range []time.Duration{50 * time.Microsecond, 300 * time.Microsecond, time.Millisecond} {
		start := time.Now()
		Sleep(d)
		if got := time.Since(start); got < d {
			t.Fatalf("Sleep(%v) returned after %v", d, got)
		}
		deadline := time.Now().Add(d)
		SleepUntil(deadline)
		if now := time.Now(); now.Before(deadline) {
			t.Fatalf("SleepUntil returned %v early", deadline.Sub(now))
		}
	}
	SetDefaultProfile(nil)
	if s, _ := sharedSleepers.get(); !reflect.DeepEqual(s, NewSleeper(Exact)) {
		t.Fatal("after SetDefaultProfile(nil), Sleep's sleeper is not fresh")
	}
}

// unclocked is a sleeper as it was made: a ticker's start reads the clock,
// which a sleeper gets at its first use, so that is left out.
func unclocked(s *Sleeper) Sleeper {
	c := *s
	c.p = nil
	return c
}

// NewTicker's sleeper starts from the default profile in force when the
// ticker is made; a later change leaves existing tickers alone, and a
// ticker given the program's sleeper waits with it as it is.
func TestNewTickerStartsFromTheDefaultProfile(t *testing.T) {
	p := learnedProfile(t)
	t.Cleanup(func() { SetDefaultProfile(nil) })
	SetDefaultProfile(nil)
	before, err := NewTicker(time.Millisecond, Skip)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unclocked(before.sleeper), *NewSleeper(Exact)) {
		t.Fatal("with no default profile, NewTicker's sleeper is not fresh")
	}
	own := NewSleeper(Exact)
	withOwn, err := NewTickerWith(own, time.Millisecond, Skip)
	if err != nil {
		t.Fatal(err)
	}

	SetDefaultProfile(p)
	loaded, err := NewTicker(time.Millisecond, Burst)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unclocked(loaded.sleeper), *startedFrom(t, p)) {
		t.Fatal("NewTicker's sleeper was not started from the default profile")
	}
	if !reflect.DeepEqual(unclocked(before.sleeper), *NewSleeper(Exact)) {
		t.Fatal("a ticker made before the change was touched")
	}
	if withOwn.sleeper != own || !reflect.DeepEqual(unclocked(own), *NewSleeper(Exact)) {
		t.Fatal("NewTickerWith's sleeper was replaced or changed")
	}
	if tk, err := NewTicker(0, Skip); tk != nil || !errors.Is(err, ErrInvalidPeriod) {
		t.Fatalf("NewTicker(0) = %v, %v", tk, err)
	}
	// Each ticker gets its own copy of the model.
	loaded.sleeper.est.beginSleep()
	loaded.sleeper.est.observe(1_000_000, 5_000)
	other, err := NewTicker(time.Millisecond, Skip)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unclocked(other.sleeper), *startedFrom(t, p)) {
		t.Fatal("a ticker's learning reached the default profile's model")
	}

	// A ticker made under the profile keeps its model after a change.
	kept := *loaded.sleeper
	SetDefaultProfile(nil)
	if !reflect.DeepEqual(*loaded.sleeper, kept) || !reflect.DeepEqual(unclocked(other.sleeper), *startedFrom(t, p)) {
		t.Fatal("clearing the default touched an existing ticker")
	}
	if !reflect.DeepEqual(unclocked(own), *NewSleeper(Exact)) {
		t.Fatal("NewTickerWith's sleeper changed")
	}
	fresh, err := NewTicker(time.Millisecond, Skip)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unclocked(fresh.sleeper), *NewSleeper(Exact)) {
		t.Fatal("after SetDefaultProfile(nil), NewTicker's sleeper is not fresh")
	}
}
