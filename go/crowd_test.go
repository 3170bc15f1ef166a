package keeptime

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
	"time"
)

// Crowds: more sleepers inside an Exact sleep than CPUs (spec/sleep.md,
// "Crowds"), on simulated time with exact assertions; the same numbers as
// the Crowds section of the Rust core's tests/simulated.rs.

// crowdWorld is a world of cpus CPUs where others other sleepers are
// inside a sleep, its OS waits waking 3 µs late.
func crowdWorld(cpus, others int) *simPlatform {
	sim := newSim(0)
	sim.cpuCount, sim.otherSleepers = cpus, others
	sim.defaultOvershoot = 3_000
	return sim
}

func TestCrowdSpinCapIsTheSleepersShareOfHalfTheCPUsLessTheWaitCost(t *testing.T) {
	if crowdSpinDivisor != 2 {
		t.Fatalf("crowdSpinDivisor %d", crowdSpinDivisor)
	}
	for _, c := range []struct {
		cpus, sleepers, length, cost, want uint64
		why                                string
	}{
		{2, 64, 1_000_000, 5_000, 10_625, "64 × 1 ms on 2 CPUs: 2 · 1 ms / (2 · 64) = 15.625 µs, less 5 µs"},
		{16 / 8, 16, 1_000_000, 5_000, 57_500, "16 × 1 ms: 62.5 µs less 5 µs"},
		{2, 16, 250_000, 5_000, 10_625, "16 × 250 µs: the same as 64 × 1 ms"},
		{2, 64, 1_000_000, 20_000, 0, "a wait dearer than the share: no spin at all (saturating at 0)"},
		{math.MaxUint64, 1, math.MaxUint64, 0, math.MaxUint64, "huge lengths and CPU counts are exact, then saturate"},
		{math.MaxUint64, 2, math.MaxUint64, 0, math.MaxUint64, "(2⁶⁴−1)² / 4 does not fit: saturates"},
		{3, math.MaxUint64, math.MaxUint64, 0, 1, "3 · (2⁶⁴−1) / (2 · (2⁶⁴−1)) = 1: no overflow in 2n"},
		{4, 0, 1_000, 0, 2_000, "0 sleepers counts as 1"},
	} {
		if got := crowdSpinCap(c.cpus, c.sleepers, c.length, c.cost); got != c.want {
			t.Errorf("crowdSpinCap(%d, %d, %d, %d) = %d, want %d: %s", c.cpus, c.sleepers, c.length, c.cost, got, c.want, c.why)
		}
	}
	// The bound the cap exists for: n sleepers of length D spin at most
	// C / crowdSpinDivisor CPUs in total, whatever the margins say; and the
	// cap is the exact quotient (checked with math/big).
	rng := rand.New(rand.NewSource(0xc0de))
	for i := 0; i < 10_000; i++ {
		c := 1 + uint64(rng.Int63n(64))
		n := c + 1 + uint64(rng.Int63n(500))
		d := 1 + uint64(rng.Int63n(100_000_000))
		cost := uint64(rng.Int63n(50_000))
		if i%2 == 1 { // also the full 64-bit range
			c, n, d = rng.Uint64()|1, rng.Uint64()|1, rng.Uint64()
		}
		got := crowdSpinCap(c, n, d, cost)
		share := new(big.Int).Mul(new(big.Int).SetUint64(c), new(big.Int).SetUint64(d))
		share.Quo(share, new(big.Int).Mul(big.NewInt(crowdSpinDivisor), new(big.Int).SetUint64(n)))
		if !share.IsUint64() {
			share.SetUint64(math.MaxUint64)
		}
		if want := satSub(share.Uint64(), cost); got != want {
			t.Fatalf("crowdSpinCap(%d, %d, %d, %d) = %d, want %d", c, n, d, cost, got, want)
		}
		total := new(big.Int).Mul(new(big.Int).SetUint64(got), new(big.Int).SetUint64(n))
		total.Mul(total, big.NewInt(crowdSpinDivisor))
		if total.Cmp(new(big.Int).Mul(new(big.Int).SetUint64(d), new(big.Int).SetUint64(c))) > 0 && share.Uint64() != math.MaxUint64 {
			t.Fatalf("c %d n %d d %d cap %d: the crowd would spin more than half the CPUs", c, n, d, got)
		}
	}
}

