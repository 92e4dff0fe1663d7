//! Report output of a simulation run.
//!
//! [`charts`] renders slide-ready charts (1600×900 PNG and SVG, in memory): share
//! convergence, pilots over time and waiting-time distributions; [`panda_charts`] those of a
//! PanDA run (queue waits, queue lengths, link backlog); [`factory_charts`] those of a run with
//! pilot factories (throughput against the closed forms, waits by job kind, standby pilots).
//! [`outputs`] writes them, with the other outputs of a run, to files. [`html`] is the HTML
//! report of a run or sweep directory, and [`explain`] reads a PanDA run's tables back to tell
//! why a job went where it went.
//!
//! Inside, the modules are layered without cycles (a test checks it): `style` (sizes,
//! colours, palette, [`ChartError`]) and `png` (the charts' PNG encoder) at the bottom;
//! `axis`, `scene`, `canvas`, then the legend, colour bar and marks drawn on a canvas;
//! `frame`, which lays them out and renders a scene; and the charts on top.

mod axis;
mod brush;
mod canvas;
pub mod charts;
mod colorbar;
pub mod compare_charts;
pub mod explain;
pub mod factory_charts;
mod frame;
pub mod gpu_charts;
pub mod html;
mod legend;
mod marks;
#[cfg(test)]
mod module_graph;
pub mod outputs;
pub mod panda_charts;
mod png;
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
