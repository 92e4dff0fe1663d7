//! Report output of a simulation run.
//!
//! [`charts`] renders slide-ready charts (1600×900 PNG and SVG, in memory): share
//! convergence, pilots over time and waiting-time distributions. The caller writes
//! the bytes to files.

mod axis;
pub mod charts;
mod frame;
mod legend;
mod scene;
#[cfg(test)]
mod tests;

pub use charts::{
    ChartError, EntityShare, Line, PilotsOverTime, Rendered, ShareConvergence, WaitTimes,
    pilots_over_time, share_convergence, wait_time_distribution,
};
pub mod outputs;
