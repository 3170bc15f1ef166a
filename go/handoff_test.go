package keeptime

import (
	"testing"
	"time"
)

// The hand-off of spec/sleep.md on simulated time: a spin-finished sleep
// does its bookkeeping before its last handoffNs, and the outermost call
// spins the rest.

// firstStepAtOrPast is the first reading of a spin in step ns steps from
// start that is at or past t.
func firstStepAtOrPast(start, step, t uint64) uint64 {
	return start + (satSub(t, start)+step-1)/step*step
}

func TestASpinFinishedSleepHandsOffItsLastMicrosecondsWithTheBookkeepingDone(t *testing.T) {
	sim := newSim(0)
	sim.waitCost = 1_000
	s := newSleeperOn(sim, Exact)
	sim.overshoots = []uint64{10_000, 2_000}
	const deadline = 1_000_000
	woke := s.sleepUntilNs(deadline)
	// The spin starts where the last OS wait woke, in 100 ns steps.
	if len(sim.waits) == 0 {
		t.Fatal("no OS wait")
	}
	start := sim.waits[len(sim.waits)-1].woke
	if start >= deadline-handoffNs {
		t.Fatalf("the plan leaves no spin: the last OS wait woke at %d", start)
	}
	if want := firstStepAtOrPast(start, 100, deadline); woke != want {
		t.Fatalf("woke at %d, want %d", woke, want)
	}
	// The slot went back (and the stats were final) at the first step within
	// handoffNs of the deadline: the last steps ran in the outermost call.
	h := firstStepAtOrPast(start, 100, deadline-handoffNs)
	if !sim.released || sim.releasedAt != h {
		t.Fatalf("slot released %v at %d, want at %d", sim.released, sim.releasedAt, h)
	}
	if got, want := sim.relaxes-sim.relaxesAtRelease, (woke-h)/100; got != want {
		t.Fatalf("%d steps after the release, want %d", got, want)
	}
	if sim.spinning || sim.sleepers != 0 {
		t.Fatalf("spinning %v, sleepers %d after the sleep", sim.spinning, sim.sleepers)
	}
	if st := s.stats; st.spinNs != deadline-start || st.late != 0 {
		t.Fatalf("stats %+v, want the spin counted to the deadline (%d) and no late sleep", st, deadline-start)
	}
}

func TestASleepThatWakesWithinTheHandOffOrLateLeavesNothingBehind(t *testing.T) {
	sim := newSim(0)
	s := newSleeperOn(sim, Exact)
	// The first sleep knows nothing: one OS wait to 50 µs before the
	// deadline. Woke 47 µs late, 3 µs remain, less than handoffNs: the slot
	// goes back at once and the outermost call spins all 30 steps.
	sim.overshoots = []uint64{47_000}
	if got := s.sleepUntilNs(1_000_000); got != 1_000_000 {
		t.Fatalf("returned %d", got)
	}
	if len(sim.waits) != 1 {
		t.Fatalf("waits %v", sim.waits)
	}
	if !sim.released || sim.releasedAt != 997_000 || sim.relaxesAtRelease != 0 {
		t.Fatalf("slot released %v at %d after %d steps, want at 997000 after 0", sim.released, sim.releasedAt, sim.relaxesAtRelease)
	}
	if sim.relaxes != 30 || s.stats.spinNs != 3_000 {
		t.Fatalf("%d steps, spin %d ns; want 30 and 3000", sim.relaxes, s.stats.spinNs)
	}
	// An OS wait that wakes past the deadline: no spin, no slot, late.
	sim.waits = nil
	sim.defaultOvershoot = 900_000
	d := sim.now() + 1_000_000
	woke := s.sleepUntilNs(d)
	if woke != sim.waits[0].woke || woke <= d {
		t.Fatalf("woke at %d, the OS wait at %d, deadline %d", woke, sim.waits[0].woke, d)
	}
	if sim.relaxes != 30 || s.stats.late != 1 || sim.sleepers != 0 {
		t.Fatalf("%d steps, %d late, %d sleepers; want 30, 1, 0", sim.relaxes, s.stats.late, sim.sleepers)
	}
}

func TestATickIsRecordedBeforeItsFinalSpinAndReportsTheSpinsEnd(t *testing.T) {
	sim := newSim(0)
	sim.spinStep = 70
	tk, err := newTickerOn(newSleeperOn(sim, Exact), time.Millisecond, Skip)
	if err != nil {
		t.Fatal(err)
	}
	sim.overshoots = []uint64{10_000}
	tick := tk.Wait()
	if want := time.Unix(0, 0).Add(time.Millisecond); !tick.Scheduled.Equal(want) {
		t.Fatalf("scheduled %v, want %v", tick.Scheduled, want)
	}
	start := sim.waits[len(sim.waits)-1].woke
	end := firstStepAtOrPast(start, 70, 1_000_000)
	if sim.now() != end {
		t.Fatalf("the tick ended at %d, want %d", sim.now(), end)
	}
	// The tick reports where the final spin ended,
	if tick.Lateness != time.Duration(end-1_000_000) {
		t.Fatalf("lateness %v, want %v", tick.Lateness, time.Duration(end-1_000_000))
	}
	// while the schedule recorded the slot at its deadline, before that spin.
	if st := tk.Stats(); st.WorstLateness != 0 || st.Ticks != 1 {
		t.Fatalf("stats %+v, want 1 tick recorded on time", st)
	}
}

// The package functions' sleeper is back in the shared list, its stats
// final, before the last stretch is spun.
func TestASharedSleeperIsGivenBackBeforeTheLastStretch(t *testing.T) {
	sim := newSim(0)
	s := newSleeperOn(sim, Exact)
	var pool sleeperPool
	pool.put(s, pool.gen)
	sim.overshoots = []uint64{10_000}
	h := pool.toHandoff(1_000_000)
	if h.until != 1_000_000 || h.now >= h.until || h.until-h.now > handoffNs {
		t.Fatalf("hand-off %+v, want the last stretch of at most %d ns before 1000000 still to spin", h, handoffNs)
	}
	if len(pool.free) != 1 || pool.free[0] != s {
		t.Fatalf("free list %v, want the sleeper back", pool.free)
	}
	start := sim.waits[len(sim.waits)-1].woke // where the spin began
	if sim.spinning || sim.sleepers != 0 || s.stats.spinNs != 1_000_000-start {
		t.Fatalf("spinning %v, sleepers %d, stats %+v before the last stretch", sim.spinning, sim.sleepers, s.stats)
	}
	relaxes := sim.relaxes
	if got := h.finish(sim); got != firstStepAtOrPast(start, 100, 1_000_000) || sim.relaxes == relaxes {
		t.Fatalf("the last stretch ended at %d after %d steps", got, sim.relaxes-relaxes)
	}
}
