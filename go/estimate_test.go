package keeptime

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The estimator's pieces on their own; spec/vectors/estimator.json
// (vectors_test.go) pins the whole.

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
			t.Errorf("bucket %d: [%d, %d] not its own", b, bucketLo(b), bucketHi(b))
		}
	}
}

func TestBinsPartitionTheSampleRange(t *testing.T) {
	for _, c := range []struct {
		ns  uint64
		bin int
	}{{0, 0}, {1023, 0}, {1024, 1}, {1152, 2}, {2047, 8}, {2048, 9}, {4000, 16}, {55_000, 46}, {maxSampleNs, bins - 2}, {1_006_632_960, bins - 1}} {
		if got := binOf(c.ns); got != c.bin {
			t.Errorf("binOf(%d) = %d, want %d", c.ns, got, c.bin)
		}
	}
	if binHi(1) != 1151 || binLo(16) != 3_840 || binHi(16) != 4_095 || binLo(46) != 53_248 || binHi(46) != 57_343 ||
		binLo(bins-2) != 939_524_096 || binHi(bins-2) != 1_006_632_959 || binHi(bins-1) != 1_073_741_823 {
		t.Fatal("bin edges differ from spec/estimator.md's examples")
	}
	for i := 0; i < bins; i++ {
		if binOf(binLo(i)) != i || binOf(binHi(i)) != i {
			t.Errorf("bin %d: [%d, %d] not its own", i, binLo(i), binHi(i))
		}
		if i > 0 && (binLo(i) != binHi(i-1)+1 || (binHi(i)-binLo(i)+1)*8 > binLo(i)) {
			t.Errorf("bin %d: not contiguous or wider than 12.5 %%", i)
		}
	}
}

func TestMarginIsTheBinAboveTheAllowedTail(t *testing.T) {
	var e estimator
	e.beginSleep()
	for i := 0; i < 198; i++ {
		e.observe(100_000, 4_000) // bin [3840, 4095]
	}
	e.observe(100_000, 2_000_000)
	// n = 199: at 1 % the margin is the 2nd largest sample's bin
	// (floor(200 · 1 %) = 2), the outlier lies above it.
	if got := e.margin(3, 10_000); got != 4_095 || binHi(binOf(4_000)) != 4_095 {
		t.Errorf("margin at 1 %% = %d, want 4095", got)
	}
	// At 0.5 %: the largest (floor(200 · 0.5 %) = 1), the outlier.
	if got := e.margin(3, 5_000); got != binHi(binOf(2_000_000)) {
		t.Errorf("margin at 0.5 %% = %d, want %d", got, binHi(binOf(2_000_000)))
	}
	// At 1 % with one sample fewer, too: floor(199 · 1 %) = 1.
	var y estimator
	y.beginSleep()
	for i := 0; i < 197; i++ {
		y.observe(100_000, 4_000)
	}
	y.observe(100_000, 2_000_000)
	if got := y.margin(3, 10_000); got != binHi(binOf(2_000_000)) {
		t.Errorf("margin at 1 %% of 198 samples = %d, want %d", got, binHi(binOf(2_000_000)))
	}
	// Shares above 100 % count as 100 %: every sample may be later.
	if got := e.margin(3, 5*ppm); got != binHi(0) {
		t.Errorf("margin at 500 %% = %d", got)
	}
}

