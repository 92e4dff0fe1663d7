//! `dirac::priority` — task-queue priorities from group shares (seed 002, "Priority
//! implementation"; reference `dirac.md` §2.1–§2.2).
//!
//! A group's JobShare `S_g` is the share of one *entity*: the whole group when it has the
//! `JOB_SHARING` property, otherwise each of its `U_g` users with waiting task queues, who get
//! `S_g / U_g`. Inside an entity the share is split among its TQs in proportion to a weight
//! `w_t` built from the UserPriorities of the TQ's jobs:
//!
//! `P_t = max(S_entity · w_t / Σ_entity w, 0.001)`.
//!
//! - **Sum** (the seed, and the code until 2009-07-14): `w_t` = sum of the jobs' RealPriority,
//!   so a TQ with more jobs gets more priority. Checked against the 2009 code (TaskQueueDB.py
//!   v1.62, `__setPrioritiesForEntity`: `prio = share / totalPrio * SUM(RealPriority)`). With
//!   equal job priorities and equal job counts this is the seed's "1/N" and "1/(N·U)".
//! - **Average** (DIRAC since 2009-07-14, v9 today): `w_t` = average RealPriority, so the
//!   number of jobs does not matter.
//!
//! RealPriority is `__hackJobPriority` of the UserPriority ([`real_priority`]).
//! The floor `TQ_MIN_SHARE = 0.001` keeps every TQ drawable by `RAND()/Priority`.
//!
//! The shares that enter here may already be corrected by a share corrector (seed 002,
//! "Dynamic share corrections"): [`EntityShares`] is that seam.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::Period;

use super::taskqueue::{self, TaskQueue, TaskQueueDb, TqDefinition, TqId};

/// `DEFAULT_GROUP_SHARE` (reference §2.1).
pub const DEFAULT_GROUP_SHARE: f64 = 1000.0;
/// `TQ_MIN_SHARE` (reference §2.1).
pub const TQ_MIN_SHARE: f64 = 0.001;
/// The group property that makes a group one share entity, as DIRAC names it: the value of
/// DIRAC's constant `Properties.JOB_SHARING`, what a CS writes (`Properties = JobSharing`) and
/// what `Registry.getPropertiesForGroup` is searched for (reference §1.3, §2.1).
pub const JOB_SHARING_CS: &str = "JobSharing";
/// The seeds' name for it (seeds 001 and 002 say "JOB_SHARING property", the name of DIRAC's
/// Python constant). A scenario may use it; in a DIRAC `.cfg` it is not the property
/// (`scenario::dirac_cfg`).
pub const JOB_SHARING: &str = "JOB_SHARING";

/// True if a scenario's `property` is the JobSharing property: DIRAC's name or the seeds'.
pub fn is_job_sharing_property(property: &str) -> bool {
    property == JOB_SHARING_CS || property == JOB_SHARING
}

/// A DIRAC group as defined in the Registry (`/Registry/Groups/<g>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    /// Group name (`/Registry/Groups/<name>`, e.g. `lhcb_user`), unique; job streams name it in
    /// `group`, and DIRAC keys group shares by it (reference dirac.md §2.1).
    pub name: String,
    /// `JobShare`, default 1000 (reference §2.1).
    #[serde(default = "default_job_share")]
    pub job_share: f64,
    /// `Properties`, e.g. `["JobSharing"]` (the seeds' `"JOB_SHARING"` is accepted too).
    #[serde(default)]
    pub properties: Vec<String>,
    /// `Users` of the group.
    #[serde(default)]
    pub users: Vec<String>,
}

fn default_job_share() -> f64 {
    DEFAULT_GROUP_SHARE
}

impl GroupConfig {
    /// True if the group has the JobSharing property (`JobSharing`, or the seeds' `JOB_SHARING`).
    pub fn job_sharing(&self) -> bool {
        self.properties.iter().any(|p| is_job_sharing_property(p))
    }

    /// The share DIRAC uses: `job_share`, or [`DEFAULT_GROUP_SHARE`] when `int_job_share`
    /// (DIRAC 9, [`PrioritySettings::int_job_share`]) and it is not an integer, since `int()`
    /// of its text fails there.
    pub fn effective_job_share(&self, int_job_share: bool) -> f64 {
        if int_job_share && self.job_share.fract() != 0.0 { DEFAULT_GROUP_SHARE } else { self.job_share }
    }
}

