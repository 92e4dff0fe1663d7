//! The serde types of a scenario file (RON).
//!
//! Every struct denies unknown fields, so a typo is an error with its line and column, never
//! silently ignored. Every default is the real default documented in the seeds or in
//! `shared/reference/dirac.md`, cited on the field; the few defaults that belong to pilotsim
//! itself (warm-up, sampling interval) say so.

use serde::{Deserialize, Serialize};

use super::dirac::DiracConfig;
use super::expect::Expectations;
use super::factory::FactoryConfig;
use super::panda::PandaConfig;
pub use crate::engine::distribution::Distribution;
pub use crate::grid::config::{Ce, GpuInventory, Link, Site, Storage};
pub use crate::workload::config::{Arrival, JobStream};

/// A whole scenario: the grid, the WMS configurations (DIRAC, PanDA) and the workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name; outputs go to `results/<name>/` by default.
    pub name: String,
    /// What the scenario shows, in a sentence or two.
    #[serde(default)]
    pub description: String,
    /// Master seed of every random stream (overridden by `--seed`).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time span, in seconds.
    pub duration_s: f64,
    /// Sampling and warm-up of the recorded metrics.
    #[serde(default)]
    pub output: OutputSettings,
    /// Sites and their computing elements.
    pub sites: Vec<Site>,
    /// Network links between sites: they carry the PanDA WMS's file transfers, and their
    /// queued files and throughput feed PanDA's brokerage.
    #[serde(default)]
    pub network: Vec<Link>,
    /// Storage endpoints (Rucio RSEs) at the sites: space, tape or disk, LAN/WAN status (used by
    /// PanDA brokerage and the data model: outputs take space at the nucleus).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storages: Vec<Storage>,
    /// The DIRAC WMS: groups, task queues, matcher, priorities, director. At least one WMS
    /// section (`dirac` or `panda`) is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirac: Option<DiracConfig>,
    /// The PanDA WMS: queues, nuclei, gshares, gdpconfig, Harvester and its workload
    /// (`scenario::panda`), run by `wms::panda` alone or beside DIRAC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub panda: Option<PandaConfig>,
    /// Pilot factories (seed 003; `scenario::factory`): generic or startd pilots for a site's CEs,
    /// for DIRAC or a PanDA queue, run in place of the WMS's own submission at those CEs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub factory: Vec<FactoryConfig>,
    /// Job streams submitted during the run (DIRAC's; empty for a PanDA-only scenario).
    #[serde(default)]
    pub workload: Vec<JobStream>,
    /// Thresholds that `pilotsim check` verifies on the summary.
    #[serde(default)]
    pub expect: Expectations,
}

fn default_seed() -> u64 {
    1
}

impl Scenario {
    /// The `dirac` section, created with its defaults if absent (for edits and tests).
    pub fn dirac_mut(&mut self) -> &mut DiracConfig {
        self.dirac.get_or_insert_with(DiracConfig::default)
    }
}

/// How metrics are sampled. These defaults are pilotsim's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputSettings {
    /// Time excluded from achieved-share and deviation metrics while the grid fills up (2 h).
    pub warmup_s: f64,
    /// Interval between rows of `timeseries.parquet` (600 s).
    pub sample_interval_s: f64,
    /// A share has converged once |running share − target| stays within this (0.05).
    pub convergence_tolerance: f64,
}

impl Default for OutputSettings {
    fn default() -> Self {
        Self { warmup_s: 7200.0, sample_interval_s: 600.0, convergence_tolerance: 0.05 }
    }
}
