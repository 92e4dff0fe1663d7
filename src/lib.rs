//! pilotsim — a deterministic discrete-event simulator of pilot-based grid workload
//! management (DIRAC, PanDA).
//!
//! Layers, top to bottom; each module uses only those below it (DESIGN.md, "Layers";
//! enforced by `tests/it/layers.rs`, which reads every `crate::` path outside the tests):
//!
//! ```text
//! main.rs, cli/      the binary: parse, dispatch one function per command, one exit policy
//! sweep              many runs: grids, replicas, shards, Slurm arrays, merge, tune, check
//! run                one run end to end: prepare -> simulate -> write
//! report             charts (PNG + SVG), the outputs of a run, the HTML report
//! sim                the world: the only place where time passes; applies the actions of the
//!                    WMSs and provisioners, knowing each only by its trait
//! wms                the boundaries (news in, actions out): `Wms` and its implementations dirac,
//!                    panda, push; `provision::Provisioner` (who owns pilots beside a WMS) and
//!                    its implementation `factories` (seed 003's pilot factories)
//! metrics            the recorder (observes only), summaries, Parquet tables
//! scenario           scenario files, validation, imports (DIRAC cfg, CRIC), generated scenarios
//! dirac, panda,      the DIRAC and PanDA decision modules (and gdpconfig), and seed 003's pilot
//! factory            factory (generic and startd pilots, standby policies): pure, engine-agnostic
//! grid, workload     the neutral model: CEs and pilots, network transfers, storage; jobs,
//!                    accounting, share entities
//! ids                job, pilot, CE, site, entity and WMS ids
//! engine             time, event queue, random streams, samplers, digest
//! ```
//!
//! `report` sits below `run` (DESIGN.md draws it above): a run writes its outputs through
//! `report::outputs`, and nothing in `report` needs a run.

pub mod compare;
pub mod dirac;
pub mod engine;
pub mod factory;
pub mod grid;
pub mod ids;
pub mod metrics;
pub mod panda;
pub mod report;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod wms;
pub mod workload;

/// The pilotsim version recorded in every output.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
