package keeptime

import "math/bits"

// The wake-up model of spec/estimator.md (version 5), bit for bit: how late
// OS waits of each length wake the thread, and what one costs it, learned
// from every OS wait. spec/vectors/estimator.json pins it; the Rust core
// (crates/keeptime/src/estimate.rs) and the Java library compute the same
// numbers from the same observations.
//
//   - Waits are grouped into buckets by the length of the OS wait (powers of
//     two from 16.384 µs), because how late the OS wakes a thread depends on
//     how long it slept.
//   - Each bucket keeps the overshoots of its last window (1024) OS waits as
//     a log-binned histogram (161 bins, eight per power of two, each at
//     most 12.5 % wide), with prefix sums of its counts and of its bins'
//     lower edges: an observation updates one bucket's prefix sums, every
//     query adds at most three lookups or runs one binary search; enough
//     samples to place a late-share target down to 0.1 %.
//   - margin(b, share) is the upper edge of the bin holding the k-th
//     largest sample, k = floor((n + 1) · share) (the largest when k = 0):
//     a further wake-up lands above it with chance k / (n + 1) <= share.
//     Samples too few to place a margin at that share ((n + 1) · share < 1)
//     are not trusted to wake earlier than any longer wait: their margin is
//     at least every live longer bucket's at the same share, up to the
//     nearest one established at it (once they are half what the share
//     needs, that nearest established one's); a longer bucket itself too young for the share
//     answers with its samples pooled with those of the nearest shorter
//     bucket, at most two shorter, that places it (bound).
//   - A short bucket (up to poolMaxBucket, waits below 524 µs) too young for
//     a share on its own is answered by its live neighbours' samples pooled
//     (b − 1, b, b + 1), never below its own samples' quantile.
//   - One outlier counts for exactly window further OS waits of its length
//     (or until its bucket goes horizon sleeps unused). While it counts it
//     raises the margin at share p by at most one rank of the remembered
//     distribution once (n + 1) · p >= 2 (199 samples at 1 %; at 0.1 % a
//     full window sets none aside), whatever its size; in a younger window
//     it is the margin, and the planner prices that against a second wait
//     or a pure spin.
//   - A lasting shift up is followed once max(k, 1) new samples lie above
//     the old margin (10 at 1 % with a full window, 1 at 0.1 %); a shift
//     down within window OS waits of that length.
//   - The thread-CPU cost of an OS wait is sampled around every 8th OS wait
//     and kept per bucket as an integer moving average (weight 1/4).
//   - A bucket loaded from a profile notes its own margin at
//     staleSharePpm (1 %) as its reference; once at least staleMin of the
//     sleeper's own wake-ups of it landed above, and more than one in
//     staleDiv of its own observations since loading, it drops the
//     profile's samples and keeps its own.
//   - A bucket with no live sample borrows from the nearest shorter bucket
//     that has one, then the nearest longer one, then falls back to
//     defaultMarginNs. A bucket unused for horizon sleeps is forgotten.
//
// All arithmetic is on uint64 nanoseconds and saturates.

const (
	// buckets is the number of OS-wait length buckets.
	buckets = 12
	// bucketShift is log2 of the upper bound of bucket 0 (16 384 ns).
	bucketShift = 14
	// window is the number of overshoot samples remembered per bucket.
	window = 1024
	// bins is the number of overshoot histogram bins per bucket: bin 0 below
	// 1.024 µs, then eight per power of two up to 1.07 s.
	bins = 161
	// horizon: a bucket with no observation in this many sleeps is forgotten.
	horizon = 256
	// defaultMarginNs is the margin when nothing is live anywhere.
	defaultMarginNs = 50_000
	// defaultCostNs is the cost of an OS wait before any was measured.
	defaultCostNs = 5_000
	// costSampleEvery: the thread CPU clock is read around every this many
	// planned OS waits.
	costSampleEvery = 8
	// maxSampleNs clamps samples to 1 s so one suspend/resume cannot poison a bucket.
	maxSampleNs = 1_000_000_000
	// ppm: shares are integers in parts per million.
	ppm = 1_000_000
	// poolMaxBucket is the longest bucket that pools with its neighbours
	// (waits below 524 µs, the short waits of two-wait plans): a longer
	// wait's wake-up depends on its length (a deeper idle state, the host's
	// scheduler), so a young long bucket is answered by its own samples alone.
	poolMaxBucket = 5
	// staleSharePpm: a bucket loaded from a profile notes its own margin at
	// this share as its reference (spec/estimator.md, "Loading", a stale
	// bucket).
	staleSharePpm = 10_000
	// staleMin: a loaded bucket is stale once at least this many of its own
	// wake-ups landed above its reference margin ...
	staleMin = 4
	// staleDiv: ... and they are more than one in this many of its own
	// observations since loading: it then drops the profile's samples and
	// keeps its own.
	staleDiv = 25
	// youngHeadroomDiv: a view too young for a share answers its own
	// quantile plus 1/youngHeadroomDiv of it (spec/estimator.md, margin):
	// the next wake-up lands above the largest of n with chance 1/(n+1),
	// more than the share while n is too small to set one aside.
	youngHeadroomDiv = 2
)