func TestAYoungBucketIsAnsweredByItsPooledNeighbours(t *testing.T) {
	var e estimator
	e.beginSleep()
	for i := 0; i < 150; i++ {
		e.observe(50_000, 3_000) // bucket 2, bin [2816, 3071]
	}
	for i := 0; i < 60; i++ {
		e.observe(100_000, 5_000) // bucket 3, bin [4608, 5119]
	}
	// At 1 % bucket 3's own 60 samples cannot place a margin; with bucket
	// 2's 150 the pool of buckets 2-4 has 210, and its quantile is bucket
	// 3's samples' bin (the 2nd largest of 210).
	if n, ok := e.samples(3, 10_000), e.established(3, 10_000); n != 210 || !ok {
		t.Fatalf("bucket 3 at 1 %%: %d samples, established %v", n, ok)
	}
	if got := e.margin(3, 10_000); got != binHi(binOf(5_000)) {
		t.Fatalf("margin(3, 1 %%) = %d", got)
	}
	// Bucket 4 borrows bucket 3's samples and pools with bucket 3 alone
	// (bucket 5 is not live): 60, not established.
	if n, ok := e.samples(4, 10_000), e.established(4, 10_000); n != 60 || ok {
		t.Fatalf("bucket 4 at 1 %%: %d samples, established %v", n, ok)
	}
	// At 0.1 % 210 samples are too few even pooled: not established, the
	// margin is their maximum plus half of it (a young view's headroom).
	if e.established(3, 1_000) || e.margin(3, 1_000) != binHi(binOf(5_000))*3/2 {
		t.Fatalf("bucket 3 at 0.1 %%: established %v, margin %d", e.established(3, 1_000), e.margin(3, 1_000))
	}
	// Bucket 2 has enough of its own at 1 %: its own samples answer.
	if n, m := e.samples(2, 10_000), e.margin(2, 10_000); n != 150 || m != binHi(binOf(3_000)) {
		t.Fatalf("bucket 2 at 1 %%: %d samples, margin %d", n, m)
	}
	// Bucket 1 has no live sample: it borrows bucket 2's 150, enough at
	// 5 % on their own.
	if n, ok := e.samples(1, 50_000), e.established(1, 50_000); n != 150 || !ok {
		t.Fatalf("bucket 1 at 5 %%: %d samples, established %v", n, ok)
	}
	// A long bucket with no live neighbour borrows from its source alone,
	// never pooled.
	if n, ok := e.samples(8, 10_000), e.established(8, 10_000); n != 60 || ok {
		t.Fatalf("bucket 8 at 1 %%: %d samples, established %v", n, ok)
	}
	// Nothing live: no samples.
	var fresh estimator
	if fresh.samples(3, 10_000) != 0 || fresh.established(3, 10_000) {
		t.Fatal("a fresh estimator has samples")
	}
}

func TestAPoolNeverAnswersBelowItsSourcesOwnSamples(t *testing.T) {
	var e estimator
	e.beginSleep()
	for i := 0; i < 150; i++ {
		e.observe(50_000, 2_000) // bucket 2, bin [1920, 2047]
	}
	for i := 0; i < 60; i++ {
		e.observe(100_000, 9_000) // bucket 3, bin [8192, 9215]
	}
	e.observe(100_000, 30_000) // bucket 3, bin [28672, 30719]
	// At 1 % the pool of buckets 2-4 (211 samples, k = 2) answers the 2nd
	// largest, in bin [8192, 9215]; bucket 3's own 61 samples (k = 0) answer
	// their largest, 30 719: the margin is that.
	pool := view{members: [3]int{2, 3}, len: 2, n: 211}
	if q := e.quantile(&pool, 10_000); q != binHi(binOf(9_000)) {
		t.Fatalf("the pool's own quantile %d", q)
	}
	if got := e.margin(3, 10_000); !e.established(3, 10_000) || got != binHi(binOf(30_000)) {
		t.Fatalf("margin(3, 1 %%) = %d, established %v", got, e.established(3, 10_000))
	}
}

func TestOneOutlierLeavesAfterWindowObservations(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(100_000, 900_000)
	for i := 0; i < window-1; i++ {
		e.observe(100_000, 3_000)
	}
	// At share 0 every view is young: its largest, plus the headroom.
	if got := e.margin(3, 0); got != young(binHi(binOf(900_000))) {
		t.Fatalf("with the outlier in the window: %d", got)
	}
	e.observe(100_000, 3_000)
	if got := e.margin(3, 0); got != young(binHi(binOf(3_000))) {
		t.Fatalf("after %d more observations: %d", window, got)
	}
	if e.liveSamples(3) != window {
		t.Fatal("the window is not full")
	}
}

