//! Harvester's queue configuration, the `[submitter]` settings and the worker limits (reference
//! §8 "Loop" and "Worker limits"; queue_config_mapper.py `QueueConfig` defaults and the sanity
//! pass L586-606; `db_proxy.get_worker_limits` L4841-4975).
//!
//! Limits (`nQueueLimit*`) are Python ints or null: a non-integer JSON value is read as unset
//! and a negative one as 0, as the sanity pass does. Then
//!
//! ```text
//! maxWorkers unset → 0 (no cap in define_num_workers, but 0 queued workers allowed: see below)
//! nQueueLimitWorker = min(nQueueLimitWorker, nQueueLimitWorkerMax, maxWorkers)   (whichever are set)
//! nQueueLimitWorkerMin = min(Min, nQueueLimitWorker, maxWorkers); Cores/Memory Min ≤ Cores/Memory
//! push mapTypes (not NoJob): nQueueLimitWorkerRatio and nQueueLimitWorkerMin are nulled
//! get_worker_limits:
//!   limit = nQueueLimitWorker, or maxWorkers when unset
//!   Ratio > 0: limit = min(limit, max(int(nRunning × Ratio / 100), Min))        Min unset → 1
//!   limit = min(limit, maxWorkers)
//!   cores:  CoresRatio > 0: max(int(runningCores × CoresRatio / 100), CoresMin) capped by Cores
//!           (CoresMin unset → Min × 1 core); else nQueueLimitWorkerCores (None = no limit)
//!   memory: the same with MemoryRatio / MemoryMin (unset → Min × 1000 MB) / nQueueLimitWorkerMemory
//! ```
//!
//! A `maxWorkers` of 0 makes `nQueueLimitWorker` 0, which `define_num_workers` reads as "no
//! queue limit": push queues then keep one worker queued, pull queues fail (see
//! [`super::AdjusterError::NoQueueLimitInPullMode`]) and UCORE queues get nothing — the queue
//! config doc's "Default is 0 (i.e. no worker to submit!)".

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::engine::Period;

use super::{DEFAULT_PRIORITIZED_PROD_SOURCE_LABELS, py_int, sat};

/// `mapType`: how workers and jobs are paired (WorkSpec.MT_*). Only `NoJob` is pull mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum MapType {
    /// Pull: empty pilots that fetch their own jobs (`MT_NoJob`).
    NoJob,
    /// Push, one job per worker (`MT_OneToOne`, Harvester's default).
    #[default]
    OneToOne,
    /// Push, several jobs per worker (`MT_MultiJobs` = `"ManyToOne"`).
    #[serde(rename = "ManyToOne")]
    MultiJobs,
    /// Push, several workers per job (`MT_MultiWorkers` = `"OneToMany"`).
    #[serde(rename = "OneToMany")]
    MultiWorkers,
}

/// `runMode`: `self` (Harvester decides) or `slave` (PanDA's UPS commands the numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunMode {
    #[default]
    #[serde(rename = "self")]
    SelfMode,
    Slave,
}

/// `submitter.nCoreFactor` of a queue config: one number, or per job type (`Any` as fallback)
/// and per resource type (`Undefined` for non-UCORE PQs) — `get_core_factor`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NCoreFactor {
    Uniform(f64),
    PerType(BTreeMap<String, BTreeMap<String, f64>>),
}

impl Default for NCoreFactor {
    fn default() -> Self {
        Self::Uniform(1.0)
    }
}

impl NCoreFactor {
    /// `get_queue_activate_worker_factor`: `1 / int(nCoreFactor)`, looked up by job type
    /// (else `Any`) and, on a UCORE PQ, resource type (else `Undefined`), default 1. A factor
    /// whose `int()` fails (NaN, ±∞) or is 0 (ZeroDivisionError, caught) gives 1.
    pub fn activate_factor(&self, job_type: &str, resource_type: &str, unified: bool) -> f64 {
        let raw = match self {
            Self::Uniform(x) => *x,
            Self::PerType(m) => {
                let jt = if m.contains_key(job_type) { job_type } else { "Any" };
                let rt = if unified { resource_type } else { "Undefined" };
                m.get(jt).and_then(|r| r.get(rt)).copied().unwrap_or(1.0)
            }
        };
        match py_int(raw) {
            Some(0) | None => 1.0,
            Some(n) => 1.0 / n as f64,
        }
    }
}

