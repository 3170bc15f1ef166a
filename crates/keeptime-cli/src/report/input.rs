//! Reading bench result files (`spec/bench-result.md`, versions 1 and 2)
//! from any runtime. Every problem is one line naming the file and what is
//! wrong. A version-1 file names no family; its methods get one by the
//! format's rule for reading version 1 ([`family_of_v1`]).

use crate::bench::methods::METHODS;
use crate::bench::report::{FORMAT, READABLE_VERSIONS};
use crate::bench::result::{CrowdResult, Family, Return, SleeperAccount};
use crate::bench::stats::{Bucket, Stats};
use crate::bench::{BenchReport, CellResult};
use crate::UsageError;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// One bench result document, as the report needs it. Unknown fields are
/// ignored, as the format's versioning rule asks of readers.
#[derive(Clone, Debug, Deserialize)]
pub struct Doc {
    /// Where it was read from (not part of the document).
    #[serde(skip)]
    pub file: String,
    /// The format version the file was written in (1 or 2).
    #[serde(skip)]
    pub version: u32,
    /// When the run started.
    pub created: String,
    /// The program that measured.
    pub tool: Tool,
    /// The language runtime.
    pub runtime: Runtime,
    /// The machine.
    pub machine: Machine,
    /// How the run was set up.
    pub parameters: Parameters,
    /// What each method is (parsed one by one, so errors can name it).
    #[serde(skip)]
    pub methods: Vec<MethodInfo>,
    /// The cells (parsed one by one, so errors can name the cell).
    #[serde(skip)]
    pub results: Vec<CellResult>,
    /// The optional clock report.
    #[serde(default)]
    pub clocks: Option<Clocks>,
    /// The optional crowd rows (`keeptime bench --crowd N`).
    #[serde(default)]
    pub crowd: Option<Vec<CrowdResult>>,
}

/// `tool`.
#[derive(Clone, Debug, Deserialize)]
pub struct Tool {
    /// Program name.
    pub name: String,
    /// Program version.
    pub version: String,
}

/// `runtime`.
#[derive(Clone, Debug, Deserialize)]
pub struct Runtime {
    /// `rust`, `python`, `go`, `java`, `c`.
    pub language: String,
    /// The implementation.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// `machine`: everything but `os` and `arch` may be null.
#[derive(Clone, Debug, Deserialize)]
pub struct Machine {
    /// `linux`, …
    pub os: String,
    /// `x86_64`, …
    pub arch: String,
    /// Kernel release.
    #[serde(default)]
    pub kernel: Option<String>,
    /// CPU model.
    #[serde(default)]
    pub cpu_model: Option<String>,
    /// CPUs online.
    #[serde(default)]
    pub cpus: Option<u64>,
    /// Clocksource.
    #[serde(default)]
    pub clocksource: Option<String>,
    /// Timer slack before the bench changed it.
    #[serde(default)]
    pub timer_slack_ns: Option<u64>,
    /// Hypervisor.
    #[serde(default)]
    pub virtualization: Option<String>,
    /// Preemption model.
    #[serde(default)]
    pub preemption: Option<String>,
}

/// `parameters`.
#[derive(Clone, Debug, Deserialize)]
pub struct Parameters {
    /// `"sleep"`.
    pub schedule: String,
    /// `"thread"` or `"process"`.
    #[serde(default)]
    pub cpu_clock: Option<String>,
    /// The durations, in run order.
    pub durations_ns: Vec<u64>,
    /// The methods, in run order.
    pub methods: Vec<String>,
    /// Fixed sample count.
    #[serde(default)]
    pub samples: Option<u64>,
    /// Fixed warm-up count.
    #[serde(default)]
    pub warmup: Option<u64>,
    /// Time budget.
    #[serde(default)]
    pub budget_ns: Option<u64>,
    /// Pinned CPU.
    #[serde(default)]
    pub pin_cpu: Option<u64>,
    /// SCHED_FIFO priority.
    #[serde(default)]
    pub priority: Option<u64>,
}

/// `methods[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct MethodInfo {
    /// Name.
    pub name: String,
    /// One line.
    pub description: String,
    /// What kind of wait it is: the file's `family` (version 2), or what
    /// the version-1 rule makes of the entry; `None` when that says nothing.
    pub family: Option<Family>,
    /// Whether it may return early by design.
    pub may_return_early: bool,
}

