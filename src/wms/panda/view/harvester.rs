//! The Harvester view (reference `panda.md` §8; HSF/harvester HEAD `d561b72`): once per cycle
//! and PQ, the [`QueueState`] that `panda::harvester::define_num_workers` reads, and then what
//! its [`SiteDecision`] asks the world to do — how many pilots, of which shape, to which CE.
//!
//! **Rows.** Harvester's `pq_table` holds one catch-all `(ANY, ANY)` row per PQ
//! (`fill_panda_queue_table`); rows per resource type appear only when PanDA commands them
//! (`SET_N_WORKERS_JOBTYPE`, pilot streaming of UCORE queues in `runMode = slave`). So:
//!
//! * a PQ in self mode, UCORE or not, has the single `ANY` row (its workers: all of the PQ's);
//! * a UCORE PQ in slave mode has the `ANY` row plus one row per resource type that has a
//!   pseudo-queue at the PQ (`SiteMapper.get_child_site_spec`: `mincore ≤ corecount`), with the
//!   per-resource-type workers, activated jobs and commands of [`HarvesterDynamic`]; the UCORE
//!   aggregation of the adjuster then runs (`QueueState::ucore`).
//!
//! **Counts.** `nActivated` is the PQ's activated jobs over every gshare (`job_statistics.json`);
//! 0 activated is *no entry* ([`JobStats::NoActivatedEntry`]: PanDA's per-status statistics
//! only list statuses that have jobs), which sends pull mode to the bootstrap rule
//! `max(1 − nQueue − nReady − nRunning, 0)`. `nReady` is 0: the model's workers go from
//! submitted straight to running. One Harvester instance serves every PQ
//! (`activateWorkerFactor = auto` → 1). No throttler plugin is configured (`throttled: None`).
//!
//! **Pilots.** [`HarvesterView::pilot_plan`] turns each row's `n_new_workers` into workers of
//! the shape `SimpleWorkerMaker.make_worker` gives a worker without jobs: a non-UCORE PQ's
//! `corecount` (or 1) and `maxrss` (or 1 MB); on a UCORE PQ
//! `calculate_worker_requirements(resource type)`, with the catch-all row defaulting to `SCORE`
//! ("ucore with pure pull"). Each worker goes to a CE of the PQ (its `ces`, or every CE of its
//! site when empty; CE ids are the flattened scenario order) drawn by [`super::ce_choice`].

use rand::Rng;

use super::ce_choice::{CeWorkerStats, ce_weighting, choose_ce};
use crate::panda::harvester::config::WorkerCounts;
use crate::panda::harvester::{
    ANY, AdjusterError, AdjusterVariant, CricQueue, DEFAULT_PILOT_TYPE, JobStats, PilotRow, PqStatus, QueueState,
    ResourceSpec, RtRow, RunMode, Sanitized, SiteDecision, SubmitterSettings, TypeName, WorkerStatsMap,
    calculate_worker_requirements, define_num_workers_sanitized,
};
use crate::scenario::Scenario;
use crate::scenario::panda::{PandaQueue, QueueStatus};

/// `JobUtils.MEMORY_COMPENSATION`, applied by `ResourceSpec.match_task_basic`.
const MEMORY_COMPENSATION: f64 = 0.9;
/// The resource types `SimpleWorkerMaker` accepts for a worker without jobs on a UCORE PQ.
const WORKER_TYPES: &[&str] = &["SCORE", "MCORE", "SCORE_HIMEM", "MCORE_HIMEM"];

/// The index of the first resource type (table order) a task matches
/// (`ResourceSpec.match_task_basic`, panda-server `ResourceSpec.py` L78-115): `coreCount`
/// None → 1, 0 → 8 ("a standard MCORE default"); RAM per core `(ramCount·cores + base)/cores`
/// with `per_core` (`MBPerCore`), `(ramCount + base)/cores` otherwise, then `int(× 0.9)`.
pub fn task_resource_type(
    types: &[ResourceSpec],
    core_count: Option<u32>,
    ram_count_mb: f64,
    base_ram_mb: f64,
    per_core: bool,
) -> Option<usize> {
    let cores = match core_count {
        None => 1.0,
        Some(0) => 8.0,
        Some(c) => f64::from(c),
    };
    let ram =
        if per_core { (ram_count_mb * cores + base_ram_mb) / cores } else { (ram_count_mb + base_ram_mb) / cores };
    let ram = (ram * MEMORY_COMPENSATION).trunc();
    types.iter().position(|t| fits(t, cores, ram))
}

