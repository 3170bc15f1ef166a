//! The default profile: where the sleepers keeptime keeps for itself start
//! (`spec/estimator.md`, *Default sleepers*).
//!
//! Those sleepers are the per-thread ones behind [`sleep`](crate::sleep),
//! [`sleep_until`](crate::sleep_until) and the other free functions (and so
//! behind the C API's `kt_sleep*` and Python's `keeptime.sleep`), and the
//! async waiter's (`keeptime::tokio`, Python's `keeptime.asyncio`). They
//! start fresh unless the program sets a default profile: then each one is
//! replaced, at its next sleep, by a new sleeper started from it.

use crate::estimate::MarginEstimator;
use crate::profile::Profile;
use crate::{Platform, Sleeper, SleeperBuilder};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once, PoisonError, RwLock};

/// The environment variable naming a profile for keeptime's own sleepers
/// when the program sets none (`spec/estimator.md`, *Default sleepers*).
pub const PROFILE_ENV: &str = "KEEPTIME_PROFILE";

/// Run once per process: the default from [`PROFILE_ENV`], or nothing when
/// the program set or cleared the default first.
static FROM_ENV: Once = Once::new();

/// Bumped (under the lock) each time the default changes.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// The default profile's loaded model: loaded once, copied into each
/// default sleeper (31 KiB), never loaded again per thread.
static DEFAULT: RwLock<Option<Arc<MarginEstimator>>> = RwLock::new(None);

/// Sets the profile that keeptime's own sleepers start from, or clears it
/// with `None` (`spec/estimator.md`, *Default sleepers*).
///
/// keeptime's own sleepers are the per-thread ones behind
/// [`sleep`](crate::sleep), [`sleep_until`](crate::sleep_until) and
/// [`sleep_until_monotonic_ns`](crate::sleep_until_monotonic_ns) (and the C
/// API's `kt_sleep*`), and the async waiter's (`keeptime::tokio`). Each one,
/// at its next sleep and before planning it, is replaced by a new sleeper
/// with its usual settings started from `profile`, as
/// [`SleeperBuilder::profile`] starts one: no learning period of hundreds
/// of sleeps in which one slow wake-up is the margin. What it had learned,
/// and its stats, are dropped. `None` replaces each with a fresh sleeper the
/// same way. A [`Sleeper`] the program built itself is never touched. A
/// ticker made without a sleeper of the program's ([`Ticker::new`](crate::Ticker::new))
/// starts from the profile in force when it is made, and keeps its sleeper.
///
/// Setting cannot fail: [`Profile::load`] already refused a bad file or one
/// made on another machine. keeptime keeps its own copy. Set it once, at
/// start-up: each change throws away what the default sleepers learned since.
///
/// **Without a line of code:** a program that never calls this starts its
/// default sleepers from the profile that the environment variable
/// [`KEEPTIME_PROFILE`](PROFILE_ENV) names, if set and not empty
/// (`KEEPTIME_PROFILE=host.profile ./app`). It is read once, when the first
/// default sleeper is made, and loaded with [`Profile::load`] (machine
/// checked). A file that cannot be loaded fails nothing: one line on stderr,
/// `keeptime: KEEPTIME_PROFILE=PATH: why; keeptime's own sleepers start
/// fresh`, and they start fresh. A call to this function before then wins:
/// the variable is then never read; a call after replaces its profile.
///
/// ```no_run
/// use keeptime::profile::Profile;
/// use std::time::Duration;
///
/// // Written by an earlier run: `keeptime trace --profile host.profile`.
/// let profile = Profile::load("host.profile")?;
/// keeptime::set_default_profile(Some(&profile));
/// keeptime::sleep(Duration::from_millis(1)); // planned on the profile's wake-ups
/// # Ok::<(), keeptime::profile::ProfileError>(())
/// ```
pub fn set_default_profile(profile: Option<&Profile>) {
    // The program's choice wins: the environment is not read after it.
    FROM_ENV.call_once(|| {});
    install(profile);
}