/// `methods[i]` as written, in either version.
#[derive(Deserialize)]
struct MethodIn {
    name: String,
    description: String,
    may_return_early: bool,
    /// Version 2.
    #[serde(default)]
    family: Option<Family>,
}

/// The family of a version-1 method entry, which has none: the format's
/// rule for reading version 1 (`spec/bench-result.md`, *Reading version 1*).
/// Version 1's `seed` named where a method came from, not what it is (one
/// value stood for busy loops, spins, OS sleeps and hybrids alike), so the
/// rule goes by the name:
///
/// 1. A name of the reference set (`keeptime bench --list`) has that
///    method's family: every runtime uses those names for the same thing.
/// 2. A name starting with `keeptime` is one of keeptime's sleepers.
/// 3. A name with `sleep` or `park` in it is an OS sleep.
/// 4. Anything else: unknown (`None`).
pub fn family_of_v1(name: &str) -> Option<Family> {
    if let Some(m) = METHODS.iter().find(|m| m.name == name) {
        return Some(m.family);
    }
    if name.starts_with("keeptime") {
        return Some(Family::Keeptime);
    }
    if name.contains("sleep") || name.contains("park") {
        return Some(Family::OsSleep);
    }
    None
}

/// `results[i]`, the fields of the format.
#[derive(Deserialize)]
struct CellIn {
    method: String,
    duration_ns: u64,
    warmup: u64,
    timer_slack_ns: Option<u64>,
    samples: u64,
    min_ns: i64,
    mean_ns: f64,
    stddev_ns: f64,
    p50_ns: i64,
    p90_ns: i64,
    p99_ns: i64,
    p999_ns: i64,
    max_ns: i64,
    early: u64,
    cpu_percent: f64,
    wall_ns: u64,
    cpu_ns: u64,
    histogram: Vec<BucketIn>,
    #[serde(default)]
    late_share: Option<f64>,
    #[serde(default)]
    return_p50_ns: Option<i64>,
    #[serde(default)]
    return_p90_ns: Option<i64>,
    #[serde(default)]
    sleeper: Option<SleeperAccount>,
}

#[derive(Deserialize)]
struct BucketIn {
    gt_ns: i64,
    le_ns: i64,
    count: u64,
}

/// The optional `clocks` field: `keeptime clocks --json`.
#[derive(Clone, Debug, Deserialize)]
pub struct Clocks {
    /// One row per clock.
    pub clocks: Vec<ClockRow>,
    /// What the machine part of the clock report adds to `machine`.
    #[serde(default)]
    pub machine: Option<ClocksMachine>,
    /// Findings in plain words.
    #[serde(default)]
    pub findings: Vec<Finding>,
}

/// One clock of the clock report.
#[derive(Clone, Debug, Deserialize)]
pub struct ClockRow {
    /// `MONOTONIC`, …
    pub name: String,
    /// What it is.
    #[serde(default)]
    pub description: Option<String>,
    /// `clock_getres`.
    #[serde(default)]
    pub resolution_ns: Option<u64>,
    /// Smallest observed step.
    #[serde(default)]
    pub granularity_ns: Option<u64>,
    /// Share of reads that repeated the previous value.
    #[serde(default)]
    pub repeat_fraction: Option<f64>,
    /// Cost of one read.
    #[serde(default)]
    pub read_cost_ns: Option<f64>,
    /// Times it went backwards.
    #[serde(default)]
    pub monotonic_violations: Option<u64>,
    /// Whether it could be read at all.
    #[serde(default = "yes")]
    pub available: bool,
    /// Why not.
    #[serde(default)]
    pub error: Option<String>,
}

