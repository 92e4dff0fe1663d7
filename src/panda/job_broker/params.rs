//! `JobBrokerParams`: the gdpconfig keys production job brokerage reads (component `jobbroker`,
//! app `jedi`, vo `atlas`, plus `WORK_SHORTAGE` of component `core`), with panda-server 1.0.4's
//! defaults (reference `panda.md` §2 "Parameters"; AtlasProdJobBroker.py line numbers below), and
//! the variant switch between the seed page and the code.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::inputs::QueueStatus;

use crate::panda::network::{NetworkSettings, NetworkVariant};

/// `(component, key)` pairs [`JobBrokerParams`] reads; families with a per-label / per-gshare
/// suffix are written as their prefix ending in `_`.
pub const GDPCONFIG_KEYS: &[(&str, &str)] = &[
    ("jobbroker", "NW_ACTIVE"),
    ("jobbroker", "NW_QUEUE_IMPORTANCE"),
    ("jobbroker", "NW_THRESHOLD"),
    ("jobbroker", "NQUEUED_SAT_CAP"),
    ("jobbroker", "NQUEUED_NUC_CAP_FOR_JOBS"),
    ("jobbroker", "NW_WEIGHT_MULTIPLIER"),
    ("jobbroker", "IO_INTENSITY_CUTOFF"),
    ("jobbroker", "MAX_PRIO_TO_BOOTSTRAP"),
    ("core", "WORK_SHORTAGE"),
    ("jobbroker", "MIN_WEIGHT_"),
    ("jobbroker", "MAX_DISKIO_DEFAULT"),
    ("jobbroker", "STORAGE_MIN_FREE_SIZE"),
    ("jobbroker", "SIZE_CUTOFF_TO_MOVE_INPUT"),
    ("jobbroker", "NUM_CUTOFF_TO_MOVE_INPUT"),
    ("jobbroker", "NQUEUELIMITSITE_"),
];

/// `NQUEUELIMITSITE_<gshare>` when unset or 0 (`cutOffValue`, L1727-1732).
pub const DEFAULT_NQUEUELIMITSITE: u64 = 20;
/// `MAX_DISKIO_DEFAULT` when unset or 0 (L669-671): 10¹⁰ kB/s per core, i.e. no limit.
pub const DEFAULT_MAX_DISKIO: f64 = 1.0e10;
/// `STORAGE_MIN_FREE_SIZE` when unset or 0 (L996-999), GB.
pub const DEFAULT_STORAGE_MIN_FREE_SIZE: f64 = 200.0;

/// Seed page (default) or panda-server 1.0.4, where they disagree (module doc, "Variants").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum JobBrokerVariant {
    /// Seed 004, "ATLAS Production Job Brokerage", read literally.
    #[default]
    Seed,
    /// `AtlasProdJobBroker.doBrokerage` of panda-server 1.0.4 (reference §2).
    PandaServer,
}

impl JobBrokerVariant {
    /// Whether the status filter (L386-424) lets a PQ of this CRIC status through: online or
    /// standby in the code, online only in the seed.
    pub fn accepts_status(self, status: QueueStatus) -> bool {
        match self {
            JobBrokerVariant::PandaServer => matches!(status, QueueStatus::Online | QueueStatus::Standby),
            JobBrokerVariant::Seed => status == QueueStatus::Online,
        }
    }
}

