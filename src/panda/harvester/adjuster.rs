//! `WorkerAdjuster.define_num_workers` (worker_adjuster.py L545-939; reference §8 "Decision"):
//! how many workers Harvester submits to one PQ this cycle, per resource type and pilot type,
//! with the reason when it is 0. The rule is in the parent module's doc.
//!
//! Before the rule, PanDA's command for a resource type (its `ANY` pilot-type row, `nNewWorkers`
//! of `SET_N_WORKERS_JOBTYPE`) is split between pilot types ([`preallocate_pilot_types`],
//! `_set_initial_new_workers` L425-504):
//!
//! ```text
//! prio   = rows whose pilot type ∈ prioritized (prioritizedProdSourceLabels, default rc_alrb → ALRB)
//! calc   = max(int(Σprio nActivated × f) − Σprio nQueue, 0)           f = activateWorkerFactor / nCoreFactor
//! ratio  = min(command / calc, 1)
//! each prioritized row: int(max(int(nActivated × f) − nQueue, 0) × ratio)   (if > 0)
//! PR row += what is left of the command
//! ```
//!
//! After the rule, on a UCORE PQ (per-resource-type rows beside the catch-all row), the new
//! workers of all rows are capped together (L853-923):
//!
//! ```text
//! max_agg = min(max(nQueueLimitWorker − ΣnQueue, 0), max(maxWorkers − ΣnQueue − ΣnReady − ΣnRunning, 0),
//!               maxNewWorkersPerCycle, maxNewWorkers)
//! if Σ n_new > max_agg:  max_agg = 0 → every row 0
//!                        else n_i = ⌊n_i·max_agg/Σ⌋, then +1 in the order
//!                        (n_i > 0 first, prioritized pilot type first, larger remainder, smaller n_i)
//!                        until max_agg is reached
//! ```
//!
//! Note `maxNewWorkersPerCycle` enters the UCORE cap with `>= 0`, so its default 0 zeroes every
//! UCORE PQ that wants workers: Harvester's code, kept (ATLAS UCORE templates set it).

use serde::{Deserialize, Serialize};

use super::config::{
    HarvesterQueueConfig, RunMode, Sanitized, SubmitterSettings, WorkerLimits, WorkerStatsMap, sanitized_worker_limits,
};
pub use super::outcome::{
    AdjusterError, LimitReason, RowDecision, RowOutcome, SiteDecision, SkipReason, Step, UcoreAggregation,
};
use super::resource::{CricQueue, ResourceSpec, calculate_worker_requirements};
use super::{ANY, DEFAULT_JOB_TYPE, DEFAULT_PILOT_TYPE, PqStatus, TypeName, py_int, sat};

/// What a row whose limit check fires ends with (parent module doc, variant table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum AdjusterVariant {
    /// 0, as reference §8 writes the rule.
    #[default]
    Reference,
    /// HSF/harvester HEAD: the `nNewWorkers` the row carried in.
    HarvesterHead,
}

/// One pilot type's worker counts for a resource type (`static_num_workers` leaf).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PilotRow {
    /// `PR`, `ALRB`, `RC`, `PT`, …
    pub pilot_type: TypeName,
    /// Workers submitted + pending + idle.
    pub n_queue: u64,
    /// Ready workers (+ running ones that refill jobs).
    pub n_ready: u64,
    pub n_running: u64,
    /// `nNewWorkers` the row carries in: PanDA's last command for this pilot type, usually 0.
    pub n_new_workers: u64,
    /// Activated jobs of this resource type whose prodSourceLabel maps to this pilot type
    /// (`job_statistics_new.json`), for the pre-allocation.
    pub n_activated: u64,
}

impl PilotRow {
    /// A row of pilot type `pilot_type` with `n_queue` queued and `n_running` running workers
    /// (a static name is borrowed, not copied).
    pub fn new(pilot_type: impl Into<TypeName>, n_queue: u64, n_running: u64) -> Self {
        Self { pilot_type: pilot_type.into(), n_queue, n_running, ..Self::default() }
    }
}

