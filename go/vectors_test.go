package keeptime

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The language-neutral vectors of spec/vectors/, replayed unchanged. Numbers
// up to 2^64 - 1 appear in them, so they are decoded into uint64 fields,
// never through float64.

const vectorsDir = "../spec/vectors"

func loadVectors(t *testing.T, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatalf("reading the spec vectors: %v", err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// estimatorState is a "check" state of spec/vectors/estimator.json.
type estimatorState struct {
	Margins       [][]uint64 `json:"margins_ns"`
	Compensations []uint64   `json:"compensations_ns"`
	Costs         []uint64   `json:"costs_ns"`
	Live          []int      `json:"live"`
}

// planJSON is a plan_exact expectation: null (spin) or {wait_ns, split,
// rest_budget_ppm, proven}; every field is required.
type planJSON struct {
	WaitNs        *uint64 `json:"wait_ns"`
	Split         *bool   `json:"split"`
	RestBudgetPpm *uint64 `json:"rest_budget_ppm"`
	Proven        *bool   `json:"proven"`
}

type estimatorVectors struct {
	Constants struct {
		Buckets         uint64   `json:"BUCKETS"`
		Window          uint64   `json:"WINDOW"`
		Bins            uint64   `json:"BINS"`
		Horizon         uint64   `json:"HORIZON"`
		DefaultMarginNs uint64   `json:"DEFAULT_MARGIN_NS"`
		DefaultCostNs   uint64   `json:"DEFAULT_COST_NS"`
		CostSampleEvery uint64   `json:"COST_SAMPLE_EVERY"`
		MaxSampleNs     uint64   `json:"MAX_SAMPLE_NS"`
		MinOsWaitNs     uint64   `json:"MIN_OS_WAIT_NS"`
		SplitsNs        []uint64 `json:"SPLITS_NS"`
		// The exploration constants; pointers, so that a vector file
		// without them fails instead of reading zeros.
		ExploreEvery       *uint64 `json:"EXPLORE_EVERY"`
		ExploreYoungSleeps *uint64 `json:"EXPLORE_YOUNG_SLEEPS"`
		ExploreCostDiv     *uint64 `json:"EXPLORE_COST_DIV"`
		// The stale-profile constants (spec/estimator.md, "Loading"), as
		// pointers for the same reason.
		StaleSharePpm *uint64 `json:"STALE_SHARE_PPM"`
		StaleMin      *uint64 `json:"STALE_MIN"`
		StaleDiv      *uint64 `json:"STALE_DIV"`
		// The young view's headroom (spec/estimator.md, margin).
		YoungHeadroomDiv *uint64  `json:"YOUNG_HEADROOM_DIV"`
		CheckSharesPpm   []uint64 `json:"check_shares_ppm"`
	} `json:"constants"`
	Cases []struct {
		Name  string          `json:"name"`
		Steps []estimatorStep `json:"steps"`
		Final estimatorState  `json:"final"`
	} `json:"cases"`
}

// estimatorStep is one step of an estimator case (spec/vectors/estimator.json;
// profile.json adds begin_sleeps).
type estimatorStep struct {
	Op           string          `json:"op"`
	Count        uint64          `json:"count"`
	WaitNs       uint64          `json:"wait_ns"`
	OvershootNs  uint64          `json:"overshoot_ns"`
	OvershootsNs []uint64        `json:"overshoots_ns"`
	CPUNs        uint64          `json:"cpu_ns"`
	RemainingNs  uint64          `json:"remaining_ns"`
	BudgetPpm    uint64          `json:"budget_ppm"`
	MinSpinNs    uint64          `json:"min_spin_ns"`
	First        *bool           `json:"first"`
	Explore      *bool           `json:"explore"`
	AfterSplit   *bool           `json:"after_split"`
	ExpectWaitNs *uint64         `json:"expect_wait_ns"`
	Expect       json.RawMessage `json:"expect"`
}

func stateOf(e *estimator, shares []uint64) estimatorState {
	var st estimatorState
	for _, p := range shares {
		var m []uint64
		for b := 0; b < buckets; b++ {
			m = append(m, e.margin(b, p))
		}
		st.Margins = append(st.Margins, m)
	}
	for b := 0; b < buckets; b++ {
		st.Compensations = append(st.Compensations, e.compensation(b))
		st.Costs = append(st.Costs, e.cost(b))
		st.Live = append(st.Live, e.liveSamples(b))
	}
	return st
}

func TestEstimatorVectors(t *testing.T) {
	var v estimatorVectors
	loadVectors(t, "estimator.json", &v)
	k := v.Constants
	got := []uint64{k.Buckets, k.Window, k.Bins, k.Horizon, k.DefaultMarginNs, k.DefaultCostNs, k.CostSampleEvery, k.MaxSampleNs, k.MinOsWaitNs}
	want := []uint64{buckets, window, bins, horizon, defaultMarginNs, defaultCostNs, costSampleEvery, maxSampleNs, minOsWaitNs}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(k.SplitsNs, splitsNs[:]) {
		t.Fatalf("constants: vectors %v %v, Go %v %v", got, k.SplitsNs, want, splitsNs)
	}
	if k.ExploreEvery == nil || k.ExploreYoungSleeps == nil || k.ExploreCostDiv == nil {
		t.Fatal("constants: EXPLORE_EVERY, EXPLORE_YOUNG_SLEEPS and EXPLORE_COST_DIV are required")
	}
	if got, want := [3]uint64{*k.ExploreEvery, *k.ExploreYoungSleeps, *k.ExploreCostDiv}, [3]uint64{exploreEvery, exploreYoungSleeps, exploreCostDiv}; got != want {
		t.Fatalf("constants: vectors EXPLORE_EVERY, EXPLORE_YOUNG_SLEEPS, EXPLORE_COST_DIV %v, Go %v", got, want)
	}
	if k.StaleSharePpm == nil || k.StaleMin == nil || k.StaleDiv == nil {
		t.Fatal("constants: STALE_SHARE_PPM, STALE_MIN and STALE_DIV are required")
	}
	if got, want := [3]uint64{*k.StaleSharePpm, *k.StaleMin, *k.StaleDiv}, [3]uint64{staleSharePpm, staleMin, staleDiv}; got != want {
		t.Fatalf("constants: vectors STALE_SHARE_PPM, STALE_MIN, STALE_DIV %v, Go %v", got, want)
	}
	if k.YoungHeadroomDiv == nil {
		t.Fatal("constants: YOUNG_HEADROOM_DIV is required")
	}
	if *k.YoungHeadroomDiv != youngHeadroomDiv {
		t.Fatalf("constants: vectors YOUNG_HEADROOM_DIV %d, Go %d", *k.YoungHeadroomDiv, youngHeadroomDiv)
	}
	shares := k.CheckSharesPpm
	if len(shares) == 0 {
		t.Fatal("no check_shares_ppm")
	}
	if len(v.Cases) == 0 {
		t.Fatal("no cases")
	}
	checks, plans := 0, 0
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var e estimator
			ch, pl := replayEstimatorSteps(t, &e, c.Steps, shares)
			checks, plans = checks+ch, plans+pl
			if got := stateOf(&e, shares); !reflect.DeepEqual(got, c.Final) {
				t.Errorf("final state\n got %+v\nwant %+v", got, c.Final)
			}
		})
	}
	if checks == 0 || plans == 0 {
		t.Fatalf("vectors replayed %d checks and %d plans", checks, plans)
	}
}

