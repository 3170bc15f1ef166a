package keeptime

import (
	"encoding/json"
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

type estimatorVectors struct {
	Constants map[string]uint64 `json:"constants"`
	Cases     []struct {
		Name  string `json:"name"`
		Steps []struct {
			Op           string  `json:"op"`
			WaitNs       uint64  `json:"wait_ns"`
			OvershootNs  uint64  `json:"overshoot_ns"`
			RemainingNs  uint64  `json:"remaining_ns"`
			MinSpinNs    uint64  `json:"min_spin_ns"`
			ExpectWaitNs *uint64 `json:"expect_wait_ns"`
			Expect       *struct {
				Margins       []uint64 `json:"margins_ns"`
				Compensations []uint64 `json:"compensations_ns"`
				Live          []int    `json:"live"`
			} `json:"expect"`
		} `json:"steps"`
		Final struct {
			Margins       []uint64 `json:"margins_ns"`
			Compensations []uint64 `json:"compensations_ns"`
		} `json:"final"`
	} `json:"cases"`
}

func margins(e *estimator) (m, c []uint64, live []int) {
	for b := 0; b < buckets; b++ {
		m = append(m, e.margin(b))
		c = append(c, e.compensation(b))
		live = append(live, e.liveSamples(b))
	}
	return m, c, live
}

func TestEstimatorVectors(t *testing.T) {
	var v estimatorVectors
	loadVectors(t, "estimator.json", &v)
	want := map[string]uint64{
		"BUCKETS": buckets, "WINDOW": window, "HORIZON": horizon,
		"DEFAULT_MARGIN_NS": defaultMarginNs, "HEADROOM_NS": headroomNs,
		"MAX_SAMPLE_NS": maxSampleNs, "MIN_OS_WAIT_NS": minOsWaitNs,
		"SPLIT_NS": splitNs, "LONG_BUCKET": longBucket, "OUTLIER_SHARE": outlierShare,
	}
	for k, x := range v.Constants {
		if w, known := want[k]; !known || w != x {
			t.Errorf("constant %s: vectors %d, Go %d (known: %v)", k, x, w, known)
		}
	}
	if len(v.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var e estimator
			for i, st := range c.Steps {
				switch st.Op {
				case "begin_sleep":
					e.beginSleep()
				case "observe":
					e.observe(st.WaitNs, st.OvershootNs)
					m, comp, live := margins(&e)
					if !reflect.DeepEqual(m, st.Expect.Margins) {
						t.Errorf("step %d margins %v, want %v", i, m, st.Expect.Margins)
					}
					if !reflect.DeepEqual(comp, st.Expect.Compensations) {
						t.Errorf("step %d compensations %v, want %v", i, comp, st.Expect.Compensations)
					}
					if !reflect.DeepEqual(live, st.Expect.Live) {
						t.Errorf("step %d live %v, want %v", i, live, st.Expect.Live)
					}
				case "plan_exact", "plan_efficient":
					var w uint64
					var ok bool
					if st.Op == "plan_exact" {
						w, ok = planExact(&e, st.RemainingNs, st.MinSpinNs)
					} else {
						w, ok = planEfficient(&e, st.RemainingNs)
					}
					if ok != (st.ExpectWaitNs != nil) || ok && w != *st.ExpectWaitNs {
						t.Errorf("step %d %s(%d) = %d, %v; want %v", i, st.Op, st.RemainingNs, w, ok, fmtPtr(st.ExpectWaitNs))
					}
				default:
					t.Fatalf("step %d: unknown op %q", i, st.Op)
				}
			}
			m, comp, _ := margins(&e)
			if !reflect.DeepEqual(m, c.Final.Margins) || !reflect.DeepEqual(comp, c.Final.Compensations) {
				t.Errorf("final margins %v compensations %v; want %v %v", m, comp, c.Final.Margins, c.Final.Compensations)
			}
		})
	}
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
			Sleeps           []struct {
				AtNs          uint64   `json:"at_ns"`
				DeadlineNs    uint64   `json:"deadline_ns"`
				Overshoots    []uint64 `json:"overshoots_ns"`
				Interrupts    []uint64 `json:"interrupts_after_ns"`
				SpinSlotsFree bool     `json:"spin_slots_free"`
				Expect        struct {
					ReturnedNs uint64    `json:"returned_ns"`
					Waits      []waitRow `json:"waits"`
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
			s := newSleeperOn(sim, mode)
			s.minSpinNs = c.MinSpinNs
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
				if mode != Efficient && got < sp.DeadlineNs {
					t.Errorf("sleep %d returned early: %d < %d", i, got, sp.DeadlineNs)
				}
				if sim.spinning {
					t.Errorf("sleep %d kept its spin slot", i)
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