func TestACrowdSleepCapsItsMarginAndPausesOnlyAtTheEnd(t *testing.T) {
	// 64 sleepers on 2 CPUs: nothing learned yet, so the margin would be
	// defaultMarginNs (50 µs); the crowd cap (10.625 µs) wins.
	sim := crowdWorld(2, 63)
	s := newSleeperOn(sim, Exact)
	got := s.sleepUntilNs(1_000_000)
	if len(sim.waits) != 1 || sim.waits[0].target != 1_000_000-10_625 {
		t.Fatalf("waits %v, want one to %d", sim.waits, 1_000_000-10_625)
	}
	// Woken at 992 375: yields (1 µs) while more than crowdPauseNs (5 µs)
	// remain, then the pause hint (100 ns steps) to the deadline.
	if crowdPauseNs != 5_000 {
		t.Fatalf("crowdPauseNs %d", crowdPauseNs)
	}
	if sim.yields != 3 || sim.relaxes != 47 || got != 1_000_075 {
		t.Fatalf("%d yields, %d relaxes, returned %d; want 3, 47, 1000075", sim.yields, sim.relaxes, got)
	}
	if sim.sleepers != 0 || sim.spinning {
		t.Fatalf("left the crowd count (%d) or the slot (%v) held", sim.sleepers, sim.spinning)
	}
	// It learned the wait as always.
	if n := s.est.liveSamples(bucketOf(989_375)); n != 1 {
		t.Fatalf("%d samples learned, want 1", n)
	}
}

func TestTheSameSleepWithoutACrowdPlansAsUsual(t *testing.T) {
	// Two sleepers on 2 CPUs are not a crowd: the usual plan, the whole
	// default margin, and the slot holder pauses for its planned spin.
	sim := crowdWorld(2, 1)
	s := newSleeperOn(sim, Exact)
	got := s.sleepUntilNs(1_000_000)
	if len(sim.waits) != 2 || sim.waits[0].target != 1_000_000-defaultMarginNs || sim.yields != 0 {
		t.Fatalf("waits %v, %d yields", sim.waits, sim.yields)
	}
	// Then the learned margin (3 071 ns plus half of it, a young view's
	// headroom: 4 606 ns), and 1 606 ns of pause: 17 steps of 100 ns.
	if sim.waits[1].target != 1_000_000-4_606 || got != 1_000_094 {
		t.Fatalf("second wait %v, returned %d; want a target of 995394 and 1000094", sim.waits[1], got)
	}
}

func TestInACrowdALearnedMarginBelowTheCapIsUsedAndMinSpinIsKept(t *testing.T) {
	sim := crowdWorld(2, 15) // 16 × 1 ms: cap 62.5 µs − cost
	s := newSleeperOn(sim, Exact)
	sim.waitCost = 5_000
	for k := uint64(1); k <= 300; k++ {
		s.sleepUntilNs(k * 1_000_000)
	}
	// Every wake-up came 3 µs late: the 1 % margin is that bin's upper edge.
	m := s.est.margin(bucketOf(1_000_000), 10_000)
	if m != binHi(binOf(3_000)) {
		t.Fatalf("learned margin %d, want %d", m, binHi(binOf(3_000)))
	}
	sim.waits = nil
	s.sleepUntilNs(301_000_000)
	if sim.waits[0].target != 301_000_000-m {
		t.Fatalf("wait %v, want a target of %d", sim.waits[0], 301_000_000-m)
	}
	// A minSpin above the cap is the caller's explicit request: kept.
	s = newSleeperOn(sim, Exact)
	s.SetMinSpin(100 * time.Microsecond)
	sim.waits = nil
	start := sim.now()
	s.sleepUntilNs(start + 1_000_000)
	if sim.waits[0].target != start+1_000_000-100_000 {
		t.Fatalf("wait %v, want a target of %d", sim.waits[0], start+1_000_000-100_000)
	}
}