/// gdpconfig of production job brokerage. Field = key in snake_case; `Default` = the code's
/// fallback when the key is missing from `PANDA.CONFIG` (ATLAS production values may differ).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JobBrokerParams {
    /// `NW_ACTIVE` (jobbroker, jedi; default **false**, L53-55): the network weight multiplies
    /// the PQ weight and gates express tasks only when true.
    pub nw_active: bool,
    /// `NW_QUEUE_IMPORTANCE` (jobbroker, jedi; default 0.5, L57-60).
    pub nw_queue_importance: f64,
    /// `NW_THRESHOLD` (jobbroker, jedi; default 1.7, L62-64).
    pub nw_threshold: f64,
    /// `NQUEUED_SAT_CAP` (jobbroker, jedi; default 150 files, L66-68).
    pub nqueued_sat_cap: u64,
    /// `NQUEUED_NUC_CAP_FOR_JOBS` (jobbroker, jedi; default 10000 files, L70-72).
    pub nqueued_nuc_cap_for_jobs: u64,
    /// `NW_WEIGHT_MULTIPLIER` (jobbroker, jedi; default 1, L74-76).
    pub nw_weight_multiplier: f64,
    /// `IO_INTENSITY_CUTOFF` (jobbroker, jedi; default 200 kB/s, L78-80): above it the
    /// input-move cutoff applies.
    pub io_intensity_cutoff: f64,
    /// `MAX_PRIO_TO_BOOTSTRAP` (jobbroker, jedi; default 150, L82-84): highest task priority
    /// that may bootstrap an empty PQ or use Harvester workers / `numSlots` as running.
    pub max_prio_to_bootstrap: i64,
    /// `WORK_SHORTAGE` (**core**, jedi; default unset = false, L151).
    pub work_shortage: bool,
    /// `MIN_WEIGHT_<prodSourceLabel>_<gshare>`, then `MIN_WEIGHT_<prodSourceLabel>` (jobbroker,
    /// jedi; default 0 = off, L171-177), keyed by the suffix after `MIN_WEIGHT_`
    /// (`"managed_MC Simulation"`, `"managed"`). See [`JobBrokerParams::min_weight`].
    pub min_weight: BTreeMap<String, f64>,
    /// `MAX_DISKIO_DEFAULT` (jobbroker, jedi; default 10¹⁰ kB/s per core, L669-671); 0 or unset
    /// means the default (the code's `if not value`).
    pub max_diskio_default: Option<f64>,
    /// `STORAGE_MIN_FREE_SIZE` (jobbroker, jedi; default 200 GB, L996-999); 0 or unset means
    /// the default.
    pub storage_min_free_size: Option<f64>,
    /// `SIZE_CUTOFF_TO_MOVE_INPUT` (jobbroker, jedi; default 10 GB, L1616-1618).
    pub size_cutoff_to_move_input: f64,
    /// `NUM_CUTOFF_TO_MOVE_INPUT` (jobbroker, jedi; default 100 files, L1619-1621).
    pub num_cutoff_to_move_input: u64,
    /// `NQUEUELIMITSITE_<gshare>` (jobbroker, jedi; default 20, L1727-1732), keyed by gshare;
    /// see [`JobBrokerParams::nqueuelimitsite`].
    pub nqueuelimitsite: BTreeMap<String, u64>,
    /// Seed (default) or panda-server behaviour of the brokerage rules.
    pub variant: JobBrokerVariant,
    /// The variant of the link check and network weight (`panda::network`), which is not the
    /// job broker's: a scenario sets it from `panda.variants.network`
    /// (`PandaConfig::job_broker_params`). Not a gdpconfig key, so never read from or written to
    /// `gdpconfig.job_broker`.
    #[serde(skip)]
    pub network_variant: NetworkVariant,
}

impl Default for JobBrokerParams {
    fn default() -> Self {
        Self {
            nw_active: false,
            nw_queue_importance: 0.5,
            nw_threshold: 1.7,
            nqueued_sat_cap: 150,
            nqueued_nuc_cap_for_jobs: 10_000,
            nw_weight_multiplier: 1.0,
            io_intensity_cutoff: 200.0,
            max_prio_to_bootstrap: 150,
            work_shortage: false,
            min_weight: BTreeMap::new(),
            max_diskio_default: None,
            storage_min_free_size: None,
            size_cutoff_to_move_input: 10.0,
            num_cutoff_to_move_input: 100,
            nqueuelimitsite: BTreeMap::new(),
            variant: JobBrokerVariant::Seed,
            network_variant: NetworkVariant::Seed,
        }
    }
}

/// Where the minimum weight came from (for the `-below_min_weight` message).
#[derive(Debug, Clone, PartialEq)]
pub struct MinWeight {
    /// The gdpconfig key that matched, e.g. `MIN_WEIGHT_managed`; `MIN_WEIGHT_<label>` when none did.
    pub param: String,
    /// 0 = no minimum.
    pub value: f64,
}