/// How UserPriorities weight the TQs of one entity (reference §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum UserPriorityWeighting {
    /// The seed's J: sum of the jobs' priorities in the TQ.
    #[default]
    Sum,
    /// DIRAC since 2009-07: average of the jobs' priorities in the TQ.
    Average,
}

/// Which shares the recalculation at a TQ's creation or deletion uses (reference §0 item 3,
/// §2.4). The TaskQueuesAgent's 120 s pass always uses the configured (and, when corrections
/// are on, corrected) shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum EntityRecalculationShares {
    /// The configured JobShares, corrected when corrections are on: the 2009 code called
    /// `__updateGlobalShares` inside every per-entity recalculation.
    #[default]
    Configured,
    /// DIRAC 9: TQs are created by the optimizer process and deleted by the Matcher's, whose
    /// `__groupShares` is never filled (only the agent's `recalculateTQSharesForAll` fills it):
    /// every group gets `DEFAULT_GROUP_SHARE` (1000) and no correction until the next agent
    /// pass. The real code, run: prod (JobShare 3000) TQs got 833/167 at insertion, 2500/500
    /// after the agent's pass.
    ProcessDefault,
}

/// Priority settings of a scenario (`dirac.priority`); an option left out takes the value
/// of `dirac.preset` (see `dirac::preset`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PrioritySettings {
    /// Sum (seed) or Average (DIRAC 9) weighting of UserPriorities.
    pub user_priority_weighting: Option<UserPriorityWeighting>,
    /// DIRAC 9's `calculate_priority`: TQs of an entity identical except for Sites and
    /// BannedSites each get the sum of their priorities (reference §2.1).
    pub sum_identical_definitions: Option<bool>,
    /// The shares of the recalculations at TQ creation and deletion: `Configured` (2009) or
    /// DIRAC 9's `ProcessDefault` (1000 per group, no correction, until the agent's pass).
    pub entity_recalculation_shares: Option<EntityRecalculationShares>,
    /// Read each `JobShare` as DIRAC 9 does, `gConfig.getValue(".../JobShare", 1000)`: the
    /// text is cast with `int()`, and a value that is not an integer (`0.5`, or `2500.0` in a
    /// `.cfg`) fails the cast and gives the default 1000 (reference §2.1). Off: the number is
    /// used as written (the seed).
    pub int_job_share: Option<bool>,
    /// Period of the full recalculation: TaskQueuesAgent PollingTime 120 s (reference §2.4).
    pub recalculation_period_s: Period,
}

impl Default for PrioritySettings {
    fn default() -> Self {
        Self {
            user_priority_weighting: None,
            sum_identical_definitions: None,
            entity_recalculation_shares: None,
            int_job_share: None,
            recalculation_period_s: Period::secs(120.0),
        }
    }
}

/// The share of each entity, possibly corrected: the seam for `dirac::corrector`.
///
/// `group` maps group id → group share (JobShare, times the global correction factor);
/// `user_factor` maps (group id, owner id) → the in-group correction factor of a user
/// (missing = 1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EntityShares {
    pub group: BTreeMap<u32, f64>,
    pub user_factor: BTreeMap<(u32, u32), f64>,
}

/// Users with task queues per non-JOB_SHARING group: `U_g` of seed 002.
pub fn owners_per_group<'a>(tqs: impl Iterator<Item = &'a TaskQueue>) -> BTreeMap<u32, Vec<u32>> {
    let mut out: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for tq in tqs {
        let owners = out.entry(tq.head.group).or_default();
        if let Err(pos) = owners.binary_search(&tq.head.owner) {
            owners.insert(pos, tq.head.owner);
        }
    }
    out
}