fn yes() -> bool {
    true
}

/// The machine fields of the clock report the header shows.
#[derive(Clone, Debug, Deserialize)]
pub struct ClocksMachine {
    /// cpuidle driver.
    #[serde(default)]
    pub idle_driver: Option<String>,
    /// Kernel tick rate.
    #[serde(default)]
    pub tick_hz: Option<u64>,
    /// High-resolution timers active.
    #[serde(default)]
    pub high_resolution_timers: Option<bool>,
}

/// One finding of the clock report.
#[derive(Clone, Debug, Deserialize)]
pub struct Finding {
    /// `warning`, `info`, …
    pub severity: String,
    /// The finding.
    pub message: String,
}

impl Doc {
    /// `rust rustc 1.95.0`.
    pub fn runtime_label(&self) -> String {
        let r = &self.runtime;
        format!("{} {} {}", r.language, r.name, r.version)
    }

    /// The cells at `duration_ns`, in run order.
    pub fn cells_at(&self, duration_ns: u64) -> Vec<&CellResult> {
        self.results
            .iter()
            .filter(|c| c.duration_ns == duration_ns)
            .collect()
    }

    /// The durations that have cells, in the order of `parameters`.
    pub fn durations(&self) -> Vec<u64> {
        let mut d: Vec<u64> = self.parameters.durations_ns.clone();
        for c in &self.results {
            if !d.contains(&c.duration_ns) {
                d.push(c.duration_ns);
            }
        }
        d.retain(|x| self.results.iter().any(|c| c.duration_ns == *x));
        d
    }

    /// A run of this binary, read through the same path as a file.
    pub fn from_report(report: &BenchReport, name: &str) -> Result<Doc, UsageError> {
        let value = serde_json::to_value(report)
            .map_err(|e| UsageError(format!("{name}: cannot convert the run: {e}")))?;
        from_value(value, name)
    }
}

/// Reads and checks one result file.
pub fn load(path: &Path) -> Result<Doc, UsageError> {
    let name = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| UsageError(format!("'{name}': cannot read: {e}")))?;
    parse(&bytes, &name)
}

/// Parses and checks one result document; `name` names it in errors.
pub fn parse(bytes: &[u8], name: &str) -> Result<Doc, UsageError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        UsageError(format!(
            "'{name}': not JSON ({e}); expected a keeptime bench result (--export-json)"
        ))
    })?;
    from_value(value, name)
}

fn from_value(mut value: Value, name: &str) -> Result<Doc, UsageError> {
    let bad = |what: String| UsageError(format!("'{name}': {what}"));
    let Some(obj) = value.as_object_mut() else {
        return Err(bad(
            "not a keeptime bench result: the document is not a JSON object".into(),
        ));
    };
    match obj.get("format") {
        Some(Value::String(f)) if f == FORMAT => {}
        Some(other) => {
            return Err(bad(format!(
                "format is {other}, expected \"keeptime-bench\" (spec/bench-result.md)"
            )))
        }
        None => {
            return Err(bad(
                "no \"format\" field: not a keeptime bench result (spec/bench-result.md)".into(),
            ))
        }
    }
    let version = match obj.get("version") {
        Some(v) => match v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| READABLE_VERSIONS.contains(n))
        {
            Some(n) => n,
            None => {
                return Err(bad(format!(
                    "version {v} of the keeptime-bench format; this keeptime reads versions 1 and 2"
                )))
            }
        },
        None => return Err(bad("no \"version\" field".into())),
    };
    let methods = match obj.remove("methods") {
        Some(Value::Array(a)) => a,
        Some(_) => return Err(bad("\"methods\" is not an array".into())),
        None => return Err(bad("missing field `methods`".into())),
    };
    let results = match obj.remove("results") {
        Some(Value::Array(a)) => a,
        Some(_) => return Err(bad("\"results\" is not an array".into())),
        None => return Err(bad("missing field `results`".into())),
    };
    let mut doc: Doc = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
    doc.file = name.to_owned();
    doc.version = version;
    for (i, m) in methods.into_iter().enumerate() {
        let m: MethodIn =
            serde_json::from_value(m).map_err(|e| bad(format!("methods[{i}]: {e}")))?;
        doc.methods
            .push(check_method(m, version).map_err(|e| bad(format!("methods[{i}]: {e}")))?);
    }
    if results.is_empty() {
        return Err(bad("\"results\" is empty: nothing to draw".into()));
    }
    for (i, cell) in results.into_iter().enumerate() {
        let c: CellIn =
            serde_json::from_value(cell).map_err(|e| bad(format!("results[{i}]: {e}")))?;
        let mut cell = check_cell(c).map_err(|e| bad(format!("results[{i}]: {e}")))?;
        cell.family = doc
            .methods
            .iter()
            .find(|m| m.name == cell.method)
            .and_then(|m| m.family);
        doc.results.push(cell);
    }
    Ok(doc)
}