/// The index of the first resource type a job matches (`ResourceSpec.match_job`, L117-151):
/// `coreCount` None → 1, 0 → 8; RAM per core `round(minRamCount / cores)` (Python's
/// half-to-even `round`; the job's `minRamCount` is already compensated).
pub fn job_resource_type(types: &[ResourceSpec], core_count: Option<u32>, min_ram_count_mb: f64) -> Option<usize> {
    let cores = match core_count {
        None => 1.0,
        Some(0) => 8.0,
        Some(c) => f64::from(c),
    };
    let ram = (min_ram_count_mb / cores).round_ties_even();
    types.iter().position(|t| fits(t, cores, ram))
}

fn fits(t: &ResourceSpec, cores: f64, ram_per_core: f64) -> bool {
    !(t.mincore.is_some_and(|m| cores < m as f64)
        || t.maxcore.is_some_and(|m| cores > m as f64)
        || t.minrampercore.is_some_and(|m| ram_per_core < m)
        || t.maxrampercore.is_some_and(|m| ram_per_core > m))
}

/// A UCORE PQ's pseudo-queue for one resource type (`SiteMapper.get_child_site_spec`,
/// SiteMapper.py L152-197): what the brokers see of the PQ for jobs of that type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChildQueue {
    pub core_count: u32,
    /// MB (floats: the code scales with a true division).
    pub minrss: f64,
    pub maxrss: f64,
}

/// The pseudo-queue of `q` for `rt`, `None` when the PQ has too few cores for the type (or is
/// not UCORE): `cores = max(1, corecount)`; child cores `max(min(cores, maxcore), mincore)`
/// (`max(cores, mincore)` without maxcore); `minrss`/`maxrss` scaled by `child/cores` and bounded
/// by the type's RAM per core.
pub fn child_queue(q: &PandaQueue, rt: &ResourceSpec) -> Option<ChildQueue> {
    if !q.is_ucore() {
        return None;
    }
    let cores = i64::from(q.corecount.unwrap_or(0)).max(1);
    if rt.mincore.is_some_and(|m| cores < m) {
        return None;
    }
    let min = rt.mincore.unwrap_or(0);
    let child = match rt.maxcore {
        None => cores.max(min),
        Some(m) => cores.min(m).max(min),
    };
    let cc = child as f64;
    let scale = cc / cores as f64;
    let (site_min, site_max) = (q.minrss as f64, q.maxrss as f64);
    let minrss = match rt.minrampercore {
        Some(m) => (cc * m - cc + 1.0).max(site_min * scale),
        None => (site_min * scale).max(site_min),
    };
    let maxrss = match rt.maxrampercore {
        Some(m) => (cc * m).min(site_max * scale),
        None => (site_max * scale).min(site_max),
    };
    Some(ChildQueue { core_count: u32::try_from(child).unwrap_or(u32::MAX), minrss, maxrss })
}

/// `capability_to_rtype` of the worker maker.
fn capability_rtype(capability: Option<&str>) -> Option<&'static str> {
    match capability? {
        "score" => Some("SCORE"),
        "himem" => Some("SCORE_HIMEM"),
        "mcore" => Some("MCORE"),
        "mcorehimem" => Some("MCORE_HIMEM"),
        _ => None,
    }
}

/// CRIC `status` as Harvester's `panda_queues.json` spells it.
pub fn pq_status(s: QueueStatus) -> PqStatus {
    match s {
        QueueStatus::Online => PqStatus::Online,
        QueueStatus::Standby => PqStatus::Standby,
        QueueStatus::Brokeroff => PqStatus::Brokeroff,
        QueueStatus::Test => PqStatus::Test,
        QueueStatus::Offline => PqStatus::Offline,
        QueueStatus::Paused => PqStatus::Other("paused".to_string()),
    }
}

/// The CE ids (flattened over `sites[].ces` in scenario order) a PQ submits to: its `ces` by
/// name at its site, or every CE of the site when the list is empty. Unknown names are
/// skipped (validation rejects them).
pub fn queue_ces(s: &Scenario, q: &PandaQueue) -> Vec<usize> {
    let mut first = 0;
    for site in &s.sites {
        if site.name == q.site {
            return site
                .ces
                .iter()
                .enumerate()
                .filter(|(_, ce)| q.ces.is_empty() || q.ces.contains(&ce.name))
                .map(|(i, _)| first + i)
                .collect();
        }
        first += site.ces.len();
    }
    Vec::new()
}

