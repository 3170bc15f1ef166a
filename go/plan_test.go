package keeptime

import "testing"

// The planner's chunk, exploration and after-split rules on hand-worked
// hosts (spec/sleep.md, "Planning"); spec/vectors pins the whole.

var firstStep = planStep{first: true}

// learnChunkHost: 1 ms waits (bucket 6) wake 900 µs late one time in five,
// 300 µs waits (bucket 5) 3 µs late (100 samples each, established at 1 %);
// an OS wait costs 100 µs.
func learnChunkHost(e *estimator) {
	e.beginSleep()
	for i := 0; i < 100; i++ {
		over := uint64(3_000)
		if i%5 == 4 {
			over = 900_000
		}
		e.observe(1_000_000, over)
		e.observe(300_000, 3_000)
	}
	e.observeCost(300_000, 100_000)
}

func TestACutShortWaitIsAFirstPlanFallbackOnly(t *testing.T) {
	var e estimator
	learnChunkHost(&e)
	// Bucket 6's margin at 1 % is the top of the 900 µs bin [851968, 917503]:
	// a 1 ms wait would be 82 497 ns, below bucket 6. Bucket 5's own margin
	// is 3071 ns (bin [2816, 3071]), allowing 996 929 ns, beyond bucket 5:
	// only its longest, 524 287 ns, fits (a chunk at cost(5) = 100 µs). The
	// one two-wait plan that fits (S = 50 µs; its short bucket borrows
	// bucket 5's samples, young at 0.5 %, so its margin is bucket 6's
	// 917 503 ns) costs 100 000 + 100 000 + 914 687 ns, more than spinning
	// 1 ms. No complete plan: the chunk, as it costs less than the spin. It
	// rests on bucket 5's margin, established at 1 % (100 samples).
	if p, ok := planExact(&e, 1_000_000, 10_000, 0, firstStep); !ok || p != (osWaitPlan{524_287, false, 10_000, true}) {
		t.Fatalf("first plan = %+v %v, want the chunk", p, ok)
	}
	// Not as a later plan of the sleep: spin.
	if p, ok := planExact(&e, 1_000_000, 10_000, 0, planStep{}); ok {
		t.Fatalf("later plan = %+v, want a spin", p)
	}
	// Exploring, the two-wait plan through the young short bucket (1 ms -
	// 50 000 - 917 503 ns) is too dear to explore: it costs more than the
	// pure spin plus 1 ms / exploreCostDiv (62 500 ns). The chunk again.
	if 1_114_687 <= 1_000_000+1_000_000/exploreCostDiv {
		t.Fatal("the cost cap admits the two-wait plan")
	}
	if p, ok := planExact(&e, 1_000_000, 10_000, 0, planStep{first: true, explore: true}); !ok || p != (osWaitPlan{524_287, false, 10_000, true}) {
		t.Fatalf("exploring plan = %+v %v, want the chunk", p, ok)
	}
	// Once an OS wait costs more than the spin (100 000 + (4 000 000 -
	// 100 000) / 4 = 1 075 000 ns), no chunk either.
	e.observeCost(300_000, 4_000_000)
	if e.cost(5) != 1_075_000 {
		t.Fatalf("cost(5) = %d", e.cost(5))
	}
	if p, ok := planExact(&e, 1_000_000, 10_000, 0, firstStep); ok {
		t.Fatalf("plan = %+v, want a spin", p)
	}
}

func TestASleepTakesAChunkOnlyAsItsFirstWait(t *testing.T) {
	sim := newSim(0)
	sim.defaultOvershoot = 3_000
	sim.waitCost = 100_000
	s := newSleeperOn(sim, Exact)
	learnChunkHost(&s.est)
	if got := s.sleepUntilNs(1_000_000); got != 1_000_029 {
		t.Fatalf("returned %d", got)
	}
	// The chunk (524 287 ns) wakes 3 µs late with 472 713 ns to go: one
	// bucket-5 wait ending its margin (3071 ns) early, then 71 ns of spin
	// (one 100 ns step, within the hand-off: counted to the deadline).
	want := []simWait{{0, 524_287, 527_287, false}, {527_287, 996_929, 999_929, false}}
	if len(sim.waits) != 2 || sim.waits[0] != want[0] || sim.waits[1] != want[1] {
		t.Fatalf("waits %v, want %v", sim.waits, want)
	}
	if st := s.stats; st != (sleepStats{sleeps: 1, late: 0, osWaits: 2, spinNs: 71, cpuEstimateNs: 200_071}) {
		t.Fatalf("stats %+v", st)
	}
}