/// Buffers reused by [`compute_into`] and [`sum_identical_definitions_into`]: DIRAC
/// recomputes the priorities after every TQ creation and deletion, so in a large grid (where
/// most jobs create a TQ and empty it) this runs about twice per job and should not allocate
/// (it was 40 % of the instructions of a 10⁵-job week). Only DIRAC 9's grouping
/// still allocates, one vector of references per call.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    /// (group, owner) of every TQ as one key ([`owner_key`]), sorted and deduplicated: `U_g` is
    /// the length of a group's run. [`recalculate_entity_into`] keeps (owner, position) of
    /// its group's TQs here.
    owners: Vec<u64>,
    /// The index in `entities` of each owner's entity, parallel to `owners`.
    slots: Vec<usize>,
    /// The index in `entities` of each TQ that gets a priority, in TQ-id order.
    tq_slots: Vec<usize>,
    /// Each share entity: its share and its Σ w.
    entities: Vec<EntitySlot>,
    /// The result: (TQ id, priority) in TQ-id order.
    out: Vec<(TqId, f64)>,
    /// Indices into `out`, ordered by definition ignoring Sites and BannedSites.
    order: Vec<usize>,
}

/// A TQ's (group, owner) as one integer that sorts as the pair does: the computation sorts
/// and searches these at every TQ creation and deletion (measured: comparing pairs field by
/// field took a third of its perf samples at 10⁷; one integer, 11 % fewer instructions).
#[inline]
fn owner_key(tq: &TaskQueue) -> u64 {
    taskqueue::owner_key(tq.head.group, tq.head.owner)
}

/// One share entity during a computation: `S_entity` and `Σ_entity w`.
#[derive(Debug, Clone, Copy)]
struct EntitySlot {
    share: f64,
    total: f64,
}

impl Scratch {
    /// What the last [`compute_into`] (or [`sum_identical_definitions_into`]) left.
    pub fn result(&self) -> &[(TqId, f64)] {
        &self.out
    }
}

/// Compute the priority of every TQ.
///
/// `job_sharing(g)` tells whether group `g` has JOB_SHARING; `shares` gives each group's
/// (possibly corrected) share — a group missing from it gets [`DEFAULT_GROUP_SHARE`].
/// Returns `(tq id, priority)` in TQ-id order for the TQs that have jobs; an empty TQ (which
/// DIRAC 9 keeps, [`taskqueue::EmptyTqDeletion`]) keeps its priority but still counts its
/// owner in `U_g` (reference §2.1).
pub fn compute<'a>(
    tqs: impl Iterator<Item = &'a TaskQueue> + Clone,
    job_sharing: impl Fn(u32) -> bool,
    shares: &EntityShares,
    weighting: UserPriorityWeighting,
) -> Vec<(TqId, f64)> {
    compute_into(tqs, job_sharing, shares, weighting, &mut Scratch::default()).to_vec()
}

/// [`compute`] into reused buffers; the result lives in `scratch` until its next use.
///
/// Each entity's Σ w adds its TQs' weights in TQ-id order from 0, as [`compute`] always did,
/// so the priorities are the same to the last bit.
pub fn compute_into<'a, 's>(
    tqs: impl Iterator<Item = &'a TaskQueue> + Clone,
    job_sharing: impl Fn(u32) -> bool,
    shares: &EntityShares,
    weighting: UserPriorityWeighting,
    scratch: &'s mut Scratch,
) -> &'s [(TqId, f64)] {
    compute_all_into(tqs, job_sharing, shares, weighting, scratch)
}