/// Makes `profile` (or none) the default in force.
fn install(profile: Option<&Profile>) {
    let estimator = profile.map(|p| Arc::new(p.estimator()));
    let mut slot = DEFAULT.write().unwrap_or_else(PoisonError::into_inner);
    *slot = estimator;
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

/// The profile at `path` (the value of [`PROFILE_ENV`]; unset or empty:
/// none), machine checked. One that cannot be loaded fails nothing: one
/// line to `warn`, and keeptime's own sleepers start fresh.
fn from_env(path: Option<&std::ffi::OsStr>, warn: &mut dyn Write) -> Option<Profile> {
    let path = path.filter(|p| !p.is_empty())?;
    match Profile::load(path) {
        Ok(profile) => Some(profile),
        Err(e) => {
            // Nowhere else to say it: the program did not ask, its
            // environment did. A failed write is not worth failing a sleep.
            let _ = writeln!(
                warn,
                "keeptime: {PROFILE_ENV}={}: {e}; keeptime's own sleepers start fresh",
                path.to_string_lossy()
            );
            None
        }
    }
}

/// The generation of the default in force: a default sleeper made for
/// another one is replaced before its next sleep.
#[inline]
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// `builder` started from the default profile, if one is set, and the
/// generation it was made for.
pub(crate) fn starting(builder: SleeperBuilder) -> (SleeperBuilder, u64) {
    FROM_ENV.call_once(|| {
        let path = std::env::var_os(PROFILE_ENV);
        if let Some(profile) = from_env(path.as_deref(), &mut std::io::stderr().lock()) {
            install(Some(&profile));
        }
    });
    let slot = DEFAULT.read().unwrap_or_else(PoisonError::into_inner);
    let generation = generation();
    let builder = match slot.as_ref() {
        Some(estimator) => builder.estimator(MarginEstimator::clone(estimator)),
        None => builder,
    };
    (builder, generation)
}

/// One of keeptime's own sleepers, with the generation of the default it
/// started from.
#[derive(Debug)]
pub(crate) struct DefaultSleeper<P: Platform> {
    generation: u64,
    sleeper: Sleeper<P>,
    make: fn() -> (SleeperBuilder, P),
}

impl<P: Platform> DefaultSleeper<P> {
    /// A default sleeper built by `make` (its settings and platform), started
    /// from the default profile in force.
    pub(crate) fn new(make: fn() -> (SleeperBuilder, P)) -> Self {
        let (builder, platform) = make();
        let (builder, generation) = starting(builder);
        DefaultSleeper {
            generation,
            sleeper: builder.build_with(platform),
            make,
        }
    }

    /// The sleeper, replaced first if the default changed since it was made.
    #[inline]
    pub(crate) fn get(&mut self) -> &mut Sleeper<P> {
        if self.generation != generation() {
            *self = DefaultSleeper::new(self.make);
        }
        &mut self.sleeper
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::BUCKETS;
    use crate::sim::SimPlatform;
    use std::time::Duration;

    /// What a model answers: live samples and 1 % margins, per bucket.
    fn answers(e: &MarginEstimator) -> Vec<(usize, u64)> {
        (0..BUCKETS)
            .map(|b| (e.live_samples(b), e.margin(b, 10_000)))
            .collect()
    }

    /// A profile of a simulated sleeper whose OS waits woke 7 µs late.
    fn profile() -> Profile {
        let sim = SimPlatform::new(1_000_000);
        sim.set_default_overshoot(7_000);
        let mut s = Sleeper::builder().build_with(sim.clone());
        for _ in 0..40 {
            s.sleep(Duration::from_micros(700));
        }
        s.profile()
    }

    fn sim_settings() -> (SleeperBuilder, SimPlatform) {
        (Sleeper::builder(), SimPlatform::new(1_000_000))
    }

    /// `from_env` on `path`: the profile's answers (if one loaded) and what
    /// it wrote.
    fn env(path: Option<&std::path::Path>) -> (Option<Vec<(usize, u64)>>, String) {
        let mut warn = Vec::new();
        let p = from_env(path.map(|p| p.as_os_str()), &mut warn);
        let answers = p.map(|p| answers(Sleeper::builder().profile(&p).build().estimator()));
        (answers, String::from_utf8(warn).unwrap())
    }

    #[test]
    fn the_environments_profile_loads_or_says_in_one_line_why_not() {
        let dir = std::env::temp_dir().join(format!("keeptime-env-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = profile();
        let good = dir.join("good.profile");
        p.write(&good).unwrap();
        let from_profile = answers(Sleeper::builder().profile(&p).build().estimator());
        assert_eq!(env(Some(&good)), (Some(from_profile), String::new()));

        // Unset or empty: nothing read, nothing said.
        assert_eq!(env(None), (None, String::new()));
        assert_eq!(env(Some(std::path::Path::new(""))), (None, String::new()));

        // Missing, malformed, another machine's: one line each, the
        // loader's own message in it, and no profile.
        let text = p.to_text();
        let cut = dir.join("cut.profile");
        std::fs::write(&cut, &text[..text.len() - 4]).unwrap();
        let other = dir.join("other.profile");
        let cpus = text
            .lines()
            .find(|l| l.starts_with("cpus_online "))
            .unwrap();
        std::fs::write(&other, text.replacen(cpus, "cpus_online 977", 1)).unwrap();
        for bad in [dir.join("missing.profile"), cut, other] {
            let why = Profile::load(&bad).unwrap_err();
            let line = format!(
                "keeptime: KEEPTIME_PROFILE={}: {why}; keeptime's own sleepers start fresh\n",
                bad.display()
            );
            assert_eq!(env(Some(&bad)), (None, line));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    // One test for the whole process-wide default: tests run in parallel.
    #[test]
    fn default_sleepers_start_from_the_default_profile_and_follow_its_changes() {
        // Fresh to begin with, whatever KEEPTIME_PROFILE says: the program's
        // setting wins over the environment.
        set_default_profile(None);
        let p = profile();
        let from_profile = answers(Sleeper::builder().profile(&p).build().estimator());
        let fresh = answers(Sleeper::new().estimator());
        assert_ne!(from_profile, fresh);

        let mut own = DefaultSleeper::new(sim_settings);
        let built = Sleeper::builder().profile(&p).build();
        assert_eq!(answers(own.get().estimator()), fresh);
        let period = Duration::from_millis(1);
        let ticker_before = crate::Ticker::new(period).unwrap();

        set_default_profile(Some(&p));
        // Replaced at its next use, by a sleeper that has not slept.
        assert_eq!(answers(own.get().estimator()), from_profile);
        assert_eq!(own.get().stats().sleeps, 0);
        // The free functions' sleeper of this thread too.
        crate::THREAD_SLEEPER.with(|c| {
            assert_eq!(answers(c.borrow_mut().get().estimator()), from_profile);
        });
        // A sleeper the program built is never touched.
        assert_eq!(answers(built.estimator()), from_profile);
        let mine = Sleeper::new();
        assert_eq!(answers(mine.estimator()), fresh);
        // A ticker made without a sleeper starts from the default in force
        // when it is made; one made before keeps its sleeper.
        let ticker = crate::Ticker::new(period).unwrap();
        assert_eq!(answers(ticker.sleeper().estimator()), from_profile);
        assert_eq!(answers(ticker_before.sleeper().estimator()), fresh);
        assert_eq!(
            answers(
                Sleeper::builder()
                    .with_default_profile()
                    .build()
                    .estimator()
            ),
            from_profile
        );

        // It then learns as any sleeper, and is kept while the default holds.
        own.get().sleep(Duration::from_millis(50)); // no preemption outlasts 50 ms
        assert_eq!(own.get().stats().sleeps, 1);

        set_default_profile(None);
        assert_eq!(answers(own.get().estimator()), fresh);
        assert_eq!(own.get().stats().sleeps, 0);
        assert_eq!(answers(ticker.sleeper().estimator()), from_profile);
        let after = crate::Ticker::new(period).unwrap();
        assert_eq!(answers(after.sleeper().estimator()), fresh);
        crate::THREAD_SLEEPER.with(|c| {
            assert_eq!(answers(c.borrow_mut().get().estimator()), fresh);
        });
    }
}
