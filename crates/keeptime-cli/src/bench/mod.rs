//! `keeptime bench`: every way of waiting, measured side by side on this
//! machine, in the project's bench result format (`spec/bench-result.md`).
//!
//! * [`args`]: the command line of `keeptime bench`.
//! * [`methods`]: the waits being compared, one table.
//! * [`plan`]: how many samples each cell gets within the time budget.
//! * [`runner`]: runs the cells with the recording kept out of the timed path.
//! * [`crowd`]: `--crowd N`, many sleepers at once on few cores.
//! * [`stats`]: exact statistics and the histogram of one cell.
//! * [`result`]: what the runner and the crowd measured (cells, crowd rows).
//! * [`report`]: the result document (the JSON format), with the machine.
//!
//! Imports go one way: `args`, `runner` and `crowd` use `methods`, `plan`,
//! `stats` and `result`; `report` uses `result`; nothing uses `runner` or
//! `crowd` but the command itself.

pub mod args;
pub mod command;
pub mod crowd;
pub mod methods;
pub mod plan;
pub mod report;
pub mod result;
pub mod runner;
pub mod stats;

pub use methods::Method;
pub use plan::{BenchConfig, CellPlan};
pub use report::BenchReport;
pub use result::{CellResult, Family};
