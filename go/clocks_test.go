package keeptime

import (
	"encoding/json"
	"runtime"
	"testing"
)

func TestInspectClocksReportsEveryClock(t *testing.T) {
	r, err := InspectClocks()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"time.Now", "time.Since"}
	if hasAbsoluteWait { // the Linux back end (not the fallback)
		names = append(names, "MONOTONIC", "MONOTONIC_RAW", "MONOTONIC_COARSE", "REALTIME", "BOOTTIME")
	}
	for _, n := range names {
		c, ok := r.Clock(n)
		if !ok {
			t.Fatalf("no entry for %s", n)
		}
		if !c.Available || c.Samples == 0 || c.ReadCostNs <= 0 {
			t.Errorf("%s: %+v", n, c)
		}
		if n != "REALTIME" && c.MonotonicViolations != 0 {
			t.Errorf("%s went backwards %d times", n, c.MonotonicViolations)
		}
	}
	if hasAbsoluteWait { // the Linux back end (not the fallback)
		mono, _ := r.Clock("MONOTONIC")
		if mono.ResolutionNs == nil || mono.ClockID == nil || r.Machine.TimerSlackNs == nil || !r.Machine.AbsoluteWait {
			t.Errorf("missing Linux details: %+v %+v", mono, r.Machine)
		}
	}
	if il := r.IdleLatency; (il.InForceMicros == nil) == (il.ReadError == "") || il.MayRequest == (il.RequestRefused != "") {
		t.Errorf("idle latency %+v", il)
	}
	if r.Machine.NumCPU < 1 || r.Machine.SpinSlots < 1 || r.Machine.OS != runtime.GOOS {
		t.Errorf("machine %+v", r.Machine)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || back["clocks"] == nil || back["machine"] == nil || back["idle_latency"] == nil {
		t.Fatalf("JSON %s: %v", b, err)
	}
}

func TestStepCounter(t *testing.T) {
	var s stepCounter
	for _, v := range []uint64{100, 125, 125, 149, 140, 175} {
		s.push(v)
	}
	if s.pairs != 5 || s.repeats != 1 || s.steps != 3 || s.violations != 1 || s.minStep != 24 {
		t.Fatalf("%+v", s)
	}
	if s.repeatFraction() != 0.2 {
		t.Fatal(s.repeatFraction())
	}
	if median([]float64{3, 1, 2}) != 2 || median([]float64{4, 1, 3, 2}) != 2.5 || median(nil) != 0 {
		t.Fatal("median")
	}
}
