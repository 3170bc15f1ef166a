//! The tail target: the share of exact sleeps allowed to end late.

use std::fmt;

/// The share of sleeps a [`Sleeper`](super::Sleeper) in [`Mode::Exact`](super::Mode::Exact) lets end late because
/// the OS woke the thread after the deadline. keeptime picks, per sleep, the
/// plan with the least expected CPU whose predicted late share meets it.
///
/// Held in parts per million: shares must lie strictly between 0 and 1 and
/// be at least 10⁻⁶; anything else is an error, never clamped.
///
/// ```
/// use keeptime::TailTarget;
///
/// assert_eq!(TailTarget::default(), TailTarget::BALANCED);     // 1 %
/// let t = TailTarget::new(0.002)?;                             // 0.2 %
/// assert_eq!(t.ppm(), 2_000);
/// assert!(TailTarget::new(1.5).is_err());
/// assert!(TailTarget::new(5e-7).is_err()); // below the resolution: an error, not rounded
/// assert_eq!("strict".parse::<TailTarget>()?, TailTarget::STRICT);
/// # Ok::<(), keeptime::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TailTarget {
    ppm: u32,
}

impl TailTarget {
    /// 5 % of sleeps may end late: the cheapest preset.
    pub const RELAXED: TailTarget = TailTarget { ppm: 50_000 };
    /// 1 % of sleeps may end late (the default): a spin-level p99.
    pub const BALANCED: TailTarget = TailTarget { ppm: 10_000 };
    /// 0.1 % of sleeps may end late: a spin-level p99.9, at a higher CPU price.
    pub const STRICT: TailTarget = TailTarget { ppm: 1_000 };

    /// A target from a share in `(0, 1)`, e.g. `0.01` for 1 %. NaN, shares
    /// outside `(0, 1)` and shares below 10⁻⁶ (the resolution) are errors.
    pub fn new(share: f64) -> Result<Self, crate::Error> {
        let bad = || crate::Error::InvalidTailTarget(format!("{share}"));
        if !(1e-6..1.0).contains(&share) {
            return Err(bad());
        }
        let ppm = (share * 1e6).round();
        if !(1.0..=999_999.0).contains(&ppm) {
            return Err(bad());
        }
        Ok(TailTarget { ppm: ppm as u32 })
    }

    /// A target in parts per million (`1..=999_999`).
    pub fn from_ppm(ppm: u32) -> Result<Self, crate::Error> {
        if (1..=999_999).contains(&ppm) {
            Ok(TailTarget { ppm })
        } else {
            Err(crate::Error::InvalidTailTarget(format!("{ppm} ppm")))
        }
    }

    /// The share, e.g. `0.01`.
    pub fn share(self) -> f64 {
        f64::from(self.ppm) / 1e6
    }

    /// The share in parts per million.
    pub fn ppm(self) -> u32 {
        self.ppm
    }
}

impl Default for TailTarget {
    fn default() -> Self {
        TailTarget::BALANCED
    }
}

impl fmt::Display for TailTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} %", f64::from(self.ppm) / 1e4)
    }
}

impl std::str::FromStr for TailTarget {
    type Err = crate::Error;
    /// `relaxed`, `balanced`, `strict`, a share (`0.01`) or a percentage (`1%`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        match t.to_ascii_lowercase().as_str() {
            "relaxed" => return Ok(TailTarget::RELAXED),
            "balanced" | "default" => return Ok(TailTarget::BALANCED),
            "strict" => return Ok(TailTarget::STRICT),
            _ => {}
        }
        let bad = || crate::Error::InvalidTailTarget(s.to_owned());
        let share = match t.strip_suffix('%') {
            Some(p) => p.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
            None => t.parse::<f64>().map_err(|_| bad())?,
        };
        TailTarget::new(share).map_err(|_| bad())
    }
}