/// The `submitter` plugin section of a queue config: the two keys `WorkerAdjuster` reads.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct QueueSubmitterSection {
    /// `nCoreFactor` (default 1): activated jobs per pilot divisor, for pilots running several
    /// single-core payloads.
    pub n_core_factor: NCoreFactor,
    /// `noPilotsWhenNoActiveJobs` (default false): no bootstrap pilot when nothing is activated.
    pub no_pilots_when_no_active_jobs: bool,
}

/// Reads a queue-limit attribute as the sanity pass does: a JSON integer (or bool, a Python
/// int) is kept, negative → 0; anything else (float, string, null) is unset.
fn int_attr<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(match v {
        Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_u64().map(sat)).map(|x| x.max(0)),
        Some(Value::Bool(b)) => Some(i64::from(b)),
        _ => None,
    })
}

/// The queue config fields `WorkerAdjuster` and `get_worker_limits` read (Harvester's real
/// names, camelCase), with `QueueConfig`'s defaults. Limits are `None` when unset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct HarvesterQueueConfig {
    /// `mapType` (default `OneToOne`; pull queues use `NoJob`).
    pub map_type: MapType,
    /// `runMode` (default `self`).
    pub run_mode: RunMode,
    /// `maxWorkers`: queued + running cap (default 0 = no cap in the per-row rule).
    #[serde(deserialize_with = "int_attr")]
    pub max_workers: Option<i64>,
    /// `maxNewWorkersPerCycle` (default 0 = no per-row cap; but see the UCORE aggregation).
    #[serde(deserialize_with = "int_attr")]
    pub max_new_workers_per_cycle: Option<i64>,
    /// `nQueueLimitWorker`: queued (submitted+pending+idle) workers cap (default unset = maxWorkers).
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker: Option<i64>,
    /// `nQueueLimitWorkerMax`: deprecated alias, folded into `nQueueLimitWorker`.
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker_max: Option<i64>,
    /// `nQueueLimitWorkerRatio`: queued ≤ Ratio % of running (pull only; unset).
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker_ratio: Option<i64>,
    /// `nQueueLimitWorkerMin`: floor of the ratio limit (pull only; unset → 1).
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker_min: Option<i64>,
    /// `nQueueLimitWorkerCores`: cores of queued workers cap (unset = none).
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker_cores: Option<i64>,
    /// `nQueueLimitWorkerCoresRatio`: queued cores ≤ Ratio % of running cores (unset).
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker_cores_ratio: Option<i64>,
    /// `nQueueLimitWorkerCoresMin`: floor of the cores ratio limit (unset → Min × 1).
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker_cores_min: Option<i64>,
    /// `nQueueLimitWorkerMemory`: MB of queued workers cap (unset = none).
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker_memory: Option<i64>,
    /// `nQueueLimitWorkerMemoryRatio`: queued MB ≤ Ratio % of running MB (unset).
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker_memory_ratio: Option<i64>,
    /// `nQueueLimitWorkerMemoryMin`: floor of the memory ratio limit (unset → Min × 1000 MB).
    #[serde(deserialize_with = "int_attr")]
    pub n_queue_limit_worker_memory_min: Option<i64>,
    /// `prioritizedProdSourceLabels` (default `["rc_alrb"]`): pilot types served first when
    /// PanDA's command is split and when UCORE rounding hands out the remainders.
    pub prioritized_prod_source_labels: Vec<String>,
    /// The `submitter` plugin section (`nCoreFactor`, `noPilotsWhenNoActiveJobs`).
    pub submitter: QueueSubmitterSection,
}

