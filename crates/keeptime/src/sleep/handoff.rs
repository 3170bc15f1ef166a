//! The hand-off: the last stretch of a spin-finished sleep, spun by the
//! outermost call (`spec/sleep.md`, *Hand-off*).

use crate::platform::Platform;

/// Where a sleep stands when it hands off to its outermost call: the last
/// clock reading, and the deadline still to spin to (`until <= now` when
/// nothing is left: the deadline passed, or the mode ends without a spin).
///
/// A language binding that must do something of its own between the
/// sleeper's work and the return (Python re-acquires its interpreter lock)
/// does it first and then calls [`finish`](Handoff::finish) last, so the
/// spin's exit is still the return (`spec/sleep.md`, *Hand-off*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handoff {
    /// The sleep's last clock reading (platform nanoseconds).
    pub now: u64,
    /// Where the last stretch ends: the deadline, or `<= now` when nothing
    /// is left to spin.
    pub until: u64,
}

impl Handoff {
    /// Nothing left to spin: the sleep ends at `now`.
    pub fn done(now: u64) -> Self {
        Handoff { now, until: now }
    }

    /// The final spin, in the caller's outermost frame: pauses until the
    /// clock reads `until` and returns that reading (the sleep's value).
    #[inline(always)]
    pub fn finish<P: Platform + ?Sized>(self, platform: &P) -> u64 {
        let mut now = self.now;
        while now < self.until {
            platform.relax();
            now = platform.now_ns();
        }
        now
    }

    /// The reading a schedule records for this sleep (`spec/ticker.md`,
    /// *Hand-off*): the deadline when a last stretch is left to spin, else
    /// the sleep's own reading.
    #[inline]
    pub fn recorded_ns(&self) -> u64 {
        self.now.max(self.until)
    }

    /// [`finish`](Self::finish), then how far its last reading passed
    /// `until`: `Some` when there was a stretch to spin (a tick's lateness
    /// is then the spin's, not the recorded one), `None` when nothing was
    /// left.
    #[inline(always)]
    pub fn finish_overrun<P: Platform + ?Sized>(self, platform: &P) -> Option<u64> {
        let spun = self.until > self.now;
        let woke = self.finish(platform);
        spun.then(|| woke - self.until)
    }
}
