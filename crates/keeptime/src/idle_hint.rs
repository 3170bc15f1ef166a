//! The idle-latency hint of a sleeper or ticker (`spec/idle-hint.md`): the
//! validated value ([`IdleHint`]), what a sleeper holds ([`IdleHintHolder`])
//! and what it reports ([`IdleHintStatus`]). The request itself is the
//! process-wide, reference-counted one of [`pmqos`](crate::pmqos).

use crate::pmqos::{self, refusal_warning, HintError, IdleLatencyHint, MAX_LATENCY_US};
use crate::Error;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The most wake-up latency, in whole microseconds, a sleeper asks the kernel
/// to allow while it lives: a PM QoS CPU latency request on
/// `/dev/cpu_dma_latency` ([`SleeperBuilder::idle_hint`](crate::SleeperBuilder::idle_hint)).
///
/// The kernel reads an `s32` of µs, so the accepted values are
/// `0..=2_147_483_647`; anything else is [`Error::InvalidIdleHint`], never
/// clamped. [`IdleHint::ZERO`] (what cyclictest holds) is the usual choice.
///
/// **Price.** Idle CPUs poll instead of sleeping: more power, and on a
/// virtual machine the host sees the vCPU as busy.
///
/// ```
/// use keeptime::IdleHint;
/// use std::time::Duration;
///
/// assert_eq!(IdleHint::from_micros(10)?.micros(), 10);
/// assert!(IdleHint::from_micros(1 << 31).is_err());             // past the kernel's s32
/// assert_eq!(IdleHint::new(Duration::from_nanos(1_999))?.micros(), 1); // truncated
/// assert_eq!("10us".parse::<IdleHint>()?, IdleHint::from_micros(10)?);
/// assert_eq!("0".parse::<IdleHint>()?, IdleHint::ZERO);
/// assert_eq!(IdleHint::ZERO.to_string(), "0 µs");
/// # Ok::<(), keeptime::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IdleHint {
    us: u32,
}

impl IdleHint {
    /// 0 µs: idle CPUs poll (cyclictest's default).
    pub const ZERO: IdleHint = IdleHint { us: 0 };
    /// The largest value the kernel accepts, 2 147 483 647 µs.
    pub const MAX: IdleHint = IdleHint { us: MAX_LATENCY_US };

    /// A hint of `us` microseconds.
    ///
    /// # Errors
    /// [`Error::InvalidIdleHint`] above 2 147 483 647 (`i32::MAX`).
    pub fn from_micros(us: u32) -> Result<Self, Error> {
        if us <= MAX_LATENCY_US {
            Ok(IdleHint { us })
        } else {
            Err(Error::InvalidIdleHint(format!("{us} µs")))
        }
    }

    /// A hint of `latency` in **whole microseconds, truncated**: 1.999 µs is
    /// 1 µs (a lower value is a stricter bound, so truncation never asks for
    /// more latency than given).
    ///
    /// # Errors
    /// [`Error::InvalidIdleHint`] when the whole µs exceed 2 147 483 647.
    pub fn new(latency: Duration) -> Result<Self, Error> {
        let us = latency.as_micros();
        match u32::try_from(us) {
            Ok(us) if us <= MAX_LATENCY_US => Ok(IdleHint { us }),
            _ => Err(Error::InvalidIdleHint(format!("{us} µs"))),
        }
    }

    /// The hint in microseconds.
    pub fn micros(self) -> u32 {
        self.us
    }
}

impl fmt::Display for IdleHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} µs", self.us)
    }
}

impl std::str::FromStr for IdleHint {
    type Err = Error;
    /// Whole microseconds, with an optional `us` or `µs` suffix: `0`, `10`,
    /// `10us`, `10 µs`. Signs, fractions and other units are errors.
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || Error::InvalidIdleHint(format!("{s:?}"));
        let t = s.trim();
        let digits = t
            .strip_suffix("us")
            .or_else(|| t.strip_suffix("µs"))
            .unwrap_or(t)
            .trim_end();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let us: u32 = digits.parse().map_err(|_| bad())?;
        IdleHint::from_micros(us).map_err(|_| bad())
    }
}