func TestUnusedBucketsAreForgottenAfterHorizonSleeps(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(100_000, 300_000)
	for i := 0; i < horizon-1; i++ {
		e.beginSleep()
	}
	if e.liveSamples(3) != 1 {
		t.Fatal("forgotten too early")
	}
	e.beginSleep()
	if e.liveSamples(3) != 0 || e.margin(3, 10_000) != defaultMarginNs || !e.empty() {
		t.Fatal("not forgotten after horizon sleeps")
	}
	e.observe(100_000, 5_000) // starts afresh
	if e.liveSamples(3) != 1 || e.margin(3, 0) != young(binHi(binOf(5_000))) {
		t.Fatal("a forgotten bucket does not start afresh")
	}
}

func TestBorrowsFromShorterThenLongerBuckets(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(20_000, 8_000) // bucket 1
	// One sample: young, so its largest plus half of it.
	if e.margin(5, 10_000) != 12_286 || e.margin(0, 10_000) != young(binHi(binOf(8_000))) {
		t.Fatal("no borrowing")
	}
	if got := e.compensation(7); got != 7_935 { // middle of [7680, 8191]
		t.Fatalf("compensation = %d, want 7935", got)
	}
}

func TestCompensationIsTheMiddleOfTheLowerMedianBin(t *testing.T) {
	var e estimator
	e.beginSleep()
	for _, x := range []uint64{5_000, 1_100, 4_000, 2_100} {
		e.observe(1_000, x)
	}
	if got := e.compensation(0); got != 2_175 { // middle of [2048, 2303]
		t.Fatalf("compensation = %d, want 2175", got)
	}
}

func TestCostIsAQuarterWeightAverageBorrowedWhenMissing(t *testing.T) {
	var e estimator
	if e.cost(4) != defaultCostNs {
		t.Fatal("default cost")
	}
	for _, c := range []struct{ cpu, want uint64 }{
		{20_000, 20_000}, // the first sample is the cost
		{10_000, 17_500},
		{17_501, 17_500}, // 1 / 4 truncates
		{17_497, 17_500}, // -3 / 4 truncates toward zero
		{math.MaxUint64, 17_500 + (maxSampleNs-17_500)/4},
	} {
		e.observeCost(100_000, c.cpu)
		if got := e.cost(3); got != c.want {
			t.Errorf("after %d: cost %d, want %d", c.cpu, got, c.want)
		}
	}
	if e.cost(9) != e.cost(3) || e.cost(0) != e.cost(3) {
		t.Fatal("cost not borrowed")
	}
}

func TestTailAndSplitCounts(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(50_000, 2_000)  // bin [1920, 2047]
	e.observe(50_000, 30_000) // bin [28672, 30719]
	if got := e.tail(2, 10_000, 10_000); got != (tailCounts{samples: 2, late: 1, spinSum: 10_000 - 1_920}) {
		t.Fatalf("tail = %+v", got)
	}
	// g = 40 µs: both bins fit; the 2 µs one within a 5 µs limit, the other not.
	within, rest := e.splitCounts(2, 10_000, 5_000, 40_000)
	if within != 1 || rest != 40_000-28_672 {
		t.Fatalf("splitCounts = %d, %d", within, rest)
	}
}

func TestSamplesAreClampedAndArithmeticSaturates(t *testing.T) {
	var e estimator
	e.beginSleep()
	e.observe(math.MaxUint64, math.MaxUint64)
	// 1 s is in the last bin but one; one sample is young: plus half of it.
	if got := e.margin(buckets-1, 10_000); got != young(binHi(bins-2)) {
		t.Fatalf("margin = %d", got)
	}
	if p, ok := planExact(&e, math.MaxUint64, 10_000, 0, planStep{first: true}); !ok || p != (osWaitPlan{waitNs: math.MaxUint64 - young(binHi(bins-2)), restBudgetPpm: 10_000}) {
		t.Fatalf("planExact(max) = %+v %v", p, ok)
	}
	if satAdd(math.MaxUint64, 1) != math.MaxUint64 || satSub(1, 2) != 0 || satMul(1<<40, 1<<40) != math.MaxUint64 {
		t.Fatal("saturating arithmetic wraps")
	}
}