fn check_method(m: MethodIn, version: u32) -> Result<MethodInfo, String> {
    let family = if version >= 2 {
        match m.family {
            Some(f) => Some(f),
            None => return Err("missing field `family` (required from version 2)".into()),
        }
    } else {
        m.family.or_else(|| family_of_v1(&m.name))
    };
    Ok(MethodInfo {
        name: m.name,
        description: m.description,
        family,
        may_return_early: m.may_return_early,
    })
}

fn check_cell(c: CellIn) -> Result<CellResult, String> {
    if c.samples == 0 {
        return Err("samples is 0".into());
    }
    if c.histogram.is_empty() {
        return Err("histogram is empty".into());
    }
    let mut total: u64 = 0;
    let mut last_le = i64::MIN;
    for b in &c.histogram {
        if b.gt_ns >= b.le_ns || b.gt_ns < last_le {
            return Err(format!(
                "histogram bucket ({}, {}] is out of order or empty-width",
                b.gt_ns, b.le_ns
            ));
        }
        last_le = b.le_ns;
        total = total.saturating_add(b.count);
    }
    if total != c.samples {
        return Err(format!(
            "histogram counts add up to {total}, but samples is {}",
            c.samples
        ));
    }
    if !(c.cpu_percent.is_finite() && c.cpu_percent >= 0.0) {
        return Err(format!("cpu_percent {} is not a percentage", c.cpu_percent));
    }
    let ret = match (c.return_p50_ns, c.return_p90_ns) {
        (Some(p50_ns), Some(p90_ns)) if p50_ns <= p90_ns => Some(Return { p50_ns, p90_ns }),
        (None, None) => None,
        (Some(a), Some(b)) => {
            return Err(format!("return_p50_ns {a} is more than return_p90_ns {b}"))
        }
        _ => return Err("return_p50_ns and return_p90_ns come together".into()),
    };
    if let Some(l) = c.late_share {
        if !(0.0..=1.0).contains(&l) {
            return Err(format!("late_share {l} is not a share in [0, 1]"));
        }
    }
    Ok(CellResult {
        sleeper: c.sleeper,
        family: None,
        late_share: c.late_share,
        ret,
        method: c.method,
        duration_ns: c.duration_ns,
        warmup: c.warmup,
        timer_slack_ns: c.timer_slack_ns,
        stats: Stats {
            samples: c.samples,
            min_ns: c.min_ns,
            mean_ns: c.mean_ns,
            stddev_ns: c.stddev_ns,
            p50_ns: c.p50_ns,
            p90_ns: c.p90_ns,
            p99_ns: c.p99_ns,
            p999_ns: c.p999_ns,
            max_ns: c.max_ns,
            early: c.early,
            cpu_percent: c.cpu_percent,
            wall_ns: c.wall_ns,
            cpu_ns: c.cpu_ns,
            histogram: c
                .histogram
                .into_iter()
                .map(|b| Bucket {
                    gt_ns: b.gt_ns,
                    le_ns: b.le_ns,
                    count: b.count,
                })
                .collect(),
        },
    })
}
