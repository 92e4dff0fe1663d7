//! `panda::task_broker` — ATLAS production task brokerage to nuclei (seed 004 "ATLAS Production
//! Task Brokerage" and "Special Brokerage for ATLAS Full-chain"; reference `panda.md` §1,
//! `pandajedi/jedibrokerage/AtlasProdTaskBroker.py` `AtlasProdTaskBrokerThread.runImpl`
//! L146-626, parameters L147-190, weight L540-585, choice L586-596).
//!
//! A production task is assigned to one *nucleus* (a large site whose storage aggregates the
//! task's output). [`do_brokerage`] runs PanDA's chain over the nuclei in order, each stage
//! dropping nuclei with a logged reason ([`SkipReason`]), then draws one of the survivors with
//! probability proportional to its weight:
//!
//! 0. candidates: the nuclei, then (for full-chain tasks) the satellites with a bare-nucleus mode;
//!    a task with a nucleus already set skips everything ([`Brokerage::Preset`]);
//! 1. data lookup ([`data`]): per considered input dataset, what each candidate holds; a dataset
//!    with no complete replica readable over WAN anywhere stops the task;
//! 2. status `ACTIVE`; 3. transfer backlog (`Σ Production Output_queued > NQUEUED_NUC_CAP`),
//!    skipped when the task's `t1Weight < 0`;
//! 4. per output/log dataset: an endpoint for its token, `read_wan`/`write_wan` up, and
//!    `space − normalizedExpOutSize × RW ≥ DISK_THRESHOLD` with `normalizedExpOutSize × RW =
//!    int(fullRW / 10 / 24 / 3600 × 0.25)` GB ([`filters`]);
//! 5. job check (some PQ of the nucleus can run the task's jobs);
//! 6. data locality with `INPUT_SIZE_THRESHOLD`/`INPUT_SIZE_FRACTION` and
//!    `INPUT_NUM_THRESHOLD`/`INPUT_NUM_FRACTION` (data carousel nuclei with any replica pass),
//!    skipped after `DATA_LOCATION_CHECK_PERIOD` days in `assigning`, and disabled when no nucleus
//!    passes and the task has low IO and little input or a high priority;
//! 7. full chain (`bareNucleus` only/allow; `fullChain` only/require/capable; parent's nucleus);
//! 8. weights ([`weight`]) and the roulette-wheel choice; any empty list → [`Brokerage::Pending`],
//!    retried after [`PENDING_RETRY_S`] = 30 min (seed).
//!
//! Where panda-server 1.0.4 differs from the seed the seed is the default ([`TaskBrokerVariant`]):
//!
//! | | `Seed` (default) | `PandaServer` (1.0.4 code) |
//! |---|---|---|
//! | space in the check | `space_free + space_expired` | `space_usable` (reference ⚠) |
//! | space check passes | `space − demand > thr` | `space − demand ≥ thr` |
//! | WAN up | `ON` | not in `DOWNTIME_STATUSES` (`OFF`, `TEST`) |
//! | nucleus without endpoint for a token | skipped (`-match`) | the task's brokerage raises (`TypeError`) |
//! | locality "fraction larger than" | `ava > tot × frac` to pass | `ava ≥ tot × frac` |
//! | file-count rule gated on | total input size (GB) `> INPUT_NUM_THRESHOLD` | `tot_num > INPUT_NUM_THRESHOLD` (⚠) |
//! | disabling rule's priority | `taskPriority` | `currentPriority` |
//! | RW factor | `1/max(50, RW)` | `1/RW` if `RW ≥ 50`, else 1 (⚠) |
//! | free fraction | `(space_free + space_expired)/space_total` | `(usable − demand)/total` (⚠) |
//! | cutoff term (`FREE_DISK_CUTOFF`) | `min(cutoff, ⌊space_free/1024⌋)` | `min(cutoff, ⌊(usable − demand)/1024⌋)` |
//! | `fullChain=only` | needs `bareNucleus=only` | any bare nucleus |
//! | `capable` follows a parent | that ran on a bare nucleus | that is full-chain and ran on a bare nucleus |
//!
//! Where the seed is silent the code is followed in both (the job check, the data factor's
//! `ioIntensity is None` case, the tape factor's `ava_size_any > ava_size_disk`, TB units and
//! `⌊·⌋` of the cutoff, the endpoint with the smallest free fraction, the frozen-period skip).
//! Nothing panics: indices out of range are "unknown", non-finite numbers read as 0, and
//! settings are sanitised by [`TaskBrokerageParams::sane`].

