//! `keeptime latency`: periodic wake-up latency measured the way rt-tests'
//! `cyclictest` does (see `args::LATENCY_ABOUT` and spec/bench-result.md,
//! "The periodic schedule").
//!
//! * [`args`]: the options and their value parsers.
//! * [`runner`]: the measuring loops.
//! * [`stats`]: per-thread and merged figures, overruns.
//! * [`histogram`]: cyclictest's histogram layout.
//! * [`report`]: the JSON document and the text tables.

pub mod args;
pub mod histogram;
pub mod report;
pub mod runner;
pub mod stats;

pub use args::{CpuSet, LatencyArgs};

use crate::{sched, UsageError};
use anyhow::Result;
use std::fmt;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, RwLock};
use std::time::Duration;

/// A way of waiting for each periodic deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// cyclictest's loop: `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`.
    ClockNanosleep,
    /// `keeptime::Ticker` with the default sleeper (`Mode::Exact`).
    Keeptime,
    /// `keeptime::Ticker` with `Mode::Efficient`.
    KeeptimeEfficient,
    /// A busy loop on the clock.
    Spin,
}

/// What a latency method is: one row per method.
struct MethodRow {
    method: Method,
    name: &'static str,
    family: crate::bench::Family,
    may_return_early: bool,
    description: &'static str,
}

/// Every method, in the order `--method` lists them.
const METHODS: [MethodRow; 4] = [
    MethodRow {
        method: Method::ClockNanosleep,
        name: "clock-nanosleep",
        family: crate::bench::Family::OsSleep,
        may_return_early: false,
        description: "cyclictest's loop: clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to start + k·interval, passed deadlines skipped; the thread's own timer slack",
    },
    MethodRow {
        method: Method::Keeptime,
        name: "keeptime",
        family: crate::bench::Family::Keeptime,
        may_return_early: false,
        description: "keeptime::Ticker (MissedTicks::Skip) with the default sleeper, Mode::Exact",
    },
    MethodRow {
        method: Method::KeeptimeEfficient,
        name: "keeptime-efficient",
        family: crate::bench::Family::Keeptime,
        may_return_early: true,
        description: "keeptime::Ticker (MissedTicks::Skip) with Mode::Efficient: OS wait only, may wake early",
    },
    MethodRow {
        method: Method::Spin,
        name: "spin",
        family: crate::bench::Family::SpinWithPause,
        may_return_early: false,
        description: "spin with the pause hint on CLOCK_MONOTONIC to start + k·interval: one CPU per thread",
    },
];

impl Method {
    /// Every method, in the order `--method` lists them.
    pub const ALL: [Method; METHODS.len()] = {
        let mut all = [Method::Spin; METHODS.len()];
        let mut i = 0;
        while i < METHODS.len() {
            all[i] = METHODS[i].method;
            i += 1;
        }
        all
    };

    fn row(self) -> &'static MethodRow {
        METHODS
            .iter()
            .find(|r| r.method == self)
            .expect("every method has a row in METHODS")
    }

    /// The name on the command line and in results.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// One line.
    pub fn description(self) -> &'static str {
        self.row().description
    }

    /// What kind of wait it is.
    pub fn family(self) -> crate::bench::Family {
        self.row().family
    }

    /// Whether it may wake before its deadline by design.
    pub fn may_return_early(self) -> bool {
        self.row().may_return_early
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown method {}: expected clock-nanosleep, keeptime, keeptime-efficient or spin",
                    crate::duration::quoted(s)
                )
            })
    }
}

/// Set by SIGINT; the loops end at their next wake-up.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    // An atomic store is async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

fn catch_ctrl_c() {
    // SAFETY: the handler only stores to an atomic; `sigaction` gets a valid,
    // zero-initialised struct with the handler set.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
}