impl Default for HarvesterQueueConfig {
    fn default() -> Self {
        Self {
            map_type: MapType::OneToOne,
            run_mode: RunMode::SelfMode,
            max_workers: Some(0),
            max_new_workers_per_cycle: Some(0),
            n_queue_limit_worker: None,
            n_queue_limit_worker_max: None,
            n_queue_limit_worker_ratio: None,
            n_queue_limit_worker_min: None,
            n_queue_limit_worker_cores: None,
            n_queue_limit_worker_cores_ratio: None,
            n_queue_limit_worker_cores_min: None,
            n_queue_limit_worker_memory: None,
            n_queue_limit_worker_memory_ratio: None,
            n_queue_limit_worker_memory_min: None,
            prioritized_prod_source_labels: DEFAULT_PRIORITIZED_PROD_SOURCE_LABELS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            submitter: QueueSubmitterSection::default(),
        }
    }
}

impl HarvesterQueueConfig {
    /// A pull queue (`mapType NoJob`) with `maxWorkers` and `nQueueLimitWorker`.
    pub fn pull(max_workers: i64, n_queue_limit_worker: i64) -> Self {
        Self {
            map_type: MapType::NoJob,
            max_workers: Some(max_workers),
            n_queue_limit_worker: Some(n_queue_limit_worker),
            ..Self::default()
        }
    }

    /// The config after queue_config_mapper's sanity pass (L586-606): push mapTypes lose the
    /// worker ratio and min; negatives are 0; `maxWorkers` unset is 0; `nQueueLimitWorker` and
    /// its alias are folded and capped by `maxWorkers`; each `*Min` is capped by its limit.
    pub fn sanitized(&self) -> Self {
        let mut c = self.clone();
        let nn = |x: Option<i64>| x.map(|v| v.max(0));
        for f in [
            &mut c.max_workers,
            &mut c.max_new_workers_per_cycle,
            &mut c.n_queue_limit_worker,
            &mut c.n_queue_limit_worker_max,
            &mut c.n_queue_limit_worker_ratio,
            &mut c.n_queue_limit_worker_min,
            &mut c.n_queue_limit_worker_cores,
            &mut c.n_queue_limit_worker_cores_ratio,
            &mut c.n_queue_limit_worker_cores_min,
            &mut c.n_queue_limit_worker_memory,
            &mut c.n_queue_limit_worker_memory_ratio,
            &mut c.n_queue_limit_worker_memory_min,
        ] {
            *f = nn(*f);
        }
        if c.map_type != MapType::NoJob {
            c.n_queue_limit_worker_ratio = None;
            c.n_queue_limit_worker_min = None;
        }
        let max_workers = c.max_workers.unwrap_or(0);
        c.max_workers = Some(max_workers);
        match (c.n_queue_limit_worker, c.n_queue_limit_worker_max) {
            (Some(l), Some(m)) => {
                let v = l.min(m).min(max_workers);
                c.n_queue_limit_worker = Some(v);
                c.n_queue_limit_worker_max = Some(v);
            }
            (Some(l), None) => c.n_queue_limit_worker = Some(l.min(max_workers)),
            (None, Some(m)) => {
                let v = m.min(max_workers);
                c.n_queue_limit_worker_max = Some(v);
                c.n_queue_limit_worker = Some(v);
            }
            (None, None) => {}
        }
        if let (Some(m), Some(l)) = (c.n_queue_limit_worker_min, c.n_queue_limit_worker) {
            c.n_queue_limit_worker_min = Some(m.min(l).min(max_workers));
        }
        if let (Some(m), Some(l)) = (c.n_queue_limit_worker_cores_min, c.n_queue_limit_worker_cores) {
            c.n_queue_limit_worker_cores_min = Some(m.min(l));
        }
        if let (Some(m), Some(l)) = (c.n_queue_limit_worker_memory_min, c.n_queue_limit_worker_memory) {
            c.n_queue_limit_worker_memory_min = Some(m.min(l));
        }
        c
    }

    /// `maxNewWorkersPerCycle` as read (unset → 0).
    pub fn per_cycle(&self) -> i64 {
        self.max_new_workers_per_cycle.unwrap_or(0).max(0)
    }

