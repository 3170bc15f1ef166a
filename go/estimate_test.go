package keeptime

import (
	"math"
	"testing"
)

func TestBucketsPartitionTheRange(t *testing.T) {
	for _, c := range []struct {
		wait uint64
		b    int
	}{{0, 0}, {16_383, 0}, {16_384, 1}, {32_767, 1}, {32_768, 2}, {1_000_000, 6}, {math.MaxUint64, buckets - 1}} {
		if got := bucketOf(c.wait); got != c.b {
			t.Errorf("bucketOf(%d) = %d, want %d", c.wait, got, c.b)
		}
	}
	for b := 0; b < buckets; b++ {
		if bucketOf(bucketLo(b)) != b || bucketOf(bucketHi(b)) != b {
			t.Errorf("bucket %d: lo %d or hi %d falls outside", b, bucketLo(b), bucketHi(b))
		}
		if b > 0 && bucketLo(b) != bucketHi(b-1)+1 {
			t.Errorf("bucket %d does not start where %d ends", b, b-1)
		}
	}
	if bucketHi(buckets-1) != math.MaxUint64 {
		t.Error("the last bucket is not open-ended")
	}
}

func TestASteadyOvershootCostsItsSpreadNotItsSize(t *testing.T) {
	var e estimator
	e.beginSleep()
	for i := uint64(0); i < window; i++ {
		e.observe(100_000, 54_000+(i%4)*1_000) // 54..57 µs: the default timer slack
	}
	// q = 57 µs (4th largest), lower median 55 µs: 57 + 2·2 + 1 µs.
	if got := e.margin(3); got != 62_000 {
		t.Fatalf("margin = %d, want 62000", got)
	}
}

func TestUpToThreeOutliersInAFullWindowAreIgnored(t *testing.T) {
	var e estimator
	e.beginSleep()
	for i := 0; i < window-3; i++ {
		e.observe(100_000, 4_000)
	}
	for k := uint64(1); k <= 3; k++ {
		e.observe(100_000, 2_000_000+k)
	}
	if got := e.margin(3); got != 4_000+1_000 {
		t.Fatalf("three outliers moved the margin to %d", got)
	}
	e.observe(100_000, 2_000_000) // a fourth: the window's 90th percentile moved
	if got := e.margin(3); got != 2_000_000+2*(2_000_000-4_000)+1_000 {
		t.Fatalf("margin = %d", got)
	}
}

func TestFewSamplesUseTheirMaximum(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(1_000, 7_000)
	e.observe(1_000, 3_000)
	// n = 2: q = 7 µs, lower median 3 µs.
	if got := e.margin(0); got != 7_000+2*4_000+1_000 {
		t.Fatalf("margin = %d", got)
	}
}

func TestSamplesExpireAfterHorizonSleepsEvenUnused(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(100_000, 300_000)
	for i := 0; i < horizon-1; i++ {
		e.beginSleep()
	}
	if e.liveSamples(3) != 1 {
		t.Fatal("sample expired early")
	}
	e.beginSleep()
	if e.liveSamples(3) != 0 || e.margin(3) != defaultMarginNs || e.compensation(3) != 0 {
		t.Fatal("sample outlived the horizon")
	}
}

func TestBorrowsFromShorterThenLongerBuckets(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(20_000, 8_000) // bucket 1
	if e.margin(5) != 9_000 || e.margin(0) != 9_000 || e.compensation(7) != 8_000 {
		t.Fatalf("margins %d %d compensation %d", e.margin(5), e.margin(0), e.compensation(7))
	}
	e.observe(2_000_000, 30_000) // bucket 7
	if e.margin(9) != 31_000 || e.margin(6) != 9_000 {
		t.Fatalf("bucket 9 should borrow from 7, bucket 6 from 1: %d %d", e.margin(9), e.margin(6))
	}
}

func TestMedianIsTheLowerMedian(t *testing.T) {
	var e estimator
	e.beginSleep()
	for _, x := range []uint64{5, 1, 4, 2} {
		e.observe(1_000, x)
	}
	if got := e.compensation(0); got != 2 {
		t.Fatalf("compensation = %d, want 2", got)
	}
}

func TestSamplesAreClampedAndArithmeticSaturates(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(math.MaxUint64, math.MaxUint64)
	if got := e.margin(buckets - 1); got != maxSampleNs+headroomNs {
		t.Fatalf("margin = %d", got)
	}
	if w, ok := planExact(&e, math.MaxUint64, 0); !ok || w != math.MaxUint64-(maxSampleNs+headroomNs+splitNs) {
		t.Fatalf("planExact(max) = %d %v", w, ok)
	}
	if satAdd(math.MaxUint64, 1) != math.MaxUint64 || satSub(1, 2) != 0 || satMul(1<<40, 1<<40) != math.MaxUint64 {
		t.Fatal("saturating arithmetic wraps")
	}
}

func TestPlansOnAFreshEstimator(t *testing.T) {
	var e estimator
	for _, c := range []struct {
		rem, wait uint64
		ok        bool
	}{
		{4_000, 0, false},             // below minOsWaitNs: spin
		{10_000, 0, false},            // default margin 50 µs does not fit
		{60_000, 10_000, true},        // 60 µs - 50 µs
		{1_000_000, 750_000, true},    // long: margin + split
		{10_000_000, 9_750_000, true}, // long
	} {
		w, ok := planExact(&e, c.rem, 0)
		if w != c.wait || ok != c.ok {
			t.Errorf("planExact(%d) = %d %v, want %d %v", c.rem, w, ok, c.wait, c.ok)
		}
	}
	if w, ok := planEfficient(&e, 1_000_000); !ok || w != 1_000_000 {
		t.Errorf("planEfficient with nothing learned = %d %v, want the whole wait", w, ok)
	}
	if _, ok := planEfficient(&e, 0); ok {
		t.Error("planEfficient(0) planned a wait")
	}
}
