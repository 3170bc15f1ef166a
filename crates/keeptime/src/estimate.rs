//! The margin estimator: how early an OS wait must end so that it (almost)
//! never overshoots the deadline, learned from the overshoot of every OS wait.
//!
//! The algorithm is specified in `spec/estimator.md` and pinned by
//! `spec/vectors/estimator.json`; the Go and Java implementations reproduce it
//! bit for bit. In short:
//!
//! * Waits are grouped into [`BUCKETS`] buckets by the length of the OS wait
//!   (powers of two from 16.384 µs), because how late the OS wakes a thread
//!   depends on how long it slept.
//! * Each bucket remembers its last [`WINDOW`] overshoots, each stamped with
//!   the number of the sleep that observed it. A sample is *live* for
//!   [`HORIZON`] sleeps: one outlier stops influencing anything after at most
//!   `HORIZON` sleeps, or `WINDOW` further OS waits of its length, whichever
//!   comes first, even when its bucket is no longer used.
//! * The spin-finished margin of a bucket is `q + 2·(q − median) + HEADROOM_NS`
//!   over its live samples, where `q` is the largest sample once the top
//!   `(n − 1) / 8` are set aside (the 4th largest of 32, ≈ their 90th
//!   percentile): the typical tail plus twice the spread. Up to three
//!   outliers in a full window change nothing; a lasting upward shift is
//!   followed within four samples, a downward one within `WINDOW` samples; a
//!   large but steady overshoot (the default 50 µs timer slack) costs its
//!   spread in spin, not its size.
//! * The compensation of [`Mode::Efficient`](crate::Mode::Efficient) is the
//!   lower median of the live samples (seed 001's method).
//! * A bucket with no live sample borrows from the nearest shorter bucket that
//!   has one, then the nearest longer one, then falls back to
//!   [`DEFAULT_MARGIN_NS`] (no compensation, for the median). Borrowing from
//!   shorter waits is optimistic on purpose: an estimator that assumes the
//!   worst never dares an OS wait, never observes, and spins forever.
//!
//! Everything is integer nanoseconds with saturating arithmetic.

/// Number of OS-wait length buckets.
pub const BUCKETS: usize = 12;
/// Overshoot samples remembered per bucket.
pub const WINDOW: usize = 32;
/// A sample stays live for this many sleeps (calls that waited), counted per estimator.
pub const HORIZON: u64 = 128;
/// Spin-finished margin of a bucket when nothing at all has been observed yet.
pub const DEFAULT_MARGIN_NS: u64 = 50_000;
/// The top `(n - 1) / OUTLIER_SHARE` of `n` live samples are set aside as outliers.
pub const OUTLIER_SHARE: usize = 8;
/// Constant headroom added to every learned spin-finished margin.
pub const HEADROOM_NS: u64 = 1_000;
/// Samples are clamped to this (1 s) so one suspend/resume cannot poison the sums.
pub const MAX_SAMPLE_NS: u64 = 1_000_000_000;
/// log2 of the upper bound of bucket 0 (16 384 ns).
const BUCKET_SHIFT: u32 = 14;

/// The bucket of an OS wait of `wait_ns` nanoseconds: 0 below 16.384 µs, then
/// one bucket per power of two, the last one open-ended (≥ 16.8 ms).
#[inline]
pub fn bucket_of(wait_ns: u64) -> usize {
    let bits = (u64::BITS - (wait_ns >> BUCKET_SHIFT).leading_zeros()) as usize;
    bits.min(BUCKETS - 1)
}

/// Shortest OS wait (ns) that falls in bucket `b`.
#[inline]
pub fn bucket_lo(b: usize) -> u64 {
    if b == 0 {
        0
    } else {
        1u64 << (BUCKET_SHIFT - 1 + b as u32)
    }
}

/// Longest OS wait (ns) that falls in bucket `b`.
#[inline]
pub fn bucket_hi(b: usize) -> u64 {
    if b + 1 >= BUCKETS {
        u64::MAX
    } else {
        bucket_lo(b + 1) - 1
    }
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    overshoot: [u64; WINDOW],
    stamp: [u64; WINDOW],
    len: usize,
    next: usize,
}

impl Bucket {
    const EMPTY: Bucket = Bucket {
        overshoot: [0; WINDOW],
        stamp: [0; WINDOW],
        len: 0,
        next: 0,
    };
}

/// Learns how late OS waits of each length wake up, per thread or per
/// [`Sleeper`](crate::Sleeper). See the [module docs](self) and
/// `spec/estimator.md` for the exact algorithm.
///
/// Cost: ~1 KiB of state; [`observe`](Self::observe) is O(1); a margin query
/// scans at most [`WINDOW`] samples per bucket consulted, the median sorts them.
#[derive(Clone, Debug)]
pub struct MarginEstimator {
    seq: u64,
    buckets: [Bucket; BUCKETS],
}

impl Default for MarginEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl MarginEstimator {
    /// An estimator that has observed nothing.
    pub const fn new() -> Self {
        MarginEstimator {
            seq: 0,
            buckets: [Bucket::EMPTY; BUCKETS],
        }
    }

    /// Marks the start of a sleep; samples age by one sleep per call.
    #[inline]
    pub fn begin_sleep(&mut self) {
        self.seq = self.seq.saturating_add(1);
    }

    /// Number of sleeps begun so far.
    pub fn sleeps(&self) -> u64 {
        self.seq
    }