// bucketOf is the bucket of an OS wait of waitNs nanoseconds: 0 below
// 16.384 µs, then one bucket per power of two, the last one open-ended.
func bucketOf(waitNs uint64) int {
	return min(bits.Len64(waitNs>>bucketShift), buckets-1)
}

// bucketLo is the shortest OS wait of bucket b.
func bucketLo(b int) uint64 {
	if b == 0 {
		return 0
	}
	return 1 << (bucketShift - 1 + b)
}

// bucketHi is the longest OS wait of bucket b.
func bucketHi(b int) uint64 {
	if b+1 >= buckets {
		return ^uint64(0)
	}
	return bucketLo(b+1) - 1
}

// binOf is the histogram bin of an overshoot of ns (already clamped).
func binOf(ns uint64) int {
	if ns < 1024 {
		return 0
	}
	e := bits.Len64(ns) - 1 // 2^e <= ns < 2^(e+1), e >= 10
	sub := int((ns >> (e - 3)) & 7)
	return min(1+8*(e-10)+sub, bins-1)
}

// binEdges are binLo and binHi of every bin, computed once: the planner's
// queries read them in their loops.
var binEdges = func() (e [bins][2]uint64) {
	for i := range e {
		e[i] = [2]uint64{binLoOf(i), binHiOf(i)}
	}
	return e
}()

// binLo is the smallest overshoot of bin i.
func binLo(i int) uint64 { return binEdges[i][0] }

// binHi is the largest overshoot of bin i.
func binHi(i int) uint64 { return binEdges[i][1] }

// binLoOf is binLo by the formula of spec/estimator.md.
func binLoOf(i int) uint64 {
	if i == 0 {
		return 0
	}
	e := 10 + (i-1)/8
	sub := uint64((i - 1) % 8)
	return (8 + sub) << (e - 3)
}

// binHiOf is binHi by the formula of spec/estimator.md.
func binHiOf(i int) uint64 {
	if i == 0 {
		return 1023
	}
	e := 10 + (i-1)/8
	sub := uint64((i - 1) % 8)
	return ((9 + sub) << (e - 3)) - 1
}

// satAdd is a + b, saturating at 2^64 - 1.
func satAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return ^uint64(0)
	}
	return s
}

// satSub is a - b, saturating at 0.
func satSub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// satMul is a · b, saturating at 2^64 - 1.
func satMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return ^uint64(0)
	}
	return lo
}

// histogram is one bucket: a ring of the bins of its last samples, prefix
// sums of their counts and of their bins' lower edges, and its learned cost.
type histogram struct {
	ring [window]uint8
	// cum[i] is the number of remembered samples in bins 0..i.
	cum [bins]uint16
	// cumLo[i] is Σ binLo(bin) over the remembered samples in bins 0..i.
	cumLo   [bins]uint64
	len     int
	next    int
	lastSeq uint64
	cost    uint64
	hasCost bool
	// loaded is how many of the remembered samples a profile loaded (the
	// oldest; 0..len).
	loaded int
	// refBin is the bin of the bucket's own margin at staleSharePpm when
	// loaded.
	refBin int
	// over counts the own observations since loading (len − loaded, the
	// newest) that fell in a bin above refBin, while loaded > 0.
	over uint64
}