/// What was in force for a run (what the machine granted, not what was asked).
#[derive(Clone, Debug, Default)]
pub struct InForce {
    /// SCHED_FIFO priority, if granted.
    pub priority: Option<u32>,
    /// mlockall held.
    pub mlock: bool,
    /// /dev/cpu_dma_latency held at this value.
    pub dma_latency_us: Option<u32>,
    /// CPU by thread, if pinned.
    pub affinity: Option<Vec<Option<u32>>>,
    /// One line per refused knob.
    pub refused: Vec<String>,
}

/// A finished (or interrupted) run of one method.
#[derive(Clone, Debug)]
pub struct MethodRun {
    /// The method.
    pub method: Method,
    /// Per-thread measurements.
    pub threads: Vec<runner::ThreadRun>,
    /// CPU per thread.
    pub cpus: Vec<Option<u32>>,
}

/// Resolved options.
#[derive(Clone, Debug)]
pub struct Config {
    /// Period, ns.
    pub interval_ns: u64,
    /// Run length per method, ns.
    pub run_ns: u64,
    /// Threads per method.
    pub threads: u32,
    /// Methods, in order.
    pub methods: Vec<Method>,
    /// CPU for each thread, if pinned.
    pub cpus: Vec<Option<u32>>,
    /// Histogram bound, µs.
    pub histogram_us: Option<u64>,
}

/// Checks the options together and resolves defaults; a usage error (exit 2)
/// before anything starts.
pub fn configure(a: &LatencyArgs) -> Result<Config, UsageError> {
    if let Some(us) = a.histogram {
        if u128::from(us) * 1000 < u128::from(a.interval) {
            return Err(UsageError(format!(
                "histogram bound {} is below the interval {}: it must be at least the interval",
                crate::output::format::duration(us * 1000),
                crate::output::format::duration(a.interval)
            )));
        }
    }
    let allowed = sched::allowed_cpus().unwrap_or_default();
    let threads = a
        .threads
        .unwrap_or_else(|| (allowed.len().max(1) as u32).min(args::MAX_THREADS));
    let cpus: Vec<Option<u32>> = match &a.affinity {
        None => vec![None; threads as usize],
        Some(set) => {
            let list: Vec<u32> = match set {
                CpuSet::Each => allowed.iter().map(|&c| c as u32).collect(),
                CpuSet::List(l) => l.clone(),
            };
            if let Some(bad) = list.iter().find(|&&c| !allowed.contains(&(c as usize))) {
                return Err(UsageError(format!(
                    "--affinity: CPU {bad} is not in this process's allowed CPUs ({})",
                    sched::cpu_list(&allowed)
                )));
            }
            if list.is_empty() {
                return Err(UsageError(
                    "--affinity: no CPU is allowed for this process".into(),
                ));
            }
            (0..threads as usize)
                .map(|i| Some(list[i % list.len()]))
                .collect()
        }
    };
    let mut methods = a.method.clone();
    if methods.is_empty() {
        methods.push(Method::ClockNanosleep);
    }
    let mut seen = Vec::new();
    methods.retain(|m| {
        let new = !seen.contains(m);
        seen.push(*m);
        new
    });
    Ok(Config {
        interval_ns: a.interval,
        run_ns: a.duration,
        threads,
        methods,
        cpus,
        histogram_us: a.histogram,
    })
}

/// Warnings are printed once each.
#[derive(Default)]
struct Warnings(Vec<String>);

impl Warnings {
    fn warn(&mut self, w: String) {
        if !self.0.contains(&w) {
            eprintln!("warning: {w}");
            self.0.push(w);
        }
    }
}

fn mlock_all() -> Result<(), String> {
    // SAFETY: mlockall takes flags only.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::ENOMEM) => format!(
            "--mlock: mlockall refused ({e}): needs CAP_IPC_LOCK or an RLIMIT_MEMLOCK (`ulimit -l`) above the process size; memory not locked"
        ),
        _ => format!("--mlock: mlockall failed: {e}; memory not locked"),
    })
}

