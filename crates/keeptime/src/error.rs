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
}
