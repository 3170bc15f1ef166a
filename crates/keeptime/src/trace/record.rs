//! Recording a trace of this machine: interleaved rounds of absolute OS
//! waits of every length, each with its overshoot and thread CPU.

use super::{AfterRow, Trace, TraceError, TraceRow};
use crate::sys::OsWake;

/// What [`record`] records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordOptions {
    /// The OS-wait lengths (ns), each ≥ 1.
    pub lengths_ns: Vec<u64>,
    /// Passes over all lengths, each in its own shuffled order (≥ 1).
    pub rounds: u32,
    /// Wall time of the whole recording (ns), split evenly into one block per
    /// (round, length).
    pub total_ns: u64,
    /// Fewest waits in one block, even when they overrun its share of the time.
    pub min_block_waits: u32,
    /// Most waits in one block (short lengths stop here).
    pub max_block_waits: u32,
    /// Seed of the shuffles.
    pub seed: u64,
    /// After the rounds, the short waits of two-wait plans as those plans
    /// meet them: each of these lengths (ns, each ≥ 1), `after_waits` times,
    /// each time right after an unrecorded OS wait of `after_long_ns`,
    /// recorded as [after rows](Trace::after_rows). None when empty (or
    /// `after_waits` is 0). Not part of `total_ns`.
    pub after_lengths_ns: Vec<u64>,
    /// The long wait before each of those (ns).
    pub after_long_ns: u64,
    /// How many of each of `after_lengths_ns`.
    pub after_waits: u32,
}

impl Default for RecordOptions {
    /// 5 µs … 20.48 ms doubling, 3 rounds, 12 s, 67–1500 waits per block,
    /// seed 1. At least 201 waits of every length over the 3 rounds: a
    /// profile of the recording (`keeptime trace --profile`) then holds 199
    /// or more wake-ups in each of the longest lengths' buckets (5.12, 10.24
    /// and 20.48 ms waits, each alone in its bucket), enough to set its
    /// largest aside at the 1 % target (`spec/estimator.md`, quantile); with
    /// fewer, one late wake-up in the recording is those buckets' 1 % margin.
    /// (The shared traces were recorded with 60: 180 of each long length.)
    ///
    /// Then 70 waits each of 40, 80, 160 and 320 µs, each right after a
    /// 10.24 ms wait (about 2.9 s more): the short waits of two-wait plans
    /// as a 10 ms sleep meets them, which on some hosts wake later after a
    /// long idle than in a row of short ones (host kind D,
    /// `docs/traces.md`); the oracle prices such plans' second waits with
    /// them ([`Oracle`](super::Oracle)), and a profile of the recording keeps
    /// them in its short buckets.
    fn default() -> Self {
        RecordOptions {
            lengths_ns: default_lengths_ns(),
            rounds: 3,
            total_ns: 12_000_000_000,
            min_block_waits: 67,
            max_block_waits: 1500,
            seed: 1,
            after_lengths_ns: default_after_lengths_ns(),
            after_long_ns: 10_240_000,
            after_waits: 70,
        }
    }
}

impl RecordOptions {
    /// The lengths recorded right after a long wait: `after_lengths_ns`,
    /// none when `after_waits` is 0.
    pub fn after_lengths(&self) -> &[u64] {
        if self.after_waits == 0 {
            &[]
        } else {
            &self.after_lengths_ns
        }
    }

    /// The blocks [`record`] reports progress in: one per (round, length),
    /// then one per length recorded right after a long wait.
    pub fn blocks(&self) -> usize {
        self.rounds as usize * self.lengths_ns.len() + self.after_lengths().len()
    }
}

/// 40, 80, 160 and 320 µs: recorded lengths in the buckets of two-wait
/// plans' short waits (32 µs … 524 µs).
pub fn default_after_lengths_ns() -> Vec<u64> {
    vec![40_000, 80_000, 160_000, 320_000]
}

/// 5 µs, 10 µs, … 20.48 ms (13 lengths, doubling).
pub fn default_lengths_ns() -> Vec<u64> {
    (0..13).map(|k| 5_000u64 << k).collect()
}

/// Where a recording is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordProgress {
    /// Blocks finished.
    pub blocks_done: usize,
    /// Blocks in all.
    pub blocks: usize,
    /// Waits so far.
    pub waits: usize,
    /// Wall time so far (ns).
    pub elapsed_ns: u64,
}

/// SplitMix64: the deterministic generator behind the shuffles and the
/// oracle's draws.
#[derive(Clone, Debug)]
pub(super) struct SplitMix64(pub(super) u64);

impl SplitMix64 {
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub(super) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..n (n ≥ 1), by rejection.
    pub(super) fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }
}

/// The length order of each round: a Fisher–Yates shuffle per round from
/// one SplitMix64 stream seeded with `seed`.
pub fn round_orders(lengths_ns: &[u64], rounds: u32, seed: u64) -> Vec<Vec<u64>> {
    let mut rng = SplitMix64(seed);
    (0..rounds)
        .map(|_| {
            let mut order = lengths_ns.to_vec();
            for i in (1..order.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                order.swap(i, j);
            }
            order
        })
        .collect()
}