/// One resource type of the PQ (job type `managed`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RtRow {
    /// `SCORE`, `MCORE`, … (`ANY` for a non-UCORE PQ's single row).
    pub resource_type: TypeName,
    /// `nNewWorkers` of the `ANY` pilot type: PanDA's `SET_N_WORKERS` for this resource type
    /// (slave mode), split by [`preallocate_pilot_types`]; 0 = no command.
    pub commanded: u64,
    /// Pilot types in dict order; a missing `PR` row is added (zeros) at the end.
    pub pilots: Vec<PilotRow>,
}

/// `job_statistics.json` for the PQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum JobStats {
    /// The cache is missing: pull mode falls back to the configured queue limits.
    Unavailable,
    /// No `activated` entry for the PQ (no job at all): the bootstrap rule.
    #[default]
    NoActivatedEntry,
    /// `activated` jobs of the PQ, all resource types.
    Activated(u64),
}

/// Everything `define_num_workers` reads about one PQ this cycle.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueueState {
    /// `panda_queues.json` status; `None` when the PQ is not in the cache.
    pub status: Option<PqStatus>,
    /// The throttler plugin's verdict when it throttles, as `"<Class>:<message>"`.
    pub throttled: Option<String>,
    pub job_stats: JobStats,
    /// Queued and running workers (counts, cores, MB) of the PQ, for the limits.
    pub worker_stats: WorkerStatsMap,
    /// Harvester instances PanDA sees serving the PQ (`activateWorkerFactor = auto`); `None` = no data.
    pub n_harvester_instances: Option<usize>,
    pub cric: CricQueue,
    /// Resource types in dict order.
    pub rows: Vec<RtRow>,
    /// The PQ has the catch-all `(ANY, ANY)` row beside per-resource-type rows (UCORE): the
    /// aggregation over resource types runs.
    pub ucore: bool,
}

/// `get_activate_worker_factor`: 1.0 in slave mode, else the `[submitter]` factor; times the
/// queue's `1/nCoreFactor`.
pub fn activate_worker_factor(
    settings: &SubmitterSettings,
    config: &HarvesterQueueConfig,
    state: &QueueState,
    resource_type: &str,
) -> f64 {
    let site = match config.run_mode {
        RunMode::Slave => 1.0,
        RunMode::SelfMode => settings.activate_worker_factor.site_factor(state.n_harvester_instances),
    };
    site * config.submitter.n_core_factor.activate_factor(DEFAULT_JOB_TYPE, resource_type, state.cric.unified)
}

/// `_set_initial_new_workers` for one resource type: the carried `nNewWorkers` of each pilot
/// row after `commanded` (the `ANY` pilot type's command) is split; unchanged when it is 0.
/// `pilots` must hold the `PR` row. See the module doc for the formula.
pub fn preallocate_pilot_types(
    pilots: &[PilotRow],
    commanded: u64,
    factor: f64,
    prioritized: &[&str],
) -> Result<Vec<i64>, AdjusterError> {
    let mut out: Vec<i64> = pilots.iter().map(|p| sat(p.n_new_workers)).collect();
    let total = sat(commanded);
    if total <= 0 {
        return Ok(out);
    }
    let is_prio = |p: &PilotRow| prioritized.contains(&&*p.pilot_type);
    let (act, queued) = pilots
        .iter()
        .filter(|p| is_prio(p))
        .fold((0i64, 0i64), |(a, q), p| (a.saturating_add(sat(p.n_activated)), q.saturating_add(sat(p.n_queue))));
    let scaled = |a: i64| py_int(a as f64 * factor).ok_or(AdjusterError::NonFiniteActivation);
    let calc = (scaled(act)?.saturating_sub(queued)).max(0);
    let mut remaining = total;
    if calc > 0 {
        let ratio = (total as f64 / calc as f64).min(1.0);
        for (i, p) in pilots.iter().enumerate().filter(|(_, p)| is_prio(p)) {
            let want = (scaled(sat(p.n_activated))?.saturating_sub(sat(p.n_queue))).max(0);
            let c = py_int(want as f64 * ratio).unwrap_or(0);
            if c <= 0 {
                continue;
            }
            if let Some(o) = out.get_mut(i) {
                *o = c;
            }
            remaining -= c;
        }
    }
    if remaining > 0 {
        let pr = pilots.iter().position(|p| p.pilot_type == DEFAULT_PILOT_TYPE);
        if let Some(o) = pr.and_then(|i| out.get_mut(i)) {
            *o = o.saturating_add(remaining);
        }
    }
    Ok(out)
}

