//! Report output of a simulation run.
//!
//! [`charts`] renders slide-ready charts (1600×900 PNG and SVG, in memory): share
//! convergence, pilots over time and waiting-time distributions. [`outputs`] writes
//! them, with the other outputs of a run, to files.
//!
//! Inside, the modules are layered without cycles (a test checks it): `style` (sizes,
//! colours, palette, [`ChartError`]) at the bottom; `axis`, `scene`, `canvas`, then the
//! legend, colour bar and marks drawn on a canvas; `frame`, which lays them out and
//! renders a scene; and the charts on top.

mod axis;
mod canvas;
pub mod charts;
mod colorbar;
mod frame;
pub mod html;
mod legend;
mod marks;
#[cfg(test)]
mod module_graph;
pub mod outputs;
mod scene;
mod style;
pub mod sweep_charts;
#[cfg(test)]
mod tests;

pub use charts::{
    ChartError, EntityShare, Line, PilotsOverTime, Rendered, ShareConvergence, WaitTimes, pilots_over_time,
    share_convergence, wait_time_distribution,
};
pub use sweep_charts::{BandPoint, BandSeries, HeatMap, MetricVsParam, heat_map, metric_vs_param};
