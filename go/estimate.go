package keeptime

import (
	"math/bits"
	"slices"
)

// The margin estimator of spec/estimator.md, bit for bit: how early an OS
// wait must end so that the thread is awake before the deadline, learned from
// the overshoot of every OS wait. spec/vectors/estimator.json pins it; the
// Rust core (crates/keeptime/src/estimate.rs) and the Java library compute
// the same numbers from the same observations.
//
// Waits are grouped into buckets by the length of the OS wait (powers of two
// from 16.384 µs), because how late the OS wakes a thread depends on how long
// it slept. Each bucket remembers its last window overshoots, stamped with the
// sleep that observed them; a sample is live for horizon sleeps. The
// spin-finished margin of a bucket is q + 2·(q − median) + headroom over its
// live samples, q the largest once the top (n − 1)/outlierShare are set aside
// (the 4th largest of 32, about their 90th percentile): the typical tail plus
// twice the spread. Up to three outliers in a full window change nothing, a
// lasting upward shift is followed within four samples, a downward one within
// window samples, and a large but steady overshoot (the default 50 µs timer
// slack) costs its spread in spin, not its size. The compensation of
// Efficient mode is the lower median of the live samples. A bucket
// with no live sample borrows from the nearest shorter bucket that has one,
// then the nearest longer one.
//
// All arithmetic is on uint64 nanoseconds and saturates.

const (
	// buckets is the number of OS-wait length buckets.
	buckets = 12
	// bucketShift is log2 of the upper bound of bucket 0 (16 384 ns).
	bucketShift = 14
	// window is the number of overshoot samples remembered per bucket.
	window = 32
	// horizon is how many sleeps a sample stays live.
	horizon = 128
	// defaultMarginNs is the spin-finished margin when nothing is live anywhere.
	defaultMarginNs = 50_000
	// outlierShare: the top (n - 1) / outlierShare of n live samples are
	// set aside as outliers.
	outlierShare = 8
	// headroomNs is added to every learned spin-finished margin.
	headroomNs = 1_000
	// maxSampleNs clamps samples to 1 s so one suspend/resume cannot poison a bucket.
	maxSampleNs = 1_000_000_000
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

// ring is one bucket's samples.
type ring struct {
	overshoot [window]uint64
	stamp     [window]uint64
	len       int
	next      int
}

// estimator learns how late OS waits of each length wake up. It is plain
// data (about 6 KiB) with no locking: one belongs to one Sleeper.
type estimator struct {
	seq     uint64
	buckets [buckets]ring
}

// beginSleep marks the start of a sleep that has to wait; samples age by one
// sleep per call.
func (e *estimator) beginSleep() {
	e.seq = satAdd(e.seq, 1)
}

// observe records that an OS wait of waitNs woke overshootNs after its target.
func (e *estimator) observe(waitNs, overshootNs uint64) {
	r := &e.buckets[bucketOf(waitNs)]
	r.overshoot[r.next] = min(overshootNs, maxSampleNs)
	r.stamp[r.next] = e.seq
	r.next = (r.next + 1) % window
	r.len = min(r.len+1, window)
}

func (e *estimator) isLive(r *ring, i int) bool {
	return e.seq-r.stamp[i] < horizon
}

// liveSamples is the number of live samples in bucket b.
func (e *estimator) liveSamples(b int) int {
	r := &e.buckets[b]
	n := 0
	for i := 0; i < r.len; i++ {
		if e.isLive(r, i) {
			n++
		}
	}
	return n
}

// hasLive reports whether bucket b has a live sample.
func (e *estimator) hasLive(b int) bool {
	r := &e.buckets[b]
	for i := 0; i < r.len; i++ {
		if e.isLive(r, i) {
			return true
		}
	}
	return false
}

// source is the bucket whose samples stand for b: the first with a live
// sample in the order b, b-1, …, 0, b+1, …, buckets-1; -1 if none has one.
// Borrowing from shorter waits first is optimistic on purpose: an estimator
// that assumes the worst for a length it never tried never dares that wait,
// never observes it, and spins forever.
func (e *estimator) source(b int) int {
	for s := b; s >= 0; s-- {
		if e.hasLive(s) {
			return s
		}
	}
	for s := b + 1; s < buckets; s++ {
		if e.hasLive(s) {
			return s
		}
	}
	return -1
}

// sortedLive returns the live samples of bucket b, sorted ascending, on
// the stack (no allocation per sleep).
func (e *estimator) sortedLive(b int) ([window]uint64, int) {
	r := &e.buckets[b]
	var v [window]uint64
	n := 0
	for i := 0; i < r.len; i++ {
		if e.isLive(r, i) {
			v[n] = r.overshoot[i]
			n++
		}
	}
	slices.Sort(v[:n])
	return v, n
}

// margin is how long before the deadline an OS wait in bucket b must end so
// that the spin can finish the sleep (Exact mode): with v the sorted live
// samples of b's source, q = v[n-1-(n-1)/outlierShare] and the lower median
// m = v[(n-1)/2], q + 2·(q − m) + headroom.
func (e *estimator) margin(b int) uint64 {
	s := e.source(b)
	if s < 0 {
		return defaultMarginNs
	}
	v, n := e.sortedLive(s)
	q := v[n-1-(n-1)/outlierShare]
	median := v[(n-1)/2]
	return satAdd(satAdd(q, satMul(q-median, 2)), headroomNs)
}

// compensation is the lower median overshoot of bucket b's source,
// subtracted from the OS wait in Efficient mode; 0 before anything was observed.
func (e *estimator) compensation(b int) uint64 {
	s := e.source(b)
	if s < 0 {
		return 0
	}
	v, n := e.sortedLive(s)
	return v[(n-1)/2]
}