use std::collections::BTreeMap;

use rand::Rng;
use serde::{Deserialize, Serialize};

pub mod data;
pub mod filters;
pub mod input;
pub mod report;
pub mod weight;

pub use data::Availability;
pub use filters::FreeSpace;
pub use input::{
    BareNucleus, DatasetKind, DdmEndpoint, FullChain, InputDataset, NucleusSpec, NucleusState, OutputDataset, Parent,
    Replica, Role, SplitRuleError, TaskSpec, WanStatus, input_pre_staging_from_split_rule, t1_weight_from_split_rule,
};
pub use report::{Locality, LocalityRule, PendingReason, Skip, SkipReason, Stage};
pub use weight::{PrioRw, Weighted, record_assignment, select_nucleus, walk};

use crate::engine::dist::uniform01;
use filters::EndpointOutcome;

/// `cutOffRW` (L176, the seed's rwOffset): RW below it does not divide the weight.
pub const CUT_OFF_RW: f64 = 50.0;
/// `negWeightTape` (L177, the seed's tapeWeight): factor for input partly on tape only.
pub const NEG_WEIGHT_TAPE: f64 = 0.001;
/// GB of output per cpuTime/corePower/day of remaining work (L372, the seed's
/// normalizedExpOutSize), with corePower 10.
pub const SPACE_PER_RW_GB: f64 = 0.25;
/// A task left without a nucleus is retried after 30 min (seed 004).
pub const PENDING_RETRY_S: u64 = 1800;
/// Bytes per GB as PanDA converts (`× 1024 × 1024 × 1024`).
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Seed 004 (default) or panda-server 1.0.4 (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TaskBrokerVariant {
    #[default]
    Seed,
    PandaServer,
}

/// `(component, key)` of every gdpconfig entry [`TaskBrokerageParams`] reads (app `jedi`, vo
/// `atlas`, except `NQUEUED_NUC_CAP`, read with vo unset); `DISK_THRESHOLD_` is the family
/// `DISK_THRESHOLD_<workQueue.queue_name>`.
pub const GDPCONFIG_KEYS: &[(&str, &str)] = &[
    ("taskbrokerage", "DISK_THRESHOLD_"),
    ("taskbrokerage", "DISK_THRESHOLD"),
    ("taskbrokerage", "FREE_DISK_CUTOFF"),
    ("taskbrokerage", "INPUT_SIZE_THRESHOLD"),
    ("taskbrokerage", "INPUT_NUM_THRESHOLD"),
    ("taskbrokerage", "INPUT_SIZE_FRACTION"),
    ("taskbrokerage", "INPUT_NUM_FRACTION"),
    ("taskbrokerage", "MIN_IO_INTENSITY_WITH_LOCAL_DATA"),
    ("taskbrokerage", "MIN_INPUT_SIZE_WITH_LOCAL_DATA"),
    ("taskbrokerage", "MAX_TASK_PRIO_WITH_LOCAL_DATA"),
    ("taskbrokerage", "DATA_LOCATION_CHECK_PERIOD"),
    ("taskbrokerage", "NQUEUED_NUC_CAP"),
];

/// The gdpconfig keys of task brokerage (component `taskbrokerage`, app `jedi`, vo `atlas`;
/// reference §1 "Parameters", L147-190); defaults are the code's fallbacks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaskBrokerageParams {
    /// `DISK_THRESHOLD` (TB, default 100): free space a nucleus endpoint must keep.
    pub disk_threshold: f64,
    /// `DISK_THRESHOLD_<workQueue.queue_name>` (TB): per work queue / gshare, used first.
    pub disk_threshold_by_queue: BTreeMap<String, f64>,
    /// `FREE_DISK_CUTOFF` (TB, default 1000): cap of the free-TB factor of the weight.
    pub free_disk_cutoff: f64,
    /// `INPUT_SIZE_THRESHOLD` (GB, default 1): the size rule applies above it.
    pub input_size_threshold: f64,
    /// `INPUT_NUM_THRESHOLD` (files, default 100): the file-count rule applies above it.
    pub input_num_threshold: f64,
    /// `INPUT_SIZE_FRACTION` (%, default 10): share of the input size that must be local.
    pub input_size_fraction: f64,
    /// `INPUT_NUM_FRACTION` (%, default 10): share of the input files that must be local.
    pub input_num_fraction: f64,
    /// `MIN_IO_INTENSITY_WITH_LOCAL_DATA` (kB/s, default 200).
    pub min_io_intensity_with_local_data: f64,
    /// `MIN_INPUT_SIZE_WITH_LOCAL_DATA` (GB, default 10000).
    pub min_input_size_with_local_data: f64,
    /// `MAX_TASK_PRIO_WITH_LOCAL_DATA` (default 800).
    pub max_task_prio_with_local_data: i64,
    /// `DATA_LOCATION_CHECK_PERIOD` (days, default 7; 0 also reads as 7: `if not period`).
    pub data_location_check_period: f64,
    /// `NQUEUED_NUC_CAP` (files, default 2000; read in `getBackloggedNuclei`, entity_module
    /// L3648-3683).
    pub nqueued_nuc_cap: f64,
}

