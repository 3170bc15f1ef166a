package keeptime

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

func TestTickerRejectsNonPositivePeriods(t *testing.T) {
	for _, p := range []time.Duration{0, -1, math.MinInt64} {
		tk, err := NewTicker(p, Skip)
		if tk != nil || !errors.Is(err, ErrInvalidPeriod) {
			t.Errorf("NewTicker(%v) = %v, %v", p, tk, err)
		}
	}
	tk, err := NewTicker(time.Millisecond, Burst)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []time.Duration{0, -time.Second} {
		if err := tk.SetPeriod(p); !errors.Is(err, ErrInvalidPeriod) {
			t.Errorf("SetPeriod(%v) = %v", p, err)
		}
	}
	if tk.Period() != time.Millisecond || tk.Policy() != Burst {
		t.Fatal("a rejected SetPeriod changed the ticker")
	}
}

// A ticker made from a sleeper waits with that sleeper: its settings and
// its stats are the ticker's.
func TestTickerWithASleepersSettings(t *testing.T) {
	if tk, err := NewTickerWith(nil, time.Millisecond, Skip); tk != nil || err == nil {
		t.Fatalf("NewTickerWith(nil) = %v, %v", tk, err)
	}
	s := newSleeperOn(newSim(0), Efficient)
	s.SetTailTarget(TailStrict)
	if tk, err := NewTickerWith(s, 0, Skip); tk != nil || !errors.Is(err, ErrInvalidPeriod) {
		t.Fatalf("NewTickerWith(s, 0) = %v, %v", tk, err)
	}
	tk, err := NewTickerWith(s, time.Millisecond, Burst)
	if err != nil {
		t.Fatal(err)
	}
	tk.Wait()
	if s.Mode() != Efficient || s.TailTarget() != TailStrict {
		t.Fatal("the ticker changed its sleeper's settings")
	}
	if got := tk.SleeperStats().Sleeps; got != 1 || s.Stats().Sleeps != 1 {
		t.Fatalf("the ticker's wait was not the sleeper's: ticker %d, sleeper %d sleeps", got, s.Stats().Sleeps)
	}
}

func TestZeroPolicyIsSkip(t *testing.T) {
	var p MissedTicks
	if p != Skip || p.String() != "skip" {
		t.Fatal("the zero MissedTicks is not Skip")
	}
	for _, m := range []MissedTicks{Skip, Burst, Delay} {
		if got, err := ParseMissedTicks(m.String()); err != nil || got != m {
			t.Errorf("ParseMissedTicks(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := ParseMissedTicks("drop"); err == nil {
		t.Error("ParseMissedTicks accepted nonsense")
	}
}

// A ticker on simulated time: the sleeper's precise wait, then the policy
// when the loop body overruns.
func TestTickerOnSimulatedTime(t *testing.T) {
	sim := newSim(0)
	tk, err := newTickerOn(newSleeperOn(sim, Exact), time.Millisecond, Skip)
	if err != nil {
		t.Fatal(err)
	}
	at := func(ns uint64) time.Time { return time.Unix(0, 0).Add(time.Duration(ns)) }

	first := tk.Wait()
	if first.Index != 1 || !first.Scheduled.Equal(at(1_000_000)) || first.Skipped != 0 {
		t.Fatalf("first tick %+v", first)
	}
	if sim.now() < 1_000_000 || first.Lateness != time.Duration(sim.now()-1_000_000) {
		t.Fatalf("first tick woke at %d with lateness %v", sim.now(), first.Lateness)
	}

	sim.advanceTo(3_500_000) // the loop body overran slot 2 and 3
	late := tk.Wait()
	if late.Index != 3 || late.Skipped != 1 || !late.Scheduled.Equal(at(3_000_000)) || late.Lateness != 500*time.Microsecond {
		t.Fatalf("late tick %+v", late)
	}
	if !tk.NextDeadline().Equal(at(4_000_000)) {
		t.Fatalf("next deadline %v", tk.NextDeadline())
	}
	next := tk.Wait()
	if next.Index != 4 || sim.now() < 4_000_000 {
		t.Fatalf("tick after the skip %+v at %d", next, sim.now())
	}

	sim.advanceTo(4_200_000)
	tk.Reset()
	if !tk.NextDeadline().Equal(at(5_200_000)) {
		t.Fatalf("after Reset the next deadline is %v", tk.NextDeadline())
	}
	if err := tk.SetPeriod(250 * time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if !tk.NextDeadline().Equal(at(4_450_000)) {
		t.Fatalf("after SetPeriod the next deadline is %v", tk.NextDeadline())
	}
	st := tk.Stats()
	if st.Ticks != 3 || st.Missed != 2 || st.Skipped != 1 || st.WorstLateness != 500*time.Microsecond {
		t.Fatalf("stats %+v", st)
	}
	// Two of the three ticks waited (the late one did not); the simulated OS
	// wakes on time, so none ended late.
	if ss := tk.SleeperStats(); ss.Sleeps != 2 || ss.Late != 0 || ss.OSWaits == 0 {
		t.Fatalf("sleeper stats %+v", ss)
	}
	tk.SetTailTarget(TailStrict)
	if tk.sleeper.TailTarget() != TailStrict {
		t.Fatal("SetTailTarget did not reach the sleeper")
	}
	tk.SetMinSpin(30 * time.Microsecond)
	if tk.sleeper.MinSpin() != 30*time.Microsecond {
		t.Fatal("SetMinSpin did not reach the sleeper")
	}
	tk.SetMinSpin(-time.Second)
	if tk.sleeper.MinSpin() != 0 {
		t.Fatalf("a negative min spin is 0 as for a Sleeper, got %v", tk.sleeper.MinSpin())
	}
}

func TestTickerDelayAndBurstOnSimulatedTime(t *testing.T) {
	for _, c := range []struct {
		policy  MissedTicks
		indexes []uint64
		next    uint64
	}{
		{Burst, []uint64{1, 2, 3}, 4_000_000}, // slots 2 and 3 at once, then on schedule
		{Delay, []uint64{1, 2, 3}, 4_500_000}, // slot 2 at once, schedule restarted at 3.5 ms
	} {
		sim := newSim(0)
		tk, _ := newTickerOn(newSleeperOn(sim, Exact), time.Millisecond, c.policy)
		var got []uint64
		got = append(got, tk.Wait().Index)
		sim.advanceTo(3_500_000)
		got = append(got, tk.Wait().Index) // late: delivered at once
		got = append(got, tk.Wait().Index) // Burst: at once; Delay: waits until 4.5 ms
		want := time.Unix(0, 0).Add(time.Duration(c.next))
		if !slices.Equal(got, c.indexes) {
			t.Errorf("%v: indexes %v, want %v", c.policy, got, c.indexes)
		}
		if c.policy == Burst && !tk.NextDeadline().Equal(want) {
			t.Errorf("%v: next deadline %v, want %v", c.policy, tk.NextDeadline(), want)
		}
		if c.policy == Delay && !tk.NextDeadline().Equal(want.Add(time.Millisecond)) {
			t.Errorf("%v: next deadline %v", c.policy, tk.NextDeadline())
		}
	}
}