/// One row being decided.
struct Work<'a> {
    rt: &'a TypeName,
    pilot: &'a PilotRow,
    carried: i64,
}

/// `define_num_workers` for one PQ: see the parent module doc. `config` `None` is a PQ whose
/// queue config Harvester lost; `types` are PanDA's resource types.
pub fn define_num_workers(
    settings: &SubmitterSettings,
    config: Option<&HarvesterQueueConfig>,
    types: &[ResourceSpec],
    state: &QueueState,
    variant: AdjusterVariant,
) -> Result<SiteDecision, AdjusterError> {
    define_num_workers_sanitized(settings, config.map(Sanitized::new).as_ref(), types, state, variant)
}

/// [`define_num_workers`] with the PQ's config already sanitized.
pub fn define_num_workers_sanitized(
    settings: &SubmitterSettings,
    cfg: Option<&Sanitized>,
    types: &[ResourceSpec],
    state: &QueueState,
    variant: AdjusterVariant,
) -> Result<SiteDecision, AdjusterError> {
    let default_prioritized = super::DEFAULT_PRIORITIZED_PROD_SOURCE_LABELS.map(super::prod_source_label_to_pilot_type);
    let prioritized: &[&str] = match cfg {
        Some(c) => c.prioritized(),
        None => &default_prioritized,
    };
    // Rows with PR ensured, and the pre-allocation of PanDA's command.
    let pr_zero = PilotRow::new(DEFAULT_PILOT_TYPE, 0, 0);
    let mut work: Vec<Work> = Vec::with_capacity(state.rows.iter().map(|r| r.pilots.len() + 1).sum());
    for row in &state.rows {
        let has_pr = row.pilots.iter().any(|p| p.pilot_type == DEFAULT_PILOT_TYPE);
        let pilots = row.pilots.iter().chain((!has_pr).then_some(&pr_zero));
        let rt = &row.resource_type;
        if row.commanded > 0 {
            let c = cfg.ok_or(AdjusterError::MissingQueueConfigForCommand)?;
            let f = activate_worker_factor(settings, c, state, rt);
            let all: Vec<PilotRow> = pilots.clone().cloned().collect();
            let carried = preallocate_pilot_types(&all, row.commanded, f, prioritized)?;
            work.extend(pilots.zip(carried).map(|(pilot, carried)| Work { rt, pilot, carried }));
        } else {
            work.extend(pilots.map(|pilot| Work { rt, pilot, carried: sat(pilot.n_new_workers) }));
        }
    }
    let limits = cfg.map(|c| sanitized_worker_limits(c, &state.worker_stats.running)).unwrap_or_default();
    let (cores_queue, memory_queue) =
        if cfg.is_some() { (sat(state.worker_stats.queue.core), sat(state.worker_stats.queue.mem)) } else { (0, 0) };
    let (mut nq_total, mut nr_total, mut nrun_total) = (0i64, 0i64, 0i64);
    let mut values: Vec<i64> = Vec::with_capacity(work.len());
    let mut rows: Vec<RowDecision> = Vec::with_capacity(work.len());
    for w in &work {
        let (value, outcome) = decide_row(
            settings,
            cfg.map(|c| &**c),
            types,
            state,
            &limits,
            (cores_queue, memory_queue),
            w,
            variant,
            &mut (&mut nq_total, &mut nr_total, &mut nrun_total),
        )?;
        values.push(value);
        rows.push(RowDecision {
            resource_type: w.rt.clone(),
            pilot_type: w.pilot.pilot_type.clone(),
            n_new_workers: 0,
            outcome,
            before_ucore: None,
        });
    }
    let ucore = if state.ucore {
        let total: i64 =
            work.iter().zip(&values).filter(|(w, _)| w.rt != ANY).fold(0i64, |t, (_, v)| t.saturating_add(*v));
        let per_cycle = cfg.map_or(0, |c| c.per_cycle());
        let mut max_agg = (limits.n_queue_limit_worker.saturating_sub(nq_total))
            .max(0)
            .min(
                (limits.max_workers.saturating_sub(nq_total).saturating_sub(nr_total).saturating_sub(nrun_total))
                    .max(0),
            )
            .min(per_cycle);
        if let Some(u) = settings.universal_cap() {
            max_agg = max_agg.min(u);
        }
        let adjusted = total > max_agg;
        if adjusted {
            let new = redistribute(&work, &values, total, max_agg, prioritized);
            for ((row, old), new) in rows.iter_mut().zip(values.iter_mut()).zip(new) {
                if *old != new {
                    row.before_ucore = Some(*old);
                    *old = new;
                }
            }
        }
        Some(UcoreAggregation { total, max_agg, adjusted })
    } else {
        None
    };
    for (row, v) in rows.iter_mut().zip(values) {
        row.n_new_workers = u64::try_from(v.max(0)).unwrap_or(0);
    }
    Ok(SiteDecision { limits, rows, ucore })
}