/// Whether a sleeper's (or ticker's) idle-latency hint is in force:
/// [`Sleeper::idle_hint_status`](crate::Sleeper::idle_hint_status).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdleHintStatus {
    /// Built without a hint: the device was never opened for it.
    NotAsked,
    /// The request is held while the sleeper (or a clone of it) lives.
    Held {
        /// The value this sleeper asked for, µs.
        asked_us: u32,
        /// The value in force for the process (the strictest live request
        /// of any sleeper, ticker or [`IdleLatencyHint`]), µs: `<= asked_us`.
        in_force_us: u32,
    },
    /// The device could not be opened or written: the sleeper works exactly
    /// as without the hint.
    Refused {
        /// The value this sleeper asked for, µs.
        asked_us: u32,
        /// Why: names the device and the reason.
        error: HintError,
    },
}

impl fmt::Display for IdleHintStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdleHintStatus::NotAsked => f.write_str("not asked"),
            IdleHintStatus::Held {
                asked_us,
                in_force_us,
            } => write!(f, "held: {in_force_us} µs in force (asked {asked_us} µs)"),
            IdleHintStatus::Refused { asked_us, error } => {
                write!(f, "refused ({asked_us} µs asked): {error}")
            }
        }
    }
}

/// What one sleeper, ticker or binding object holds of the idle-latency
/// hint: nothing, a share of the process's request, or the refusal.
///
/// Clones share the request; it is released when the last clone is dropped.
/// The request goes through the process's reference-counted holder
/// ([`pmqos::IdleLatencyHint::request`]): the strictest live value is in
/// force. Runtimes built on the core (Python, C) use it for their own objects.
#[derive(Clone, Debug, Default)]
pub struct IdleHintHolder {
    state: Hold,
}

#[derive(Clone, Debug, Default)]
enum Hold {
    #[default]
    NotAsked,
    Held(Arc<IdleLatencyHint>),
    Refused {
        asked_us: u32,
        error: HintError,
    },
}

impl IdleHintHolder {
    /// Asks for `hint` (nothing for `None`). A refusal is recorded, never
    /// returned as an error: see [`refusal`](Self::refusal).
    pub fn request(hint: Option<IdleHint>) -> Self {
        let state = match hint {
            None => Hold::NotAsked,
            Some(h) => match pmqos::global().request(h.micros()) {
                Ok(guard) => Hold::Held(Arc::new(guard)),
                Err(error) => Hold::Refused {
                    asked_us: h.micros(),
                    error,
                },
            },
        };
        IdleHintHolder { state }
    }

    /// [`request`](Self::request), and on a refusal the process's one stderr
    /// warning ([`pmqos::refusal_warning`]) if `warn` and no refusal was warned
    /// about before ([`pmqos::claim_refusal_warning`]).
    pub(crate) fn request_warning(hint: Option<IdleHint>, warn: bool) -> Self {
        let holder = Self::request(hint);
        if let Some(e) = holder.refusal() {
            if warn && pmqos::claim_refusal_warning() {
                eprintln!("{}", refusal_warning(e));
            }
        }
        holder
    }

    /// What is held now.
    pub fn status(&self) -> IdleHintStatus {
        match &self.state {
            Hold::NotAsked => IdleHintStatus::NotAsked,
            Hold::Held(guard) => IdleHintStatus::Held {
                asked_us: guard.value_us(),
                in_force_us: guard.in_force_us(),
            },
            Hold::Refused { asked_us, error } => IdleHintStatus::Refused {
                asked_us: *asked_us,
                error: error.clone(),
            },
        }
    }

