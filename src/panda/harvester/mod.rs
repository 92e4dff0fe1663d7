//! `panda::harvester` — Harvester's pilot provisioning as pure functions
//! (reference `panda.md` §8; seed 004 does not describe Harvester, so the reference and the
//! Harvester code it cites, HSF/harvester HEAD `d561b72`, are the specification).
//!
//! Harvester's submitter wakes every `lookupTime` (60 s) per PanDA queue (PQ), counts its
//! workers (pilots) per resource type and pilot type, and asks `WorkerAdjuster.define_num_workers`
//! (worker_adjuster.py L545-939) how many new ones to submit. For UPS ("unified pilot streaming")
//! queues in `runMode = slave`, the PanDA server decides instead (`ups_new_worker_distribution`,
//! panda-server worker_module.py L369-606) and sends `SET_N_WORKERS_JOBTYPE`. Submodules:
//!
//! * [`config`] — the queue config fields that matter ([`HarvesterQueueConfig`], with the sanity
//!   pass of queue_config_mapper.py L586-606), the `[submitter]` template defaults
//!   ([`SubmitterSettings`]) and the worker limits of `db_proxy.get_worker_limits` (L4841-4975,
//!   [`worker_limits`]);
//! * [`resource`] — resource types (`SCORE`, `MCORE`, `*_HIMEM`) and the per-worker cores and
//!   memory of `ResourceTypeMapper.calculate_worker_requirements`;
//! * [`adjuster`] — [`define_num_workers`] with the pilot-type pre-allocation (L425-504) and the
//!   UCORE largest-remainder redistribution (L853-923);
//! * [`outcome`] — its answer: per row the number and the reason, `Display` = Harvester's log;
//! * [`ups`] — the server side, [`ups_new_worker_distribution`].
//!
//! The rule per queue × resource type × pilot type (reference §8, "Decision"):
//!
//! ```text
//! status ∈ {offline, standby, maintenance} | no queue_config | throttled  → 0
//! slave mode and PanDA commanded 0 (or a non-PR pilot type got 0)          → 0
//! nQueue ≥ nQueueLimitWorker > 0 | nQueue+nReady+nRunning ≥ maxWorkers > 0
//!   | queued cores ≥ core limit | queued memory ≥ memory limit            → 0 (a "limit" reason)
//! else maxQ = nQueueLimitWorker (if > 0)
//!      slave / commanded: maxQ = min(nNewWorkers_cmd + nQueue, maxQ)
//!      pull (mapType NoJob): maxQ = min(max(int(nActivated × activateWorkerFactor / nCoreFactor), n_min), maxQ)
//!      maxQ = 1 if none;  n_new = max(maxQ − nQueue, 0)
//!      n_new = min(n_new, maxWorkers − nQueue − nReady − nRunning, ceil(free cores / cores per worker),
//!                  ceil(free memory / memory per worker), maxNewWorkersPerCycle, maxNewWorkers)
//! UCORE: Σ n_new ≤ min(nQueueLimitWorker − ΣnQueue, maxWorkers − Σall, maxNewWorkersPerCycle, maxNewWorkers),
//!        shared in proportion, largest remainders first
//! ```
//!
//! Variants ([`AdjusterVariant`]): what a row whose limit check fires ends with.
//!
//! | | `Reference` (default) | `HarvesterHead` |
//! |---|---|---|
//! | `nQueue ≥ nQueueLimitWorker` (etc.) | 0, as reference §8 and the queue-config docs ("limits are still respected when runMode = slave") | the `nNewWorkers` the row carried in (PanDA's command, or the pre-allocated share) — HEAD assigns `nNewWorkers` only inside the `else` branch |
//! | self mode, PR pilot type | 0 | 0 (the carried value is 0) |
//!
//! Where the Python raises and `define_num_workers` returns `None` (nothing submitted for the
//! site this cycle), the Rust returns an [`AdjusterError`] naming the exception: pull mode
//! without a queue limit (`min(n_activated, None)`), a worker needing 0 cores or 0 MB with a
//! core or memory limit set, a non-finite activation product, `noPilotsWhenNoActiveJobs = False`
//! written explicitly in `[submitter]` (the attribute is then never set).
//!
//! Inputs are plain structs a simulation fills once per cycle; nothing here allocates per job
//! beyond the result, iterates a hash map, or panics (counts are saturating `i64`s internally).