impl Default for TaskBrokerageParams {
    fn default() -> Self {
        Self {
            disk_threshold: 100.0,
            disk_threshold_by_queue: BTreeMap::new(),
            free_disk_cutoff: 1000.0,
            input_size_threshold: 1.0,
            input_num_threshold: 100.0,
            input_size_fraction: 10.0,
            input_num_fraction: 10.0,
            min_io_intensity_with_local_data: 200.0,
            min_input_size_with_local_data: 10000.0,
            max_task_prio_with_local_data: 800,
            data_location_check_period: 7.0,
            nqueued_nuc_cap: 2000.0,
        }
    }
}

impl TaskBrokerageParams {
    /// The threshold (TB) for a work queue: `DISK_THRESHOLD_<queue>` if set (even 0), else
    /// `DISK_THRESHOLD`.
    pub fn disk_threshold(&self, queue_name: &str) -> f64 {
        self.disk_threshold_by_queue.get(queue_name).copied().unwrap_or(self.disk_threshold)
    }

    /// `DATA_LOCATION_CHECK_PERIOD` as the code reads it: 0 (falsy) means 7.
    pub fn data_location_check_period_days(&self) -> f64 {
        if self.data_location_check_period == 0.0 { 7.0 } else { self.data_location_check_period }
    }

    /// The settings as brokerage reads them: every NaN value is its default (PanDA's numbers
    /// are never NaN; this keeps comparisons meaningful).
    pub fn sane(&self) -> Self {
        let d = Self::default();
        let or = |x: f64, def: f64| if x.is_nan() { def } else { x };
        Self {
            disk_threshold: or(self.disk_threshold, d.disk_threshold),
            disk_threshold_by_queue: self
                .disk_threshold_by_queue
                .iter()
                .map(|(k, &v)| (k.clone(), or(v, 100.0)))
                .collect(),
            free_disk_cutoff: or(self.free_disk_cutoff, d.free_disk_cutoff),
            input_size_threshold: or(self.input_size_threshold, d.input_size_threshold),
            input_num_threshold: or(self.input_num_threshold, d.input_num_threshold),
            input_size_fraction: or(self.input_size_fraction, d.input_size_fraction),
            input_num_fraction: or(self.input_num_fraction, d.input_num_fraction),
            min_io_intensity_with_local_data: or(
                self.min_io_intensity_with_local_data,
                d.min_io_intensity_with_local_data,
            ),
            min_input_size_with_local_data: or(self.min_input_size_with_local_data, d.min_input_size_with_local_data),
            max_task_prio_with_local_data: self.max_task_prio_with_local_data,
            data_location_check_period: or(self.data_location_check_period, d.data_location_check_period),
            nqueued_nuc_cap: or(self.nqueued_nuc_cap, d.nqueued_nuc_cap),
        }
    }
}

/// What one brokerage of one task reads.
#[derive(Debug, Clone, Copy)]
pub struct BrokerageInput<'a> {
    pub task: &'a TaskSpec,
    /// Nuclei and satellites, in the site mapper's order.
    pub nuclei: &'a [NucleusSpec],
    pub endpoints: &'a [DdmEndpoint],
    /// `prioRW[task.currentPriority]` per nucleus index (see [`PrioRw`]); missing entries are 0.
    pub prio_rw: &'a [f64],
}

/// A nucleus was chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment<'a> {
    pub nucleus: usize,
    /// The roulette target `r = Σw × U`.
    pub target: f64,
    /// The weighted candidates in walk order.
    pub candidates: Vec<Weighted<'a>>,
    pub skipped: Vec<Skip<'a>>,
    pub locality: Locality,
}