// clear forgets every sample (not the cost).
func (h *histogram) clear() {
	h.cum = [bins]uint16{}
	h.cumLo = [bins]uint64{}
	h.len = 0
	h.next = 0
	h.loaded = 0
}

// push appends a sample of bin i, the oldest leaving a full window (a
// loaded one while any is left: they are the oldest).
func (h *histogram) push(i int) {
	if h.len == window {
		h.remove(int(h.ring[h.next]))
		if h.loaded > 0 {
			h.loaded--
		}
	} else {
		h.len++
	}
	h.ring[h.next] = uint8(i)
	h.add(i)
	h.next = (h.next + 1) % window
}

// keepOwn drops the samples a profile loaded and keeps the own ones, the
// newest len − loaded, in order (spec/estimator.md, "observe": a stale
// bucket). Rare: at most once per bucket per profile loaded.
func (h *histogram) keepOwn() {
	var keep [window]uint8
	n := h.len - h.loaded // < window while loaded > 0
	start := (h.next + window - n) % window
	for k := range n {
		keep[k] = h.ring[(start+k)%window]
	}
	h.clear()
	for _, j := range keep[:n] {
		h.push(int(j))
	}
}

// add counts one sample of bin i in the prefix sums.
func (h *histogram) add(i int) {
	lo := binLo(i)
	for j := i; j < bins; j++ {
		h.cum[j]++
		h.cumLo[j] += lo
	}
}

// remove takes one sample of bin i out of the prefix sums.
func (h *histogram) remove(i int) {
	lo := binLo(i)
	for j := i; j < bins; j++ {
		h.cum[j]--
		h.cumLo[j] -= lo
	}
}

// prefix is the number of samples in bins 0..k and the sum of their bins'
// lower edges; k < 0 means none.
func (h *histogram) prefix(k int) (n, loSum uint64) {
	if k < 0 {
		return 0, 0
	}
	return uint64(h.cum[k]), h.cumLo[k]
}