/// Runs every method with all its threads; returns the runs and what was in force.
fn run_methods(cfg: &Config, priority: Option<u32>, quiet: bool) -> (Vec<MethodRun>, InForce) {
    let mut warnings = Warnings::default();
    let mut in_force = InForce {
        priority,
        affinity: cfg
            .cpus
            .iter()
            .any(Option::is_some)
            .then(|| cfg.cpus.clone()),
        ..InForce::default()
    };
    let mut runs = Vec::new();
    for &method in &cfg.methods {
        if STOP.load(Ordering::SeqCst) {
            break;
        }
        let n = cfg.threads as usize;
        let lives: Arc<Vec<runner::Live>> =
            Arc::new((0..n).map(|_| runner::Live::default()).collect());
        // Threads apply their knobs, report, then wait here until every
        // warning is printed, so they all start measuring together.
        let gate = Arc::new(RwLock::new(()));
        let closed = gate.write().unwrap_or_else(|e| e.into_inner());
        let (tx, rx) = mpsc::channel::<Vec<String>>();
        let mut handles = Vec::with_capacity(n);
        for (i, cpu) in cfg.cpus.iter().copied().enumerate() {
            let (g, t, l) = (gate.clone(), tx.clone(), lives.clone());
            let (interval, run_ns) = (cfg.interval_ns, cfg.run_ns);
            let spawned = std::thread::Builder::new()
                .name(format!("latency-{i}"))
                .spawn(move || {
                    let mut refused = Vec::new();
                    if let Some(c) = cpu {
                        if let Err(e) = sched::pin_to_cpu(c) {
                            refused.push(format!("--affinity: {e}"));
                        }
                    }
                    if let Some(p) = priority {
                        if let Err(e) = sched::set_fifo_priority(p) {
                            refused.push(format!("{e}; running under the default policy"));
                        }
                    }
                    let _ = t.send(refused);
                    drop(t);
                    drop(g.read().unwrap_or_else(|e| e.into_inner()));
                    runner::measure(method, interval, run_ns, &l[i], &STOP)
                });
            match spawned {
                Ok(h) => handles.push(h),
                // This thread is simply missing from the results.
                Err(e) => warnings.warn(format!("could not start measuring thread {i}: {e}")),
            }
        }
        drop(tx);
        for refused in rx.iter() {
            for r in refused {
                if r.starts_with("--priority") {
                    in_force.priority = None;
                }
                if r.starts_with("--affinity") {
                    in_force.affinity = None;
                }
                if !in_force.refused.contains(&r) {
                    in_force.refused.push(r.clone());
                }
                warnings.warn(r);
            }
        }
        drop(closed);
        let live = LiveLine::new(method, cfg.run_ns, quiet);
        while handles.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(Duration::from_millis(250));
            live.update(&lives);
        }
        live.finish();
        let threads: Vec<runner::ThreadRun> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect();
        runs.push(MethodRun {
            method,
            threads,
            cpus: cfg.cpus.clone(),
        });
    }
    (runs, in_force)
}

/// The live line on stderr: elapsed, and per thread the current and worst max.
struct LiveLine {
    bar: indicatif::ProgressBar,
    method: Method,
    run_ns: u64,
    started: std::time::Instant,
}

impl LiveLine {
    fn new(method: Method, run_ns: u64, quiet: bool) -> Self {
        let target = if quiet || !std::io::stderr().is_terminal() {
            indicatif::ProgressDrawTarget::hidden()
        } else {
            indicatif::ProgressDrawTarget::stderr()
        };
        let bar = indicatif::ProgressBar::with_draw_target(None, target);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        LiveLine {
            bar,
            method,
            run_ns,
            started: std::time::Instant::now(),
        }
    }