    /// The prioritized pilot types (`prioritizedProdSourceLabels` mapped by
    /// [`super::prod_source_label_to_pilot_type`]).
    pub fn prioritized_pilot_types(&self) -> Vec<&'static str> {
        self.prioritized_prod_source_labels.iter().map(|l| super::prod_source_label_to_pilot_type(l)).collect()
    }
}

/// A queue config after [`HarvesterQueueConfig::sanitized`], the only form the adjuster reads.
/// The pass is idempotent, so a caller that decides for the same PQ every cycle keeps one of
/// these instead of sanitizing (a clone of the config) at every decision.
/// It also keeps the config's prioritized pilot types, which the adjuster reads at every
/// decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Sanitized {
    config: HarvesterQueueConfig,
    prioritized: Vec<&'static str>,
}

impl Sanitized {
    pub fn new(config: &HarvesterQueueConfig) -> Self {
        let config = config.sanitized();
        let prioritized = config.prioritized_pilot_types();
        Sanitized { config, prioritized }
    }

    /// [`HarvesterQueueConfig::prioritized_pilot_types`], computed once.
    pub fn prioritized(&self) -> &[&'static str] {
        &self.prioritized
    }
}

impl std::ops::Deref for Sanitized {
    type Target = HarvesterQueueConfig;
    fn deref(&self) -> &HarvesterQueueConfig {
        &self.config
    }
}

/// `[submitter] activateWorkerFactor`: a number, or `auto` = 1 / (Harvester instances serving
/// the PQ, from PanDA's `worker_statistics.json`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ActivateWorkerFactor {
    Static(f64),
    Auto,
}

impl Default for ActivateWorkerFactor {
    fn default() -> Self {
        Self::Static(1.0)
    }
}

impl ActivateWorkerFactor {
    /// `WorkerAdjuster.__init__`: `"auto"` is Auto, else `float(text)`; a text Python's
    /// `float` rejects logs an error and falls back to 1.0. Never panics.
    pub fn parse(text: &str) -> Self {
        if text == "auto" {
            return Self::Auto;
        }
        let t = text.trim();
        let digits_ok = !t.contains("__") && !t.starts_with('_') && !t.ends_with('_');
        match t.replace('_', "").parse::<f64>() {
            Ok(x) if digits_ok && !t.is_empty() => Self::Static(x),
            _ => Self::Static(1.0),
        }
    }

    /// The site factor before the queue's `1/nCoreFactor`: static value, or for Auto
    /// `1 / max(n, 1)` with `n` the instances PanDA reports, 1.0 without data.
    pub fn site_factor(&self, n_harvester_instances: Option<usize>) -> f64 {
        match (self, n_harvester_instances) {
            (Self::Static(x), _) => *x,
            (Self::Auto, Some(n)) => 1.0 / n.max(1) as f64,
            (Self::Auto, None) => 1.0,
        }
    }
}

/// The `[submitter]` section of `panda_harvester.cfg` (template
/// `panda_harvester.cfg.rpmnew.template` L343-376).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SubmitterSettings {
    /// `nThreads` (3): submitter threads.
    pub n_threads: u32,
    /// `nQueues` (3): queues taken per lock.
    pub n_queues: u32,
    /// `lookupTime` (60 s): a site is handled again once its `submitTime` is older than this;
    /// pilotsim's Harvester cycle (a [`Period`]: at least 1 s).
    pub lookup_time: Period,
    /// `lockInterval` (600 s).
    pub lock_interval: u64,
    /// `queueLockInterval` (300 s).
    pub queue_lock_interval: u64,
    /// `checkInterval` (60 s).
    pub check_interval: u64,
    /// `sleepTime` (60 s) between cycles.
    pub sleep_time: u64,
    /// `maxNewWorkers` (1000): universal per-row and UCORE cap; `None` (absent) or ≤ 0 = none.
    pub max_new_workers: Option<i64>,
    /// `activateWorkerFactor` (unset = 1.0).
    pub activate_worker_factor: ActivateWorkerFactor,
    /// `noPilotsWhenNoActiveJobs` (unset). `Some(true)` applies to every queue; `Some(false)`
    /// written explicitly leaves Harvester's attribute unset, and pull mode then fails with
    /// AttributeError ([`super::AdjusterError::NoPilotsAttributeUnset`]).
    pub no_pilots_when_no_active_jobs: Option<bool>,
}

