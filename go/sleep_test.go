package keeptime

import (
	"math"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

// Decision tests on simulated time: every number is exact.

func TestPastDeadlineReturnsAtOnce(t *testing.T) {
	sim := newSim(1_000)
	s := newSleeperOn(sim, Exact)
	for _, d := range []uint64{0, 999, 1_000} {
		if got := s.sleepUntilNs(d); got != 1_000 {
			t.Errorf("sleepUntilNs(%d) = %d, want 1000", d, got)
		}
	}
	if len(sim.waits) != 0 || sim.relaxes != 0 || sim.prepares != 0 || s.est.seq != 0 {
		t.Fatalf("a past deadline did work: %d waits, %d relaxes, %d prepares, seq %d",
			len(sim.waits), sim.relaxes, sim.prepares, s.est.seq)
	}
}

func TestExactCascadeLongWaitShortWaitSpin(t *testing.T) {
	sim := newSim(0)
	sim.defaultOvershoot = 2_000
	sim.overshoots = []uint64{12_000, 3_000}
	s := newSleeperOn(sim, Exact)
	got := s.sleepUntilNs(1_000_000)
	// Fresh: margin 50 µs + split 200 µs → 750 µs. Then bucket 4 borrows the
	// 12 µs sample of bucket 6 (one sample: q = median = 12 µs, margin
	// 12 + 0 + 1 = 13 µs) → 225 µs. Then 10 µs remain: bucket 0 borrows the
	// 3 µs of bucket 4 (margin 4 µs) → 6 µs. 2 µs remain: spin 20 × 100 ns.
	want := []simWait{
		{0, 750_000, 762_000, false},
		{762_000, 987_000, 990_000, false},
		{990_000, 996_000, 998_000, false},
	}
	if !reflect.DeepEqual(sim.waits, want) {
		t.Fatalf("waits\n got %v\nwant %v", sim.waits, want)
	}
	if got != 1_000_000 || sim.relaxes != 20 || sim.yields != 0 {
		t.Fatalf("returned %d after %d relaxes, %d yields", got, sim.relaxes, sim.yields)
	}
	if sim.spinning {
		t.Fatal("spin slot not given back")
	}
	if s.est.liveSamples(6) != 1 || s.est.liveSamples(4) != 1 || s.est.liveSamples(0) != 1 || s.est.seq != 1 {
		t.Fatal("each OS wait should leave one sample in its own bucket, one sleep begun")
	}
}

func TestOversleptReturnsWithoutSpinning(t *testing.T) {
	sim := newSim(0)
	sim.overshoots = []uint64{80_000}
	got := newSleeperOn(sim, Exact).sleepUntilNs(100_000)
	// Fresh margin 50 µs: 50 µs fits bucket 2, not bucket 3.
	if want := []simWait{{0, 50_000, 130_000, false}}; !reflect.DeepEqual(sim.waits, want) {
		t.Fatalf("waits %v, want %v", sim.waits, want)
	}
	if got != 130_000 || sim.relaxes != 0 {
		t.Fatalf("returned %d after %d relaxes", got, sim.relaxes)
	}
}

func TestInterruptedWaitsResumeTowardTheSameTargetAndRecordNothing(t *testing.T) {
	sim := newSim(0)
	sim.interrupts = []uint64{100_000, 50_000}
	sim.overshoots = []uint64{10_000}
	s := newSleeperOn(sim, Exact)
	got := s.sleepUntilNs(1_000_000)
	head := []simWait{
		{0, 750_000, 100_000, true},
		{100_000, 750_000, 150_000, true},
		{150_000, 750_000, 760_000, false},
	}
	if len(sim.waits) < 3 || !reflect.DeepEqual(sim.waits[:3], head) {
		t.Fatalf("waits %v, want to start with %v", sim.waits, head)
	}
	if got < 1_000_000 {
		t.Fatalf("returned early: %d", got)
	}
	samples := 0
	for b := 0; b < buckets; b++ {
		samples += s.est.liveSamples(b)
	}
	if samples != len(sim.waits)-2 {
		t.Fatalf("%d samples for %d completed waits", samples, len(sim.waits)-2)
	}
}

func TestNoSpinSlotEndsWithAnOSWaitToTheDeadline(t *testing.T) {
	sim := newSim(0)
	sim.slotsFree = false
	sim.defaultOvershoot = 4_000
	got := newSleeperOn(sim, Exact).sleepUntilNs(100_000)
	last := sim.waits[len(sim.waits)-1]
	if last.target != 100_000 || got != last.woke || got < 100_000 || sim.relaxes != 0 || sim.spinning {
		t.Fatalf("waits %v returned %d relaxes %d", sim.waits, got, sim.relaxes)
	}
}

func TestSpinModePausesFor50usThenYieldsWithoutASlot(t *testing.T) {
	sim := newSim(0)
	sim.slotsFree = false // Spin mode spins anyway: the caller asked for a core
	got := newSleeperOn(sim, Spin).sleepUntilNs(100_000)
	if got != 100_000 || sim.relaxes != 500 || sim.yields != 50 || len(sim.waits) != 0 {
		t.Fatalf("returned %d after %d relaxes, %d yields, %d waits", got, sim.relaxes, sim.yields, len(sim.waits))
	}
}

func TestEfficientMayReturnEarlyByDesign(t *testing.T) {
	sim := newSim(0)
	sim.overshoots = []uint64{55_000, 50_000}
	s := newSleeperOn(sim, Efficient)
	if got := s.sleepUntilNs(100_000); got != 155_000 {
		t.Fatalf("first sleep (nothing learned) returned %d, want 155000", got)
	}
	sim.advanceTo(200_000)
	got := s.sleepUntilNs(300_000)
	// Median 55 µs: wait 45 µs (bucket 2), which overshoots only 50 µs.
	if want := (simWait{200_000, 245_000, 295_000, false}); sim.waits[1] != want || got != 295_000 {
		t.Fatalf("wait %v returned %d", sim.waits[1], got)
	}
	if sim.relaxes != 0 {
		t.Fatal("efficient mode spun")
	}
}

func TestNonPositiveDurationsReturnAtOnce(t *testing.T) {
	sim := newSim(5_000)
	s := newSleeperOn(sim, Exact)
	for _, d := range []time.Duration{0, -1, -time.Hour, math.MinInt64} {
		s.Sleep(d)
	}
	if sim.now() != 5_000 || len(sim.waits) != 0 || s.est.seq != 0 {
		t.Fatal("a non-positive duration waited")
	}
}

func TestHugeDurationsSaturateInsteadOfWrapping(t *testing.T) {
	sim := newSim(math.MaxUint64 - 1_000_000)
	s := newSleeperOn(sim, Exact)
	s.Sleep(math.MaxInt64)
	if sim.now() != math.MaxUint64 {
		t.Fatalf("clock at %d, want the saturated deadline", sim.now())
	}
	for _, w := range sim.waits {
		if w.target < w.issued || w.woke < w.target {
			t.Fatalf("wrapped: %v", w)
		}
	}
}

func TestOutOfRangeModeBehavesAsExact(t *testing.T) {
	run := func(m Mode) ([]simWait, uint64) {
		sim := newSim(0)
		sim.overshoots = []uint64{7_000, 2_000}
		got := newSleeperOn(sim, m).sleepUntilNs(700_000)
		return sim.waits, got
	}
	w1, r1 := run(Exact)
	w2, r2 := run(Mode(42))
	if !reflect.DeepEqual(w1, w2) || r1 != r2 {
		t.Fatal("Mode(42) differs from Exact")
	}
	if Mode(42).String() != "Mode(42)" {
		t.Fatal(Mode(42).String())
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{Exact, Efficient, Spin} {
		if got, err := ParseMode(m.String()); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if got, err := ParseMode("EXACT"); err != nil || got != Exact {
		t.Error("ParseMode is case-sensitive")
	}
	if _, err := ParseMode("fast"); err == nil {
		t.Error("ParseMode accepted nonsense")
	}
}

// Exact and Spin never return early, whatever the OS does: random waits,
// overshoots (including huge ones), signals and spin-slot availability.
func TestNeverEarlyUnderRandomScripts(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, mode := range []Mode{Exact, Spin} {
		sim := newSim(uint64(rng.Int63n(1 << 40)))
		s := newSleeperOn(sim, mode)
		for i := 0; i < 3000; i++ {
			sim.defaultOvershoot = uint64(rng.Int63n(20_000))
			sim.overshoots = nil
			for j := rng.Intn(4); j > 0; j-- {
				o := uint64(rng.Int63n(30_000))
				if rng.Intn(20) == 0 {
					o = uint64(rng.Int63n(5_000_000)) // a preemption
				}
				sim.overshoots = append(sim.overshoots, o)
			}
			sim.interrupts = nil
			if rng.Intn(10) == 0 {
				sim.interrupts = []uint64{uint64(rng.Int63n(500_000))}
			}
			sim.slotsFree = rng.Intn(4) != 0
			sim.waits = nil
			var d uint64
			switch rng.Intn(3) {
			case 0:
				d = uint64(rng.Int63n(20_000))
			case 1:
				d = uint64(rng.Int63n(2_000_000))
			default:
				d = uint64(rng.Int63n(30_000_000))
			}
			if mode == Spin {
				d /= 10 // keep the simulated spin short
			}
			deadline := sim.now() + d
			got := s.sleepUntilNs(deadline)
			if got < deadline || got != sim.now() {
				t.Fatalf("%v sleep %d: returned %d for deadline %d (clock %d)", mode, i, got, deadline, sim.now())
			}
			if sim.spinning {
				t.Fatalf("%v sleep %d kept its spin slot", mode, i)
			}
			for _, w := range sim.waits {
				if !w.interrupted && w.woke < w.target {
					t.Fatalf("simulator woke early: %v", w)
				}
			}
			sim.advanceTo(sim.now() + uint64(rng.Int63n(100_000)))
		}
	}
}
