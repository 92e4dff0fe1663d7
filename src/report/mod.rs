//! Report output of a simulation run.
//!
//! [`charts`] renders slide-ready charts (1600×900 PNG and SVG, in memory): share
//! convergence, pilots over time and waiting-time distributions. [`outputs`] writes
//! them, with the other outputs of a run, to files.

mod axis;
mod canvas;
pub mod charts;
mod colorbar;
mod frame;
pub mod html;
mod legend;
mod marks;
pub mod outputs;
mod scene;
pub mod sweep_charts;
#[cfg(test)]
mod tests;

pub use charts::{
    ChartError, EntityShare, Line, PilotsOverTime, Rendered, ShareConvergence, WaitTimes, pilots_over_time,
    share_convergence, wait_time_distribution,
};
pub use sweep_charts::{BandPoint, BandSeries, HeatMap, MetricVsParam, heat_map, metric_vs_param};