pub mod adjuster;
pub mod config;
pub mod outcome;
pub mod resource;
pub mod ups;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use adjuster::{
    AdjusterError, AdjusterVariant, JobStats, LimitReason, PilotRow, QueueState, RowDecision, RowOutcome, RtRow,
    SiteDecision, SkipReason, Step, UcoreAggregation, define_num_workers, define_num_workers_sanitized,
    preallocate_pilot_types,
};
pub use config::{
    ActivateWorkerFactor, HarvesterQueueConfig, MapType, NCoreFactor, QueueSubmitterSection, RunMode, Sanitized,
    SubmitterSettings, WorkerCounts, WorkerLimits, WorkerStatsMap, sanitized_worker_limits, worker_limits,
};
pub use resource::{CricQueue, ResourceSpec, calculate_worker_requirements};
pub use ups::{
    UpsHarvesterStats, UpsJob, UpsOutcome, UpsQueueConfig, UpsRtStats, UpsSkip, UpsTrace, average_memory_workers,
    ups_new_worker_distribution,
};

/// The job type every Harvester row is normalised to (`DEFAULT_JOB_TYPE`, worker_adjuster.py).
pub const DEFAULT_JOB_TYPE: &str = "managed";
/// The pilot type that takes whatever the prioritized ones leave (`DEFAULT_PILOT_TYPE`).
pub const DEFAULT_PILOT_TYPE: &str = "PR";
/// `DEFAULT_PRIORITIZED_PROD_SOURCE_LABELS`: queue configs without `prioritizedProdSourceLabels`.
pub const DEFAULT_PRIORITIZED_PROD_SOURCE_LABELS: [&str; 1] = ["rc_alrb"];
/// The catch-all resource / job / pilot type name.
pub const ANY: &str = "ANY";

/// A resource type or pilot type name in the adjuster's rows. The names a simulation fills in
/// every cycle (`ANY`, `PR`, the `SCORE`… of a worker) are static, so a row borrows them
/// instead of allocating; names read from a file are owned.
pub type TypeName = std::borrow::Cow<'static, str>;

/// The gdpconfig keys this module reads: `(component, key)`, app `pandaserver` (the UPS
/// server side, worker_module.py `getConfigValue("meanrss", "IGNORE_MEANRSS")`). Harvester itself
/// reads no gdpconfig: its settings are the queue config and `panda_harvester.cfg`.
pub const GDPCONFIG_KEYS: &[(&str, &str)] = &[("meanrss", "IGNORE_MEANRSS")];

/// The gdpconfig keys of component `meanrss` (app `pandaserver`), read by
/// [`ups_new_worker_distribution`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeanrssParams {
    /// `IGNORE_MEANRSS` (component `meanrss`, app `pandaserver`; default unset = **false**,
    /// worker_module.py): when true, UPS accepts every resource type even if the PQ's workers
    /// are over its `meanrss` memory target.
    pub ignore_meanrss: bool,
}

/// `core_utils.prod_source_label_to_pilot_type`: the pilot type Harvester submits for a job's
/// prodSourceLabel. The pairs are those of `submitter_common.get_complicated_pilot_options`
/// (`rc_test2`↔`RC`, `rc_alrb`↔`ALRB`, `ptest`↔`PT`); everything else is production, `PR`.
pub fn prod_source_label_to_pilot_type(label: &str) -> &'static str {
    match label {
        "rc_test2" => "RC",
        "rc_alrb" => "ALRB",
        "ptest" => "PT",
        _ => DEFAULT_PILOT_TYPE,
    }
}

/// PQ status as CRIC publishes it (`panda_queues.json` / schedconfig `status`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PqStatus {
    #[default]
    Online,
    Brokeroff,
    Test,
    Offline,
    Standby,
    Maintenance,
    /// Any other status string.
    #[serde(untagged)]
    Other(String),
}

impl PqStatus {
    /// The CRIC spelling.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Online => "online",
            Self::Brokeroff => "brokeroff",
            Self::Test => "test",
            Self::Offline => "offline",
            Self::Standby => "standby",
            Self::Maintenance => "maintenance",
            Self::Other(s) => s,
        }
    }

    /// `status in ["offline", "standby", "maintenance"]`: Harvester submits nothing.
    pub fn disables_submission(&self) -> bool {
        matches!(self.as_str(), "offline" | "standby" | "maintenance")
    }
}

/// Saturating `u64` → `i64` (Python ints are unbounded; counts here never reach 2⁶³).
pub(crate) fn sat(x: u64) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// Python's `int(x)` for a float: truncation toward 0; `None` for NaN or ±∞ (ValueError /
/// OverflowError), saturating beyond `i64`.
pub(crate) fn py_int(x: f64) -> Option<i64> {
    if x.is_finite() { Some(x.trunc() as i64) } else { None }
}