/// Records a trace on this machine's real OS, as the format says: the
/// calling thread's timer slack is set to 1 ns (best effort: if the kernel
/// refuses, the trace shows the default slack), then for each round, for each
/// length L in that round's shuffled order, a block of consecutive waits:
/// read the thread CPU clock and `CLOCK_MONOTONIC` (issue time), wait with
/// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` until issue + L (resumed
/// to the same target after a signal), read `CLOCK_MONOTONIC` (overshoot =
/// it − target) and the thread CPU clock. A block runs until its share of
/// `total_ns` has passed, within `min_block_waits..=max_block_waits` waits.
/// `progress` is called after every block.
///
/// This blocks the calling thread for about `total_ns` (more if the minimum
/// wait counts overrun it). Off Linux the waits are `std::thread::sleep`.
pub fn record(
    options: &RecordOptions,
    mut progress: impl FnMut(RecordProgress),
) -> Result<Trace, TraceError> {
    let o = options;
    if o.lengths_ns.is_empty() {
        return Err(TraceError::Options("no lengths to record".into()));
    }
    if o.lengths_ns.contains(&0) {
        return Err(TraceError::Options(
            "a length of 0 ns (lengths must be positive)".into(),
        ));
    }
    if o.rounds == 0 {
        return Err(TraceError::Options("0 rounds (at least 1)".into()));
    }
    if o.min_block_waits == 0 || o.min_block_waits > o.max_block_waits {
        return Err(TraceError::Options(format!(
            "waits per block {}..={} (need 1 ≤ min ≤ max)",
            o.min_block_waits, o.max_block_waits
        )));
    }
    let after_lengths = o.after_lengths();
    if !after_lengths.is_empty() && (o.after_long_ns == 0 || after_lengths.contains(&0)) {
        return Err(TraceError::Options(
            "a length of 0 ns after a long wait, or a long wait of 0 ns (lengths must be positive)"
                .into(),
        ));
    }
    let _ = crate::sys::set_timer_slack_ns(1);
    let orders = round_orders(&o.lengths_ns, o.rounds, o.seed);
    let blocks = o.blocks();
    // `total_ns` is the rounds' time: the waits after a long one come on top.
    let block_ns = o.total_ns / (orders.len() * o.lengths_ns.len()) as u64;
    let start = crate::sys::monotonic_ns();
    let mut rows = Vec::new();
    let mut done = 0;
    for (round, order) in orders.iter().enumerate() {
        for &len in order {
            let block_start = crate::sys::monotonic_ns();
            let mut n = 0u32;
            loop {
                rows.push(one_wait(round as u32, len));
                n += 1;
                let spent = crate::sys::monotonic_ns().saturating_sub(block_start);
                if n >= o.max_block_waits || (n >= o.min_block_waits && spent >= block_ns) {
                    break;
                }
            }
            done += 1;
            progress(RecordProgress {
                blocks_done: done,
                blocks,
                waits: rows.len(),
                elapsed_ns: crate::sys::monotonic_ns().saturating_sub(start),
            });
        }
    }
    // The short waits after a long one, each length in a block of pairs,
    // in the order of one more shuffle.
    let mut after = Vec::new();
    let after_order = round_orders(after_lengths, 1, o.seed ^ 0xa5a5_a5a5);
    for &len in after_order.first().map_or(&[][..], Vec::as_slice) {
        for _ in 0..o.after_waits {
            let target = crate::sys::monotonic_ns().saturating_add(o.after_long_ns);
            while crate::sys::wait_until(target) == OsWake::Interrupted {}
            after.push(AfterRow {
                row: one_wait(o.rounds, len),
                after_ns: o.after_long_ns,
            });
        }
        done += 1;
        progress(RecordProgress {
            blocks_done: done,
            blocks,
            waits: rows.len() + after.len(),
            elapsed_ns: crate::sys::monotonic_ns().saturating_sub(start),
        });
    }
    Trace::from_rows_named(rows, "(recording)")?.with_after_rows(after)
}

/// One absolute OS wait of `len` from now, measured: how late it woke and
/// the thread CPU it cost.
fn one_wait(round: u32, len: u64) -> TraceRow {
    let cpu0 = crate::sys::thread_cpu_ns();
    let issue = crate::sys::monotonic_ns();
    let target = issue.saturating_add(len);
    while crate::sys::wait_until(target) == OsWake::Interrupted {}
    let after = crate::sys::monotonic_ns();
    let cpu1 = crate::sys::thread_cpu_ns();
    TraceRow {
        round,
        os_wait_ns: len,
        overshoot_ns: after as i64 - target as i64,
        thread_cpu_ns: cpu1.saturating_sub(cpu0),
    }
}

// ------------------------------------------------------------------- oracle
