package main

import (
	"math"
	"math/rand"
	"slices"
	"testing"
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
