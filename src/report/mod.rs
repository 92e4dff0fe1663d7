//! Report output of a simulation run.
//!
//! [`charts`] renders slide-ready charts (1600×900 PNG and SVG, in memory): share
//! convergence, pilots over time and waiting-time distributions. [`outputs`] writes
//! them, with the other outputs of a run, to files.

mod axis;
mod canvas;
pub mod charts;
mod frame;
mod legend;
pub mod html;
pub mod outputs;
mod scene;
#[cfg(test)]
mod tests;

pub use charts::{
    ChartError, EntityShare, Line, PilotsOverTime, Rendered, ShareConvergence, WaitTimes, pilots_over_time,
    share_convergence, wait_time_distribution,
};