/// What Harvester knows of one PQ for the whole run.
#[derive(Debug, Clone)]
pub struct HarvesterQueue {
    /// The PQ's Harvester queue configuration (`panda.queues[q].harvester`), sanitized once
    /// (queue_config_mapper's pass) for every decision of the run.
    pub config: Sanitized,
    /// CRIC `status` (`panda_queues.json`).
    pub status: PqStatus,
    /// CRIC `corecount`, `maxrss`, `capability == "ucore"`.
    pub cric: CricQueue,
    /// `capability` (for the worker's resource type on a non-UCORE PQ).
    pub capability: Option<String>,
    /// `runMode = slave`: PanDA's pilot streaming sends the numbers.
    pub slave: bool,
    /// Resource types (indices into [`HarvesterView::types`]) with a pseudo-queue at a UCORE
    /// PQ; empty for other PQs.
    pub resource_types: Vec<usize>,
    /// CE ids, see [`queue_ces`].
    pub ces: Vec<usize>,
}

/// Per cycle, what the Harvester model counts beyond [`Dynamic`] (filled by the WMS).
#[derive(Debug, Clone, Copy, Default)]
pub struct HarvesterDynamic<'a> {
    /// `rt[q · n_types + t]` for resource type `t` of [`HarvesterView::types`]; read only for
    /// UCORE PQs in slave mode; a slice too short reads as zeros.
    pub rt: &'a [RtCounts],
    /// `commanded[q]`: `nNewWorkers` of PanDA's last `SET_N_WORKERS` for the PQ's catch-all
    /// row (slave mode only; 0 = no command). Too short reads as 0.
    pub commanded: &'a [u64],
}

/// One resource type of one PQ this cycle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RtCounts {
    /// Harvester workers of that type at the PQ, submitted + pending + idle (`nQueue`).
    pub workers_queued: u64,
    /// … running (`nRunning`).
    pub workers_running: u64,
    /// PanDA jobs of that type (see [`job_resource_type`]) activated at the PQ, every gshare
    /// (`job_statistics_new.json`, the pilot-type pre-allocation).
    pub activated: u64,
    /// `nNewWorkers` of PanDA's last `SET_N_WORKERS_JOBTYPE` for (PQ, `managed`, type); 0 = none.
    pub commanded: u64,
}

/// Workers of one shape to one CE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PilotBatch {
    /// `workSpec.resourceType`.
    pub resource_type: TypeName,
    /// `PR` (the model has no `prodSourceLabelRandomWeightsPermille`).
    pub pilot_type: TypeName,
    /// `workSpec.nCore`.
    pub cores: u32,
    /// `workSpec.minRamCount`, MB.
    pub memory_mb: u64,
    /// Flattened CE id.
    pub ce: usize,
    pub count: u64,
}

/// What the world must submit for one PQ this cycle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PilotPlan {
    /// In row order, then CE order.
    pub batches: Vec<PilotBatch>,
    /// Workers Harvester decided on but could not place: the PQ has no CE, or every CE weight
    /// is 0 (`choose_ce` → None).
    pub unplaced: u64,
}

impl PilotPlan {
    /// Workers placed.
    pub fn total(&self) -> u64 {
        self.batches.iter().map(|b| b.count).sum()
    }
}

/// Everything static of the Harvester side, built once from the scenario.
#[derive(Debug, Clone)]
pub struct HarvesterView {
    /// PanDA's resource types (`ResourceSpec::atlas_defaults()`).
    pub types: Vec<ResourceSpec>,
    /// `panda.harvester` (`[submitter]` of `panda_harvester.cfg`).
    pub settings: SubmitterSettings,
    /// `panda.variants.harvester` resolved.
    pub variant: AdjusterVariant,
    /// Per PQ, scenario order.
    pub queues: Vec<HarvesterQueue>,
}

