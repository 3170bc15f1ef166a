//! What a sleeper has spent (`spec/sleep.md`, *Stats*).

/// What a [`Sleeper`](super::Sleeper) has spent so far: see [`Sleeper::stats`](super::Sleeper::stats).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SleeperStats {
    /// Sleeps that had to wait (deadline not yet passed when called).
    pub sleeps: u64,
    /// Sleeps that ended after their deadline because an OS wait woke the
    /// thread late (a spin-finished sleep is never counted here).
    pub late: u64,
    /// OS waits issued (a wait resumed after a signal counts once).
    pub os_waits: u64,
    /// Time spent spinning, in nanoseconds.
    pub spin_ns: u64,
    /// Estimated thread CPU: the learned cost of each OS wait plus the spin.
    pub cpu_estimate_ns: u64,
    /// Sleeps whose OS waits ended at a margin learned from fewer samples
    /// than the tail target needs (`(n + 1) · target < 1`,
    /// `spec/sleep.md`, *Unproven sleeps*): for these the sleeper cannot
    /// promise the target, only its most cautious margin (the latest wake-up
    /// it has seen of that length or longer). A young sleeper at a strict
    /// target has many; the late share of the other sleeps is what the
    /// target governs.
    pub unproven_sleeps: u64,
}

impl SleeperStats {
    /// `late / sleeps` (0 before the first sleep).
    pub fn late_share(&self) -> f64 {
        if self.sleeps == 0 {
            0.0
        } else {
            self.late as f64 / self.sleeps as f64
        }
    }
}
