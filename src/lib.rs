//! pilotsim — a deterministic discrete-event simulator of pilot-based grid workload
//! management (DIRAC, PanDA).
//!
//! Layers (each may use those below it, never those above), see `DESIGN.md`:
//! `report` → `sim` → `metrics` → `scenario` → `grid`, `workload` → `dirac` → `engine`.

pub mod dirac;
pub mod engine;
pub mod grid;
pub mod ids;
pub mod metrics;
pub mod report;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod wms;
pub mod workload;

/// The pilotsim version recorded in every output.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
