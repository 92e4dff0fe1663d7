//! Server-side pilot streaming (UPS): `ups_new_worker_distribution` (panda-server 1.0.4
//! `taskbuffer/db_proxy_mods/worker_module.py` L369-606, run by `daemons/scripts/pilotStreaming.py`;
//! reference §8 "Server-side pilot streaming"). PanDA decides, per resource type, how many
//! workers the PQ's Harvester instance submits next, and sends it as
//! `SET_N_WORKERS_JOBTYPE:<queue>`; Harvester in slave mode obeys it ([`super::define_num_workers`]).
//!
//! ```text
//! cf(rt)          = PQ corecount if rt is multi-core (mincore > 1) else 1      (corecount 0/None → 1)
//! running_cores   = Σ running(rt)·cf(rt), raised to params.ups_core_target if status ∈ {online, brokeroff}
//! queued(rt)      = submitted(rt) + ready(rt);  queued_cores = Σ queued(rt)·cf(rt)
//! target_cores    = max(int(0.4 · running_cores), 75 · corecount)
//! to_submit       = max(target_cores − queued_cores, 5 · corecount)
//! walk activated jobs, gshares most under-pledged first, then currentPriority desc:
//!     skip if resource_type_limits[rt] − running(rt) ≤ 0, or rt is high-memory and
//!          limits["HIMEM"] − Σ running·cf of high-memory types ≤ 0
//!     queued(rt) −= 1;  if queued(rt) ≤ 0: to_submit −= cf(rt);  stop when to_submit ≤ 0
//! new(rt) = −queued(rt) + 1 if queued(rt) < 0 else 0;  nothing > 0 → {SCORE: 1} only
//! ```
//!
//! Two details of the code that a reading of the doc would miss, kept: the job that brings
//! `queued(rt)` to 0 already consumes cores, and `new(rt)` is one more than the jobs left
//! without a queued worker (3 jobs, 2 queued → 2 new). Memory: with a `meanrss` target and
//! `IGNORE_MEANRSS` off, if the mean memory per core of the PQ's running (+ submitted) workers
//! is above the target, only jobs of types that are not high-memory at the target are walked
//! (none such → no filter at all, as the empty list is falsy). Ties in priority go by PandaID
//! (the SQL has no tie-break). Jobs of a gshare absent from the sorted leaves are never seen.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::resource::{BASIC_RESOURCE_TYPE, ResourceSpec, cores_of, find, is_high_memory, under_memory_target};
use super::{MeanrssParams, PqStatus, py_int, sat};
use crate::panda::gshare::ShareStatus;

/// The `HIMEM` group key of `resource_type_limits` (limit in cores over all high-memory types).
pub const HIMEM: &str = "HIMEM";

/// The schedconfig JSON fields UPS reads (`get_config_for_pq`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpsQueueConfig {
    /// `corecount` (None or 0 → 1).
    pub corecount: Option<i64>,
    /// `maxrss`, MB (for the mean-memory helper).
    pub maxrss: Option<i64>,
    /// `maxrss` is per core (`catchall` holds the per-core attribute).
    pub maxrss_per_core: bool,
    /// `meanrss`: memory target per core, MB (0 = none).
    pub meanrss: Option<i64>,
    pub status: PqStatus,
    /// `params.ups_core_target`: running cores assumed at least, for online/brokeroff PQs.
    pub ups_core_target: Option<i64>,
    /// `uconfig.resource_type_limits`: running-worker caps per resource type, and `HIMEM` in cores.
    pub resource_type_limits: BTreeMap<String, i64>,
    /// `harvester`: the instance assigned to the PQ; commands go to it only.
    pub harvester: Option<String>,
}

/// Worker counts of one resource type in `harvester_worker_stats` (last hour).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpsRtStats {
    pub resource_type: String,
    pub running: u64,
    pub submitted: u64,
    pub ready: u64,
    /// Only the mean-memory query reads it.
    pub to_submit: u64,
}

/// One Harvester instance's workers at the PQ.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpsHarvesterStats {
    pub harvester_id: String,
    pub rts: Vec<UpsRtStats>,
}

/// An activated job of the PQ (`jobsactive4`, `jobstatus = 'activated'`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpsJob {
    pub panda_id: u64,
    pub gshare: String,
    pub resource_type: String,
    pub current_priority: i64,
}

/// Why no command is sent (Display = PanDA's log line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpsSkip {
    /// `get_config_for_pq` found nothing (the function then raises; the daemon logs it).
    NoQueueConfig,
    NoHarvesterAssigned,
}

