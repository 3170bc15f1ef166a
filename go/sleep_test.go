package keeptime

import (
	"errors"
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

func TestOversleptReturnsWithoutSpinningAndCountsLate(t *testing.T) {
	sim := newSim(0)
	sim.overshoots = []uint64{80_000}
	s := newSleeperOn(sim, Exact)
	got := s.sleepUntilNs(100_000)
	// Nothing learned: one OS wait ending the default 50 µs margin early.
	if want := []simWait{{0, 50_000, 130_000, false}}; !reflect.DeepEqual(sim.waits, want) {
		t.Fatalf("waits %v, want %v", sim.waits, want)
	}
	if got != 130_000 || sim.relaxes != 0 {
		t.Fatalf("returned %d after %d relaxes", got, sim.relaxes)
	}
	if st := s.Stats(); st.Sleeps != 1 || st.Late != 1 || st.OSWaits != 1 || st.Spin != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestInterruptedWaitsResumeTowardTheSameTargetAndRecordNothing(t *testing.T) {
	sim := newSim(0)
	sim.interrupts = []uint64{100_000, 50_000}
	sim.overshoots = []uint64{10_000}
	s := newSleeperOn(sim, Exact)
	got := s.sleepUntilNs(1_000_000)
	head := []simWait{
		{0, 950_000, 100_000, true},
		{100_000, 950_000, 150_000, true},
		{150_000, 950_000, 960_000, false},
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
	if samples != len(sim.waits)-2 || s.Stats().OSWaits != uint64(len(sim.waits)-2) {
		t.Fatalf("%d samples, %d OS waits counted for %d completed waits", samples, s.Stats().OSWaits, len(sim.waits)-2)
	}
}

func TestWithoutASpinSlotTheSleepFollowsWithAYieldPerIteration(t *testing.T) {
	sim := newSim(0)
	sim.slotsFree = false
	sim.defaultOvershoot = 3_000
	s := newSleeperOn(sim, Exact)
	got := s.sleepUntilNs(500_000)
	// Nothing learned yet: an OS wait ending defaultMarginNs early, woken
	// 3 µs late; then one ending the learned margin (the upper edge of the
	// 3 µs sample's bin, 3 071 ns, plus half of it: one sample is a young
	// view, 4 606 ns) early; then, with no slot, two yields of 1 µs (the
	// simulated yield step) and no pause. No wait to the deadline.
	m := young(binHi(binOf(3_000)))
	if defaultMarginNs != 50_000 || m != 4_606 {
		t.Fatalf("default margin %d, bin edge %d", defaultMarginNs, m)
	}
	var targets []uint64
	for _, w := range sim.waits {
		targets = append(targets, w.target)
	}
	if want := []uint64{450_000, 500_000 - m}; !reflect.DeepEqual(targets, want) {
		t.Fatalf("OS wait targets %v, want %v", targets, want)
	}
	if want := 500_000 - m + 3_000 + 2_000; got != want {
		t.Fatalf("returned %d, want %d", got, want)
	}
	if sim.relaxes != 0 || sim.yields != 2 || sim.spinning {
		t.Fatalf("%d relaxes, %d yields, slot held %v", sim.relaxes, sim.yields, sim.spinning)
	}
	if st := s.Stats(); st.Late != 0 || st.Spin != 2*time.Microsecond {
		t.Fatalf("stats %+v", st)
	}
}

func TestSpinModePausesNearTheDeadlineAndYieldsOnlyWhileItIsFar(t *testing.T) {
	sim := newSim(0)
	sim.slotsFree = false // Spin mode spins anyway: the caller asked for a core
	s := newSleeperOn(sim, Spin)
	got := s.sleepUntilNs(200_000)
	// 50 µs of pause (500 steps of 100 ns), yields of 1 µs until 20 µs
	// before the deadline (130), then the pause alone (200 steps).
	if got != 200_000 || sim.relaxes != 700 || sim.yields != 130 || len(sim.waits) != 0 {
		t.Fatalf("returned %d after %d relaxes, %d yields, %d waits", got, sim.relaxes, sim.yields, len(sim.waits))
	}
	if st := s.Stats(); st != (SleeperStats{Sleeps: 1, Spin: 200 * time.Microsecond, CPUEstimate: 200 * time.Microsecond}) {
		t.Fatalf("stats %+v", st)
	}
	// A spin shorter than 20 µs never yields.
	sim.relaxes, sim.yields = 0, 0
	s.sleepUntilNs(sim.now() + 15_000)
	if sim.relaxes != 150 || sim.yields != 0 {
		t.Fatalf("%d relaxes, %d yields", sim.relaxes, sim.yields)
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
	// The median's bin is [53248, 57343], compensated by its middle
	// (55295): a 44705 ns wait (bucket 2, borrowing bucket 3's samples),
	// which overshoots only 50 µs: 5295 ns early.
	if want := (simWait{200_000, 244_705, 294_705, false}); sim.waits[1] != want || got != 294_705 {
		t.Fatalf("wait %v returned %d", sim.waits[1], got)
	}
	if sim.relaxes != 0 {
		t.Fatal("efficient mode spun")
	}
	if st := s.Stats(); st.Sleeps != 2 || st.Late != 0 || st.OSWaits != 2 {
		t.Fatalf("stats %+v (efficient sleeps are never counted late)", st)
	}
}

func TestAWarmedUpSleeperFinishesWithAShortSpin(t *testing.T) {
	sim := newSim(0)
	sim.defaultOvershoot = 4_000
	sim.waitCost = 2_000
	s := newSleeperOn(sim, Exact)
	// Past the young sleeper's exploration (every sleep explores until then).
	for i := 0; i < exploreYoungSleeps; i++ {
		s.Sleep(time.Millisecond)
	}
	sim.waits = nil
	relaxes := sim.relaxes
	deadline := sim.now() + 1_000_000
	woke := s.sleepUntilNs(deadline)
	// A steady 4 µs overshoot lies in the bin [3840, 4095]: one OS wait ends
	// 4095 ns before the deadline (a second wait would only add its 2 µs
	// cost), then a spin of 95 ns = one 100 ns step.
	if len(sim.waits) != 1 || deadline-sim.waits[0].target != 4_095 {
		t.Fatalf("waits %v", sim.waits)
	}
	if sim.relaxes-relaxes != 1 || woke != deadline+5 {
		t.Fatalf("%d relaxes, woke %d after the deadline", sim.relaxes-relaxes, woke-deadline)
	}
}

func TestCheapShortWaitsMakeTwoWaitPlans(t *testing.T) {
	// A quiet host: a 1 ms wait wakes up to 40 µs late, a ~50 µs one 3 µs
	// late, and a wait costs 2 µs. Waking early and taking a second short
	// wait is cheaper than spinning the long wait's tail.
	sim := newSim(0)
	sim.waitCost = 2_000
	sim.defaultOvershoot = 3_000
	s := newSleeperOn(sim, Exact)
	// Until the short waits' buckets have 199 samples together (enough to
	// set a margin at half the 1 % budget) their margin is the long
	// bucket's; each of a young sleeper's sleeps explores a two-wait plan
	// and adds one.
	for i := 0; i < exploreYoungSleeps; i++ {
		// The first (long) wait of every 10th sleep wakes 40 µs late.
		if i%10 == 9 {
			sim.overshoots = []uint64{40_000}
		}
		s.Sleep(time.Millisecond)
	}
	if !s.est.established(bucketOf(200_000), 5_000) {
		t.Fatal("the short waits' pool is not established at 0.5 %")
	}
	sim.waits = nil
	deadline := sim.now() + 1_000_000
	woke := s.sleepUntilNs(deadline)
	// The short wait's margin at half the budget: the bin of 3 µs, [2816,
	// 3071]; the long wait ends 50 µs before it, then a 71 ns spin.
	want := []simWait{
		{deadline - 1_000_000, deadline - 53_071, deadline - 50_071, false},
		{deadline - 50_071, deadline - 3_071, deadline - 71, false},
	}
	if !reflect.DeepEqual(sim.waits, want) || woke != deadline+29 {
		t.Fatalf("waits %v, woke %d after the deadline; want %v", sim.waits, int64(woke-deadline), want)
	}
}

func TestAFreshSleeperTakesTwoWaitPlansWithinItsFirstFewHundredSleeps(t *testing.T) {
	// Every OS wait wakes 3 µs late and costs 2 µs, except the long wait of
	// every 10th sleep, 40 µs late: one wait, then a 41 µs spin, meets 1 %;
	// a long wait and a short one ending 3 µs before the deadline is
	// cheaper, once the short wait's bucket can be trusted at 0.5 %.
	sim := newSim(0)
	sim.waitCost = 2_000
	sim.defaultOvershoot = 3_000
	s := newSleeperOn(sim, Exact)
	lastOther := 0
	for i := 1; i <= 400; i++ {
		if i%10 == 0 {
			sim.overshoots = []uint64{40_000}
		}
		sim.waits = nil
		deadline := sim.now() + 1_000_000
		s.sleepUntilNs(deadline)
		// The sleeps whose long wait woke 40 µs late plan their short wait
		// from a shorter bucket: left out.
		if i%10 != 0 && (len(sim.waits) != 2 || deadline-sim.waits[1].target != 3_071) {
			lastOther = i
		}
	}
	// The young sleeper explores on every sleep; each short wait adds a
	// sample to its bucket, and a pool of neighbouring short buckets is
	// trusted at 0.5 % once it holds 199 samples together (the largest is
	// then the margin). After sleep 221, every sleep is a two-wait plan
	// whose short wait ends at the learned 3 µs margin's bin edge, 3 071 ns
	// before the deadline.
	if lastOther != 221 {
		t.Fatalf("the last sleep without the learned two-wait plan is %d, want 221", lastOther)
	}
	if !s.est.established(bucketOf(200_000), 5_000) {
		t.Fatal("the short waits' pool is not established at 0.5 %")
	}
}

func TestAYoungSleeperExploresEverySleepThenEveryEighth(t *testing.T) {
	for seq := uint64(1); seq <= exploreYoungSleeps; seq++ {
		if !explores(seq) {
			t.Fatalf("sleep %d does not explore", seq)
		}
	}
	var later []uint64
	for q := uint64(exploreYoungSleeps + 1); q <= exploreYoungSleeps+3*exploreEvery; q++ {
		if explores(q) {
			later = append(later, q)
		}
	}
	if !reflect.DeepEqual(later, []uint64{264, 272, 280}) {
		t.Fatalf("after the young sleeps, sleeps %v explore", later)
	}
}

func TestSleepsOnUnestablishedMarginsAreCountedUnproven(t *testing.T) {
	sim := newSim(0)
	sim.waitCost = 2_000
	sim.defaultOvershoot = 3_000
	s := newSleeperOn(sim, Exact)
	s.SetTailTarget(TailStrict)
	// At 0.1 % a margin needs 999 samples ((999 + 1) · 0.1 % = 1).
	k := uint64(0)
	for !s.est.established(bucketOf(990_000), 1_000) {
		s.Sleep(time.Millisecond)
		k++
	}
	// The long waits' bucket (6) is too long to pool: it gains one sample a
	// sleep and is established at 0.1 % with its 999th. Every sleep planned
	// before that is unproven; none after it.
	if st := s.Stats(); k != 999 || st.UnprovenSleeps != k {
		t.Fatalf("%d sleeps to establish the long waits, %d unproven", k, st.UnprovenSleeps)
	}
	// Later, only a sleep that explores a young short bucket's two-wait
	// plan (every 8th) rests on an unproven margin.
	for i := 0; i < 16; i++ {
		s.Sleep(time.Millisecond)
	}
	explored := uint64(0)
	for q := k + 1; q <= k+16; q++ {
		if explores(q) {
			explored++
		}
	}
	if explored != 2 {
		t.Fatalf("%d of 16 sleeps explore", explored)
	}
	if st := s.Stats(); st.UnprovenSleeps != k+explored || st.Late != 0 {
		t.Fatalf("stats %+v, want %d unproven and none late", st, k+explored)
	}
}

func TestALoneOutlierDoesNotMoveALearnedMargin(t *testing.T) {
	sim := newSim(0)
	sim.defaultOvershoot = 3_000
	s := newSleeperOn(sim, Exact)
	for i := 0; i < 400; i++ {
		s.Sleep(100 * time.Microsecond)
	}
	b := bucketOf(96_000)
	if n := s.est.liveSamples(b); n < 199 {
		t.Fatalf("%d samples of 96 µs waits", n)
	}
	normal := binHi(binOf(3_000))
	if got := s.est.margin(b, 10_000); got != normal {
		t.Fatalf("learned margin %d, want %d", got, normal)
	}
	// One 2 ms preemption: late, but the 1 % margin holds (n >= 199, so the
	// margin is the 2nd largest sample or below).
	sim.overshoots = []uint64{2_000_000}
	s.Sleep(100 * time.Microsecond)
	if got := s.est.margin(b, 10_000); got != normal || s.Stats().Late != 1 {
		t.Fatalf("margin %d, late %d", got, s.Stats().Late)
	}
	// At 0.1 % it is the margin until window more waits of its length pushed
	// it out (plus half of it: the view is too young for 0.1 %).
	if got := s.est.margin(b, 1_000); got != young(binHi(binOf(2_000_000))) {
		t.Fatalf("0.1 %% margin %d", got)
	}
}

func TestAMarginLargerThanTheWaitDoesNotSpinForever(t *testing.T) {
	// Heavy overshoot while waits are short: the first sleeps must learn,
	// then OS-wait again once the horizon passes, not spin indefinitely.
	sim := newSim(0)
	sim.defaultOvershoot = 80_000
	s := newSleeperOn(sim, Exact)
	s.Sleep(time.Millisecond)
	sim.defaultOvershoot = 2_000
	seen := 0
	for i := 0; i < 2*horizon; i++ {
		sim.waits = nil
		s.Sleep(60 * time.Microsecond)
		seen += len(sim.waits)
	}
	if seen == 0 {
		t.Fatal("never dared an OS wait again")
	}
	if got := s.est.margin(bucketOf(50_000), 10_000); got != binHi(binOf(2_000)) {
		t.Fatalf("margin %d", got)
	}
}

func TestAStricterTargetBuysItsTailWithASecondWaitOrALongerSpin(t *testing.T) {
	run := func(target TailTarget) []uint64 {
		sim := newSim(0)
		sim.waitCost = 20_000
		s := newSleeperOn(sim, Exact)
		s.SetTailTarget(target)
		// 2 % of wakes are 60 µs late, the rest 26 µs.
		for i := 0; i < 500; i++ {
			sim.defaultOvershoot = 26_000
			if i%50 == 49 {
				sim.defaultOvershoot = 60_000
			}
			s.Sleep(time.Millisecond)
		}
		sim.defaultOvershoot = 26_000
		sim.waits = nil
		deadline := sim.now() + 1_000_000
		s.sleepUntilNs(deadline)
		var early []uint64
		for _, w := range sim.waits {
			early = append(early, deadline-w.target)
		}
		return early
	}
	wake, tail := binHi(binOf(26_000)), binHi(binOf(60_000))
	for _, c := range []struct {
		target TailTarget
		early  []uint64
	}{
		// 5 %: one wait ending at the 26 µs bin (the 2 % of 60 µs wakes may
		// be late).
		{TailRelaxed, []uint64{wake}},
		// 1 %: the 60 µs wakes must be covered: a two-wait plan, a long
		// wait ending 76.6 µs early (the 50 µs split plus the short wait's
		// margin at 0.5 %, the 26 µs bin), then the short wait ending at
		// the 26 µs bin; a long wait woken 60 µs late leaves no room for
		// it, and spins the rest. (Before a young view's headroom the young
		// sleeper's exploring left the short waits' bucket with a 60 µs
		// wake, and the plan was one wait at the 60 µs bin, then a second
		// of the ~9 µs left.)
		{TailBalanced, []uint64{50_000 + wake, wake}},
		{TailTarget{}, []uint64{50_000 + wake, wake}}, // the zero value is TailBalanced
		// 0.1 %: 500 samples are too few for 0.1 %: one wait would end the
		// 60 µs bin plus half of it (a young view's headroom, 92 µs) early.
		// A split is cheaper: a long wait ending 111 µs early (the 50 µs
		// split plus the short wait's margin at 0.05 %, held to the long
		// waits' 60 µs bin), then the short wait ending at that bin.
		// (Before the headroom: one wait at the 60 µs bin.)
		{TailStrict, []uint64{50_000 + tail, tail}},
	} {
		if got := run(c.target); !reflect.DeepEqual(got, c.early) {
			t.Errorf("target %v: the OS waits end %v ns early, want %v", c.target, got, c.early)
		}
	}
}

func TestStatsCountSleepsLateWaitsSpinAndCPU(t *testing.T) {
	sim := newSim(0)
	sim.waitCost = 1_000
	s := newSleeperOn(sim, Exact)
	// Bootstrap: one wait to 50 µs before, woke 10 µs late; a second OS wait
	// (margin: the top of 10 µs's bin [8192, 10239] plus half of it, a
	// young view's headroom: 15 358 ns), woke 10 µs late, then a spin of
	// 5 358 ns to the deadline (the spin is counted to the deadline, before
	// the last step).
	sim.overshoots = []uint64{10_000, 10_000}
	s.sleepUntilNs(500_000)
	// Nothing was learned when the sleep was planned: unproven.
	want := SleeperStats{Sleeps: 1, OSWaits: 2, Spin: 5_358, CPUEstimate: 5_358 + 2*1_000, UnprovenSleeps: 1}
	if st := s.Stats(); st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	// An OS wait that wakes after the deadline makes a late sleep.
	sim.overshoots = []uint64{500_000}
	d := sim.now() + 300_000
	if s.sleepUntilNs(d) <= d || s.Stats().Late != 1 || s.Stats().LateShare() != 0.5 {
		t.Fatalf("stats %+v", s.Stats())
	}
	// A past deadline is no sleep.
	s.sleepUntilNs(0)
	if s.Stats().Sleeps != 2 {
		t.Fatal("a past deadline counted as a sleep")
	}
	margin := s.est.margin(bucketOf(400_000), 10_000)
	s.ResetStats()
	if s.Stats() != (SleeperStats{}) || s.Stats().LateShare() != 0 {
		t.Fatalf("after ResetStats: %+v", s.Stats())
	}
	if s.est.margin(bucketOf(400_000), 10_000) != margin || s.est.empty() {
		t.Fatal("ResetStats forgot what was learned")
	}
}

func TestTheThreadCPUClockIsReadAroundEveryEighthWait(t *testing.T) {
	sim := newSim(0)
	sim.defaultOvershoot = 3_000
	sim.waitCost = 7_000
	s := newSleeperOn(sim, Exact)
	s.Sleep(200 * time.Microsecond)
	b := bucketOf(150_000)
	if got := s.est.cost(b); got != 7_000 {
		t.Fatalf("first wait's cost %d, want 7000", got)
	}
	if sim.cpuReads != 2 || sim.locked != 0 {
		t.Fatalf("%d reads of the thread CPU clock, lock depth %d", sim.cpuReads, sim.locked)
	}
	sim.waitCost = 11_000
	// The cost is sampled around every 8th wait (the 1st, 9th, …), of
	// whatever length the plans make it: not again until the 9th.
	for s.Stats().OSWaits <= costSampleEvery {
		s.Sleep(200 * time.Microsecond)
		n := s.Stats().OSWaits
		if want := 2 * int((n+costSampleEvery-1)/costSampleEvery); sim.cpuReads != want || sim.locked != 0 {
			t.Fatalf("%d reads of the thread CPU clock after %d waits, want %d; lock depth %d", sim.cpuReads, n, want, sim.locked)
		}
		if n <= costSampleEvery && s.est.cost(b) != 7_000 {
			t.Fatalf("sampled again after %d waits", n)
		}
	}
	// The 9th wait's own bucket learned its cost: 7 000 + (11 000 - 7 000)
	// / 4 in the first wait's bucket, 11 000 in a bucket of its own.
	ninth := sim.waits[costSampleEvery]
	k := bucketOf(ninth.target - ninth.issued)
	want := uint64(11_000)
	if k == b {
		want = 8_000
	}
	if h := &s.est.buckets[k]; !h.hasCost || h.cost != want {
		t.Fatalf("the 9th wait's bucket %d learned %d (%v), want %d", k, h.cost, h.hasCost, want)
	}
}

func TestNewTailTargetRejectsWhatIsNotAShare(t *testing.T) {
	for _, share := range []float64{math.NaN(), 0, -0.01, 1, 1.5, math.Inf(1), math.Inf(-1), 1e-7, 4.9e-7, 5e-7, 9.99e-7, 0.9999996, -0.0} {
		if tt, err := NewTailTarget(share); err == nil || !errors.Is(err, ErrInvalidTailTarget) {
			t.Errorf("NewTailTarget(%v) = %v, %v; want ErrInvalidTailTarget", share, tt, err)
		}
	}
	for _, c := range []struct {
		share float64
		ppm   uint32
	}{{0.01, 10_000}, {0.05, 50_000}, {0.001, 1_000}, {1e-6, 1}, {1.4e-6, 1}, {0.999999, 999_999}, {0.0025, 2_500}} {
		tt, err := NewTailTarget(c.share)
		if err != nil || tt.PPM() != c.ppm {
			t.Errorf("NewTailTarget(%v) = %v (%d ppm), %v; want %d ppm", c.share, tt, tt.PPM(), err, c.ppm)
		}
	}
	if TailBalanced.Share() != 0.01 || TailStrict.String() != "0.1%" || TailRelaxed.PPM() != 50_000 || (TailTarget{}).String() != "1%" {
		t.Fatal("presets")
	}
}

func TestParseTailTarget(t *testing.T) {
	for in, want := range map[string]TailTarget{
		"relaxed": TailRelaxed, "Balanced": TailBalanced, "default": TailBalanced, " STRICT ": TailStrict,
		"0.01": TailBalanced, "1%": TailBalanced, "0.1 %": TailStrict, "5%": TailRelaxed,
	} {
		if got, err := ParseTailTarget(in); err != nil || got != want {
			t.Errorf("ParseTailTarget(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "NaN", "0", "1", "100%", "-1%", "0.00000001", "1e-9%", "%", "inf"} {
		if got, err := ParseTailTarget(in); !errors.Is(err, ErrInvalidTailTarget) {
			t.Errorf("ParseTailTarget(%q) = %v, %v; want ErrInvalidTailTarget", in, got, err)
		}
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
// overshoots (including huge ones), signals, spin-slot availability and
// crowds.
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
			// Sometimes a crowd: up to 64 other sleepers on 1 to 4 CPUs.
			sim.cpuCount, sim.otherSleepers = 1+rng.Intn(4), 0
			if rng.Intn(2) == 0 {
				sim.otherSleepers = rng.Intn(64)
			}
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
			if sim.spinning || sim.sleepers != 0 {
				t.Fatalf("%v sleep %d kept its spin slot (%v) or its place in the crowd count (%d)", mode, i, sim.spinning, sim.sleepers)
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