// replayEstimatorSteps runs the steps of an estimator case on e, checking
// every check and plan; it returns how many checks and plans it compared.
func replayEstimatorSteps(t *testing.T, e *estimator, steps []estimatorStep, shares []uint64) (checks, plans int) {
	t.Helper()
	for i, st := range steps {
		switch st.Op {
		case "begin_sleep":
			e.beginSleep()
		case "begin_sleeps":
			for k := uint64(0); k < st.Count; k++ {
				e.beginSleep()
			}
		case "observe":
			e.observe(st.WaitNs, st.OvershootNs)
		case "observe_each":
			for _, o := range st.OvershootsNs {
				e.observe(st.WaitNs, o)
			}
		case "observe_cost":
			e.observeCost(st.WaitNs, st.CPUNs)
		case "check":
			var want estimatorState
			if err := json.Unmarshal(st.Expect, &want); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if got := stateOf(e, shares); !reflect.DeepEqual(got, want) {
				t.Errorf("step %d state\n got %+v\nwant %+v", i, got, want)
			}
			checks++
		case "plan_exact":
			var want *planJSON
			if err := json.Unmarshal(st.Expect, &want); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if st.First == nil || st.Explore == nil || st.AfterSplit == nil {
				t.Fatalf("step %d: plan_exact without first, explore and after_split", i)
			}
			if want != nil && (want.WaitNs == nil || want.Split == nil || want.RestBudgetPpm == nil || want.Proven == nil) {
				t.Fatalf("step %d: plan_exact expect without wait_ns, split, rest_budget_ppm and proven", i)
			}
			step := planStep{first: *st.First, explore: *st.Explore, afterSplit: *st.AfterSplit}
			p, ok := planExact(e, st.RemainingNs, st.BudgetPpm, st.MinSpinNs, step)
			if ok != (want != nil) || ok && (p != osWaitPlan{*want.WaitNs, *want.Split, *want.RestBudgetPpm, *want.Proven}) {
				t.Errorf("step %d plan_exact(%d, %d ppm, %d, %+v) = %+v, %v; want %s",
					i, st.RemainingNs, st.BudgetPpm, st.MinSpinNs, step, p, ok, st.Expect)
			}
			plans++
		case "plan_efficient":
			w, ok := planEfficient(e, st.RemainingNs)
			if ok != (st.ExpectWaitNs != nil) || ok && w != *st.ExpectWaitNs {
				t.Errorf("step %d plan_efficient(%d) = %d, %v; want %v", i, st.RemainingNs, w, ok, fmtPtr(st.ExpectWaitNs))
			}
			plans++
		default:
			t.Fatalf("step %d: unknown op %q", i, st.Op)
		}
	}
	return checks, plans
}