    /// Why the hint was refused, if it was.
    pub fn refusal(&self) -> Option<&HintError> {
        match &self.state {
            Hold::Refused { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pmqos::fake::{Event, Fake};
    use crate::pmqos::{with_test_registry, Registry};
    use crate::sim::SimPlatform;
    use crate::{MissedTicks, Sleeper, Ticker};
    use std::path::PathBuf;

    fn hint(us: u32) -> IdleHint {
        IdleHint::from_micros(us).unwrap()
    }

    fn held(asked_us: u32, in_force_us: u32) -> IdleHintStatus {
        IdleHintStatus::Held {
            asked_us,
            in_force_us,
        }
    }

    #[test]
    fn value_range_is_the_kernels_s32() {
        assert_eq!(IdleHint::ZERO.micros(), 0);
        assert_eq!(IdleHint::MAX.micros(), 2_147_483_647);
        assert_eq!(IdleHint::from_micros(i32::MAX as u32), Ok(IdleHint::MAX));
        let e = IdleHint::from_micros(1 << 31).unwrap_err();
        assert_eq!(e, Error::InvalidIdleHint("2147483648 µs".into()));
        assert_eq!(
            e.to_string(),
            "idle latency hint 2147483648 µs is not a whole number of µs from 0 to 2147483647 (e.g. 0, 10 or 10us)"
        );
        assert!(IdleHint::from_micros(u32::MAX).is_err());
    }

    #[test]
    fn durations_truncate_to_whole_micros() {
        let us = |d| IdleHint::new(d).map(IdleHint::micros);
        assert_eq!(us(Duration::ZERO), Ok(0));
        assert_eq!(us(Duration::from_nanos(999)), Ok(0));
        assert_eq!(us(Duration::from_nanos(1_999)), Ok(1));
        assert_eq!(us(Duration::from_millis(2)), Ok(2_000));
        assert_eq!(
            us(Duration::from_micros(i32::MAX as u64)),
            Ok(i32::MAX as u32)
        );
        assert!(us(Duration::from_micros(1 << 31)).is_err());
        assert!(us(Duration::MAX).is_err());
    }

    #[test]
    fn parses_whole_micros_with_an_optional_unit() {
        for (text, want) in [
            ("0", 0),
            ("10", 10),
            ("10us", 10),
            ("10 us", 10),
            ("10µs", 10),
            (" 7 µs ", 7),
            ("2147483647", 2_147_483_647),
        ] {
            assert_eq!(text.parse::<IdleHint>(), Ok(hint(want)), "{text:?}");
        }
        for text in [
            "",
            "us",
            "-1",
            "+1",
            "1.5",
            "10ms",
            "10 s",
            "0x10",
            "2147483648",
            "99999999999999999999",
            "ten",
        ] {
            let e = text.parse::<IdleHint>().unwrap_err();
            assert_eq!(e, Error::InvalidIdleHint(format!("{text:?}")), "{text:?}");
        }
        for us in [0, 10, 2_147_483_647] {
            assert_eq!(hint(us).to_string().parse::<IdleHint>(), Ok(hint(us)));
        }
    }

    #[test]
    fn sleepers_hold_the_request_while_they_live() {
        use Event::*;
        let fake = Fake::default();
        let reg = Registry::new(fake.clone());
        with_test_registry(&reg, || {
            let plain = Sleeper::builder().build();
            assert_eq!(plain.idle_hint_status(), IdleHintStatus::NotAsked);
            assert_eq!(fake.log(), []); // never opened without a hint

            let a = Sleeper::builder().idle_hint(hint(50)).build();
            assert_eq!(fake.log(), [Open, Write(50)]);
            assert_eq!(a.idle_hint_status(), held(50, 50));

            // A simulated sleeper holds it too: it is a process resource.
            let b = Sleeper::builder()
                .idle_hint(IdleHint::ZERO)
                .build_with(SimPlatform::new(1_000_000));
            assert_eq!(fake.log(), [Open, Write(50), Write(0)]);
            assert_eq!((a.idle_hint_status(), reg.holders()), (held(50, 0), 2));

            // A clone shares its original's request.
            let a2 = a.clone();
            assert_eq!(reg.holders(), 2);
            drop(a);
            assert_eq!(a2.idle_hint_status(), held(50, 0));
            drop(b); // the strictest goes: relaxed to 50
            assert_eq!(fake.log(), [Open, Write(50), Write(0), Write(50)]);
            drop(a2); // the last one: closed
            assert_eq!(fake.log().last(), Some(&Close));
            assert_eq!((reg.holders(), reg.in_force_us()), (0, None));
            drop(plain);
        });
    }

    #[test]
    fn set_idle_hint_requests_the_new_value_before_releasing_the_old() {
        use Event::*;
        let fake = Fake::default();
        let reg = Registry::new(fake.clone());
        with_test_registry(&reg, || {
            let mut s = Sleeper::builder().idle_hint(hint(30)).build();
            s.set_idle_hint(Some(hint(5)));
            // No close and reopen between the two: the request never lapses.
            assert_eq!(fake.log(), [Open, Write(30), Write(5)]);
            assert_eq!((s.idle_hint_status(), reg.holders()), (held(5, 5), 1));
            s.set_idle_hint(None);
            assert_eq!(fake.log(), [Open, Write(30), Write(5), Close]);
            assert_eq!(s.idle_hint_status(), IdleHintStatus::NotAsked);
            s.set_idle_hint(Some(IdleHint::ZERO));
            assert_eq!(fake.log()[4..], [Open, Write(0)]);
            drop(s);
            assert_eq!(fake.log().last(), Some(&Close));
        });
    }

    #[test]
    fn tickers_carry_their_sleepers_hint() {
        use Event::*;
        let fake = Fake::default();
        let reg = Registry::new(fake.clone());
        with_test_registry(&reg, || {
            let sleeper = Sleeper::builder()
                .idle_hint(hint(20))
                .build_with(SimPlatform::new(1_000_000));
            let mut t =
                Ticker::with_sleeper(Duration::from_micros(100), MissedTicks::Skip, sleeper)
                    .unwrap();
            assert_eq!(t.idle_hint_status(), held(20, 20));
            assert_eq!(t.tick().index, 1);
            t.set_idle_hint(Some(hint(10)));
            assert_eq!(t.sleeper().idle_hint_status(), held(10, 10));
            assert_eq!(fake.log(), [Open, Write(20), Write(10)]);
            drop(t);
            assert_eq!(fake.log().last(), Some(&Close));
            assert_eq!(reg.holders(), 0);
        });
    }

    #[test]
    fn a_refused_hint_builds_and_sleeps_without_it() {
        let path = PathBuf::from("/dev/cpu_dma_latency");
        let fake = Fake {
            refuse_open: Some(HintError::NotPermitted { path: path.clone() }),
            ..Fake::default()
        };
        let reg = Registry::new(fake.clone());
        with_test_registry(&reg, || {
            let mut s = Sleeper::builder()
                .idle_hint(IdleHint::ZERO)
                .warn_refused_hint(false)
                .build();
            let error = HintError::NotPermitted { path };
            assert_eq!(
                s.idle_hint_status(),
                IdleHintStatus::Refused {
                    asked_us: 0,
                    error: error.clone()
                }
            );
            assert_eq!(reg.holders(), 0);
            // It sleeps as any sleeper does: never early (real clock).
            for _ in 0..20 {
                let deadline = crate::os::monotonic_ns() + 200_000;
                let woke = s.sleep_until_ns(deadline);
                assert!(woke >= deadline && crate::os::monotonic_ns() >= deadline);
            }
            // Each counted once, in the stats and the model alike (a sleep whose
            // deadline passed before it began, its thread descheduled that long,
            // is none: an invariant, not a count).
            let counted = s.stats().sleeps;
            assert!(counted <= 20, "{counted} sleeps counted");
            assert_eq!(counted, s.estimator().sleeps());
            assert_eq!(
                refusal_warning(&error),
                "keeptime: warning: /dev/cpu_dma_latency not held: permission denied \
                 (writing it needs root or write access to the device); sleeping without \
                 the idle-latency hint"
            );
            assert_eq!(
                s.idle_hint_status().to_string(),
                format!("refused (0 µs asked): {error}")
            );
        });
    }

    #[test]
    fn the_refusal_warning_is_claimed_once_per_process() {
        // Whoever called first (maybe another test), every later call is false.
        let _ = pmqos::claim_refusal_warning();
        assert!(!pmqos::claim_refusal_warning());
        assert!(!pmqos::claim_refusal_warning());
    }

    #[test]
    fn holders_of_a_real_file_write_the_value_and_statuses_display() {
        let dir = std::env::temp_dir().join(format!("keeptime-idle-hint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dev = dir.join("cpu_dma_latency");
        std::fs::write(&dev, b"").unwrap();
        let reg = Registry::new(pmqos::DeviceFile::new(&dev));
        with_test_registry(&reg, || {
            let h = IdleHintHolder::request(Some(hint(7)));
            assert_eq!(pmqos::read_in_force(&dev).unwrap(), 7);
            assert_eq!(h.status().to_string(), "held: 7 µs in force (asked 7 µs)");
            assert!(h.refusal().is_none());
            assert_eq!(IdleHintStatus::NotAsked.to_string(), "not asked");
        });
        let missing = Registry::new(pmqos::DeviceFile::new(dir.join("nope")));
        with_test_registry(&missing, || {
            let h = IdleHintHolder::request(Some(IdleHint::ZERO));
            assert!(matches!(h.refusal(), Some(HintError::NoDevice { .. })));
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
