//! Errors of the keeptime API.

/// What can go wrong when configuring keeptime.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A [`Ticker`](crate::Ticker) period of zero would be a busy loop.
    #[error("ticker period must be greater than zero")]
    ZeroPeriod,
    /// A mode name other than `exact`, `efficient` or `spin`.
    #[error("unknown mode {0:?} (expected exact, efficient or spin)")]
    UnknownMode(String),
    /// A missed-tick policy name other than `burst`, `delay` or `skip`.
    #[error("unknown missed-tick policy {0:?} (expected burst, delay or skip)")]
    UnknownPolicy(String),
    /// A tail target that is not a share strictly between 0 and 1 (at least 10⁻⁶).
    #[error("tail target {0} is not a share strictly between 0 and 1 (at least 0.000001; or relaxed, balanced, strict, or a percentage like 1%)")]
    InvalidTailTarget(String),
    /// An idle-latency hint that is not a whole number of µs from 0 to
    /// 2 147 483 647 (the kernel's `s32`; see [`IdleHint`](crate::IdleHint)).
    #[error("idle latency hint {0} is not a whole number of µs from 0 to 2147483647 (e.g. 0, 10 or 10us)")]
    InvalidIdleHint(String),
}
