package keeptime

import "math/bits"

// The wake-up model of spec/estimator.md (version 4), bit for bit: how late
// OS waits of each length wake the thread, and what one costs it, learned
// from every OS wait. spec/vectors/estimator.json pins it; the Rust core
// (crates/keeptime/src/estimate.rs) and the Java library compute the same
// numbers from the same observations.
//
//   - Waits are grouped into buckets by the length of the OS wait (powers of
//     two from 16.384 µs), because how late the OS wakes a thread depends on
//     how long it slept.
//   - Each bucket keeps the overshoots of its last window (1024) OS waits as
//     a log-binned histogram (81 bins, four per power of two, each at most
//     25 % wide): O(1) per observation (one bin in, the oldest one out),
//     enough samples to place a late-share target down to 0.1 %.
//   - margin(b, share) is the upper edge of the bin holding the sample of
//     rank floor(n · share) + 1 from the top: at most that share of the
//     remembered wake-ups came later than the margin.
//   - One outlier counts for exactly window further OS waits of its length
//     (or until its bucket goes horizon sleeps unused). While it counts it
//     raises the margin at share p by at most one rank of the remembered
//     distribution once n · p >= 1 (100 samples at 1 %, 1000 at 0.1 %),
//     whatever its size; in a younger window it is the margin, and the
//     planner prices that against a second wait or a pure spin.
//   - A lasting shift up is followed once floor(n · p) + 1 new samples lie
//     above the old margin (11 at 1 % with a full window, 2 at 0.1 %); a
//     shift down within window OS waits of that length.
//   - The thread-CPU cost of an OS wait is sampled around every 8th OS wait
//     and kept per bucket as an integer moving average (weight 1/4).
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
	// bins is the number of overshoot histogram bins per bucket.
	bins = 81
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
	sub := int((ns >> (e - 2)) & 3)
	return min(1+4*(e-10)+sub, bins-1)
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
	e := 10 + (i-1)/4
	sub := uint64((i - 1) % 4)
	return (4 + sub) << (e - 2)
}

// binHiOf is binHi by the formula of spec/estimator.md.
func binHiOf(i int) uint64 {
	if i == 0 {
		return 1023
	}
	e := 10 + (i-1)/4
	sub := uint64((i - 1) % 4)
	return ((5 + sub) << (e - 2)) - 1
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

// histogram is one bucket: a ring of the bins of its last samples, their
// counts per bin, and its learned cost.
type histogram struct {
	ring    [window]uint8
	counts  [bins]uint16
	len     int
	next    int
	lastSeq uint64
	cost    uint64
	hasCost bool
}

// estimator learns how late OS waits of each length wake up and what they
// cost. It is plain data (about 14 KiB) with no locking: one belongs to one
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
		h.counts = [bins]uint16{}
		h.len = 0
		h.next = 0
	}
	i := binOf(min(overshootNs, maxSampleNs))
	if h.len == window {
		h.counts[h.ring[h.next]]--
	} else {
		h.len++
	}
	h.ring[h.next] = uint8(i)
	h.counts[i]++
	h.next = (h.next + 1) % window
	h.lastSeq = e.seq
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

// margin is the margin at which at most shareppm parts per million of the
// remembered wake-ups of bucket b came later: the upper edge of the bin
// holding the sample of rank floor(n · share / 10^6) + 1 from the top;
// defaultMarginNs when nothing is live.
func (e *estimator) margin(b int, sharePpm uint64) uint64 {
	s := e.source(b)
	if s < 0 {
		return defaultMarginNs
	}
	h := &e.buckets[s]
	allowed := satMul(uint64(h.len), min(sharePpm, ppm)) / ppm
	above := uint64(0)
	for i := bins - 1; i >= 0; i-- {
		above += uint64(h.counts[i])
		if above > allowed {
			return binHi(i)
		}
	}
	return binHi(0)
}

// tail counts, for an OS wait of bucket b that ends g before the deadline,
// the samples that would have woken after it and the spin the others leave.
func (e *estimator) tail(b int, g uint64) tailCounts {
	s := e.source(b)
	if s < 0 {
		return tailCounts{}
	}
	h := &e.buckets[s]
	t := tailCounts{samples: uint64(h.len)}
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		if binHi(i) > g {
			t.late += uint64(c)
		} else {
			t.spinSum = satAdd(t.spinSum, satMul(uint64(c), g-binLo(i)))
		}
	}
	return t
}

// splitCounts, over the bins of b's source with binHi <= g: within counts
// the samples with binHi <= limit, restSpin sums (g − binLo) over the others.
func (e *estimator) splitCounts(b int, limit, g uint64) (within, restSpin uint64) {
	s := e.source(b)
	if s < 0 {
		return 0, 0
	}
	h := &e.buckets[s]
	for i, c := range h.counts {
		hi := binHi(i)
		if c == 0 || hi > g {
			continue
		}
		if hi <= limit {
			within += uint64(c)
		} else {
			restSpin = satAdd(restSpin, satMul(uint64(c), g-binLo(i)))
		}
	}
	return within, restSpin
}

// compensation is the middle of the bin holding the lower median of bucket
// b's remembered overshoots, subtracted from the OS wait in Efficient mode;
// 0 before anything was observed.
func (e *estimator) compensation(b int) uint64 {
	s := e.source(b)
	if s < 0 {
		return 0
	}
	h := &e.buckets[s]
	rank := uint64(h.len-1) / 2
	below := uint64(0)
	for i := 0; i < bins; i++ {
		below += uint64(h.counts[i])
		if below > rank {
			return binLo(i) + (binHi(i)-binLo(i))/2
		}
	}
	return 0
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