// firstBinReaching is the lowest bin i with cum[i] >= need (cum never
// decreases), at most bins-1.
func (h *histogram) firstBinReaching(need uint64) int {
	lo, hi := 0, bins-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uint64(h.cum[m]) < need {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// lastBinWithin is the last bin whose every sample is at most g
// (binHi <= g), or -1 if there is none.
func lastBinWithin(g uint64) int {
	j := binOf(g)
	if binHi(j) <= g {
		return j
	}
	return j - 1
}

// spinSum is Σ (g − lo) over n samples whose lower bin edges add up to
// loSum (each lo <= g), computed exactly in 128 bits and saturating at
// 2^64 - 1, as the spec's term-by-term saturating sum does.
func spinSum(g, n, loSum uint64) uint64 {
	hi, lo := bits.Mul64(g, n)
	lo, borrow := bits.Sub64(lo, loSum, 0)
	if hi-borrow != 0 {
		return ^uint64(0)
	}
	return lo
}

// estimator learns how late OS waits of each length wake up and what they
// cost. It is plain data (about 31 KiB) with no locking: one belongs to one
// Sleeper.
type estimator struct {
	seq     uint64
	buckets [buckets]histogram
}

// tailCounts is what the live samples of one bucket say about a margin g.
type tailCounts struct {
	samples uint64 // samples behind the answer (0 when nothing is live)
	late    uint64 // samples whose bin reaches past g
	spinSum uint64 // Σ (g − binLo) over the other samples
}

// beginSleep marks the start of a sleep that has to wait; buckets age by
// one sleep per call.
func (e *estimator) beginSleep() {
	e.seq = satAdd(e.seq, 1)
}

func (e *estimator) isLive(b int) bool {
	h := &e.buckets[b]
	return h.len > 0 && e.seq-h.lastSeq < horizon
}

// observe records that an OS wait of waitNs woke overshootNs after its target.
func (e *estimator) observe(waitNs, overshootNs uint64) {
	b := bucketOf(waitNs)
	h := &e.buckets[b]
	if !e.isLive(b) {
		h.clear() // forgotten: start afresh
	}
	i := binOf(min(overshootNs, maxSampleNs))
	h.push(i)
	h.lastSeq = e.seq
	if h.loaded > 0 {
		// A profile's samples are still here, the oldest: the other
		// len − loaded are the own ones. Is the profile stale?
		own := uint64(h.len - h.loaded)
		if i > h.refBin {
			h.over++
		}
		if h.over >= staleMin && satMul(h.over, staleDiv) > own {
			h.keepOwn()
		}
	}
}

// markLoaded marks every remembered sample as loaded from a profile, right
// after the profile's samples were observed (spec/estimator.md, "Loading"):
// each bucket notes its own margin at staleSharePpm, quantile({b}, share)
// over its samples alone (not its view), as its reference, and drops the
// loaded samples if its own wake-ups prove them stale (staleMin, staleDiv).
func (e *estimator) markLoaded() {
	for b := range e.buckets {
		h := &e.buckets[b]
		if h.len == 0 {
			continue
		}
		v := e.viewOf(b, true)
		h.refBin = binOf(e.quantile(&v, staleSharePpm))
		h.loaded = h.len
		h.over = 0
	}
}

// observeCost records that an OS wait of waitNs cost the thread cpuNs of
// CPU time: cost += (x − cost) / 4 in signed arithmetic, truncating toward
// zero (Go's integer division does).
func (e *estimator) observeCost(waitNs, cpuNs uint64) {
	x := int64(min(cpuNs, maxSampleNs))
	h := &e.buckets[bucketOf(waitNs)]
	if !h.hasCost {
		h.cost, h.hasCost = uint64(x), true
		return
	}
	c := int64(h.cost)
	h.cost = uint64(c + (x-c)/4)
}

// liveSamples is the number of live samples in bucket b (0 once forgotten).
func (e *estimator) liveSamples(b int) int {
	if e.isLive(b) {
		return e.buckets[b].len
	}
	return 0
}

// source is the bucket whose samples stand for b: the first live one in the
// order b, b-1, …, 0, b+1, …, buckets-1; -1 if none is. Borrowing from
// shorter waits first is optimistic on purpose: an estimator that assumes
// the worst for a length it never tried never dares that wait, never
// observes it, and spins forever.
func (e *estimator) source(b int) int {
	for s := b; s >= 0; s-- {
		if e.isLive(s) {
			return s
		}
	}
	for s := b + 1; s < buckets; s++ {
		if e.isLive(s) {
			return s
		}
	}
	return -1
}

// empty reports whether no bucket is live.
func (e *estimator) empty() bool {
	for b := 0; b < buckets; b++ {
		if e.isLive(b) {
			return false
		}
	}
	return true
}

// view is the set of buckets whose samples stand for a bucket at a share
// (spec/estimator.md, "view"): up to three members, their summed count n,
// and whether n is enough to place a margin at that share.
type view struct {
	members     [3]int
	len         int
	n           uint64
	established bool
}

// viewOf is the view of one bucket's own samples.
func (e *estimator) viewOf(s int, established bool) view {
	return view{members: [3]int{s}, len: 1, n: uint64(e.buckets[s].len), established: established}
}

// view is the samples that stand for bucket b at sharePpm: the source's own
// when they are enough to set one aside at that share; else, for a short
// bucket (b <= poolMaxBucket), the live buckets among b-1, b, b+1 that are
// short too, pooled (a short wait's overshoot hardly depends on its exact
// length); else the source's own, not established. ok == false when
// nothing is live.
func (e *estimator) view(b int, sharePpm uint64) (v view, ok bool) {
	s := e.source(b)
	if s < 0 {
		return view{}, false
	}
	if e.places(uint64(e.buckets[s].len), sharePpm) {
		return e.viewOf(s, true), true
	}
	if b > poolMaxBucket {
		return e.viewOf(s, false), true
	}
	for k := max(b-1, 0); k <= min(b+1, poolMaxBucket); k++ {
		if e.isLive(k) {
			v.members[v.len] = k
			v.len++
			v.n = satAdd(v.n, uint64(e.buckets[k].len))
		}
	}
	if v.len == 0 {
		return e.viewOf(s, false), true
	}
	v.established = e.places(v.n, sharePpm)
	return v, true
}

// prefix is the number of the view's samples in bins 0..k and the sum of
// their bins' lower edges; k < 0 means none.
func (e *estimator) prefix(v *view, k int) (n, loSum uint64) {
	for _, m := range v.members[:v.len] {
		a, l := e.buckets[m].prefix(k)
		n, loSum = satAdd(n, a), satAdd(loSum, l)
	}
	return n, loSum
}

// firstBinReaching is the lowest bin i where the view holds at least need
// samples in bins 0..i, at most bins-1.
func (e *estimator) firstBinReaching(v *view, need uint64) int {
	if v.len == 1 {
		return e.buckets[v.members[0]].firstBinReaching(need)
	}
	lo, hi := 0, bins-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		var c uint64
		for _, k := range v.members[:v.len] {
			c += uint64(e.buckets[k].cum[m])
		}
		if c < need {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// margin is the margin at which, over the n samples that stand for bucket b
// at sharePpm (its view), a further wake-up comes later with a chance of at
// most sharePpm parts per million: quantile(view, share). An established
// pool answers at least the source's own quantile (a neighbour's tighter
// wake-ups never make this length's own tail shorter). Samples too few for
// the share (whose maximum says little about a rare tail: the next wake-up
// lands above the largest of n with chance 1/(n+1)) answer their quantile
// plus half of it (youngHeadroomDiv), and at least
// quantile({l}, share) of every live bucket l > b, since longer waits wake
// no earlier; once they are half what the share needs (places(n, 2·share)),
// of every live bucket l > b established at the share on its own; and of
// the nearest live bucket l < b established at the share on its own.
// defaultMarginNs when nothing is live.
func (e *estimator) margin(b int, sharePpm uint64) uint64 {
	v, ok := e.view(b, sharePpm)
	if !ok {
		return defaultMarginNs
	}
	own := e.quantile(&v, sharePpm)
	if v.established {
		if s := e.source(b); v.len > 1 || v.members[0] != s {
			own = max(own, e.ownQuantile(s, sharePpm))
		}
		return own
	}
	own = young(own)
	// Once the view holds half the samples the share needs, only a longer
	// bucket established at the share on its own bounds it: a young longer
	// bucket's largest sample is no better evidence of the rare tail.
	// min(share, 10^6) · 2 is min(2 · share, 10^6) once places clamps it.
	halfGrown := e.places(v.n, min(sharePpm, ppm)*2)
	// Only up to the nearest longer bucket that knows its tail: longer
	// waits wake no earlier, so its established tail is the most this view
	// can need, and a younger bucket beyond it would raise it past that on
	// a few largest samples.
	for l := b + 1; l < buckets; l++ {
		if e.isLive(l) && (!halfGrown || e.places(uint64(e.buckets[l].len), sharePpm)) {
			own = max(own, e.bound(l, sharePpm))
		}
		if e.isLive(l) && e.places(uint64(e.buckets[l].len), sharePpm) {
			break
		}
	}
	// Nor earlier than the nearest shorter wait that knows its tail (places
	// the share on its own): longer waits wake no earlier.
	if l := e.nearestKnownBelow(b, 0, sharePpm); l >= 0 {
		own = max(own, e.ownQuantile(l, sharePpm))
	}
	return own
}

// young is a young view's own quantile x with its headroom:
// x + x/youngHeadroomDiv, saturating.
func young(x uint64) uint64 {
	return satAdd(x, x/youngHeadroomDiv)
}

// nearestKnownBelow is the largest live bucket in [lowest, b) that places
// sharePpm on its own samples (knows its tail at that share), or -1.
func (e *estimator) nearestKnownBelow(b, lowest int, sharePpm uint64) int {
	for l := b - 1; l >= lowest; l-- {
		if e.isLive(l) && e.places(uint64(e.buckets[l].len), sharePpm) {
			return l
		}
	}
	return -1
}

// ownQuantile is the quantile of bucket l's own samples alone.
func (e *estimator) ownQuantile(l int, sharePpm uint64) uint64 {
	v := e.viewOf(l, false)
	return e.quantile(&v, sharePpm)
}

// bound is what the longer bucket l says of a younger, shorter view at
// sharePpm (spec/estimator.md, bound): its own quantile once it places the
// share on its own; before that, its samples pooled with those of the
// nearest shorter bucket that does, at most two buckets shorter (and at
// least that bucket's own quantile), so that one stall among its first
// wake-ups counts as one among hundreds rather than as the tail of every
// shorter wait.
func (e *estimator) bound(l int, sharePpm uint64) uint64 {
	n := uint64(e.buckets[l].len)
	if e.places(n, sharePpm) {
		return e.ownQuantile(l, sharePpm)
	}
	s := e.nearestKnownBelow(l, max(l-2, 0), sharePpm)
	if s < 0 {
		return e.ownQuantile(l, sharePpm)
	}
	pool := view{members: [3]int{l, s}, len: 2, n: n + uint64(e.buckets[s].len)}
	return max(e.quantile(&pool, sharePpm), e.ownQuantile(s, sharePpm))
}

// places reports whether n samples are enough to set one aside at
// sharePpm: (n + 1) · min(share, 10^6) >= 10^6.
func (e *estimator) places(n, sharePpm uint64) bool {
	return satMul(satAdd(n, 1), min(sharePpm, ppm)) >= ppm
}

// established reports whether the samples that stand for bucket b at
// sharePpm (its source's own, or the pool of its neighbours) are enough to
// place a margin at that share: (n + 1) · share >= 10^6.
func (e *estimator) established(b int, sharePpm uint64) bool {
	v, ok := e.view(b, sharePpm)
	return ok && v.established
}

// samples is how many samples stand for bucket b at sharePpm (0 when none).
func (e *estimator) samples(b int, sharePpm uint64) uint64 {
	v, _ := e.view(b, sharePpm)
	return v.n
}

// quantile is the upper edge of the bin holding the k-th largest of the
// view's n samples, k = floor((n + 1) · share / 10^6) (the largest when
// k = 0): a further wake-up from the same distribution lands above it with
// chance k / (n + 1) <= share. binHi(0) when every sample may be set aside.
func (e *estimator) quantile(v *view, sharePpm uint64) uint64 {
	n := v.n
	k := satMul(satAdd(n, 1), min(sharePpm, ppm)) / ppm
	allowed := min(satSub(k, 1), n)
	// The highest bin i with (samples in bins >= i) > allowed is the lowest
	// i with cum[i] >= n - allowed.
	return binHi(e.firstBinReaching(v, n-allowed))
}

// tail counts, over the samples that stand for bucket b at sharePpm, for an
// OS wait of bucket b that ends g before the deadline, the samples that
// would have woken after it and the spin the others leave.
func (e *estimator) tail(b int, sharePpm, g uint64) tailCounts {
	v, ok := e.view(b, sharePpm)
	if !ok {
		return tailCounts{}
	}
	within, loSum := e.prefix(&v, lastBinWithin(g))
	return tailCounts{samples: v.n, late: v.n - within, spinSum: spinSum(g, within, loSum)}
}

// splitCounts, over the samples that stand for bucket b at sharePpm, in the
// bins with binHi <= g: within counts the samples with binHi <= limit,
// restSpin sums (g − binLo) over the others.
func (e *estimator) splitCounts(b int, sharePpm, limit, g uint64) (within, restSpin uint64) {
	v, ok := e.view(b, sharePpm)
	if !ok {
		return 0, 0
	}
	nG, loG := e.prefix(&v, lastBinWithin(g))
	nL, loL := e.prefix(&v, lastBinWithin(min(limit, g)))
	return nL, spinSum(g, nG-nL, loG-loL)
}

// compensation is the middle of the bin holding the lower median of bucket
// b's remembered overshoots (within 6.25 % of the true median), subtracted
// from the OS wait in Efficient mode; 0 before anything was observed.
func (e *estimator) compensation(b int) uint64 {
	s := e.source(b)
	if s < 0 {
		return 0
	}
	h := &e.buckets[s]
	rank := uint64(h.len-1) / 2 // 0-based from the bottom
	i := h.firstBinReaching(rank + 1)
	return binLo(i) + (binHi(i)-binLo(i))/2
}

// cost is the learned thread-CPU cost of one OS wait of bucket b: its own
// average, else the first bucket's that has one in the order b, b-1, …, 0,
// b+1, …, buckets-1, else defaultCostNs.
func (e *estimator) cost(b int) uint64 {
	for s := b; s >= 0; s-- {
		if e.buckets[s].hasCost {
			return e.buckets[s].cost
		}
	}
	for s := b + 1; s < buckets; s++ {
		if e.buckets[s].hasCost {
			return e.buckets[s].cost
		}
	}
	return defaultCostNs
}