impl Default for SubmitterSettings {
    fn default() -> Self {
        Self {
            n_threads: 3,
            n_queues: 3,
            lookup_time: Period::secs(60.0),
            lock_interval: 600,
            queue_lock_interval: 300,
            check_interval: 60,
            sleep_time: 60,
            max_new_workers: Some(1000),
            activate_worker_factor: ActivateWorkerFactor::Static(1.0),
            no_pilots_when_no_active_jobs: None,
        }
    }
}

impl SubmitterSettings {
    /// `maxNewWorkers` when it caps (`is not None and > 0`).
    pub fn universal_cap(&self) -> Option<i64> {
        self.max_new_workers.filter(|&m| m > 0)
    }
}

/// Workers of a PQ in one state: how many, their cores and their memory (MB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WorkerCounts {
    pub n: u64,
    pub core: u64,
    pub mem: u64,
}

/// `worker_stats_map` of `get_worker_limits`: queued (submitted, pending, idle) and running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WorkerStatsMap {
    pub queue: WorkerCounts,
    pub running: WorkerCounts,
}

/// `worker_limits_dict` of `get_worker_limits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WorkerLimits {
    /// `maxWorkers` (0 = none).
    pub max_workers: i64,
    /// `nQueueLimitWorker` after the dynamic ratio rule (0 = none).
    pub n_queue_limit_worker: i64,
    /// `nQueueWorkerCores` (None = none).
    pub n_queue_worker_cores: Option<i64>,
    /// `nQueueWorkerMemory`, MB (None = none).
    pub n_queue_worker_memory: Option<i64>,
}

/// `int(running × ratio / 100)` as Python computes it.
fn by_ratio(running: u64, ratio: i64) -> i64 {
    py_int(running as f64 * ratio as f64 / 100.0).unwrap_or(i64::MAX)
}

/// `db_proxy.get_worker_limits` (L4841-4975) for a queue config (sanitised first) and the
/// PQ's running workers: see the module doc for the rules.
pub fn worker_limits(config: &HarvesterQueueConfig, running: &WorkerCounts) -> WorkerLimits {
    sanitized_worker_limits(&Sanitized::new(config), running)
}

/// [`worker_limits`] of a config already sanitized.
pub fn sanitized_worker_limits(c: &Sanitized, running: &WorkerCounts) -> WorkerLimits {
    let max_workers = c.max_workers.unwrap_or(0);
    let min_workers = c.n_queue_limit_worker_min.unwrap_or(1);
    let mut limit = c.n_queue_limit_worker.unwrap_or(max_workers);
    if let Some(r) = c.n_queue_limit_worker_ratio.filter(|&r| r > 0) {
        limit = limit.min(by_ratio(running.n, r).max(min_workers));
    }
    limit = limit.min(max_workers);
    let dynamic =
        |cap: Option<i64>, ratio: Option<i64>, min: Option<i64>, run: u64, unit: i64| match ratio.filter(|&r| r > 0) {
            Some(r) => {
                let floor = min.unwrap_or(min_workers.saturating_mul(unit));
                let v = by_ratio(run, r).max(floor);
                Some(cap.map_or(v, |c| v.min(c)))
            }
            None => cap,
        };
    WorkerLimits {
        max_workers,
        n_queue_limit_worker: limit,
        n_queue_worker_cores: dynamic(
            c.n_queue_limit_worker_cores,
            c.n_queue_limit_worker_cores_ratio,
            c.n_queue_limit_worker_cores_min,
            running.core,
            1,
        ),
        n_queue_worker_memory: dynamic(
            c.n_queue_limit_worker_memory,
            c.n_queue_limit_worker_memory_ratio,
            c.n_queue_limit_worker_memory_min,
            running.mem,
            1000,
        ),
    }
}