impl fmt::Display for UpsSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoQueueConfig => write!(f, "Could not find queue configuration"),
            Self::NoHarvesterAssigned => write!(f, "No harvester instance assigned or not in statistics"),
        }
    }
}

/// The numbers behind a command, for "why this many".
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpsTrace {
    pub n_cores_running: i64,
    pub n_cores_queued: i64,
    pub n_cores_target: i64,
    /// `to_submit` before the walk, and what was left of it after.
    pub n_cores_to_submit: i64,
    pub n_cores_to_submit_left: i64,
    /// Resource types walked when the PQ is over its memory target.
    pub resource_types_under_target: Option<Vec<String>>,
    /// `workers_queued` after the walk (negative = missing workers).
    pub workers_queued: Vec<(String, i64)>,
    /// The keep-alive `{SCORE: 1}` replaced an all-zero answer.
    pub keepalive: bool,
}

impl fmt::Display for UpsTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "IN CORES: nrunning {}, ntarget {}, nqueued {}. We need to process {} cores",
            self.n_cores_running, self.n_cores_target, self.n_cores_queued, self.n_cores_to_submit
        )
    }
}

/// What UPS sends for a PQ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpsOutcome {
    /// `SET_N_WORKERS_JOBTYPE` to `harvester_id`: new workers per resource type (job type `managed`).
    Command {
        harvester_id: String,
        new_workers: Vec<(String, u64)>,
        trace: UpsTrace,
    },
    NoCommand(UpsSkip),
}

impl UpsOutcome {
    /// New workers commanded for `resource_type` (0 if none).
    pub fn new_workers(&self, resource_type: &str) -> u64 {
        match self {
            Self::Command { new_workers, .. } => {
                new_workers.iter().find(|(rt, _)| rt == resource_type).map_or(0, |(_, n)| *n)
            }
            Self::NoCommand(_) => 0,
        }
    }
}

/// `get_average_memory_workers`: mean MB per core of the PQ's running + submitted (+ to_submit)
/// workers and of its running ones; per worker `cores = maxcore or corecount` and MB per core
/// `= maxrampercore or maxrss / corecount` (`maxrss` if per core). Types not in the table are
/// left out (SQL join); no worker → 0.
pub fn average_memory_workers(types: &[ResourceSpec], pq: &UpsQueueConfig, stats: &UpsHarvesterStats) -> (f64, f64) {
    let cc = pq.corecount.unwrap_or(1) as f64;
    let site_per_core = if pq.maxrss_per_core {
        pq.maxrss.unwrap_or(0) as f64
    } else {
        pq.maxrss.unwrap_or(0) as f64 / if cc == 0.0 { 1.0 } else { cc }
    };
    let (mut mem_all, mut cores_all, mut mem_run, mut cores_run) = (0.0, 0.0, 0.0, 0.0);
    for s in &stats.rts {
        let Some(rt) = find(types, &s.resource_type) else { continue };
        let cores = rt.maxcore.map_or(cc, |m| m as f64);
        let per_core = rt.maxrampercore.unwrap_or(site_per_core);
        let all = s.running.saturating_add(s.submitted).saturating_add(s.to_submit) as f64;
        let run = s.running as f64;
        mem_all += all * cores * per_core;
        cores_all += all * cores;
        mem_run += run * cores * per_core;
        cores_run += run * cores;
    }
    let avg = |m: f64, c: f64| if c != 0.0 && (m / c).is_finite() { m / c } else { 0.0 };
    (avg(mem_all, cores_all), avg(mem_run, cores_run))
}

/// A `name → i64` table in first-seen order (the Python dicts), linear lookups (a handful of
/// resource types).
#[derive(Default)]
struct Counter(Vec<(String, i64)>);

impl Counter {
    fn slot(&mut self, name: &str) -> &mut i64 {
        let i = match self.0.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.0.push((name.to_string(), 0));
                self.0.len() - 1
            }
        };
        // `i` was just found or pushed.
        &mut self.0[i].1
    }
}