func fmtPtr(p *uint64) any {
	if p == nil {
		return "none"
	}
	return *p
}

// waitRow decodes [issued_ns, target_ns, woke_ns, interrupted].
type waitRow simWait

func (w *waitRow) UnmarshalJSON(b []byte) error {
	var raw [4]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for i, dst := range []any{&w.issued, &w.target, &w.woke, &w.interrupted} {
		if err := json.Unmarshal(raw[i], dst); err != nil {
			return err
		}
	}
	return nil
}

func TestSleepVectors(t *testing.T) {
	var v struct {
		Cases []struct {
			Name             string `json:"name"`
			Mode             string `json:"mode"`
			StartNs          uint64 `json:"start_ns"`
			SpinStepNs       uint64 `json:"spin_step_ns"`
			YieldStepNs      uint64 `json:"yield_step_ns"`
			DefaultOvershoot uint64 `json:"default_overshoot_ns"`
			MinSpinNs        uint64 `json:"min_spin_ns"`
			WaitCostNs       uint64 `json:"wait_cost_ns"`
			TailTargetPpm    uint64 `json:"tail_target_ppm"`
			// CPUs (default 1) and OtherSleepers (default 0): the
			// simulated platform's cpus() and the sleepers of other
			// threads its enterSleep() counts.
			CPUs          *uint64 `json:"cpus"`
			OtherSleepers *uint64 `json:"other_sleepers"`
			Sleeps        []struct {
				AtNs          uint64   `json:"at_ns"`
				DeadlineNs    uint64   `json:"deadline_ns"`
				Overshoots    []uint64 `json:"overshoots_ns"`
				Interrupts    []uint64 `json:"interrupts_after_ns"`
				SpinSlotsFree bool     `json:"spin_slots_free"`
				Expect        struct {
					ReturnedNs uint64    `json:"returned_ns"`
					Waits      []waitRow `json:"waits"`
					Stats      struct {
						Sleeps        uint64 `json:"sleeps"`
						Late          uint64 `json:"late"`
						OSWaits       uint64 `json:"os_waits"`
						SpinNs        uint64 `json:"spin_ns"`
						CPUEstimateNs uint64 `json:"cpu_estimate_ns"`
						// Required: a pointer, so that its absence fails.
						UnprovenSleeps *uint64 `json:"unproven_sleeps"`
					} `json:"stats"`
				} `json:"expect"`
			} `json:"sleeps"`
		} `json:"cases"`
	}
	loadVectors(t, "sleep.json", &v)
	if len(v.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			mode, err := ParseMode(c.Mode)
			if err != nil {
				t.Fatal(err)
			}
			sim := newSim(c.StartNs)
			sim.spinStep, sim.yieldStep, sim.defaultOvershoot = c.SpinStepNs, c.YieldStepNs, c.DefaultOvershoot
			sim.waitCost = c.WaitCostNs
			sim.cpuCount, sim.otherSleepers = 1, 0
			if c.CPUs != nil {
				if *c.CPUs < 1 || *c.CPUs > math.MaxInt32 {
					t.Fatalf("cpus %d out of range", *c.CPUs)
				}
				sim.cpuCount = int(*c.CPUs)
			}
			if c.OtherSleepers != nil {
				if *c.OtherSleepers > math.MaxInt32 {
					t.Fatalf("other_sleepers %d out of range", *c.OtherSleepers)
				}
				sim.otherSleepers = int(*c.OtherSleepers)
			}
			s := newSleeperOn(sim, mode)
			s.minSpinNs = c.MinSpinNs
			if c.TailTargetPpm < 1 || c.TailTargetPpm > 999_999 {
				t.Fatalf("tail_target_ppm %d out of range", c.TailTargetPpm)
			}
			s.SetTailTarget(TailTarget{ppm: uint32(c.TailTargetPpm)})
			for i, sp := range c.Sleeps {
				sim.advanceTo(sp.AtNs)
				sim.overshoots = append(sim.overshoots, sp.Overshoots...)
				sim.interrupts = append(sim.interrupts, sp.Interrupts...)
				sim.slotsFree = sp.SpinSlotsFree
				sim.waits = nil
				got := s.sleepUntilNs(sp.DeadlineNs)
				if got != sp.Expect.ReturnedNs {
					t.Errorf("sleep %d returned %d, want %d", i, got, sp.Expect.ReturnedNs)
				}
				want := make([]simWait, len(sp.Expect.Waits))
				for j, w := range sp.Expect.Waits {
					want[j] = simWait(w)
				}
				if len(sim.waits) != len(want) || len(want) > 0 && !reflect.DeepEqual(sim.waits, want) {
					t.Errorf("sleep %d waits\n got %v\nwant %v", i, sim.waits, want)
				}
				x := sp.Expect.Stats
				if x.UnprovenSleeps == nil {
					t.Fatalf("sleep %d: stats without unproven_sleeps", i)
				}
				if st := s.stats; st != (sleepStats{x.Sleeps, x.Late, x.OSWaits, x.SpinNs, x.CPUEstimateNs, *x.UnprovenSleeps}) {
					t.Errorf("sleep %d stats %+v, want %+v (unproven %d)", i, st, x, *x.UnprovenSleeps)
				}
				if sim.locked != 0 {
					t.Errorf("sleep %d left the thread locked (%d)", i, sim.locked)
				}
				if mode != Efficient && got < sp.DeadlineNs {
					t.Errorf("sleep %d returned early: %d < %d", i, got, sp.DeadlineNs)
				}
				if sim.spinning {
					t.Errorf("sleep %d kept its spin slot", i)
				}
				if sim.sleepers != 0 {
					t.Errorf("sleep %d left %d sleepers in the crowd count", i, sim.sleepers)
				}
			}
		})
	}
}