func TestACrowdFollowerWithoutASlotYieldsToItsDeadline(t *testing.T) {
	sim := crowdWorld(2, 63)
	sim.slotsFree = false
	s := newSleeperOn(sim, Exact)
	got := s.sleepUntilNs(1_000_000)
	if len(sim.waits) != 1 {
		t.Fatalf("waits %v: want one, no OS wait to the deadline", sim.waits)
	}
	if sim.relaxes != 0 {
		t.Fatalf("%d pauses without a slot", sim.relaxes)
	}
	// 992 375 → 1 000 375 in 1 µs steps.
	if sim.yields != 8 || got != 1_000_375 || s.Stats().Late != 0 {
		t.Fatalf("%d yields, returned %d, stats %+v", sim.yields, got, s.Stats())
	}
}

func TestSeveralSleepersInOneWorldCountThemselvesIntoTheCrowd(t *testing.T) {
	// One CPU; each sleeper of the world is counted while it sleeps, and
	// leaves the count on every way out, a panic included.
	sim := crowdWorld(1, 0)
	a := newSleeperOn(sim, Exact)
	b := newSleeperOn(sim, Exact)
	a.sleepUntilNs(1_000_000)
	if sim.waits[0].target != 1_000_000-defaultMarginNs || sim.sleepers != 0 {
		t.Fatalf("waits %v, %d sleepers counted", sim.waits, sim.sleepers)
	}
	// Another thread sleeping: b's sleep is a crowd's (2 > 1 CPU), capped
	// at 1 · 1 ms / (2 · 2) − 5 µs = 245 µs, above b's learned margin.
	sim.otherSleepers = 1
	sim.waits = nil
	t0 := sim.now()
	woke := b.sleepUntilNs(t0 + 1_000_000)
	// The cap does not bind: b's default margin, then its learned one (as
	// ever, a sleep re-plans after an OS wait that woke early enough).
	if len(sim.waits) != 2 || sim.waits[0].target-t0 != 1_000_000-defaultMarginNs || sim.waits[1].target-t0 != 1_000_000-4_606 {
		t.Fatalf("waits %v from %d", sim.waits, t0)
	}
	if woke-t0 != 1_000_000-1_606+1_700 || sim.yields != 0 {
		t.Fatalf("returned %d after %d yields; want 1 606 ns left, 17 pause steps", woke-t0, sim.yields)
	}
	// Its OS wait panics: it still leaves the count (and holds no slot).
	sim.panicAtWait = true
	t1 := sim.now()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the simulated OS wait did not panic")
			}
		}()
		a.sleepUntilNs(t1 + 1_000_000)
	}()
	if sim.sleepers != 0 || sim.spinning {
		t.Fatalf("a panic left %d sleepers counted (slot held %v)", sim.sleepers, sim.spinning)
	}
	// Spin mode never enters the count (the caller asked for a core).
	sim.otherSleepers = 0
	sp := newSleeperOn(&countingSim{simPlatform: sim}, Spin)
	t2 := sim.now()
	sp.sleepUntilNs(t2 + 10_000)
	if c := sp.p.(*countingSim); c.entered != 0 || sim.sleepers != 0 {
		t.Fatalf("Spin mode entered the crowd count %d times", c.entered)
	}
}

// countingSim counts enterSleep calls.
type countingSim struct {
	*simPlatform
	entered int
}

func (c *countingSim) enterSleep() int {
	c.entered++
	return c.simPlatform.enterSleep()
}