    /// Records that an OS wait of `wait_ns` woke `overshoot_ns` after its target.
    pub fn observe(&mut self, wait_ns: u64, overshoot_ns: u64) {
        let b = &mut self.buckets[bucket_of(wait_ns)];
        b.overshoot[b.next] = overshoot_ns.min(MAX_SAMPLE_NS);
        b.stamp[b.next] = self.seq;
        b.next = (b.next + 1) % WINDOW;
        b.len = (b.len + 1).min(WINDOW);
    }

    fn live(&self, b: usize) -> impl Iterator<Item = u64> + '_ {
        let bucket = &self.buckets[b];
        let seq = self.seq;
        (0..bucket.len)
            .filter(move |&i| seq - bucket.stamp[i] < HORIZON)
            .map(move |i| bucket.overshoot[i])
    }

    /// Number of live samples in bucket `b`.
    pub fn live_samples(&self, b: usize) -> usize {
        self.live(b).count()
    }

    /// The live samples of bucket `b`, sorted ascending, and how many there are.
    fn sorted_live(&self, b: usize) -> ([u64; WINDOW], usize) {
        let mut v = [0u64; WINDOW];
        let mut n = 0;
        for x in self.live(b) {
            v[n] = x;
            n += 1;
        }
        v[..n].sort_unstable();
        (v, n)
    }

    /// The first bucket with live samples in the borrowing order of bucket `b`:
    /// `b` itself, then `b-1 … 0`, then `b+1 … BUCKETS-1`.
    fn source(&self, b: usize) -> Option<usize> {
        (0..=b)
            .rev()
            .chain(b + 1..BUCKETS)
            .find(|&s| self.live(s).next().is_some())
    }

    /// How long before the deadline an OS wait in bucket `b` must end so that
    /// the spin can finish the sleep (spin-finished, [`Mode::Exact`](crate::Mode::Exact)).
    pub fn margin(&self, b: usize) -> u64 {
        let Some(s) = self.source(b) else {
            return DEFAULT_MARGIN_NS;
        };
        let (v, n) = self.sorted_live(s);
        let q = v[n - 1 - (n - 1) / OUTLIER_SHARE];
        let median = v[(n - 1) / 2];
        q.saturating_add((q - median).saturating_mul(2))
            .saturating_add(HEADROOM_NS)
    }

    /// The median overshoot of bucket `b`, subtracted from OS waits in
    /// [`Mode::Efficient`](crate::Mode::Efficient); 0 before anything was observed.
    pub fn compensation(&self, b: usize) -> u64 {
        self.source(b).map_or(0, |s| {
            let (v, n) = self.sorted_live(s);
            v[(n - 1) / 2]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_partition_the_range() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(16_383), 0);
        assert_eq!(bucket_of(16_384), 1);
        assert_eq!(bucket_of(32_767), 1);
        assert_eq!(bucket_of(32_768), 2);
        assert_eq!(bucket_of(1_000_000), 6);
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        for b in 0..BUCKETS {
            assert_eq!(bucket_of(bucket_lo(b)), b);
            assert_eq!(bucket_of(bucket_hi(b)), b);
        }
    }

    #[test]
    fn a_steady_overshoot_costs_its_spread_not_its_size() {
        let mut e = MarginEstimator::new();
        e.begin_sleep();
        for i in 0..WINDOW as u64 {
            e.observe(100_000, 54_000 + (i % 4) * 1_000); // 54..57 µs: default slack
        }
        // q = 57 µs (4th largest), lower median 55 µs: 57 + 2·2 + 1 µs.
        assert_eq!(e.margin(3), 62_000);
    }

    #[test]
    fn up_to_three_outliers_in_a_full_window_are_ignored() {
        let mut e = MarginEstimator::new();
        e.begin_sleep();
        for _ in 0..WINDOW - 3 {
            e.observe(100_000, 4_000);
        }
        for k in 1..=3 {
            e.observe(100_000, 2_000_000 + k);
        }
        assert_eq!(e.margin(3), 4_000 + 1_000);
        e.observe(100_000, 2_000_000); // a fourth: the window's 90th percentile moved
        assert_eq!(e.margin(3), 2_000_000 + 2 * (2_000_000 - 4_000) + 1_000);
    }

    #[test]
    fn few_samples_use_their_maximum() {
        let mut e = MarginEstimator::new();
        e.begin_sleep();
        e.observe(1_000, 7_000);
        e.observe(1_000, 3_000);
        // n = 2: q = 7 µs, lower median 3 µs.
        assert_eq!(e.margin(0), 7_000 + 2 * 4_000 + 1_000);
    }

    #[test]
    fn samples_expire_after_horizon_sleeps_even_unused() {
        let mut e = MarginEstimator::new();
        e.begin_sleep();
        e.observe(100_000, 300_000);
        for _ in 0..HORIZON - 1 {
            e.begin_sleep();
        }
        assert_eq!(e.live_samples(3), 1);
        e.begin_sleep();
        assert_eq!(e.live_samples(3), 0);
        assert_eq!(e.margin(3), DEFAULT_MARGIN_NS);
    }

    #[test]
    fn borrows_from_shorter_then_longer_buckets() {
        let mut e = MarginEstimator::new();
        e.begin_sleep();
        e.observe(20_000, 8_000); // bucket 1
        assert_eq!(e.margin(5), 8_000 + 1_000);
        assert_eq!(e.margin(0), 8_000 + 1_000);
        assert_eq!(e.compensation(7), 8_000);
    }

    #[test]
    fn median_is_the_lower_median() {
        let mut e = MarginEstimator::new();
        e.begin_sleep();
        for x in [5, 1, 4, 2] {
            e.observe(1_000, x);
        }
        assert_eq!(e.compensation(0), 2);
    }
}
