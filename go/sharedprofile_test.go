package keeptime

import (
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

// SharedProfile (spec/estimator.md, "Default sleepers", "Saving what they
// learned"): the profile of the pooled sleeper that has made the most
// sleeps, or of a sleeper as the pool would make it.

// sharedProfileTest starts a test of the shared sleepers with no default
// profile, KEEPTIME_PROFILE spent and the free list empty, and leaves them
// so.
func sharedProfileTest(t *testing.T) {
	t.Helper()
	SetDefaultProfile(nil)
	t.Cleanup(func() { SetDefaultProfile(nil) })
}

// freeSleepers puts ss in the shared free list, in order (the last on top),
// as sleeps of the current generation give them back.
func freeSleepers(ss ...*Sleeper) {
	_, gen := sharedSleepers.starting()
	for _, s := range ss {
		sharedSleepers.put(s, gen)
	}
}

// poolState is the shared pool as SharedProfile must leave it: the free
// list's sleepers in order, a copy of each, the generation and the model
// new sleepers start from.
type poolState struct {
	free   []*Sleeper
	copies []Sleeper
	gen    uint64
	start  *estimator
}

func sharedPoolState() poolState {
	sharedSleepers.mu.Lock()
	defer sharedSleepers.mu.Unlock()
	st := poolState{free: append([]*Sleeper(nil), sharedSleepers.free...), gen: sharedSleepers.gen, start: sharedSleepers.start}
	for _, s := range st.free {
		st.copies = append(st.copies, *s)
	}
	return st
}

// sharedProfileLeavesPool calls SharedProfile and fails unless the pool
// is as it was: same sleepers, same order, same state.
func sharedProfileLeavesPool(t *testing.T) *Profile {
	t.Helper()
	before := sharedPoolState()
	p := SharedProfile()
	if after := sharedPoolState(); !reflect.DeepEqual(after, before) {
		t.Fatalf("SharedProfile changed the pool: %d free sleepers before, %d after", len(before.free), len(after.free))
	}
	return p
}

// An empty pool gives the profile of a sleeper as the pool makes it: a
// fresh one's (no sections, no costs), then, with a default profile in
// force, one with that profile's model.
func TestSharedProfileOfAnEmptyPool(t *testing.T) {
	sharedProfileTest(t)
	here := MachineFingerprint()
	got := sharedProfileLeavesPool(t)
	if want := NewSleeper(Exact).Profile(); !reflect.DeepEqual(got, want) {
		t.Fatalf("SharedProfile of an empty pool %+v, want a fresh sleeper's %+v", got, want)
	}
	if len(got.sections) != 0 || len(got.costs) != 0 || got.Machine() != here {
		t.Fatalf("%d sections, %d costs, machine %+v: not a fresh sleeper's profile made here", len(got.sections), len(got.costs), got.Machine())
	}

	p := learnedProfile(t)
	SetDefaultProfile(p)
	got = sharedProfileLeavesPool(t)
	if want := startedFrom(t, p).Profile(); !reflect.DeepEqual(got, want) {
		t.Fatal("SharedProfile of an empty pool is not the profile of a sleeper started from the default")
	}
	if !reflect.DeepEqual(startedFrom(t, got), startedFrom(t, p)) {
		t.Fatal("a sleeper started from SharedProfile's profile does not start as the default's")
	}
	if got.Samples() != p.Samples() || got.Machine() != here {
		t.Fatalf("samples %v, machine %+v; want %v, %+v", got.Samples(), got.Machine(), p.Samples(), here)
	}
	if len(sharedSleepers.free) != 0 {
		t.Fatal("SharedProfile put a sleeper in the free list")
	}
}

// With no sleeper made yet, SharedProfile loads KEEPTIME_PROFILE as the
// first new sleeper would, once: its profile has the environment's model,
// which stays the default.
func TestSharedProfileReadsTheEnvProfile(t *testing.T) {
	path, p := hostProfileFile(t)
	warn := envTest(t, path)
	got := SharedProfile() // loads the default: a new generation, nothing in the list
	if !reflect.DeepEqual(startedFrom(t, got), startedFrom(t, p)) {
		t.Fatal("SharedProfile before the first sleep does not have KEEPTIME_PROFILE's model")
	}
	if !reflect.DeepEqual(sharedSleepers.start, p.estimator()) || len(sharedSleepers.free) != 0 {
		t.Fatal("after SharedProfile, the default is not KEEPTIME_PROFILE's profile, or the list is not empty")
	}
	if again := sharedProfileLeavesPool(t); !reflect.DeepEqual(again, got) {
		t.Fatal("a second SharedProfile differs from the first")
	}
	if s, _ := sharedSleepers.get(); !reflect.DeepEqual(s, startedFrom(t, p)) {
		t.Fatal("the first shared sleeper after SharedProfile was not started from KEEPTIME_PROFILE's profile")
	}
	if warn.Len() != 0 {
		t.Fatalf("a good profile was warned about: %q", warn)
	}

	// One that cannot be loaded: the one line, and a fresh sleeper's profile.
	missing := filepath.Join(t.TempDir(), "missing.profile")
	_, err := LoadProfile(missing)
	warn = envTest(t, missing)
	if got := SharedProfile(); !reflect.DeepEqual(got, NewSleeper(Exact).Profile()) {
		t.Fatal("with a KEEPTIME_PROFILE that cannot be loaded, SharedProfile is not a fresh sleeper's")
	}
	SharedProfile()
	Sleep(20 * time.Microsecond)
	if got, want := warn.String(), envWarning(missing, err.Error()); got != want {
		t.Fatalf("warned\n%q\nwant once\n%q", got, want)
	}
}

// Of the sleepers in the free list, the one with the most sleeps is
// written; of equal ones, the one nearest the top. The pool is left as it
// was.
func TestSharedProfileIsOfTheMostSleptFreeSleeper(t *testing.T) {
	lengths := []uint64{250_000, 1_000_000, 2_500_000}
	sleeper := func(base uint64, sleeps int) *Sleeper {
		s := simulatedSleeper(20_000+base, base, 7_919, 40_000, lengths, sleeps)
		if n := s.Stats().Sleeps; n != uint64(sleeps) {
			t.Fatalf("a simulated sleeper made %d sleeps, want %d", n, sleeps)
		}
		return s
	}
	a, b, c := sleeper(1_000, 100), sleeper(2_000, 300), sleeper(3_000, 200)
	x, y, z := sleeper(4_000, 300), sleeper(5_000, 300), sleeper(6_000, 300)
	here := MachineFingerprint()
	profiles := map[*Sleeper]*Profile{}
	for _, s := range []*Sleeper{a, b, c, x, y, z} {
		profiles[s] = profileOf(&s.est, here)
		for o, q := range profiles {
			if o != s && reflect.DeepEqual(q, profiles[s]) {
				t.Fatal("two simulated sleepers with the same profile")
			}
		}
	}
	for _, tc := range []struct {
		name string
		free []*Sleeper // bottom to top
		want *Sleeper
	}{
		{"alone", []*Sleeper{a}, a},
		{"most sleeps in the middle", []*Sleeper{a, b, c}, b},
		{"most sleeps at the bottom", []*Sleeper{b, c, a}, b},
		{"a fresh one on top", []*Sleeper{a, c, NewSleeper(Exact)}, c},
		{"equal counts: the top", []*Sleeper{x, y}, y},
		{"equal counts below a lesser top", []*Sleeper{x, y, a}, y},
		{"three equal, one lesser between", []*Sleeper{x, y, c, z}, z},
		{"equal to the top below it", []*Sleeper{y, b, a, x, c}, x},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sharedProfileTest(t)
			freeSleepers(tc.free...)
			if len(sharedSleepers.free) != len(tc.free) {
				t.Fatalf("free list of %d, want %d", len(sharedSleepers.free), len(tc.free))
			}
			got := sharedProfileLeavesPool(t)
			if !reflect.DeepEqual(got, profiles[tc.want]) {
				t.Fatalf("SharedProfile is not the profile of the sleeper expected (%d sleeps)", tc.want.Stats().Sleeps)
			}
			if !reflect.DeepEqual(got, tc.want.Profile()) {
				t.Fatal("SharedProfile differs from the sleeper's own Profile")
			}
			// The next sleep still gets the top sleeper.
			if s, _ := sharedSleepers.get(); s != tc.free[len(tc.free)-1] {
				t.Fatal("after SharedProfile, the free list's top changed")
			}
		})
	}
}