/// `recalculateTQSharesForEntity(owner, group)` (reference §2.4): what DIRAC recomputes when a
/// TQ of `owner` in `group` has just been created or deleted — and nothing else, so the other
/// TQs keep the priorities (and the stale job averages) of their last computation.
///
/// - A JOB_SHARING group is one entity: all its TQs.
/// - Otherwise, if the owner has more than one TQ in the group (empty ones included), the
///   number of owners `U_g` did not change, and only the owner's TQs are set
///   (`owners[user] > 1`).
/// - Otherwise (its first TQ, or its last one gone) every owner's TQs in the group are set.
///
/// `U_g` counts every owner of the group either way; as everywhere, only TQs with jobs are
/// set. The result is in TQ-id order, in `scratch`, with the bits [`compute_into`] gives.
///
/// In a large grid this runs at almost every job's arrival and match (most jobs create a TQ
/// and empty it), so it walks the database once and then only the group's TQs, sorted by
/// owner, in plain loops (measured: the general computation, iterator filters over every TQ
/// and a search per TQ, took 1 390 instructions per call for the 6 TQs of a group at 10⁶ jobs,
/// 16 % of all).
pub fn recalculate_entity_into<'s>(
    db: &TaskQueueDb,
    group: u32,
    owner: u32,
    job_sharing: bool,
    shares: &EntityShares,
    weighting: UserPriorityWeighting,
    scratch: &'s mut Scratch,
) -> &'s [(TqId, f64)] {
    let Scratch { owners: members, out, .. } = scratch;
    let tqs = db.as_slice();
    let group_share = shares.group.get(&group).copied().unwrap_or(DEFAULT_GROUP_SHARE);
    out.clear();
    if job_sharing {
        let mut total = 0.0;
        for t in tqs.iter().filter(|t| t.head.group == group && t.n_jobs > 0) {
            total += weight(t, weighting);
        }
        for t in tqs.iter().filter(|t| t.head.group == group && t.n_jobs > 0) {
            out.push((t.id, tq_priority(group_share, weight(t, weighting), total)));
        }
        return out;
    }
    // (owner, position) of each TQ of the group: sorted, each owner is one run, in id order.
    members.clear();
    for (i, t) in tqs.iter().enumerate() {
        if t.head.group == group {
            members.push(u64::from(t.head.owner) << 32 | i as u64);
        }
    }
    members.sort_unstable();
    let owner_of = |m: u64| (m >> 32) as u32;
    let (mut n_owners, mut owned) = (0_usize, 0_usize);
    for (k, &m) in members.iter().enumerate() {
        n_owners += usize::from(k == 0 || owner_of(members[k - 1]) != owner_of(m));
        owned += usize::from(owner_of(m) == owner);
    }
    let only_owner = owned > 1;
    for run in members.chunk_by(|&a, &b| owner_of(a) == owner_of(b)) {
        let o = owner_of(run[0]);
        if only_owner && o != owner {
            continue;
        }
        let share = group_share / n_owners as f64 * user_factor(shares, group, o);
        let mut total = 0.0;
        for &m in run {
            let t = &tqs[m as u32 as usize];
            if t.n_jobs > 0 {
                total += weight(t, weighting);
            }
        }
        for &m in run {
            let t = &tqs[m as u32 as usize];
            if t.n_jobs > 0 {
                out.push((t.id, tq_priority(share, weight(t, weighting), total)));
            }
        }
    }
    if !only_owner && n_owners > 1 {
        out.sort_unstable_by_key(|&(id, _)| id);
    }
    out
}

/// `w_t`: the weight of a TQ inside its entity (reference §2.2).
#[inline]
fn weight(tq: &TaskQueue, weighting: UserPriorityWeighting) -> f64 {
    match weighting {
        UserPriorityWeighting::Sum => tq.sum_real_priority(),
        UserPriorityWeighting::Average => tq.sum_real_priority() / f64::from(tq.n_jobs.max(1)),
    }
}

/// `P_t = max(S_entity · w_t / Σ_entity w, TQ_MIN_SHARE)`, 0 before the floor when the entity
/// weighs nothing.
#[inline]
fn tq_priority(share: f64, w: f64, total: f64) -> f64 {
    let p = if total > 0.0 { share * w / total } else { 0.0 };
    p.max(TQ_MIN_SHARE)
}

/// The in-group correction factor of `owner` (1 without one; no lookup at all without an
/// in-group corrector, the common case).
#[inline]
fn user_factor(shares: &EntityShares, group: u32, owner: u32) -> f64 {
    if shares.user_factor.is_empty() { 1.0 } else { shares.user_factor.get(&(group, owner)).copied().unwrap_or(1.0) }
}

