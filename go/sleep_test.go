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
	// 3 µs sample's bin, 3 071 ns) early; then, with no slot, one yield of
	// 1 µs (the simulated yield step) and no pause. No wait to the deadline.
	m := binHi(binOf(3_000))
	if defaultMarginNs != 50_000 || m != 3_071 {
		t.Fatalf("default margin %d, bin edge %d", defaultMarginNs, m)
	}
	var targets []uint64
	for _, w := range sim.waits {
		targets = append(targets, w.target)
	}
	if want := []uint64{450_000, 500_000 - m}; !reflect.DeepEqual(targets, want) {
		t.Fatalf("OS wait targets %v, want %v", targets, want)
	}
	if want := 500_000 - m + 3_000 + 1_000; got != want {
		t.Fatalf("returned %d, want %d", got, want)
	}
	if sim.relaxes != 0 || sim.yields != 1 || sim.spinning {
		t.Fatalf("%d relaxes, %d yields, slot held %v", sim.relaxes, sim.yields, sim.spinning)
	}
	if st := s.Stats(); st.Late != 0 || st.Spin != time.Microsecond {
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
	for i := 0; i < 10; i++ {
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
	// A quiet host: a 1 ms wait wakes up to 40 µs late (every 10th sleep's
	// first wait), a ~50 µs one 3 µs late, and a wait costs 2 µs. Waking
	// 53 µs early and taking a second short wait is cheaper than spinning
	// the long wait's tail, but only once the short waits' bucket (2) is
	// established at the share it is planned at; until then its margin is
	// the long waits' (40959 ns at 1 % and 0.5 %), and only exploration
	// (the first plan of every 8th sleep) gives it samples.
	sim := newSim(0)
	sim.waitCost = 2_000
	sim.defaultOvershoot = 3_000
	s := newSleeperOn(sim, Exact)
	var early [][]uint64 // per sleep: how long before the deadline each wait ended
	var shortSamples []int
	for i := 0; i < 1200; i++ {
		if i%10 == 9 {
			sim.overshoots = []uint64{40_000}
		}
		shortSamples = append(shortSamples, s.est.liveSamples(2))
		sim.waits = nil
		deadline := sim.now() + 1_000_000
		woke := s.sleepUntilNs(deadline)
		if woke < deadline {
			t.Fatalf("sleep %d returned early", i)
		}
		var e []uint64
		for _, w := range sim.waits {
			e = append(e, deadline-w.target)
		}
		early = append(early, e)
	}
	for _, c := range []struct {
		sleep   int
		samples int // live samples of bucket 2 before the sleep
		early   []uint64
	}{
		// seq 864: exploring, the short wait planned at the long waits' margin.
		{863, 87, []uint64{90_959, 40_959}},
		// Young at 1 %: one wait at the long waits' margin, then a spin.
		{864, 88, []uint64{40_959}},
		// Established at 1 % (n >= 100) but not at the split's 0.5 %: one
		// wait at the long margin, then a short one-wait plan (3071 ns, the
		// bin [2816, 3071] of 3 µs).
		{1000, 114, []uint64{40_959, 3_071}},
		{1094, 199, []uint64{40_959, 3_071}},
		// n = 200 is established at 0.5 %: the two-wait plan, 50 µs + 3071.
		{1095, 200, []uint64{53_071, 3_071}},
		// The long wait woke 40 µs late: 13 µs are left, and bucket 0 (the
		// short tails of earlier such sleeps, too young at 0.5 %) answers the
		// long waits' margin, so the sleep spins.
		{1199, 294, []uint64{53_071}},
	} {
		if shortSamples[c.sleep] != c.samples || !reflect.DeepEqual(early[c.sleep], c.early) {
			t.Errorf("sleep %d (%d short samples): waits end %v ns early; want %d samples, %v",
				c.sleep, shortSamples[c.sleep], early[c.sleep], c.samples, c.early)
		}
	}
	for i := 1095; i < len(early); i++ {
		if i%10 != 9 && !reflect.DeepEqual(early[i], []uint64{53_071, 3_071}) {
			t.Errorf("sleep %d: waits end %v ns early, want the two-wait plan", i, early[i])
		}
	}
}

func TestALoneOutlierDoesNotMoveALearnedMargin(t *testing.T) {
	sim := newSim(0)
	sim.defaultOvershoot = 3_000
	s := newSleeperOn(sim, Exact)
	for i := 0; i < 200; i++ {
		s.Sleep(100 * time.Microsecond)
	}
	b := bucketOf(96_000)
	normal := binHi(binOf(3_000))
	if got := s.est.margin(b, 10_000); got != normal {
		t.Fatalf("learned margin %d, want %d", got, normal)
	}
	// One 2 ms preemption: late, but the 1 % margin holds (n >= 100, so one
	// sample may lie above it).
	sim.overshoots = []uint64{2_000_000}
	s.Sleep(100 * time.Microsecond)
	if got := s.est.margin(b, 10_000); got != normal || s.Stats().Late != 1 {
		t.Fatalf("margin %d, late %d", got, s.Stats().Late)
	}
	// At 0.1 % it counts until window more waits of its length pushed it out.
	if got := s.est.margin(b, 1_000); got != binHi(binOf(2_000_000)) {
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

func TestAStricterTargetSpinsLonger(t *testing.T) {
	run := func(target TailTarget) uint64 {
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
		return deadline - sim.waits[0].target
	}
	// 5 %: the 26 µs bin; 1 % and 0.1 %: the 60 µs bin.
	for _, c := range []struct {
		target TailTarget
		margin uint64
	}{
		{TailRelaxed, binHi(binOf(26_000))},
		{TailBalanced, binHi(binOf(60_000))},
		{TailStrict, binHi(binOf(60_000))},
		{TailTarget{}, binHi(binOf(60_000))}, // the zero value is TailBalanced
	} {
		if got := run(c.target); got != c.margin {
			t.Errorf("target %v: the OS wait ends %d ns early, want %d", c.target, got, c.margin)
		}
	}
}

func TestStatsCountSleepsLateWaitsSpinAndCPU(t *testing.T) {
	sim := newSim(0)
	sim.waitCost = 1_000
	s := newSleeperOn(sim, Exact)
	// Bootstrap: one wait to 50 µs before, woke 10 µs late; a second OS wait
	// (margin: the top of 10 µs's bin [8192, 10239]), woke 10 µs late, then
	// a spin of 239 ns to the deadline (3 steps of 100 ns, all within the
	// hand-off: the spin is counted to the deadline, before the last step).
	sim.overshoots = []uint64{10_000, 10_000}
	s.sleepUntilNs(500_000)
	want := SleeperStats{Sleeps: 1, OSWaits: 2, Spin: 239, CPUEstimate: 239 + 2*1_000}
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
	// Until the 8th wait the cost is not sampled again.
	for s.Stats().OSWaits < costSampleEvery {
		s.Sleep(200 * time.Microsecond)
		if s.Stats().OSWaits <= costSampleEvery && (s.est.cost(b) != 7_000 || sim.cpuReads != 2) {
			t.Fatalf("sampled again after %d waits", s.Stats().OSWaits)
		}
	}
	s.Sleep(200 * time.Microsecond)
	if s.est.cost(b) <= 7_000 || sim.cpuReads != 4 || sim.locked != 0 {
		t.Fatalf("9th wait: cost %d, %d reads, lock depth %d", s.est.cost(b), sim.cpuReads, sim.locked)
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