impl JobBrokerParams {
    /// The network settings of this configuration: its `NW_*`/`NQUEUED_*` keys and
    /// `network_variant`. Brokerage reads them only through here.
    pub fn network(&self) -> NetworkSettings {
        NetworkSettings {
            nw_active: self.nw_active,
            nw_queue_importance: self.nw_queue_importance,
            nw_threshold: self.nw_threshold,
            nw_weight_multiplier: self.nw_weight_multiplier,
            nqueued_sat_cap: self.nqueued_sat_cap,
            nqueued_nuc_cap_for_jobs: self.nqueued_nuc_cap_for_jobs,
            variant: self.network_variant,
        }
    }

    /// `cutOffValue` (L1727-1732): `NQUEUELIMITSITE_<gshare>`, 20 when unset **or 0** (`if not`).
    /// A task without gshare reads `NQUEUELIMITSITE_None`, as the code's f-string does.
    pub fn nqueuelimitsite(&self, gshare: Option<&str>) -> u64 {
        match self.nqueuelimitsite.get(gshare.unwrap_or("None")) {
            Some(&v) if v > 0 => v,
            _ => DEFAULT_NQUEUELIMITSITE,
        }
    }

    /// `MIN_WEIGHT_<label>_<gshare>`, else `MIN_WEIGHT_<label>`, else 0 (L171-177). A set but
    /// non-finite value reads as 0 (off).
    pub fn min_weight(&self, prod_source_label: &str, gshare: Option<&str>) -> MinWeight {
        let (key, value) =
            crate::panda::common::min_weight(&self.min_weight, prod_source_label, gshare.unwrap_or("None"));
        MinWeight { param: format!("MIN_WEIGHT_{key}"), value }
    }

    /// `MAX_DISKIO_DEFAULT` as read (`if not value: 10**10`); negative or NaN also default.
    pub fn max_diskio_default(&self) -> f64 {
        match self.max_diskio_default {
            Some(v) if v > 0.0 && !v.is_nan() => v,
            _ => DEFAULT_MAX_DISKIO,
        }
    }

    /// `STORAGE_MIN_FREE_SIZE` in GB as read (`if not value: 200`); NaN also default.
    pub fn storage_min_free_size(&self) -> f64 {
        match self.storage_min_free_size {
            Some(v) if v != 0.0 && !v.is_nan() => v,
            _ => DEFAULT_STORAGE_MIN_FREE_SIZE,
        }
    }

    /// The settings the broker uses: non-finite floats replaced by their defaults (the code
    /// would propagate NaN or raise). Maps are kept; [`validate`] reports what was replaced.
    pub fn sane(&self) -> Self {
        let d = Self::default();
        let f = |x: f64, def: f64| if x.is_finite() { x } else { def };
        Self {
            nw_queue_importance: f(self.nw_queue_importance, d.nw_queue_importance),
            nw_threshold: f(self.nw_threshold, d.nw_threshold),
            nw_weight_multiplier: f(self.nw_weight_multiplier, d.nw_weight_multiplier),
            io_intensity_cutoff: f(self.io_intensity_cutoff, d.io_intensity_cutoff),
            size_cutoff_to_move_input: f(self.size_cutoff_to_move_input, d.size_cutoff_to_move_input),
            ..self.clone()
        }
    }
}

/// What a configuration gets wrong (values [`JobBrokerParams::sane`] or the accessors replace).
pub fn validate(p: &JobBrokerParams) -> Result<(), String> {
    let floats = [
        ("nw_queue_importance", p.nw_queue_importance),
        ("nw_threshold", p.nw_threshold),
        ("nw_weight_multiplier", p.nw_weight_multiplier),
        ("io_intensity_cutoff", p.io_intensity_cutoff),
        ("size_cutoff_to_move_input", p.size_cutoff_to_move_input),
    ];
    if let Some((k, v)) = floats.iter().find(|(_, v)| !v.is_finite()) {
        return Err(format!("{k} = {v} is not finite"));
    }
    if let Some((k, v)) = p.min_weight.iter().find(|(_, v)| !v.is_finite()) {
        return Err(format!("MIN_WEIGHT_{k} = {v} is not finite"));
    }
    crate::panda::network::validate(&p.network())
}
