package main

import (
	"math"
	"math/bits"
	"slices"
)

// Statistics of one cell, with the definitions of spec/bench-result.md (and
// the Rust bench's stats.rs), so every language's bench computes the same
// figures from the same samples: nearest-rank percentiles, sample standard
// deviation, a log-linear histogram with 4 significant bits per edge.

// percentilesPerMille are the reported ranks: p50, p90, p99, p99.9.
var percentilesPerMille = [4]uint64{500, 900, 990, 999}

// Stats of one cell. Errors are signed ns: the first clock reading after the
// wait minus the deadline (negative = returned early).
type Stats struct {
	Samples    uint64   `json:"samples"`
	MinNs      int64    `json:"min_ns"`
	MeanNs     float64  `json:"mean_ns"`
	StddevNs   float64  `json:"stddev_ns"`
	P50Ns      int64    `json:"p50_ns"`
	P90Ns      int64    `json:"p90_ns"`
	P99Ns      int64    `json:"p99_ns"`
	P999Ns     int64    `json:"p999_ns"`
	MaxNs      int64    `json:"max_ns"`
	Early      uint64   `json:"early"`
	CPUPercent float64  `json:"cpu_percent"`
	WallNs     uint64   `json:"wall_ns"`
	CPUNs      uint64   `json:"cpu_ns"`
	Histogram  []Bucket `json:"histogram"`
}

// Bucket holds the samples with GtNs < error <= LeNs.
type Bucket struct {
	GtNs  int64  `json:"gt_ns"`
	LeNs  int64  `json:"le_ns"`
	Count uint64 `json:"count"`
}

// percentile is the value at per-mille rank q of sorted by the nearest-rank
// method: sorted[max(ceil(q·n/1000), 1) − 1]. sorted must not be empty.
func percentile(sorted []int64, qPerMille uint64) int64 {
	n := uint64(len(sorted))
	rank := max((qPerMille*n+999)/1000, 1)
	return sorted[rank-1]
}

// statsOf computes the statistics of errors (sorted in place) measured over
// wallNs of wall time and cpuNs of thread CPU time; ok is false without samples.
func statsOf(errors []int64, wallNs, cpuNs uint64) (s Stats, ok bool) {
	if len(errors) == 0 {
		return Stats{}, false
	}
	slices.Sort(errors)
	n := len(errors)
	var sum float64
	for _, e := range errors {
		sum += float64(e)
	}
	mean := sum / float64(n)
	var stddev float64
	if n > 1 {
		var ss float64
		for _, e := range errors {
			ss += (float64(e) - mean) * (float64(e) - mean)
		}
		stddev = math.Sqrt(ss / float64(n-1))
	}
	cpuPercent := 0.0
	if wallNs > 0 {
		cpuPercent = 100 * float64(cpuNs) / float64(wallNs)
	}
	early, _ := slices.BinarySearch(errors, 0) // index of the first error >= 0
	return Stats{
		Samples:    uint64(n),
		MinNs:      errors[0],
		MeanNs:     mean,
		StddevNs:   stddev,
		P50Ns:      percentile(errors, percentilesPerMille[0]),
		P90Ns:      percentile(errors, percentilesPerMille[1]),
		P99Ns:      percentile(errors, percentilesPerMille[2]),
		P999Ns:     percentile(errors, percentilesPerMille[3]),
		MaxNs:      errors[n-1],
		Early:      uint64(early),
		CPUPercent: cpuPercent,
		WallNs:     wallNs,
		CPUNs:      cpuNs,
		Histogram:  histogram(errors),
	}, true
}

// significantBits: bucket edges keep this many significant bits, 8 buckets
// per power of two, each at most 12.5 % of its value wide.
const significantBits = 4

func lowMask(v uint64) uint64 {
	b := bits.Len64(v)
	if b <= significantBits {
		return 0
	}
	return 1<<(b-significantBits) - 1
}

func roundDownSig(v uint64) uint64 { return v &^ lowMask(v) }

func roundUpSig(v uint64) uint64 {
	mask := lowMask(v)
	if v&mask == 0 {
		return v
	}
	if v|mask == math.MaxUint64 {
		return math.MaxUint64
	}
	return (v | mask) + 1
}

func toInt64(v uint64) int64 { return int64(min(v, math.MaxInt64)) }

func abs64(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// upperEdge is the upper edge of the histogram bucket holding v: the
// smallest edge >= v. Edges are 0 and ±e for every e >= 1 with at most
// significantBits significant bits (1, 2, …, 16, 18, 20, …, 30, 32, 36, …).
func upperEdge(v int64) int64 {
	switch {
	case v == 0:
		return 0
	case v > 0:
		return toInt64(roundUpSig(uint64(v)))
	default:
		return -toInt64(roundDownSig(abs64(v)))
	}
}

// lowerEdge is the edge just below edge le (the bucket's exclusive lower edge).
func lowerEdge(le int64) int64 {
	switch {
	case le == 0:
		return -1
	case le > 0:
		return toInt64(roundDownSig(uint64(le) - 1))
	default:
		a := abs64(le)
		if a < math.MaxUint64 {
			a++
		}
		return -toInt64(roundUpSig(a))
	}
}

// histogram buckets the sorted errors on the edges of upperEdge; only
// non-empty buckets, in increasing order.
func histogram(sorted []int64) []Bucket {
	var out []Bucket
	for _, e := range sorted {
		le := upperEdge(e)
		if n := len(out); n > 0 && out[n-1].LeNs == le {
			out[n-1].Count++
			continue
		}
		out = append(out, Bucket{GtNs: lowerEdge(le), LeNs: le, Count: 1})
	}
	return out
}