/// No nucleus this cycle: the task stays `assigning` and is retried.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending<'a> {
    /// [`PENDING_RETRY_S`].
    pub retry_after_s: u64,
    pub reason: PendingReason<'a>,
    pub skipped: Vec<Skip<'a>>,
    pub locality: Locality,
}

/// The outcome of [`do_brokerage`].
#[derive(Debug, Clone, PartialEq)]
pub enum Brokerage<'a> {
    /// The task already had a nucleus (L232-236): no filter, no draw.
    Preset {
        nucleus: usize,
    },
    Assigned(Assignment<'a>),
    Pending(Pending<'a>),
}

impl<'a> Brokerage<'a> {
    /// The nucleus the task goes to, if any.
    pub fn chosen(&self) -> Option<usize> {
        match self {
            Brokerage::Preset { nucleus } => Some(*nucleus),
            Brokerage::Assigned(a) => Some(a.nucleus),
            Brokerage::Pending(_) => None,
        }
    }

    /// Every skipped nucleus with its reason, in the order PanDA logs them.
    pub fn skipped(&self) -> &[Skip<'a>] {
        match self {
            Brokerage::Preset { .. } => &[],
            Brokerage::Assigned(a) => &a.skipped,
            Brokerage::Pending(p) => &p.skipped,
        }
    }

    /// "Why did this task not go to that nucleus?": the reason it was skipped, if it was.
    pub fn why_not(&self, nucleus: usize) -> Option<&SkipReason<'a>> {
        self.skipped().iter().find(|s| s.nucleus == nucleus).map(|s| &s.reason)
    }
}

/// Drops the candidates `check` rejects, recording why.
fn apply<'a>(
    cands: &mut Vec<usize>,
    skipped: &mut Vec<Skip<'a>>,
    nuclei: &'a [NucleusSpec],
    mut check: impl FnMut(usize, &'a NucleusSpec) -> Result<(), SkipReason<'a>>,
) {
    cands.retain(|&i| {
        let Some(n) = nuclei.get(i) else { return false };
        match check(i, n) {
            Ok(()) => true,
            Err(reason) => {
                skipped.push(Skip { nucleus: i, name: &n.name, reason });
                false
            }
        }
    });
}