impl HarvesterView {
    /// The view of a validated scenario (no `panda` section: no queues).
    pub fn new(s: &Scenario) -> Self {
        let types = ResourceSpec::atlas_defaults();
        let Some(p) = s.panda.as_ref() else {
            return Self {
                types,
                settings: SubmitterSettings::default(),
                variant: AdjusterVariant::default(),
                queues: vec![],
            };
        };
        let queues = p
            .queues
            .iter()
            .map(|q| {
                let ucore = q.is_ucore();
                HarvesterQueue {
                    config: Sanitized::new(&q.harvester),
                    status: pq_status(q.status),
                    cric: CricQueue {
                        corecount: q.corecount.map(i64::from),
                        maxrss: Some(i64::try_from(q.maxrss).unwrap_or(i64::MAX)),
                        unified: ucore,
                    },
                    capability: q.capability.clone(),
                    slave: q.harvester.run_mode == RunMode::Slave,
                    resource_types: if ucore {
                        types.iter().enumerate().filter(|(_, t)| child_queue(q, t).is_some()).map(|(i, _)| i).collect()
                    } else {
                        Vec::new()
                    },
                    ces: queue_ces(s, q),
                }
            })
            .collect();
        Self { types, settings: p.harvester.clone(), variant: p.rules().harvester, queues }
    }

    /// The `QueueState` of PQ `q` read from a snapshot (the tests' entry; the WMS gives
    /// [`Self::state_of`] its counts).
    #[cfg(test)]
    pub fn queue_state(
        &self,
        q: usize,
        d: &super::dynamic::Dynamic<'_>,
        h: &HarvesterDynamic<'_>,
    ) -> Option<QueueState> {
        let queued = d.workers_queued.get(q).copied().unwrap_or_default();
        let running = d.workers_running.get(q).copied().unwrap_or_default();
        let activated = d.queue_jobs.get(q).map_or(0, |c| c.activated);
        self.state_of(q, activated, queued, running, h)
    }

    /// The `QueueState` of PQ `q` with `activated` jobs and these workers running and queued
    /// (all it reads of the run: `activated` of `job_statistics_new.json`, the worker stats);
    /// `None` for an unknown index.
    pub fn state_of(
        &self,
        q: usize,
        activated: u64,
        queued: WorkerCounts,
        running: WorkerCounts,
        h: &HarvesterDynamic<'_>,
    ) -> Option<QueueState> {
        let mut state = self.blank_state(q)?;
        self.count_state(q, &mut state, activated, queued, running, h);
        Some(state)
    }

    /// The `QueueState` of PQ `q` with every count 0: what stays the same from cycle to cycle
    /// (status, CRIC, rows: the catch-all row, and one per resource type on a UCORE PQ in
    /// slave mode). A caller that decides every cycle keeps one and refills it with
    /// [`Self::count_state`]; `None` for an unknown index.
    pub fn blank_state(&self, q: usize) -> Option<QueueState> {
        let hq = self.queues.get(q)?;
        let row = |resource_type| RtRow {
            resource_type,
            commanded: 0,
            pilots: vec![PilotRow::new(DEFAULT_PILOT_TYPE, 0, 0)],
        };
        let per_rt = hq.cric.unified && hq.slave;
        let mut rows = vec![row(TypeName::Borrowed(ANY))];
        if per_rt {
            rows.extend(hq.resource_types.iter().map(|&t| {
                row(TypeName::Owned(self.types.get(t).map_or_else(String::new, |r| r.resource_name.clone())))
            }));
        }
        Some(QueueState {
            status: Some(hq.status.clone()),
            throttled: None,
            job_stats: JobStats::NoActivatedEntry,
            worker_stats: WorkerStatsMap::default(),
            n_harvester_instances: Some(1),
            cric: hq.cric.clone(),
            rows,
            ucore: per_rt,
        })
    }

    /// Fill `state`, PQ `q`'s [`Self::blank_state`], with this cycle's counts (see
    /// [`Self::state_of`]).
    pub fn count_state(
        &self,
        q: usize,
        state: &mut QueueState,
        activated: u64,
        queued: WorkerCounts,
        running: WorkerCounts,
        h: &HarvesterDynamic<'_>,
    ) {
        let Some(hq) = self.queues.get(q) else { return };
        state.job_stats = if activated > 0 { JobStats::Activated(activated) } else { JobStats::NoActivatedEntry };
        state.worker_stats = WorkerStatsMap { queue: queued, running };
        let count = |row: &mut RtRow, commanded, n_queue, n_running, n_activated| {
            row.commanded = commanded;
            if let Some(p) = row.pilots.first_mut() {
                (p.n_queue, p.n_running, p.n_activated) = (n_queue, n_running, n_activated);
            }
        };
        let any_command = if hq.slave { h.commanded.get(q).copied().unwrap_or(0) } else { 0 };
        let (any, per_rt) = state.rows.split_at_mut(1);
        if let Some(row) = any.first_mut() {
            count(row, any_command, queued.n, running.n, activated);
        }
        let n_types = self.types.len();
        for (row, &t) in per_rt.iter_mut().zip(&hq.resource_types) {
            let c = q.checked_mul(n_types).and_then(|i| h.rt.get(i + t)).copied().unwrap_or_default();
            count(row, c.commanded, c.workers_queued, c.workers_running, c.activated);
        }
    }

