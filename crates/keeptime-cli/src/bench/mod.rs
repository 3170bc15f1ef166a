//! `keeptime bench`: every way of waiting, measured side by side on this
//! machine, in the project's bench result format (`spec/bench-result.md`).
//!
//! * [`methods`]: the waits being compared, one small type each.
//! * [`plan`]: how many samples each cell gets within the time budget.
//! * [`runner`]: runs the cells with the recording kept out of the timed path.
//! * [`stats`]: exact statistics and the histogram of one cell.
//! * [`report`]: the result document (the JSON format), with the machine.
//! * [`crowd`]: `--crowd N`, many sleepers at once on few cores.

pub mod crowd;
pub mod methods;
pub mod plan;
pub mod report;
pub mod runner;
pub mod stats;

pub use methods::Method;
pub use plan::{BenchConfig, CellPlan};
pub use report::{BenchReport, CellResult};