func TestPlansOnAFreshEstimator(t *testing.T) {
	var e estimator
	for _, c := range []struct {
		rem, minSpin, wait uint64
		ok                 bool
	}{
		{4_000, 0, 0, false},               // below minOsWaitNs: spin
		{10_000, 0, 0, false},              // the default margin (50 µs) does not fit
		{60_000, 0, 10_000, true},          // 60 µs - 50 µs
		{1_000_000, 0, 950_000, true},      // one wait, no split before anything is learned
		{10_000_000, 0, 9_950_000, true},   //
		{1_000_000, 80_000, 920_000, true}, // minSpin is a floor
	} {
		p, ok := planExact(&e, c.rem, 10_000, c.minSpin, planStep{first: true})
		if ok && p != (osWaitPlan{waitNs: c.wait, restBudgetPpm: 10_000}) || ok != c.ok {
			t.Errorf("planExact(%d, min %d) = %+v %v, want %d %v", c.rem, c.minSpin, p, ok, c.wait, c.ok)
		}
	}
	if w, ok := planEfficient(&e, 1_000_000); !ok || w != 1_000_000 {
		t.Errorf("planEfficient with nothing learned = %d %v, want the whole wait", w, ok)
	}
	if _, ok := planEfficient(&e, 0); ok {
		t.Error("planEfficient(0) planned a wait")
	}
}

// The planner's own cost per call on a warm estimator (go test -bench Plan):
// a number to read, not an assertion.
func BenchmarkPlanExact(b *testing.B) {
	var e estimator
	e.beginSleep()
	for i := uint64(0); i < 1024; i++ {
		e.observe(900_000, 3_000+i*37%9_000)
		e.observe(40_000, 2_000+i*13%2_000)
	}
	e.observeCost(900_000, 2_500)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		planExact(&e, 1_000_000, 10_000, 0, planStep{first: true})
	}
}

// The spec's queries as written in spec/estimator.md: a view chosen by its
// rules, scans over the bin counts of its buckets added up, with
// term-by-term saturating sums. The estimator answers them from prefix
// sums; both must agree on every input.
type scanModel struct {
	counts [bins]uint64
	n      uint64
}

// scanOf is the bins of the buckets' remembered samples added up.
func scanOf(e *estimator, members ...int) (m scanModel) {
	for _, b := range members {
		h := &e.buckets[b]
		for k := 0; k < h.len; k++ {
			m.counts[h.ring[k]]++
		}
		m.n += uint64(h.len)
	}
	return m
}

// specView is view(b, p) by the spec's rules: the buckets, whether it is
// established, and ok == false when there is no source.
func specView(e *estimator, b int, p uint64) (members []int, established, ok bool) {
	places := func(n uint64) bool { return (n+1)*min(p, ppm) >= ppm }
	s := e.source(b)
	if s < 0 {
		return nil, false, false
	}
	if places(uint64(e.buckets[s].len)) {
		return []int{s}, true, true
	}
	if b > poolMaxBucket {
		return []int{s}, false, true
	}
	n := uint64(0)
	for k := b - 1; k <= b+1; k++ {
		if k >= 0 && k <= poolMaxBucket && e.isLive(k) {
			members = append(members, k)
			n += uint64(e.buckets[k].len)
		}
	}
	if len(members) == 0 {
		return []int{s}, false, true
	}
	return members, places(n), true
}

