package keeptime

import (
	"math"
	"math/bits"
)

// The planner of spec/sleep.md, "Planning": the next OS wait of an Exact
// sleep (the cheapest plan that meets the tail target, from the learned
// model), when a sleep explores, the single wait of an Efficient sleep, and
// the crowd's spin cap.

// splitsNs are the lengths of the short second OS wait that a two-wait plan
// leaves after its long first one (planExact), in the order tried.
var splitsNs = [...]uint64{50_000, 100_000, 200_000, 400_000}

// planStep says where in a sleep planExact is asked.
type planStep struct {
	// first: the first plan of a sleep (no OS wait taken yet); only then may
	// a wait cut short to its bucket's longest (a chunk) be taken.
	first bool
	// explore: the first plan of a sleep that explores (see explores).
	explore bool
	// afterSplit: a two-wait plan's first wait has been taken; only its
	// short wait (one OS wait, then a spin) or a spin may follow, no further
	// split or chunk.
	afterSplit bool
}

// osWaitPlan is the next OS wait planExact chose.
type osWaitPlan struct {
	waitNs uint64
	// split: the long first wait of a two-wait plan.
	split bool
	// restBudgetPpm is the late-share budget the rest of the sleep plans
	// with: half the budget (the short wait's share) after a two-wait plan's
	// first wait, else the budget unchanged.
	restBudgetPpm uint64
	// proven: every margin the plan rests on is established at the share
	// it is planned at; an unproven plan counts its sleep in
	// sleepStats.unprovenSleeps.
	proven bool
}

// explores reports whether the first plan of the sleep numbered seq
// (counted after its beginSleep) explores: each of a sleeper's first
// exploreYoungSleeps, then every exploreEvery-th.
func explores(seq uint64) bool {
	return seq <= exploreYoungSleeps || seq%exploreEvery == 0
}