// learnQuietHost: 1 ms waits wake 3 µs late, one in ten 40 µs late (100
// samples); 50 µs waits 3 µs late (short samples); an OS wait costs 2 µs.
func learnQuietHost(e *estimator, short int) {
	e.beginSleep()
	for i := 0; i < 100; i++ {
		over := uint64(3_000)
		if i%10 == 9 {
			over = 40_000
		}
		e.observe(1_000_000, over)
	}
	for i := 0; i < short; i++ {
		e.observe(50_000, 3_000)
	}
	e.observeCost(1_000_000, 2_000)
}

func TestAfterASplitNoSecondSplit(t *testing.T) {
	var e estimator
	learnQuietHost(&e, 200)
	// One wait: the margin at 1 % is the top of bin [36864, 40959] (10 of
	// 100 samples lie there; floor(101 · 1 %) = 1: the largest): 2000 +
	// (90 · 38 143 + 10 · 4095) / 100 ns. Two waits (S = 50 µs): the short
	// wait's margin at 0.5 % is 3071 (200 samples are enough for 0.5 %:
	// their largest), the long one ends 53 071 ns early and every first
	// wake leaves room for the second: 2000 + 2000 + 255 ns, cheaper. Both
	// margins are established: proven. The rest of the sleep plans at half
	// the budget.
	if p, ok := planExact(&e, 1_000_000, 10_000, 0, firstStep); !ok || p != (osWaitPlan{946_929, true, 5_000, true}) {
		t.Fatalf("plan = %+v %v", p, ok)
	}
	after := planStep{afterSplit: true}
	// 50 071 ns to go after the split at 0.5 %: one short wait ending
	// 3071 ns early (2255 ns < spinning), on bucket 2's established margin.
	if p, ok := planExact(&e, 50_071, 5_000, 0, after); !ok || p != (osWaitPlan{47_000, false, 5_000, true}) {
		t.Fatalf("after the split = %+v %v", p, ok)
	}
	// With 1 ms to go after a split, a split would be valid but is not
	// considered: one wait ending 40 959 ns plus half of it (a young view's
	// headroom) early, 61 438 ns, unproven (100 samples of 1 ms waits are
	// too few for 0.5 %).
	if p, ok := planExact(&e, 1_000_000, 5_000, 0, after); !ok || p != (osWaitPlan{938_562, false, 5_000, false}) {
		t.Fatalf("1 ms after a split = %+v %v", p, ok)
	}
}

func TestAYoungShortBucketIsExploredNotTrusted(t *testing.T) {
	var e estimator
	learnQuietHost(&e, 40)
	// 40 short samples set none aside at 0.5 % and are fewer than half the
	// 199 it needs: bucket 2 is not established, so its margin is at least
	// bucket 6's at 0.5 %, 40 959 ns (young itself: 100 samples).
	// Two waits then cost more than one: one wait, on bucket 6's margin,
	// established at 1 %.
	if e.established(2, 5_000) || e.margin(2, 5_000) != 40_959 {
		t.Fatalf("established %v, margin %d", e.established(2, 5_000), e.margin(2, 5_000))
	}
	if p, ok := planExact(&e, 1_000_000, 10_000, 0, firstStep); !ok || p != (osWaitPlan{959_041, false, 10_000, true}) {
		t.Fatalf("plan = %+v %v", p, ok)
	}
	// Exploring: the valid two-wait plan whose short bucket is not
	// established and has the most samples standing for it, at most
	// 1 ms / exploreCostDiv dearer than the one wait (2000 + 40 143 ns
	// against 2000 + 34 738): every S's short bucket (2…5) is answered by
	// bucket 2's 40 samples (pooled or borrowed), so the first, S = 50 µs,
	// the long wait ending 50 000 + 40 959 ns early. Unproven.
	explore := planStep{first: true, explore: true}
	if p, ok := planExact(&e, 1_000_000, 10_000, 0, explore); !ok || p != (osWaitPlan{909_041, true, 5_000, false}) {
		t.Fatalf("exploring plan = %+v %v", p, ok)
	}
	// Once bucket 2 is established nothing is explored: the cheapest plan.
	for i := 0; i < 160; i++ {
		e.observe(50_000, 3_000)
	}
	if !e.established(2, 5_000) || e.samples(3, 5_000) != 200 {
		t.Fatal("not established at 200 samples")
	}
	if p, ok := planExact(&e, 1_000_000, 10_000, 0, explore); !ok || p != (osWaitPlan{946_929, true, 5_000, true}) {
		t.Fatalf("plan = %+v %v", p, ok)
	}
}