// specMargin is margin(b, p) by the spec's rules.
func specMargin(e *estimator, b int, p uint64) uint64 {
	members, established, ok := specView(e, b, p)
	if !ok {
		return defaultMarginNs
	}
	m := scanOf(e, members...).quantile(p)
	if established {
		if s := e.source(b); len(members) > 1 || members[0] != s {
			m = max(m, scanOf(e, s).quantile(p))
		}
		return m
	}
	// Young: the view's own quantile with half of it again as headroom.
	m += m / 2
	// Half grown (places(n, 2p)): only longer buckets established at p.
	halfGrown := (scanOf(e, members...).n+1)*min(2*min(p, ppm), ppm) >= ppm
	for l := b + 1; l < buckets; l++ {
		if e.isLive(l) && (!halfGrown || (scanOf(e, l).n+1)*min(p, ppm) >= ppm) {
			m = max(m, specBound(e, l, p))
		}
		// Up to the nearest longer bucket established at p on its own.
		if e.isLive(l) && (scanOf(e, l).n+1)*min(p, ppm) >= ppm {
			break
		}
	}
	// Nor below the nearest shorter bucket established at p on its own.
	for l := b - 1; l >= 0; l-- {
		if e.isLive(l) && (scanOf(e, l).n+1)*min(p, ppm) >= ppm {
			m = max(m, scanOf(e, l).quantile(p))
			break
		}
	}
	return m
}

// specBound is the spec's bound(l, p), by scanning: l's own quantile if it
// places p; else l and the nearest live s in [l-2, l) that places p, pooled,
// and at least s's own; else l's own.
func specBound(e *estimator, l int, p uint64) uint64 {
	places := func(n uint64) bool { return (n+1)*min(p, ppm) >= ppm }
	if places(scanOf(e, l).n) {
		return scanOf(e, l).quantile(p)
	}
	for s := l - 1; s >= 0 && s >= l-2; s-- {
		if e.isLive(s) && places(scanOf(e, s).n) {
			return max(scanOf(e, l, s).quantile(p), scanOf(e, s).quantile(p))
		}
	}
	return scanOf(e, l).quantile(p)
}

func (m scanModel) quantile(p uint64) uint64 {
	k := (m.n + 1) * min(p, ppm) / ppm
	allowed := min(m.n, max(k, 1)-1)
	above := uint64(0)
	for i := bins - 1; i >= 0; i-- {
		above += m.counts[i]
		if above > allowed {
			return binHi(i)
		}
	}
	return binHi(0)
}

func (m scanModel) tail(g uint64) tailCounts {
	t := tailCounts{samples: m.n}
	for i, c := range m.counts {
		if c == 0 {
			continue
		}
		if binHi(i) > g {
			t.late += c
		} else {
			t.spinSum = satAdd(t.spinSum, satMul(c, g-binLo(i)))
		}
	}
	return t
}

func (m scanModel) splitCounts(limit, g uint64) (within, restSpin uint64) {
	for i, c := range m.counts {
		hi := binHi(i)
		if c == 0 || hi > g {
			continue
		}
		if hi <= limit {
			within += c
		} else {
			restSpin = satAdd(restSpin, satMul(c, g-binLo(i)))
		}
	}
	return within, restSpin
}

func (m scanModel) compensation() uint64 {
	rank := (m.n - 1) / 2
	below := uint64(0)
	for i := 0; i < bins; i++ {
		below += m.counts[i]
		if below > rank {
			return binLo(i) + (binHi(i)-binLo(i))/2
		}
	}
	return 0
}