/// [`compute_into`] with its buffers: the TQs of `tqs` with jobs get a priority, every TQ
/// counts its owner in `U_g`.
fn compute_all_into<'a, 's>(
    tqs: impl Iterator<Item = &'a TaskQueue> + Clone,
    job_sharing: impl Fn(u32) -> bool,
    shares: &EntityShares,
    weighting: UserPriorityWeighting,
    scratch: &'s mut Scratch,
) -> &'s [(TqId, f64)] {
    let Scratch { owners, slots, tq_slots, entities, out, .. } = scratch;
    owners.clear();
    owners.extend(tqs.clone().map(owner_key));
    owners.sort_unstable();
    owners.dedup();
    // Each group's run of owners is its U_g; each owner gets the slot of its entity: the
    // group's one slot under JOB_SHARING, a slot of its own otherwise.
    slots.clear();
    entities.clear();
    for run in owners.chunk_by(|a, b| a >> 32 == b >> 32) {
        let g = (run[0] >> 32) as u32;
        let group_share = shares.group.get(&g).copied().unwrap_or(DEFAULT_GROUP_SHARE);
        if job_sharing(g) {
            slots.extend(std::iter::repeat_n(entities.len(), run.len()));
            entities.push(EntitySlot { share: group_share, total: 0.0 });
        } else {
            for &key in run {
                let factor = user_factor(shares, g, key as u32);
                slots.push(entities.len());
                entities.push(EntitySlot { share: group_share / run.len() as f64 * factor, total: 0.0 });
            }
        }
    }
    let slot = |tq: &TaskQueue| slots[owners.binary_search(&owner_key(tq)).expect("listed above")];
    let tqs = tqs.filter(|t| t.n_jobs > 0);
    // Σ w per entity, in TQ-id order; each TQ's entity slot is kept for the second pass.
    tq_slots.clear();
    for tq in tqs.clone() {
        let e = slot(tq);
        entities[e].total += weight(tq, weighting);
        tq_slots.push(e);
    }
    out.clear();
    out.extend(tqs.zip(tq_slots.iter()).map(|(tq, &e)| {
        let EntitySlot { share, total } = entities[e];
        (tq.id, tq_priority(share, weight(tq, weighting), total))
    }));
    out
}

/// DIRAC 9's grouping (`calculate_priority`, since 2012-11, reference §2.1): TQs whose
/// definitions are identical except for Sites and BannedSites (and MinRAM/MaxRAM, not
/// modelled) each get the **sum** of their priorities. Owner and group are part of the
/// definition, so only TQs of one entity are grouped. `priorities` is what [`compute`]
/// returned; the result is in the same order.
pub fn sum_identical_definitions(tqs: &TaskQueueDb, priorities: &[(TqId, f64)]) -> Vec<(TqId, f64)> {
    let mut scratch = Scratch { out: priorities.to_vec(), ..Scratch::default() };
    sum_identical_definitions_into(tqs, &mut scratch).to_vec()
}

/// [`sum_identical_definitions`] of the priorities [`compute_into`] left in `scratch`, in
/// place. Each sum adds the group's priorities in TQ-id order from 0, as the map of
/// definitions did, so the sums are the same to the last bit.
pub fn sum_identical_definitions_into<'s>(tqs: &TaskQueueDb, scratch: &'s mut Scratch) -> &'s [(TqId, f64)] {
    let Scratch { out, order, .. } = scratch;
    let defs: Vec<&TqDefinition> =
        out.iter().map(|&(id, _)| &*tqs.get(id).expect("a computed TQ exists").def).collect();
    order.clear();
    order.extend(0..out.len());
    // Stable: inside a run of identical definitions the indices stay in TQ-id order.
    order.sort_by(|&a, &b| cmp_ignoring_sites(defs[a], defs[b]));
    for run in order.chunk_by(|&a, &b| cmp_ignoring_sites(defs[a], defs[b]).is_eq()) {
        let sum = run.iter().fold(0.0, |s, &i| s + out[i].1);
        for &i in run {
            out[i].1 = sum;
        }
    }
    out
}

/// Orders definitions by every field except Sites and BannedSites (`priorityIgnoredFields`).
fn cmp_ignoring_sites(a: &TqDefinition, b: &TqDefinition) -> std::cmp::Ordering {
    // Destructured, so that a new field of the definition cannot be forgotten here.
    fn key(d: &TqDefinition) -> impl Ord + '_ {
        let TqDefinition {
            owner,
            group,
            setup,
            cpu_time,
            sites: _,
            banned_sites: _,
            platforms,
            grid_ces,
            pilot_types,
            submit_pools,
            tags,
            force_generic,
            job_types,
        } = d;
        (
            owner,
            group,
            setup,
            cpu_time,
            (platforms, grid_ces, pilot_types, submit_pools, tags, force_generic, job_types),
        )
    }
    key(a).cmp(&key(b))
}

#[cfg(test)]
#[path = "priority_tests.rs"]
mod tests;
