package keeptime

import "time"

// What a Sleeper has spent (spec/sleep.md, "Stats"): the counters a sleep
// updates, and the snapshot Stats returns.

// SleeperStats is what a Sleeper has spent since it was made or its stats
// were last reset (see Sleeper.Stats).
type SleeperStats struct {
	// Sleeps counts the sleeps that had to wait (deadline not yet passed).
	Sleeps uint64 `json:"sleeps"`
	// Late counts the sleeps that ended after their deadline because an OS
	// wait woke the goroutine late; a spin-finished sleep is never counted.
	Late uint64 `json:"late"`
	// OSWaits counts the OS waits issued (one resumed after a signal counts once).
	OSWaits uint64 `json:"os_waits"`
	// Spin is the time spent spinning.
	Spin time.Duration `json:"spin_ns"`
	// CPUEstimate is the estimated CPU time of the waiting: the learned cost
	// of each OS wait when it was made, plus Spin.
	CPUEstimate time.Duration `json:"cpu_estimate_ns"`
	// UnprovenSleeps counts the sleeps planned on margins not yet
	// established at their share (learned from fewer samples than the tail
	// target needs, (n + 1) · target < 1, even pooled): the target is not
	// proven for them, only the sleeper's most cautious margin (the latest
	// wake-up it has seen of that length or longer). A young sleeper at a
	// strict target has many; the late share of the other sleeps is what
	// the target governs.
	UnprovenSleeps uint64 `json:"unproven_sleeps"`
}

// LateShare is Late / Sleeps (0 before the first sleep).
func (st SleeperStats) LateShare() float64 {
	if st.Sleeps == 0 {
		return 0
	}
	return float64(st.Late) / float64(st.Sleeps)
}

// sleepStats are the counters of spec/sleep.md "Stats", in nanoseconds.
type sleepStats struct {
	sleeps, late, osWaits, spinNs, cpuEstimateNs, unprovenSleeps uint64
}

// Stats returns what this sleeper has spent since it was made or since
// ResetStats: sleeps, late sleeps, OS waits, spin time, its CPU estimate
// and the sleeps planned on unproven margins.
func (s *Sleeper) Stats() SleeperStats {
	return SleeperStats{
		Sleeps:         s.stats.sleeps,
		Late:           s.stats.late,
		OSWaits:        s.stats.osWaits,
		Spin:           durationOf(s.stats.spinNs),
		CPUEstimate:    durationOf(s.stats.cpuEstimateNs),
		UnprovenSleeps: s.stats.unprovenSleeps,
	}
}

// ResetStats starts the stats afresh; what was learned is kept.
func (s *Sleeper) ResetStats() { s.stats = sleepStats{} }

// countWait counts one OS wait of bucket b in the stats, at its learned cost.
func (s *Sleeper) countWait(b int) {
	s.stats.osWaits++
	s.stats.cpuEstimateNs = satAdd(s.stats.cpuEstimateNs, s.est.cost(b))
}

// addSpin counts a spin of ns in the stats.
func (s *Sleeper) addSpin(ns uint64) {
	s.stats.spinNs = satAdd(s.stats.spinNs, ns)
	s.stats.cpuEstimateNs = satAdd(s.stats.cpuEstimateNs, ns)
}