/// The largest-remainder pass (L853-923) over every row; `total > max_agg ≥ 0`.
fn redistribute(work: &[Work], values: &[i64], total: i64, max_agg: i64, prioritized: &[&str]) -> Vec<i64> {
    if max_agg <= 0 || total <= 0 {
        return vec![0; values.len()];
    }
    let mut out = Vec::with_capacity(values.len());
    let mut rem = Vec::with_capacity(values.len());
    let mut countdown = max_agg as i128;
    for &v in values {
        let p = v as i128 * max_agg as i128;
        let (q, r) = (p.div_euclid(total as i128), p.rem_euclid(total as i128));
        out.push(i64::try_from(q).unwrap_or(i64::MAX));
        rem.push(r);
        countdown -= q;
    }
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by_key(|&i| {
        let v = values.get(i).copied().unwrap_or(0);
        let prio = work.get(i).is_some_and(|w| prioritized.contains(&&*w.pilot.pilot_type));
        (v <= 0, !prio, std::cmp::Reverse(rem.get(i).copied().unwrap_or(0)), v)
    });
    for i in order {
        if countdown <= 0 {
            break;
        }
        if let Some(o) = out.get_mut(i) {
            *o += 1;
            countdown -= 1;
        }
    }
    out
}

type Totals<'t> = (&'t mut i64, &'t mut i64, &'t mut i64);

