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

func TestUpToThreeOutliersAreIgnoredAFourthIsFollowed(t *testing.T) {
	var e estimator
	for i := 0; i < 10; i++ {
		e.beginSleep()
		e.observe(100_000, 4_000)
	}
	for k := uint64(1); k <= 3; k++ {
		e.observe(100_000, 2_000_000+k)
		if got := e.margin(3); got != 2*4_000+1_000 {
			t.Fatalf("after %d outliers margin = %d, want 9000", k, got)
		}
	}
	e.observe(100_000, 2_000_000)
	if got := e.margin(3); got != 2*2_000_000+1_000 {
		t.Fatalf("after 4 outliers margin = %d", got)
	}
	for i := 0; i < window; i++ {
		e.beginSleep()
		e.observe(100_000, 5_000)
	}
	if got := e.margin(3); got != 2*5_000+1_000 {
		t.Fatalf("outliers did not leave the window: margin = %d", got)
	}
}

func TestQuantileOfFewSamplesIsTheSmallest(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(1_000, 7_000)
	e.observe(1_000, 3_000)
	if got := e.margin(0); got != 2*3_000+1_000 {
		t.Fatalf("margin = %d", got)
	}
	for _, x := range []uint64{9_000, 8_000, 1_000, 2_000} {
		e.observe(1_000, x)
	}
	// Descending: 9000 8000 7000 3000 2000 1000; the 4th is 3000.
	if got := e.margin(0); got != 2*3_000+1_000 {
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
	if e.margin(5) != 17_000 || e.margin(0) != 17_000 || e.compensation(7) != 8_000 {
		t.Fatalf("margins %d %d compensation %d", e.margin(5), e.margin(0), e.compensation(7))
	}
	e.observe(2_000_000, 30_000) // bucket 7
	if e.margin(9) != 61_000 || e.margin(6) != 17_000 {
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
	if got := e.margin(buckets - 1); got != 2*maxSampleNs+headroomNs {
		t.Fatalf("margin = %d", got)
	}
	if w, ok := planExact(&e, math.MaxUint64); !ok || w != math.MaxUint64-(2*maxSampleNs+headroomNs+splitNs) {
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
		w, ok := planExact(&e, c.rem)
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