func TestPrefixSumsAndPoolsAnswerAsTheSpecsScans(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var e estimator
	e.beginSleep()
	gs := []uint64{0, 1023, 1024, 3_071, 50_000, 917_503, 1 << 30, math.MaxUint64 / 1024, math.MaxUint64 / 3, math.MaxUint64}
	shares := []uint64{0, 1, 999, 1_000, 5_000, 10_000, 50_000, ppm, 3 * ppm}
	// Waits of buckets 2, 3 (most), 4, 5 (rare: it is forgotten now and
	// then), 6 and 8: short buckets that pool, long ones that do not.
	waits := []uint64{50_000, 100_000, 100_000, 100_000, 200_000, 1_000_000, 5_000_000}
	pooled := 0
	for round := 0; round < 3_000; round++ {
		if round%10 == 0 {
			e.beginSleep()
		}
		// Overshoots spread over every octave, and a full window's worth.
		o := rng.Uint64N(1 << (10 + rng.UintN(21)))
		if rng.UintN(50) == 0 {
			o = math.MaxUint64
		}
		w := waits[rng.UintN(uint(len(waits)))]
		if rng.UintN(100) == 0 {
			w = 400_000
		}
		e.observe(w, o)
		if round%7 != 0 {
			continue
		}
		for b := 0; b < buckets; b++ {
			for _, p := range shares {
				members, established, ok := specView(&e, b, p)
				if got, want := e.margin(b, p), specMargin(&e, b, p); got != want {
					t.Fatalf("round %d: margin(%d, %d) = %d, spec %d", round, b, p, got, want)
				}
				if got := e.established(b, p); got != established {
					t.Fatalf("round %d: established(%d, %d) = %v, spec %v", round, b, p, got, established)
				}
				if got, want := e.samples(b, p), scanOf(&e, members...).n; got != want || !ok && got != 0 {
					t.Fatalf("round %d: samples(%d, %d) = %d, spec %d", round, b, p, got, want)
				}
				if len(members) > 1 {
					pooled++
				}
			}
			if s := e.source(b); s >= 0 {
				if got, want := e.compensation(b), scanOf(&e, s).compensation(); got != want {
					t.Fatalf("round %d: compensation(%d) = %d, scan %d", round, b, got, want)
				}
			}
		}
		// tail and splitCounts at one bucket and share a round.
		b, p := int(rng.UintN(buckets)), shares[rng.UintN(uint(len(shares)))]
		members, _, _ := specView(&e, b, p)
		m := scanOf(&e, members...)
		for _, g := range append(gs, rng.Uint64N(2_000_000_000), rng.Uint64()) {
			if got, want := e.tail(b, p, g), m.tail(g); got != want {
				t.Fatalf("round %d: tail(%d, %d, %d) = %+v, scan %+v", round, b, p, g, got, want)
			}
			for _, limit := range []uint64{0, 45_000, g / 2, g, math.MaxUint64} {
				w1, r1 := e.splitCounts(b, p, limit, g)
				w2, r2 := m.splitCounts(limit, g)
				if w1 != w2 || r1 != r2 {
					t.Fatalf("round %d: splitCounts(%d, %d, %d, %d) = %d, %d; scan %d, %d", round, b, p, limit, g, w1, r1, w2, r2)
				}
			}
		}
	}
	if pooled == 0 {
		t.Fatal("no query was answered by a pool")
	}
}

func TestSpinSumSaturatesAsATermByTermSum(t *testing.T) {
	for _, c := range []struct{ g, n, lo, want uint64 }{
		{10_000, 3, 6_000, 24_000},
		{math.MaxUint64, 1, 5, math.MaxUint64 - 5},
		{math.MaxUint64, 2, 0, math.MaxUint64},
		{math.MaxUint64, 2, math.MaxUint64, math.MaxUint64},      // exact: 2^64 - 1
		{math.MaxUint64 / 2, 2, 0, math.MaxUint64 - 1},           // exact: 2^64 - 2
		{math.MaxUint64/2 + 1, 2, 1, math.MaxUint64},             // exact: 2^64 - 1
		{math.MaxUint64/2 + 1, 2, 0, math.MaxUint64},             // 2^64: saturates
		{math.MaxUint64, 1024, 1024 * 1_000_000, math.MaxUint64}, // far beyond
		{0, 0, 0, 0},
	} {
		if got := spinSum(c.g, c.n, c.lo); got != c.want {
			t.Errorf("spinSum(%d, %d, %d) = %d, want %d", c.g, c.n, c.lo, got, c.want)
		}
	}
}

// One observation into a full window (one sample's prefix sums out, one in),
// as every OS wait does (go test -bench Observe): a number to read.
func BenchmarkObserve(b *testing.B) {
	var e estimator
	e.beginSleep()
	for i := uint64(0); i < window; i++ {
		e.observe(900_000, 3_000+i*37%9_000)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.observe(900_000, 2_000+uint64(i)*7919%60_000)
	}
}