// The whole workflow on the real clock: a few Sleeps, the shared profile
// written and loaded back on this machine, and the next run's first
// sleeper (KEEPTIME_PROFILE) started from it.
func TestSharedProfileRoundTripAfterRealSleeps(t *testing.T) {
	sharedProfileTest(t)
	for i := 0; i < 20; i++ {
		Sleep(300 * time.Microsecond)
	}
	st := sharedPoolState()
	if len(st.free) != 1 {
		t.Fatalf("after sleeps one at a time, %d sleepers in the free list, want 1", len(st.free))
	}
	got := sharedProfileLeavesPool(t)
	if !reflect.DeepEqual(got, st.free[0].Profile()) {
		t.Fatal("SharedProfile is not the profile of the one sleeper that slept")
	}
	samples := 0
	for _, n := range got.Samples() {
		samples += n
	}
	if samples == 0 || st.free[0].Stats().Sleeps == 0 {
		t.Fatalf("after 20 sleeps of 300 µs: %d samples, %d sleeps", samples, st.free[0].Stats().Sleeps)
	}
	text, err := got.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := ParseProfile(text); err != nil || !reflect.DeepEqual(back, got) {
		t.Fatalf("the shared profile parsed back: %v\n%s", err, text)
	}

	path := filepath.Join(t.TempDir(), "app.profile")
	if err := SharedProfile().WriteFile(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded, got) {
		t.Fatal("the profile loaded from the file differs from the one written")
	}
	// The next run, KEEPTIME_PROFILE=app.profile: its first sleeper starts
	// from what this run's sleeper learned.
	warn := envTest(t, path)
	if s, _ := sharedSleepers.get(); !reflect.DeepEqual(s, startedFrom(t, loaded)) {
		t.Fatal("the next run's first shared sleeper was not started from the saved profile")
	}
	if warn.Len() != 0 {
		t.Fatalf("warned: %q", warn)
	}
}

// SharedProfile while goroutines sleep (run under -race): every profile
// is one this machine loads, and no sleeper is lost from the pool.
func TestSharedProfileDuringConcurrentSleeps(t *testing.T) {
	sharedProfileTest(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				Sleep(100 * time.Microsecond)
			}
		}()
	}
	go func() { wg.Wait(); close(stop) }()
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		text, _ := SharedProfile().MarshalText()
		if _, err := ParseProfile(text); err != nil {
			t.Fatalf("a shared profile refused: %v", err)
		}
	}
	st := sharedPoolState()
	if n := len(st.free); n < 1 || n > 4 {
		t.Fatalf("%d sleepers in the free list after 4 goroutines slept", n)
	}
	// The rule, from the top of the list down: the first with the most sleeps.
	var want *Sleeper
	for i := len(st.free) - 1; i >= 0; i-- {
		if s := st.free[i]; want == nil || s.stats.sleeps > want.stats.sleeps {
			want = s
		}
	}
	if got := SharedProfile(); want.stats.sleeps == 0 || !reflect.DeepEqual(got, want.Profile()) {
		t.Fatal("after the sleeps, SharedProfile is not the most-slept sleeper's profile")
	}
}