func TestTickerVectors(t *testing.T) {
	var v struct {
		Cases []struct {
			Name     string `json:"name"`
			StartNs  uint64 `json:"start_ns"`
			PeriodNs uint64 `json:"period_ns"`
			Policy   string `json:"policy"`
			Steps    []struct {
				TickAt      *uint64 `json:"tick_at"`
				WakeNs      uint64  `json:"wake_ns"`
				ResetAt     *uint64 `json:"reset_at"`
				SetPeriod   *uint64 `json:"set_period"`
				ExpectError bool    `json:"expect_error"`
				Expect      *struct {
					WaitUntilNs *uint64 `json:"wait_until_ns"`
					Index       uint64  `json:"index"`
					ScheduledNs uint64  `json:"scheduled_ns"`
					LatenessNs  uint64  `json:"lateness_ns"`
					Skipped     uint64  `json:"skipped"`
				} `json:"expect"`
				ExpectStats *struct {
					Ticks           uint64 `json:"ticks"`
					Missed          uint64 `json:"missed"`
					Skipped         uint64 `json:"skipped"`
					WorstLatenessNs uint64 `json:"worst_lateness_ns"`
				} `json:"expect_stats"`
			} `json:"steps"`
		} `json:"cases"`
	}
	loadVectors(t, "ticker.json", &v)
	if len(v.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			policy, err := ParseMissedTicks(c.Policy)
			if err != nil {
				t.Fatal(err)
			}
			sch := newSchedule(c.StartNs, c.PeriodNs, policy)
			for i, st := range c.Steps {
				switch {
				case st.TickAt != nil:
					x := st.Expect
					tk, deadline, wait := sch.poll(*st.TickAt)
					if wait != (x.WaitUntilNs != nil) || wait && deadline != *x.WaitUntilNs {
						t.Fatalf("step %d: wait %v until %d; want %v", i, wait, deadline, fmtPtr(x.WaitUntilNs))
					}
					if wait {
						tk = sch.woke(st.WakeNs)
					}
					want := tickNs{x.Index, x.ScheduledNs, x.LatenessNs, x.Skipped}
					if tk != want {
						t.Errorf("step %d: tick %+v, want %+v", i, tk, want)
					}
				case st.ResetAt != nil:
					sch.reset(*st.ResetAt)
				case st.SetPeriod != nil:
					if ok := sch.setPeriod(*st.SetPeriod); ok == st.ExpectError {
						t.Errorf("step %d: setPeriod(%d) ok=%v, want error=%v", i, *st.SetPeriod, ok, st.ExpectError)
					}
				case st.ExpectStats != nil:
					x := st.ExpectStats
					want := scheduleStats{x.Ticks, x.Missed, x.Skipped, x.WorstLatenessNs}
					if sch.stats != want {
						t.Errorf("step %d: stats %+v, want %+v", i, sch.stats, want)
					}
				default:
					t.Fatalf("step %d: unknown step", i)
				}
			}
		})
	}
}
