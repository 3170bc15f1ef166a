package main

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	keeptime "github.com/keeptime/keeptime/go"
)

func TestNearestRank(t *testing.T) {
	v := make([]int64, 1000)
	for i := range v {
		v[i] = int64(i + 1)
	}
	if percentile(v, 500) != 500 || percentile(v, 990) != 990 || percentile(v, 999) != 999 {
		t.Fatal("1..1000")
	}
	if percentile(v[:20], 500) != 10 || percentile(v[:20], 990) != 20 {
		t.Fatal("1..20")
	}
	if percentile([]int64{7}, 999) != 7 || percentile([]int64{7}, 0) != 7 {
		t.Fatal("one sample")
	}
}

func TestStatsOfKnownSamples(t *testing.T) {
	s, ok := statsOf([]int64{3, -1, 2, 10, 1}, 1_000, 250)
	if !ok || s.Samples != 5 || s.MinNs != -1 || s.P50Ns != 2 || s.MaxNs != 10 || s.Early != 1 || s.MeanNs != 3 {
		t.Fatalf("%+v", s)
	}
	if math.Abs(s.StddevNs-math.Sqrt(70.0/4)) > 1e-9 || s.CPUPercent != 25 {
		t.Fatalf("%+v", s)
	}
	var n uint64
	for _, b := range s.Histogram {
		n += b.Count
	}
	if n != 5 {
		t.Fatal("histogram count")
	}
	if _, ok := statsOf(nil, 1, 1); ok {
		t.Fatal("stats of nothing")
	}
}

func TestHistogramEdges(t *testing.T) {
	var pos []int64
	for v := int64(1); v <= 40; v++ {
		if upperEdge(v) == v {
			pos = append(pos, v)
		}
	}
	want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 26, 28, 30, 32, 36, 40}
	if !slices.Equal(pos, want) {
		t.Fatalf("edges %v", pos)
	}
	for _, c := range [][2]int64{{upperEdge(17), 18}, {upperEdge(-17), -16}, {lowerEdge(18), 16}, {lowerEdge(-16), -18},
		{lowerEdge(0), -1}, {lowerEdge(1), 0}, {lowerEdge(-1), -2}, {upperEdge(54_321), 57_344}} {
		if c[0] != c[1] {
			t.Errorf("got %d, want %d", c[0], c[1])
		}
	}
}

func TestEveryValueLiesInItsBucket(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 200_000; i++ {
		v := rng.Int63n(1<<62) >> uint(rng.Intn(62)) // the Rust proptest range: |v| < 2^62
		if rng.Intn(2) == 0 {
			v = -v
		}
		le := upperEdge(v)
		gt := lowerEdge(le)
		if !(gt < v && v <= le) || upperEdge(gt) != gt || upperEdge(gt+1) != le {
			t.Fatalf("%d in (%d, %d]", v, gt, le)
		}
	}
}

func TestPercentilesAreOrdered(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 500; i++ {
		e := make([]int64, 1+rng.Intn(500))
		for j := range e {
			e[j] = int64(int32(rng.Uint32()))
		}
		s, _ := statsOf(e, 10, 5)
		if !(s.MinNs <= s.P50Ns && s.P50Ns <= s.P90Ns && s.P90Ns <= s.P99Ns && s.P99Ns <= s.P999Ns && s.P999Ns <= s.MaxNs) {
			t.Fatalf("%+v", s)
		}
		var n uint64
		for k, b := range s.Histogram {
			n += b.Count
			if k > 0 && s.Histogram[k-1].LeNs > b.GtNs {
				t.Fatal("histogram buckets overlap")
			}
		}
		if n != s.Samples {
			t.Fatal("histogram count")
		}
	}
}

// The targets line: keeptime against the busy loop of the same run, met or
// MISSED on each of the three counts, only at the target durations.
func TestPrintTargetsComparesKeeptimeWithThePureSpin(t *testing.T) {
	cell := func(method string, d time.Duration, p50 int64, samples, late, early uint64) cellResult {
		return cellResult{Method: method, DurationNs: uint64(d), Stats: Stats{Samples: samples, P50Ns: p50, Early: early}, late: late}
	}
	results := []cellResult{
		cell("busy-loop", 100*time.Microsecond, 50, 100, 0, 0),
		cell("keeptime", 100*time.Microsecond, 900, 100, 50, 0), // not a target duration
		cell("busy-loop", time.Millisecond, 60, 1000, 1, 0),
		cell("keeptime", time.Millisecond, 210, 1000, 16, 0), // 1.6 % vs 0.1 % + 1.5: met, p50 at the limit
		cell("busy-loop", 10*time.Millisecond, 60, 200, 0, 0),
		cell("keeptime", 10*time.Millisecond, 211, 200, 4, 1), // 2 % > 1.5 %; p50 1 ns over; early
		cell("keeptime", 250*time.Microsecond, 100, 10, 0, 0), // no busy loop
	}
	var b strings.Builder
	printTargets(&b, results, keeptime.TailBalanced)
	want := "\ntargets (caller-measured; pure spin = busy-loop of this run; keeptime at tail target 1%, the targets are stated at 1%):\n" +
		"250 µs: no busy-loop row in this run to compare with (add busy-loop to --methods)\n" +
		"1ms: p50 210 ns vs spin 60 ns + 150 ns: met; > 2 µs late 1.60 % vs spin 0.10 % + 1.5 points: met; early 0: met\n" +
		"10ms: p50 211 ns vs spin 60 ns + 150 ns: MISSED; > 2 µs late 2.00 % vs spin 0.00 % + 1.5 points: MISSED; early 1: MISSED\n"
	if got := b.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if lateCount([]int64{-5, 2_000, 2_001, 50_000}) != 2 {
		t.Fatal("lateCount counts errors above 2 µs")
	}
}