    /// `define_num_workers` for PQ `q` with the scenario's settings and variant.
    pub fn decide(&self, q: usize, state: &QueueState) -> Result<SiteDecision, AdjusterError> {
        let config = self.queues.get(q).map(|hq| &hq.config);
        define_num_workers_sanitized(&self.settings, config, &self.types, state, self.variant)
    }

    /// The shape of a worker of row `resource_type` at PQ `q`: `(resourceType, cores, MB)`
    /// (module doc, `SimpleWorkerMaker.make_worker` without jobs).
    pub fn worker_shape(&self, q: usize, resource_type: &str) -> Option<(TypeName, u32, u64)> {
        let hq = self.queues.get(q)?;
        let to_u64 = |x: i64| u64::try_from(x.max(0)).unwrap_or(0);
        if hq.cric.unified {
            let rt = WORKER_TYPES.iter().copied().find(|&t| t == resource_type).unwrap_or("SCORE");
            let (cores, mem) = calculate_worker_requirements(&self.types, rt, &hq.cric);
            return Some((TypeName::Borrowed(rt), u32::try_from(cores.max(0)).unwrap_or(u32::MAX), to_u64(mem)));
        }
        let cores = hq.cric.corecount.filter(|&c| c != 0).unwrap_or(1);
        let mem = hq.cric.maxrss.filter(|&m| m != 0).unwrap_or(1);
        let rt = if resource_type != ANY {
            TypeName::Owned(resource_type.to_string())
        } else if let Some(r) = capability_rtype(hq.capability.as_deref()) {
            TypeName::Borrowed(r)
        } else if cores == 1 {
            TypeName::Borrowed("SCORE")
        } else {
            TypeName::Borrowed("MCORE")
        };
        Some((rt, u32::try_from(cores.max(0)).unwrap_or(u32::MAX), to_u64(mem)))
    }

    /// The pilots to submit for PQ `q` after `decision`. `ce_stats[i]` are the PQ's worker
    /// statistics at its `i`-th CE ([`HarvesterQueue::ces`] order; too short reads as zeros).
    /// Rows are handled in order, one `submit_workers` call each: the CE weights of a row see
    /// the workers the earlier rows just placed as `submitted`.
    pub fn pilot_plan<R: Rng + ?Sized>(
        &self,
        q: usize,
        decision: &SiteDecision,
        ce_stats: &[CeWorkerStats],
        rng: &mut R,
    ) -> PilotPlan {
        let mut plan = PilotPlan::default();
        let Some(hq) = self.queues.get(q) else {
            plan.unplaced = decision.rows.iter().map(|r| r.n_new_workers).sum();
            return plan;
        };
        let mut stats: Vec<CeWorkerStats> =
            (0..hq.ces.len()).map(|i| ce_stats.get(i).copied().unwrap_or_default()).collect();
        for row in decision.rows.iter().filter(|r| r.n_new_workers > 0) {
            let Some((rt, cores, memory_mb)) = self.worker_shape(q, &row.resource_type) else { continue };
            if stats.is_empty() {
                plan.unplaced += row.n_new_workers;
                continue;
            }
            let w = ce_weighting(&stats, decision.limits.n_queue_limit_worker, row.n_new_workers, hq.slave);
            let mut counts = vec![0u64; stats.len()];
            for _ in 0..row.n_new_workers {
                match choose_ce(&w, rng).and_then(|i| counts.get_mut(i)) {
                    Some(c) => *c += 1,
                    None => plan.unplaced += 1,
                }
            }
            for (i, &count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
                if let (Some(&ce), Some(s)) = (hq.ces.get(i), stats.get_mut(i)) {
                    s.submitted = s.submitted.saturating_add(count);
                    plan.batches.push(PilotBatch {
                        resource_type: rt.clone(),
                        pilot_type: row.pilot_type.clone(),
                        cores,
                        memory_mb,
                        ce,
                        count,
                    });
                }
            }
        }
        plan
    }
}

#[cfg(test)]
#[path = "harvester_tests.rs"]
mod tests;