/// Task brokerage of one task (`AtlasProdTaskBrokerThread.runImpl` for one task): the filter
/// chain of the module doc, the weights and one draw from `rng` ([`select_nucleus`]). The
/// caller then records the assignment in its RW table ([`record_assignment`]).
pub fn do_brokerage<'a, R: Rng + ?Sized>(
    input: &BrokerageInput<'a>,
    params: &TaskBrokerageParams,
    variant: TaskBrokerVariant,
    rng: &mut R,
) -> Brokerage<'a> {
    let (task, nuclei, endpoints) = (input.task, input.nuclei, input.endpoints);
    let p = params.sane();
    if let Some(n) = task.nucleus.filter(|&n| n < nuclei.len()) {
        return Brokerage::Preset { nucleus: n };
    }
    let mut skipped: Vec<Skip<'a>> = Vec::new();
    let mut locality = Locality::NotReached;
    let pending = |reason, skipped, locality| {
        Brokerage::Pending(Pending { retry_after_s: PENDING_RETRY_S, reason, skipped, locality })
    };
    // 0. candidates: nuclei, then bare-nucleus satellites for full-chain tasks
    let full_chain = task.full_chain.is_some();
    let mut cands: Vec<usize> = (0..nuclei.len()).filter(|&i| nuclei[i].role == Role::Nucleus).collect();
    if full_chain {
        cands.extend(
            (0..nuclei.len()).filter(|&i| nuclei[i].role == Role::Satellite && nuclei[i].bare_nucleus.is_some()),
        );
    }
    // 1. data lookup
    let mut avail = vec![Availability::default(); nuclei.len()];
    let mut has_data = false;
    for ds in task.inputs.iter().filter(|ds| data::is_considered(ds, task)) {
        for &i in &cands {
            avail[i].add(&data::get_nuclei_with_data(ds, &nuclei[i], endpoints));
        }
        has_data = true;
        if !data::remote_source_available(ds, endpoints) {
            return pending(PendingReason::NoRemoteSource { dataset: &ds.name }, skipped, locality);
        }
    }
    let none_left = |stage| PendingReason::NoCandidates { stage };
    // 2. status
    apply(&mut cands, &mut skipped, nuclei, |_, n| filters::status_check(n));
    if cands.is_empty() {
        return pending(none_left(Stage::Status), skipped, locality);
    }
    // 3. transfer backlog, unless t1Weight < 0
    if task.t1_weight >= 0 {
        apply(&mut cands, &mut skipped, nuclei, |_, n| filters::backlog_check(n, &p));
        if cands.is_empty() {
            return pending(none_left(Stage::TransferBacklog), skipped, locality);
        }
    }
    // 4. endpoints and space
    let threshold_gb = p.disk_threshold(&task.work_queue) * 1024.0;
    let mut space: Vec<Option<FreeSpace>> = vec![None; nuclei.len()];
    let mut crash = None;
    apply(&mut cands, &mut skipped, nuclei, |i, n| {
        if crash.is_some() {
            return Ok(());
        }
        match filters::endpoint_check(n, task, endpoints, threshold_gb, variant) {
            EndpointOutcome::Pass(free) => {
                space[i] = free;
                Ok(())
            }
            EndpointOutcome::Skip(reason) => Err(reason),
            EndpointOutcome::Crash(reason) => {
                crash = Some(reason);
                Ok(())
            }
        }
    });
    if let Some(reason) = crash {
        return pending(reason, skipped, locality);
    }
    if cands.is_empty() {
        return pending(none_left(Stage::StorageEndpoint), skipped, locality);
    }
    // 5. job check
    apply(&mut cands, &mut skipped, nuclei, |_, n| filters::job_check(n));
    if cands.is_empty() {
        return pending(PendingReason::NoSitesCanRunJobs, skipped, locality);
    }
    // 6. data locality
    let period = p.data_location_check_period_days();
    let mut data_kept = has_data;
    if task.frozen_for_s.is_some_and(|s| s > period * 86_400.0) {
        locality = Locality::SkippedFrozen { period_days: period };
    } else if !has_data {
        locality = Locality::NoInputData;
    } else {
        let before = skipped.len();
        let mut passing = cands.clone();
        apply(&mut passing, &mut skipped, nuclei, |i, _| match data::locality_skip(&avail[i], task, &p, variant) {
            None => Ok(()),
            Some(reason) => Err(reason),
        });
        if !passing.is_empty() {
            cands = passing;
            locality = Locality::Checked;
        } else {
            let total_input_gb = avail[cands[0]].tot_size as f64 / GIB;
            let rule = LocalityRule {
                io_intensity: task.io_intensity,
                min_io_intensity: p.min_io_intensity_with_local_data,
                total_input_gb,
                min_input_size_gb: p.min_input_size_with_local_data,
                priority: match variant {
                    TaskBrokerVariant::Seed => task.task_priority,
                    TaskBrokerVariant::PandaServer => task.current_priority,
                },
                max_task_prio: p.max_task_prio_with_local_data,
                period_days: period,
            };
            if data::can_disable_locality(task, total_input_gb, &p, variant) {
                skipped.truncate(before);
                data_kept = false;
                locality = Locality::Disabled(rule);
            } else {
                return pending(none_left(Stage::Data), skipped, Locality::Unavoidable(rule));
            }
        }
    }
    // 7. full chain
    let follow = match filters::parent_to_follow(task, nuclei, variant) {
        Ok(f) => f,
        Err(reason) => return pending(reason, skipped, locality),
    };
    apply(&mut cands, &mut skipped, nuclei, |i, n| filters::full_chain_check(i, n, task, follow, variant));
    if cands.is_empty() {
        return pending(none_left(Stage::FullChain), skipped, locality);
    }
    // 8. weights and choice
    let candidates: Vec<Weighted<'a>> = cands
        .iter()
        .map(|&i| {
            let rw = input.prio_rw.get(i).copied().unwrap_or(0.0);
            let data = if data_kept { weight::data_factor(&avail[i], task.io_intensity, &p) } else { None };
            let free = space[i];
            Weighted {
                nucleus: i,
                name: &nuclei[i].name,
                weight: weight::nucleus_weight(rw, data, free, p.free_disk_cutoff, variant),
                rw,
                variant,
                data,
                space: free,
                free_disk_cutoff: p.free_disk_cutoff,
            }
        })
        .collect();
    let total = candidates.iter().fold(0.0, |acc, c| acc + c.weight);
    let target = total * uniform01(rng);
    let pick = walk(candidates.iter().map(|c| c.weight), target).unwrap_or(0);
    let nucleus = candidates.get(pick).map_or(0, |c| c.nucleus);
    Brokerage::Assigned(Assignment { nucleus, target, candidates, skipped, locality })
}

#[cfg(test)]
mod tests;