    fn update(&self, lives: &[runner::Live]) {
        if self.bar.is_hidden() {
            return;
        }
        let us = |v: i64| {
            if v == i64::MIN {
                "-".to_owned()
            } else {
                format!("{:.1}", v as f64 / 1000.0)
            }
        };
        let mut msg = format!(
            "{} {:.1}s/{:.1}s · max µs now/worst:",
            self.method,
            self.started.elapsed().as_secs_f64(),
            self.run_ns as f64 / 1e9
        );
        for (i, l) in lives.iter().enumerate() {
            let cur = l.current_max.swap(i64::MIN, Ordering::Relaxed);
            let worst = l.worst_max.load(Ordering::Relaxed);
            msg.push_str(&format!(" T{i} {}/{}", us(cur), us(worst)));
        }
        self.bar.set_message(msg);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// `keeptime latency`.
pub fn run(a: LatencyArgs) -> Result<()> {
    let cfg = configure(&a)?;
    // Before the export file is created: a caller that sees the file may send SIGINT.
    catch_ctrl_c();
    let json_target = a.export_json.as_deref().map(crate::export::Target::parse);
    if let Some(crate::export::Target::File(p)) = &json_target {
        // Fail on a bad path before measuring, not after.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .map_err(|e| anyhow::anyhow!("cannot write export file '{}': {e}", p.display()))?;
    }

    let slack = os_slack();
    let machine = crate::bench::report::Machine::this(slack);
    let created = crate::bench::report::rfc3339(std::time::SystemTime::now());

    let mut pre_refused = Vec::new();
    let mlock = if a.mlock {
        match mlock_all() {
            Ok(()) => true,
            Err(w) => {
                eprintln!("warning: {w}");
                pre_refused.push(w);
                false
            }
        }
    } else {
        false
    };
    let hint = match a.dma_latency {
        None => None,
        Some(v) => match keeptime::pmqos::IdleLatencyHint::request(v) {
            Ok(h) => Some(h),
            Err(e) => {
                let w = format!("--dma-latency {v}: {e}; running without it");
                eprintln!("warning: {w}");
                pre_refused.push(w);
                None
            }
        },
    };

    let (runs, mut in_force) = run_methods(&cfg, a.priority, a.quiet);
    in_force.mlock = mlock;
    in_force.dma_latency_us = hint.as_ref().map(|h| h.in_force_us());
    drop(hint);
    pre_refused.append(&mut in_force.refused);
    in_force.refused = pre_refused;
    let interrupted = STOP.load(Ordering::SeqCst);
    if interrupted {
        eprintln!("interrupted: reporting what was measured");
    }

    let doc = report::document(&cfg, &runs, &in_force, machine, created, interrupted);
    let text = report::render_text(&cfg, &runs, &in_force, interrupted);
    let to_stdout = matches!(json_target, Some(crate::export::Target::Stdout));
    let mut main_out = String::new();
    if let Some(bound) = cfg.histogram_us {
        // Everything but the histogram rows is a `#` comment, as in cyclictest's output.
        for line in text.lines() {
            main_out.push_str("# ");
            main_out.push_str(line);
            main_out.push('\n');
        }
        for r in &runs {
            if cfg.methods.len() > 1 {
                main_out.push_str(&format!("# Method: {}\n", r.method));
            }
            let hs: Vec<histogram::ThreadHistogram> = r
                .threads
                .iter()
                .map(|t| histogram::ThreadHistogram::new(&t.errors, bound))
                .collect();
            main_out.push_str(&histogram::render(&hs));
        }
    } else {
        main_out = text;
    }
    if to_stdout {
        eprint!("{main_out}");
    } else {
        print!("{main_out}");
    }
    if let Some(t) = json_target {
        let mut bytes = serde_json::to_vec_pretty(&doc)?;
        bytes.push(b'\n');
        match t {
            crate::export::Target::Stdout => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                out.write_all(&bytes)?;
                out.flush()?;
            }
            crate::export::Target::File(p) => std::fs::write(&p, &bytes)
                .map_err(|e| anyhow::anyhow!("cannot write export file '{}': {e}", p.display()))?,
        }
    }
    Ok(())
}

fn os_slack() -> Option<u64> {
    keeptime::os::timer_slack_ns().ok()
}