/// The per-row rule (L700-850).
#[allow(clippy::too_many_arguments)]
fn decide_row(
    settings: &SubmitterSettings,
    cfg: Option<&HarvesterQueueConfig>,
    types: &[ResourceSpec],
    state: &QueueState,
    limits: &WorkerLimits,
    (cores_queue, memory_queue): (i64, i64),
    w: &Work,
    variant: AdjusterVariant,
    totals: &mut Totals,
) -> Result<(i64, RowOutcome), AdjusterError> {
    let skip = |r| Ok((0, RowOutcome::Skipped(r)));
    if let Some(s) = state.status.as_ref().filter(|s| s.disables_submission()) {
        return skip(SkipReason::QueueStatus(s.as_str().to_string()));
    }
    let Some(cfg) = cfg else {
        return skip(SkipReason::MissingQueueConfig);
    };
    if let Some(m) = &state.throttled {
        return skip(SkipReason::Throttled(m.clone()));
    }
    let (nq, nr, nrun) = (sat(w.pilot.n_queue), sat(w.pilot.n_ready), sat(w.pilot.n_running));
    if w.rt != ANY {
        *totals.0 = totals.0.saturating_add(nq);
        *totals.1 = totals.1.saturating_add(nr);
        *totals.2 = totals.2.saturating_add(nrun);
    }
    let commanded = if cfg.run_mode == RunMode::Slave || w.pilot.pilot_type != DEFAULT_PILOT_TYPE {
        if w.carried == 0 {
            return skip(if cfg.run_mode == RunMode::Slave {
                SkipReason::SlaveZero
            } else {
                SkipReason::NonDefaultPilotTypeZero
            });
        }
        Some(w.carried)
    } else {
        None
    };
    let kept = match variant {
        AdjusterVariant::Reference => 0,
        AdjusterVariant::HarvesterHead => w.carried,
    };
    let limited = |reason| Ok((kept, RowOutcome::Limited { reason, kept }));
    let queue_limit = limits.n_queue_limit_worker;
    let all = nq.saturating_add(nr).saturating_add(nrun);
    if queue_limit > 0 && nq >= queue_limit {
        return limited(LimitReason::QueueLimit { n_queue: nq, limit: queue_limit });
    }
    if limits.max_workers > 0 && all >= limits.max_workers {
        return limited(LimitReason::MaxWorkers {
            n_queue: nq,
            n_ready: nr,
            n_running: nrun,
            max_workers: limits.max_workers,
        });
    }
    if let Some(l) = limits.n_queue_worker_cores.filter(|&l| cores_queue >= l) {
        return limited(LimitReason::Cores { cores_queue, limit: l });
    }
    if let Some(l) = limits.n_queue_worker_memory.filter(|&l| memory_queue >= l) {
        return limited(LimitReason::Memory { memory_queue, limit: l });
    }
    let mut max_queued = (queue_limit > 0).then_some(queue_limit);
    let mut n_activated = None;
    if let Some(def) = commanded {
        let slave = def.saturating_add(nq);
        max_queued = Some(max_queued.map_or(slave, |m| m.min(slave)));
    } else if cfg.map_type == super::MapType::NoJob && state.job_stats != JobStats::Unavailable {
        let no_pilots = match settings.no_pilots_when_no_active_jobs {
            Some(true) => true,
            Some(false) => return Err(AdjusterError::NoPilotsAttributeUnset),
            None => cfg.submitter.no_pilots_when_no_active_jobs,
        };
        let act = match state.job_stats {
            JobStats::Activated(a) => {
                let f = activate_worker_factor(settings, cfg, state, w.rt.as_ref());
                let prod = sat(a) as f64 * f;
                let positive = prod > 0.0;
                let n_min = if no_pilots && !positive { 0 } else { 1 };
                py_int(prod).ok_or(AdjusterError::NonFiniteActivation)?.max(n_min)
            }
            _ if no_pilots => 0,
            _ => (1 - all).max(0),
        };
        n_activated = Some(act);
        max_queued = Some(act.min(max_queued.ok_or(AdjusterError::NoQueueLimitInPullMode)?));
    }
    let max_queued = max_queued.unwrap_or(1);
    let mut n = (max_queued.saturating_sub(nq)).max(0);
    let mut binding = Step::MaxQueuedWorkers;
    let mut cap = |n: &mut i64, c: i64, step: Step| {
        if c < *n {
            *n = c;
            binding = step;
        }
    };
    if limits.max_workers > 0 {
        cap(&mut n, (limits.max_workers.saturating_sub(all)).max(0), Step::MaxWorkers);
    }
    let (req_cores, req_mem) = calculate_worker_requirements(types, w.rt.as_ref(), &state.cric);
    if let Some(l) = limits.n_queue_worker_cores.filter(|&l| l != 0) {
        if req_cores == 0 {
            return Err(AdjusterError::ZeroCoresPerWorker { resource_type: w.rt.to_string() });
        }
        let free = (l.saturating_sub(cores_queue)).max(0);
        cap(&mut n, py_int((free as f64 / req_cores as f64).ceil()).unwrap_or(i64::MAX), Step::QueueLimitCores);
    }
    if let Some(l) = limits.n_queue_worker_memory.filter(|&l| l != 0) {
        if req_mem == 0 {
            return Err(AdjusterError::ZeroMemoryPerWorker { resource_type: w.rt.to_string() });
        }
        let free = (l.saturating_sub(memory_queue)).max(0);
        cap(&mut n, py_int((free as f64 / req_mem as f64).ceil()).unwrap_or(i64::MAX), Step::QueueLimitMemory);
    }
    if cfg.per_cycle() > 0 {
        cap(&mut n, cfg.per_cycle(), Step::MaxNewWorkersPerCycle);
    }
    if let Some(u) = settings.universal_cap() {
        cap(&mut n, u, Step::MaxNewWorkers);
    }
    Ok((n, RowOutcome::Computed { max_queued_workers: max_queued, n_activated, binding }))
}
