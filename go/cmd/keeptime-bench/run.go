package main

import (
	"runtime"
	"time"

	keeptime "github.com/keeptime/keeptime/go"
)

// cellPlan is one method at one duration.
type cellPlan struct {
	method   method
	duration time.Duration
	warmup   uint64
	samples  uint64
	target   keeptime.TailTarget
}

// sleeperCell is a spin-finished (Exact) keeptime cell's "sleeper" field,
// as spec/bench-result.md defines it: the tail target in parts per million
// and the sleeper's stats over the measured samples (the warm-up is not
// counted), all integers.
type sleeperCell struct {
	TailTargetPpm uint32 `json:"tail_target_ppm"`
	Sleeps        uint64 `json:"sleeps"`
	Late          uint64 `json:"late"`
	OSWaits       uint64 `json:"os_waits"`
	SpinNs        uint64 `json:"spin_ns"`
	CPUEstimateNs uint64 `json:"cpu_estimate_ns"`
}

// defaultSamples: enough that p99 rests on several samples (p99.9 too below
// 5 ms), as the Rust bench's minimums.
func defaultSamples(d time.Duration) uint64 {
	switch {
	case d >= 5*time.Millisecond:
		return 200
	case d >= 500*time.Microsecond:
		return 1_000
	default:
		return 2_000
	}
}

// defaultWarmup: about 50 ms of waits, 10 to 1000 of them; for a method
// whose sleeper learns (keeptime's Exact and Efficient sleepers), about 1 s
// but at least 300 waits where they take at most 5 s, 10 to 3000, as the
// keeptime command's bench: a fresh sleeper plans on the largest wake-ups it
// has seen until it has seen a few hundred (at 1 % it sets one aside from 199)
// and spends several times its later CPU meanwhile, and the cells measure
// what it does once it has learned.
func defaultWarmup(m method, d time.Duration) uint64 {
	per := uint64(d + 60*time.Microsecond)
	if m.learns {
		floor := min(300, uint64(5*time.Second)/per)
		return min(max(uint64(time.Second)/per, floor, 10), 3_000)
	}
	return min(max(uint64(50*time.Millisecond)/per, 10), 1_000)
}

// clock is the bench's clock: Go's monotonic reading, as ns since anchor
// (time.Since reads only CLOCK_MONOTONIC, through the vDSO).
type clock struct{ anchor time.Time }

func (c clock) now() time.Duration { return time.Since(c.anchor) }

// runCell warms the method up, then measures it. The caller holds
// runtime.LockOSThread, so the thread CPU clock is the waiting thread's.
//
// One sample: read the clock (start), wait until start + d, read the clock
// again as soon as the call returns; the error is that reading minus the
// deadline. Every method is measured alike, from the caller: what a wait's
// return path costs after the deadline is part of its error. The errors go into a
// preallocated slice; nothing on the timed path allocates or prints.
func runCell(c clock, cell cellPlan) (Stats, uint64, *sleeperCell) {
	wait, sleeper := cell.method.newWaiter(cell.target)
	d := cell.duration
	sample := func() int64 {
		start := c.now()
		deadline := start + d
		wait(c.anchor.Add(deadline), d)
		return int64(c.now() - deadline)
	}
	for i := uint64(0); i < cell.warmup; i++ {
		sample()
	}
	errors := make([]int64, 0, cell.samples)
	runtime.GC() // not during the measurement, if it can be helped
	if sleeper != nil {
		sleeper.ResetStats() // what it learned stays; the stats cover the samples
	}
	cpu0, wall0 := threadCPUNs(), c.now()
	for uint64(len(errors)) < cell.samples {
		errors = append(errors, sample())
	}
	cpu, wall := threadCPUNs()-cpu0, c.now()-wall0
	s, _ := statsOf(errors, uint64(wall), cpu)
	late := lateCount(errors)
	// Only spin-finished cells carry the sleeper's account, as in the Rust
	// bench: Efficient and Spin sleepers have no tail target to account for.
	if sleeper == nil || sleeper.Mode() != keeptime.Exact {
		return s, late, nil
	}
	st := sleeper.Stats()
	return s, late, &sleeperCell{
		TailTargetPpm: sleeper.TailTarget().PPM(), Sleeps: st.Sleeps, Late: st.Late, OSWaits: st.OSWaits,
		SpinNs: uint64(st.Spin), CPUEstimateNs: uint64(st.CPUEstimate),
	}
}