// planExact is the next OS wait of an Exact sleep with remaining ns to go,
// or ok == false to spin the rest: the plan with the least expected thread
// CPU whose predicted share of late sleeps is at most budget ppm
// (spec/sleep.md, "Planning"). Candidates, ties keeping the earlier:
//
//   - one OS wait ending the bucket's margin at budget (at least minSpin)
//     before the deadline, then a spin: its learned cost plus the expected
//     spin;
//   - for each S of splitsNs, a long wait ending S plus the short wait's
//     margin (at half the budget) before the deadline, a short wait of
//     about S, then a spin; taken only if the long wait's own late share
//     plus the short one's fit the budget, and, when the long wait's bucket
//     is not established at the budget, only if it ends at least that
//     bucket's margin before the short one;
//   - a pure spin of remaining.
//
// When only a wait cut short to its bucket's longest fits (its own bucket's
// margin would allow a longer one, the longer bucket's does not), that
// chunk is not the last OS wait and its full cost is unknown: it is taken
// only as a sleep's first plan (step.first), when no complete plan meets the
// budget and one wait costs less than spinning the rest. After a two-wait
// plan's first wait (step.afterSplit) only the one-wait candidate or a spin
// is considered. With step.explore (the first plan of a sleep that
// explores), a two-wait plan that meets the budget and whose short wait's
// bucket is not yet established at half the budget is taken even if it
// costs more, by at most remaining/exploreCostDiv over the one-wait plan
// (or the pure spin): the one whose short bucket has the most samples
// standing for it (ties: the smaller S), finishing one pool at a time, among
// those whose short wait follows at least half of the long waits (a split
// that the long wait's usual lateness leaves too short for a second wait
// would observe nothing).
//
// A plan is proven when every margin it rests on is established at the
// share it is planned at: the one wait's or the chunk's bucket at budget;
// for a two-wait plan the short bucket at half the budget and the long one
// at budget. The plan before anything is learned is not.
//
// Before anything is learned: one OS wait ending defaultMarginNs (or
// minSpin) before the deadline.
func planExact(e *estimator, remaining, budget, minSpin uint64, step planStep) (osWaitPlan, bool) {
	r := remaining
	if r < minOsWaitNs {
		return osWaitPlan{}, false
	}
	one := func(waitNs uint64, proven bool) osWaitPlan {
		return osWaitPlan{waitNs: waitNs, restBudgetPpm: budget, proven: proven}
	}
	if e.empty() {
		g := max(defaultMarginNs, minSpin)
		if r >= g && r-g >= minOsWaitNs {
			return one(r-g, false), true
		}
		return osWaitPlan{}, false
	}
	var best osWaitPlan
	found := false
	bestCost := r // a pure spin
	// A wait cut to its bucket's longest is not the last OS wait: its cost
	// is not known here, so it is only a fallback when no complete plan fits.
	var chunk osWaitPlan
	var chunkCost uint64
	haveChunk := false
	for b := bucketOf(r); b >= 0; b-- {
		g := max(e.margin(b, budget), minSpin)
		if r < g {
			continue
		}
		l := r - g
		if l > bucketHi(b) {
			if bucketHi(b) >= minOsWaitNs && step.first {
				chunk, chunkCost, haveChunk = one(bucketHi(b), e.established(b, budget)), e.cost(b), true
			}
			break
		}
		if l >= bucketLo(b) && l >= minOsWaitNs {
			t := e.tail(b, budget, g)
			cost := satAdd(e.cost(b), t.spinSum/t.samples)
			if cost < bestCost {
				best, found, bestCost = one(l, e.established(b, budget)), true, cost
			}
			break
		}
	}
	oneCost := bestCost // the cheapest one-wait plan's, or a pure spin's
	var explored osWaitPlan
	var exploredN uint64
	haveExplored := false
	q := budget / 2
	for _, sNs := range splitsNs {
		if q == 0 || step.afterSplit {
			break
		}
		bs := bucketOf(sNs)
		gs := max(e.margin(bs, q), minSpin)
		g := satAdd(sNs, gs)
		if r < g || r-g < minOsWaitNs {
			continue
		}
		l1 := r - g
		b1 := bucketOf(l1)
		// A long wait too young for the budget is held to its margin, like a
		// one-wait plan's: a young view's tail says nothing of a rare late
		// wake-up, and longer waits bound it.
		longEstablished := e.established(b1, budget)
		if !longEstablished && g < e.margin(b1, budget) {
			continue
		}
		t1 := e.tail(b1, budget, g)
		room, restSpin := e.splitCounts(b1, budget, sNs-minOsWaitNs, g)
		ts := e.tail(bs, q, gs)
		late := satMul(t1.late*ts.samples+room*ts.late, ppm)
		if late > satMul(budget, t1.samples*ts.samples) {
			continue
		}
		second := satAdd(e.cost(bs), ts.spinSum/ts.samples)
		cost := satAdd(e.cost(b1), satAdd(satMul(room, second), restSpin)/t1.samples)
		shortEstablished := e.established(bs, q)
		plan := osWaitPlan{waitNs: l1, split: true, restBudgetPpm: q,
			proven: shortEstablished && longEstablished}
		// Exploring observes the short wait only when one follows: after at
		// least half of the long waits (room), not a split that the long
		// wait's usual lateness leaves too short for a second wait.
		if step.explore && !shortEstablished && satMul(room, 2) >= t1.samples &&
			cost <= satAdd(oneCost, r/exploreCostDiv) {
			if n := e.samples(bs, q); !haveExplored || n > exploredN {
				explored, exploredN, haveExplored = plan, n, true
			}
		}
		if cost < bestCost {
			best, found, bestCost = plan, true, cost
		}
	}
	if haveExplored {
		return explored, true
	}
	if !found && haveChunk && chunkCost < r {
		return chunk, true
	}
	return best, found
}

// planEfficient is the single OS wait of an Efficient sleep: the longest
// wait L >= 1 with L + compensation(bucket(L)) <= remaining. ok == false
// means return at once.
func planEfficient(e *estimator, remaining uint64) (wait uint64, ok bool) {
	for b := bucketOf(remaining); b >= 0; b-- {
		c := e.compensation(b)
		if remaining < c {
			continue
		}
		l := min(remaining-c, bucketHi(b))
		if l >= max(bucketLo(b), 1) {
			return l, true
		}
	}
	return 0, false
}

// crowdSpinCap is the longest spin a sleeper in a crowd of sleepers (more
// than cpus) may plan for a sleep of lengthNs: its share of
// 1/crowdSpinDivisor of the CPUs' time, cpus·lengthNs / (crowdSpinDivisor ·
// sleepers), less waitCostNs (the learned cost of its OS wait). Exact
// (128-bit), saturating at 0 and at 2⁶⁴ − 1; 0 sleepers count as 1.
func crowdSpinCap(cpus, sleepers, lengthNs, waitCostNs uint64) uint64 {
	hi, lo := bits.Mul64(cpus, lengthNs)
	// x / (2n) == (x / 2) / n for whole numbers: halve the 128-bit product
	// first, so the divisor fits in 64 bits whatever n is.
	lo = lo>>1 | hi<<63
	hi >>= 1
	n := max(sleepers, 1)
	share := uint64(math.MaxUint64)
	if hi < n { // the quotient fits in 64 bits
		share, _ = bits.Div64(hi, lo, n)
	}
	return satSub(share, waitCostNs)
}