/// `ups_new_worker_distribution` for one PQ: see the module doc. `pq` `None` = no schedconfig
/// row; `stats` are the Harvester instances with worker stats for the PQ; `average_memory` is
/// [`average_memory_workers`] of the assigned instance (running+submitted, running);
/// `sorted_shares` is [`crate::panda::gshare::sorted_leaves`]' order.
pub fn ups_new_worker_distribution(
    params: &MeanrssParams,
    pq: Option<&UpsQueueConfig>,
    types: &[ResourceSpec],
    stats: &[UpsHarvesterStats],
    average_memory: (f64, f64),
    sorted_shares: &[ShareStatus],
    activated: &[UpsJob],
) -> UpsOutcome {
    let Some(pq) = pq else {
        return UpsOutcome::NoCommand(UpsSkip::NoQueueConfig);
    };
    let mut limits = pq.resource_type_limits.clone();
    let cores_queue = pq.corecount.filter(|&c| c != 0).unwrap_or(1);
    let assigned = pq.harvester.as_deref().filter(|h| !h.is_empty());
    let Some(hs) = assigned.and_then(|h| stats.iter().find(|s| s.harvester_id == h)) else {
        return UpsOutcome::NoCommand(UpsSkip::NoHarvesterAssigned);
    };
    let mut trace = UpsTrace::default();
    if let Some(target) = pq.meanrss.filter(|&m| m != 0).filter(|_| !params.ignore_meanrss) {
        let (rs, r) = average_memory;
        if (target as f64) < rs.max(r) {
            trace.resource_types_under_target =
                Some(under_memory_target(types, target as f64).into_iter().map(str::to_string).collect());
        }
    }
    let mut queued = Counter::default();
    let (mut running_cores, mut queued_cores) = (0i64, 0i64);
    for s in &hs.rts {
        let cf = cores_of(types, &s.resource_type, cores_queue);
        let run = sat(s.running);
        running_cores = running_cores.saturating_add(run.saturating_mul(cf));
        if let Some(l) = limits.get_mut(&s.resource_type) {
            *l = l.saturating_sub(run);
        }
        if is_high_memory(types, &s.resource_type) {
            if let Some(l) = limits.get_mut(HIMEM) {
                *l = l.saturating_sub(run.saturating_mul(cf));
            }
        }
        let q = sat(s.submitted).saturating_add(sat(s.ready));
        let slot = queued.slot(&s.resource_type);
        *slot = slot.saturating_add(q);
        queued_cores = queued_cores.saturating_add(q.saturating_mul(cf));
    }
    if matches!(pq.status, PqStatus::Online | PqStatus::Brokeroff) {
        running_cores = running_cores.max(pq.ups_core_target.unwrap_or(0));
    }
    let target = py_int(running_cores as f64 * 0.4).unwrap_or(i64::MAX).max(cores_queue.saturating_mul(75));
    let mut to_submit = target.saturating_sub(queued_cores).max(cores_queue.saturating_mul(5));
    trace.n_cores_running = running_cores;
    trace.n_cores_queued = queued_cores;
    trace.n_cores_target = target;
    trace.n_cores_to_submit = to_submit;

    // Activated jobs in walk order: gshare rank (first occurrence), priority desc, PandaID.
    let mut rank: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, s) in sorted_shares.iter().enumerate() {
        rank.entry(s.name.as_str()).or_insert(i);
    }
    let under = trace.resource_types_under_target.as_ref().filter(|u| !u.is_empty());
    let mut order: Vec<(usize, &UpsJob)> = activated
        .iter()
        .filter(|j| under.is_none_or(|u| u.contains(&j.resource_type)))
        .filter_map(|j| rank.get(j.gshare.as_str()).map(|&r| (r, j)))
        .collect();
    order.sort_by_key(|(r, j)| (*r, std::cmp::Reverse(j.current_priority), j.panda_id));
    let himem_limit = |l: &BTreeMap<String, i64>| l.get(HIMEM).copied();
    for (_, job) in order {
        let rt = job.resource_type.as_str();
        if limits.get(rt).is_some_and(|&l| l <= 0) {
            continue;
        }
        if is_high_memory(types, rt) && himem_limit(&limits).is_some_and(|l| l <= 0) {
            continue;
        }
        let cf = cores_of(types, rt, cores_queue);
        let slot = queued.slot(rt);
        *slot = slot.saturating_sub(1);
        if *slot <= 0 {
            to_submit = to_submit.saturating_sub(cf);
        }
        if to_submit <= 0 {
            break;
        }
    }
    trace.n_cores_to_submit_left = to_submit;
    let mut new_workers: Vec<(String, u64)> = queued
        .0
        .iter()
        .map(|(rt, q)| (rt.clone(), if *q < 0 { u64::try_from(-(*q as i128) + 1).unwrap_or(u64::MAX) } else { 0 }))
        .collect();
    if !new_workers.iter().any(|(_, n)| *n > 0) {
        new_workers = vec![(BASIC_RESOURCE_TYPE.to_string(), 1)];
        trace.keepalive = true;
    }
    trace.workers_queued = queued.0;
    UpsOutcome::Command { harvester_id: hs.harvester_id.clone(), new_workers, trace }
}
