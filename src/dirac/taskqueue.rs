//! `dirac::taskqueue` — the TaskQueueDB: jobs grouped into task queues by identical
//! requirements (seed 001, "Task Queue creation"; reference `dirac.md` §1.1–§1.2).
//!
//! A task queue (TQ) holds every waiting job whose requirements are identical: owner, owner
//! group, setup, CPU segment, sites, banned sites, platforms, Grid CEs, pilot types, submit
//! pools and tags. Strings are interned by the caller into `u32` ids; multi-valued fields are
//! kept sorted and deduplicated, so the definition compares as a set (as the real SQL does).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Task-queue id, in creation order (DIRAC's auto-increment `TQId`).
pub type TqId = u32;
/// A task-queue definition's index in its [`TaskQueueDb`] ([`TaskQueueDb::intern`]).
pub type DefId = u32;
/// Job id, in submission order (DIRAC's `JobID`).
use super::levels::Spares;
pub use super::levels::{LevelJobs, Levels};
pub use crate::ids::JobId;

/// The CPU-time segments a job's `CPUTime` is rounded up to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub enum CpuSegments {
    /// The seed's four segments 500, 5000, 50000, 300000 s (seed 001; in the code from
    /// 2008-11 to 2009-07, reference §1.2).
    #[default]
    Seed2009,
    /// Today's 13 segments, 360 s … 1 080 000 s (DIRAC 9 `__defaultCPUSegments`, reference §1.2).
    Dirac9,
    /// Any strictly increasing list (the Operations option `taskQueueCPUTimeIntervals`).
    Custom(Vec<f64>),
}

const SEED_2009_SEGMENTS: [f64; 4] = [500.0, 5000.0, 50_000.0, 300_000.0];
const DIRAC9_SEGMENTS: [f64; 13] = [
    360.0,
    1800.0,
    3600.0,
    21_600.0,
    43_200.0,
    86_400.0,
    172_800.0,
    259_200.0,
    345_600.0,
    518_400.0,
    691_200.0,
    864_000.0,
    1_080_000.0,
];

impl CpuSegments {
    /// The segment boundaries, in seconds.
    pub fn values(&self) -> &[f64] {
        match self {
            CpuSegments::Seed2009 => &SEED_2009_SEGMENTS,
            CpuSegments::Dirac9 => &DIRAC9_SEGMENTS,
            CpuSegments::Custom(v) => v,
        }
    }

    /// `fitCPUTimeToSegments`: the first segment ≥ `cpu_time`, or the last segment when the
    /// time is longer than all of them (seed 001: "if the job CPU time exceeds 300000 the
    /// TaskQueue will have 300000 at maximum").
    pub fn fit(&self, cpu_time: f64) -> f64 {
        let v = self.values();
        v.iter().copied().find(|&s| s >= cpu_time).unwrap_or_else(|| v[v.len() - 1])
    }

    /// The longest segment: the director's `maxCPU` (reference §4.1).
    pub fn max(&self) -> f64 {
        *self.values().last().expect("validated non-empty")
    }

    /// Problems with a custom list (empty, not strictly increasing, not positive).
    pub fn problems(&self) -> Vec<String> {
        let v = self.values();
        let mut out = Vec::new();
        if v.is_empty() {
            out.push("the list of CPU segments is empty".to_string());
        }
        if v.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
            out.push("CPU segments must be positive numbers of seconds".to_string());
        }
        if v.windows(2).any(|w| w[0] >= w[1]) {
            out.push("CPU segments must be strictly increasing".to_string());
        }
        out
    }
}

/// Task-queue settings of a scenario (`dirac.task_queues`); an option left out takes the
/// value of `dirac.preset` (see `dirac::preset`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct TaskQueueSettings {
    /// CPU segmentation (`Seed2009`, `Dirac9` or `Custom([...])`).
    pub cpu_segments: Option<CpuSegments>,
    /// `__maxJobsInTQ`: a TQ holding this many jobs gets no more, a new TQ with the same
    /// definition is opened (reference §1.1); 0 for no limit.
    pub max_jobs_in_tq: Option<u32>,
    /// What becomes of a TQ whose last job leaves: `AtOnce` (the seed) or `OrphanCleaning`
    /// (DIRAC 9.1.22).
    pub empty_tq_deletion: Option<EmptyTqDeletion>,
}

/// When a TQ whose last job has left is deleted (reference §1.4, §2.1, §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum EmptyTqDeletion {
    /// The 2009 code: the Matcher calls `deleteTaskQueueIfEmpty` as it takes the last job,
    /// and the owner's priorities are recomputed.
    #[default]
    AtOnce,
    /// DIRAC 9.1.22. Taking the last job (`deleteJob`) only puts the TQ into a `DictCache`
    /// for 300 s, whose delete callback runs when that key is read again or the cache is
    /// purged, and TaskQueueDB never does either: the emptied TQ stays. It goes when a pilot
    /// director's `getMatchingTaskQueues` matches it: `retrieveTaskQueues` finds requirement
    /// rows (sites, CEs, banned sites, platforms, job types or tags) of a TQ without jobs and
    /// calls `cleanOrphanedTaskQueues`, which deletes **every** empty TQ and recomputes no
    /// priority. While it stays, the empty TQ counts its owner in `U_g` (and in the
    /// recalculation's "owner has more than one TQ" shortcut), keeps its group among those
    /// recomputed, is never reused (a new job of its definition opens a new TQ), gets no new
    /// priority, yields no job to the Matcher and is not shown to the director.
    OrphanCleaning,
}

/// The grouping key of a task queue: every requirement of seed 001, interned. The default
/// has no restriction besides owner 0, group 0, setup 0 and CPU time 0.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TqDefinition {
    /// Owner (user) id.
    pub owner: u32,
    /// Owner group id.
    pub group: u32,
    /// Setup id (2009 TQs had a mandatory Setup).
    pub setup: u32,
    /// CPU time after rounding up to a segment, in whole seconds.
    pub cpu_time: u64,
    pub sites: Vec<u32>,
    pub banned_sites: Vec<u32>,
    pub platforms: Vec<u32>,
    pub grid_ces: Vec<u32>,
    pub pilot_types: Vec<u32>,
    pub submit_pools: Vec<u32>,
    pub tags: Vec<u32>,
    /// The `ForceGeneric` flag of the director (seed 000).
    pub force_generic: bool,
    /// `JobTypes` (reference §1.1: the JDL `JobType`, every job has one). Last, so that
    /// definitions that differ only here sort after those that differ elsewhere.
    pub job_types: Vec<u32>,
}

impl TqDefinition {
    /// The TQ has a row in one of DIRAC 9's requirement tables (`tq_TQToSites`, `GridCEs`,
    /// `BannedSites`, `Platforms`, `JobTypes`, `Tags`): what makes `retrieveTaskQueues` notice
    /// it once it is empty (reference §1.1). Every job has a job type, so every TQ of a run
    /// has one.
    pub fn has_requirement_rows(&self) -> bool {
        let lists = [&self.sites, &self.grid_ces, &self.banned_sites, &self.platforms, &self.job_types, &self.tags];
        lists.iter().any(|l| !l.is_empty())
    }
}

/// Sort and deduplicate a multi-valued field so that definitions compare as sets.
pub fn canonical(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v.dedup();
    v
}

/// What the Matcher and the priority recalculation read of a TQ's definition for every TQ
/// they walk, copied into the TQ: the definition sits behind a pointer with its
/// fields over four cache lines, and at 10⁶ jobs and more the walks of the 25-odd TQs on
/// every request for work missed the caches on each of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TqHead {
    pub owner: u32,
    pub group: u32,
    pub setup: u32,
    pub cpu_time: u64,
    /// The definition has a multi-valued requirement on the resource's place or kind (sites,
    /// banned sites, platforms, CEs, pilot types, tags): the Matcher must read the definition
    /// itself. Job types are not counted: every definition has one, and the Matcher looks at
    /// them only when the resource names types (a pilot factory's fetch), never for a pilot.
    pub has_lists: bool,
}

impl TqHead {
    /// The head of `def`.
    pub fn of(def: &TqDefinition) -> Self {
        let lists = [&def.sites, &def.banned_sites, &def.platforms, &def.grid_ces, &def.pilot_types, &def.tags];
        TqHead {
            owner: def.owner,
            group: def.group,
            setup: def.setup,
            cpu_time: def.cpu_time,
            has_lists: lists.iter().any(|l| !l.is_empty()),
        }
    }
}

/// One task queue: its definition, its priority, and its waiting jobs by UserPriority level.
#[derive(Debug, Clone)]
pub struct TaskQueue {
    pub id: TqId,
    /// Shared with the index by definition: a new TQ of a known definition copies nothing.
    pub def: Arc<TqDefinition>,
    /// The fields of `def` every walk over the TQs reads ([`TqHead`]).
    pub head: TqHead,
    /// The definition's id in its [`TaskQueueDb`].
    pub def_id: DefId,
    /// Current priority (written by `dirac::priority`); a new TQ starts at 1 (reference §1.1).
    pub priority: f64,
    /// Waiting jobs by UserPriority level, each level ordered by job id.
    pub levels: Levels,
    /// Number of waiting jobs.
    pub n_jobs: u32,
    /// Sum of the UserPriorities of the waiting jobs.
    pub sum_user_priority: u64,
    /// The RealPriorities (`__hackJobPriority`) of the waiting jobs, summed as integers.
    pub real_priorities: RealPrioritySum,
}

impl TaskQueue {
    /// `SUM(RealPriority)` over the TQ's waiting jobs (reference §2.1).
    #[inline]
    pub fn sum_real_priority(&self) -> f64 {
        self.real_priorities.value()
    }
}

/// The sum of a TQ's RealPriorities, kept so that it is always the sum over the jobs in the
/// TQ now, whatever came and went before. DIRAC computes `SUM(RealPriority)` over the TQ's
/// jobs at every recomputation (`__setPrioritiesForEntity`, reference §2.1), and job
/// priorities are integers (`tq_Jobs.Priority` is an `INTEGER`, `insertJob` passes
/// `int(jobPriority)`), which `__hackJobPriority` maps to 1e-5 (0), themselves (1..9) or 1e6
/// (10). A running `f64` sum drifts instead: 1e-5 + 1e6 − 1e6 is 9.99996e-6, so a TQ that once
/// held a priority-10 job next to a priority-0 one would weigh 4·10⁻⁶ less for ever. Counting
/// the jobs of each class in integers gives the same value for the same jobs, always.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RealPrioritySum {
    /// Jobs at UserPriority 0 (RealPriority 1e-5).
    lowest: u32,
    /// Σ UserPriority of the jobs at 1..9 (RealPriority = UserPriority).
    middle: u64,
    /// Jobs at UserPriority 10 or more (RealPriority 1e6).
    highest: u32,
}

impl RealPrioritySum {
    fn add(&mut self, user_priority: u8) {
        match user_priority {
            0 => self.lowest += 1,
            p if p >= 10 => self.highest += 1,
            p => self.middle += u64::from(p),
        }
    }

    fn remove(&mut self, user_priority: u8) {
        match user_priority {
            0 => self.lowest -= 1,
            p if p >= 10 => self.highest -= 1,
            p => self.middle -= u64::from(p),
        }
    }

    /// The sum of [`real_priority`] over the jobs counted.
    pub fn value(self) -> f64 {
        self.middle as f64 + f64::from(self.highest) * real_priority(10) + f64::from(self.lowest) * real_priority(0)
    }
}

/// `__hackJobPriority` (reference §1.4): the weight of a UserPriority in `RAND()/RealPriority`
/// draws: 0 → 1e-5, 1..9 unchanged, 10 → 1e6, so level-10 jobs practically always go first
/// and level-0 jobs practically never while others wait.
pub fn real_priority(user_priority: u8) -> f64 {
    match user_priority {
        0 => 1e-5,
        p if p >= 10 => 1e6,
        p => f64::from(p),
    }
}

/// What happened to a task queue when a job was added or removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TqChange {
    /// The job went into an existing TQ.
    Existing(TqId),
    /// A new TQ was created for it (priorities must be recomputed).
    Created(TqId),
    /// The TQ still has jobs.
    Remains(TqId),
    /// The TQ became empty and was deleted (priorities must be recomputed).
    Deleted(TqId),
    /// The TQ became empty and stays until [`TaskQueueDb::delete_empty`] or
    /// [`TaskQueueDb::clean_orphaned`] (DIRAC 9, [`EmptyTqDeletion::OrphanCleaning`]).
    Emptied(TqId),
}

impl TqChange {
    /// The task queue concerned.
    pub fn id(self) -> TqId {
        match self {
            TqChange::Existing(id)
            | TqChange::Created(id)
            | TqChange::Remains(id)
            | TqChange::Deleted(id)
            | TqChange::Emptied(id) => id,
        }
    }
}

/// A (group, owner) pair as one integer that sorts as the pair does.
#[inline]
pub fn owner_key(group: u32, owner: u32) -> u64 {
    u64::from(group) << 32 | u64::from(owner)
}

/// The task-queue database: TQs by id (creation order) and an index by definition.
///
/// The seed's TQDB (the default, [`TaskQueueDb::new`]) has one TQ per definition and deletes
/// a TQ as soon as it empties. DIRAC 9's ([`TaskQueueDb::with_rules`]) puts at most
/// `__maxJobsInTQ` jobs in a TQ, choosing among the TQs of the definition the one with the
/// fewest jobs, and keeps an emptied TQ (never reusing it) until the caller deletes it
/// (reference §1.1, §1.4; [`EmptyTqDeletion::OrphanCleaning`]).
#[derive(Debug, Clone, Default)]
pub struct TaskQueueDb {
    /// The TQs in id order. Ids only grow, so a new TQ goes at the end; a TQ is small (its
    /// definition is shared), so a deletion shifts little, and the walks of every
    /// recomputation and match are over contiguous memory.
    tqs: Vec<TaskQueue>,
    /// The (group, owner) of each TQ as `group << 32 | owner`, beside `tqs` (same positions):
    /// the Matcher finds a private pilot's TQs in this compact array instead of walking every
    /// TQ ([`Self::owner_keys`]).
    keys: Vec<u64>,
    /// Every definition seen, by [`DefId`], with its TQs that have jobs in id order. A
    /// definition stays when its last TQ goes (there are few definitions, and they come back:
    /// each job of a stream has its stream's definition).
    defs: Vec<(Arc<TqDefinition>, Vec<TqId>)>,
    /// The [`DefId`] of each definition: only [`Self::intern`] compares whole definitions,
    /// a caller that keeps the id (`DiracWms`, one per stream) never does.
    def_ids: BTreeMap<Arc<TqDefinition>, DefId>,
    next_id: TqId,
    /// 0: no limit.
    max_jobs_in_tq: u32,
    keep_empty: bool,
    /// Buffers of deleted TQs and emptied levels, for the next ones.
    spares: Spares,
}

impl TaskQueueDb {
    /// The seed's TQDB: no job limit per TQ, an emptied TQ is deleted at once.
    pub fn new() -> Self {
        Self { next_id: 1, ..Self::default() }
    }

    /// A TQDB with at most `max_jobs_in_tq` jobs per TQ (0: no limit) that keeps emptied
    /// TQs until [`Self::delete_empty`] when `keep_empty`.
    pub fn with_rules(max_jobs_in_tq: u32, keep_empty: bool) -> Self {
        Self { next_id: 1, max_jobs_in_tq, keep_empty, ..Self::default() }
    }

    /// The id of a definition, added if new (the definition is copied only then).
    pub fn intern(&mut self, def: &TqDefinition) -> DefId {
        if let Some(&d) = self.def_ids.get(def) {
            return d;
        }
        let d = self.defs.len() as DefId;
        let shared = Arc::new(def.clone());
        self.def_ids.insert(Arc::clone(&shared), d);
        self.defs.push((shared, Vec::new()));
        d
    }

    /// Insert a waiting job into the TQ with its exact definition that has the fewest jobs
    /// (`__findSmallestTaskQueue`), or into a new one when there is none or it is full.
    pub fn insert_job(&mut self, def: &TqDefinition, job: JobId, user_priority: u8) -> TqChange {
        let d = self.intern(def);
        self.insert_job_as(d, job, user_priority)
    }

    /// [`Self::insert_job`] with the definition's id from [`Self::intern`].
    pub fn insert_job_as(&mut self, d: DefId, job: JobId, user_priority: u8) -> TqChange {
        let n_jobs = |id: TqId| self.get(id).expect("indexed").n_jobs;
        let smallest = self.defs[d as usize].1.iter().copied().min_by_key(|&id| n_jobs(id));
        let room = |id: TqId| self.max_jobs_in_tq == 0 || n_jobs(id) < self.max_jobs_in_tq;
        let (id, created) = match smallest.filter(|&id| room(id)) {
            Some(id) => (id, false),
            None => {
                let id = self.next_id;
                self.next_id += 1;
                let (shared, ids) = &mut self.defs[d as usize];
                ids.push(id);
                let tq = TaskQueue {
                    id,
                    head: TqHead::of(shared),
                    def: Arc::clone(shared),
                    def_id: d,
                    priority: 1.0,
                    levels: self.spares.levels(),
                    n_jobs: 0,
                    sum_user_priority: 0,
                    real_priorities: RealPrioritySum::default(),
                };
                self.keys.push(owner_key(tq.head.group, tq.head.owner));
                self.tqs.push(tq);
                (id, true)
            }
        };
        let at = self.position(id).expect("just found or inserted");
        let tq = &mut self.tqs[at];
        tq.levels.insert(user_priority, job, &mut self.spares);
        tq.n_jobs += 1;
        tq.sum_user_priority += u64::from(user_priority);
        tq.real_priorities.add(user_priority);
        if created { TqChange::Created(id) } else { TqChange::Existing(id) }
    }

    /// Remove a job (matched, or killed) from its TQ; an emptied TQ is deleted at once.
    /// Returns `None` if the job was not in that TQ.
    pub fn remove_job(&mut self, id: TqId, job: JobId, user_priority: u8) -> Option<TqChange> {
        let at = self.position(id)?;
        let tq = &mut self.tqs[at];
        if !tq.levels.remove(user_priority, job, &mut self.spares) {
            return None;
        }
        tq.n_jobs -= 1;
        tq.sum_user_priority -= u64::from(user_priority);
        tq.real_priorities.remove(user_priority);
        if tq.n_jobs > 0 {
            return Some(TqChange::Remains(id));
        }
        // An emptied TQ is never reused: it leaves the index at once.
        self.defs[tq.def_id as usize].1.retain(|&x| x != id);
        if self.keep_empty {
            return Some(TqChange::Emptied(id));
        }
        self.keys.remove(at);
        let deleted = self.tqs.remove(at);
        self.spares.keep_levels(deleted.levels);
        Some(TqChange::Deleted(id))
    }

    /// `deleteTaskQueueIfEmpty`: delete a TQ if it is empty; the deleted TQ, if it was.
    pub fn delete_empty(&mut self, id: TqId) -> Option<TaskQueue> {
        match self.position(id) {
            Some(at) if self.tqs[at].n_jobs == 0 => {
                self.keys.remove(at);
                Some(self.tqs.remove(at))
            }
            _ => None,
        }
    }

    /// True if an empty TQ with requirement rows is kept: what a director's
    /// `getMatchingTaskQueues` over every TQ notices (see [`EmptyTqDeletion::OrphanCleaning`]).
    pub fn has_orphan(&self) -> bool {
        self.tqs.iter().any(|t| t.n_jobs == 0 && t.def.has_requirement_rows())
    }

    /// `cleanOrphanedTaskQueues`: delete every empty TQ, with no priority recomputation.
    /// Returns how many went.
    pub fn clean_orphaned(&mut self) -> usize {
        let before = self.tqs.len();
        let mut at = 0;
        self.keys.retain(|_| {
            at += 1;
            self.tqs[at - 1].n_jobs > 0
        });
        let spares = &mut self.spares;
        self.tqs.retain_mut(|t| {
            let keep = t.n_jobs > 0;
            if !keep {
                spares.keep_levels(std::mem::take(&mut t.levels));
            }
            keep
        });
        before - self.tqs.len()
    }

    /// Where the TQ with this id is in `tqs`.
    fn position(&self, id: TqId) -> Option<usize> {
        self.tqs.binary_search_by_key(&id, |t| t.id).ok()
    }

    /// The TQ with this id, if it exists.
    pub fn get(&self, id: TqId) -> Option<&TaskQueue> {
        self.position(id).map(|at| &self.tqs[at])
    }

    /// Mutable access (for writing priorities).
    pub fn get_mut(&mut self, id: TqId) -> Option<&mut TaskQueue> {
        self.position(id).map(|at| &mut self.tqs[at])
    }

    /// Write priorities given as (TQ id, priority) in id order, as `dirac::priority` computes
    /// them: one walk of the TQs, no lookup per TQ.
    pub fn set_priorities(&mut self, priorities: &[(TqId, f64)]) {
        let mut tqs = self.tqs.iter_mut();
        for &(id, p) in priorities {
            let tq = tqs.find(|t| t.id == id).expect("priorities are of existing TQs, in id order");
            tq.priority = p;
        }
    }

    /// All TQs in id order.
    pub fn iter(&self) -> impl Iterator<Item = &TaskQueue> + Clone {
        self.tqs.iter()
    }

    /// The TQs in id order, as a slice (what [`Self::iter`] walks).
    pub fn as_slice(&self) -> &[TaskQueue] {
        &self.tqs
    }

    /// The (group, owner) key ([`owner_key`]) of each TQ, in the order of [`Self::as_slice`].
    pub fn owner_keys(&self) -> &[u64] {
        &self.keys
    }

    /// Number of TQs.
    pub fn len(&self) -> usize {
        self.tqs.len()
    }

    /// True when there is no TQ.
    pub fn is_empty(&self) -> bool {
        self.tqs.is_empty()
    }

    /// Total waiting jobs over all TQs.
    pub fn waiting_jobs(&self) -> u64 {
        self.tqs.iter().map(|t| u64::from(t.n_jobs)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(owner: u32, cpu: u64, sites: Vec<u32>) -> TqDefinition {
        TqDefinition { owner, cpu_time: cpu, sites: canonical(sites), ..Default::default() }
    }

    #[test]
    fn a_definition_keeps_its_id_and_its_tq_through_either_insert() {
        // DiracWms interns each stream's definition once and inserts by id; tests and other
        // callers insert by definition. Both must reach the same TQ, and an emptied (deleted)
        // TQ's definition keeps its id for the next one.
        let mut db = TaskQueueDb::new();
        let (a, b) = (db.intern(&def(1, 500, vec![3, 4])), db.intern(&def(2, 500, vec![])));
        assert_eq!((a, b, db.intern(&def(1, 500, vec![4, 3]))), (0, 1, 0));
        assert_eq!(db.insert_job_as(a, 10, 1), TqChange::Created(1));
        assert_eq!(db.insert_job(&def(1, 500, vec![3, 4]), 11, 1), TqChange::Existing(1));
        assert_eq!(db.insert_job(&def(2, 500, vec![]), 12, 1), TqChange::Created(2));
        assert_eq!(db.get(1).unwrap().def_id, a);
        db.remove_job(1, 10, 1);
        assert_eq!(db.remove_job(1, 11, 1), Some(TqChange::Deleted(1)));
        assert_eq!(db.insert_job_as(a, 13, 1), TqChange::Created(3));
        assert_eq!(db.intern(&def(3, 500, vec![])), 2);
    }

    #[test]
    fn seed_segments_round_up_and_cap() {
        // Seed 001: "if job requires 10 CPU time, the TaskQueue will have 500. If the job CPU
        // time exceeds 300000 the TaskQueue will have 300000 at maximum."
        let s = CpuSegments::Seed2009;
        assert_eq!(s.fit(10.0), 500.0);
        assert_eq!(s.fit(500.0), 500.0);
        assert_eq!(s.fit(501.0), 5000.0);
        assert_eq!(s.fit(50_000.0), 50_000.0);
        assert_eq!(s.fit(86_400.0), 300_000.0);
        assert_eq!(s.fit(1e9), 300_000.0);
        assert_eq!(s.max(), 300_000.0);
    }

    #[test]
    fn dirac9_segments_match_the_real_code() {
        // Reference §1.2, checked on the real code: 1→360, 361→1800, 5000→21600,
        // 86401→172800, 10^7→1080000.
        let s = CpuSegments::Dirac9;
        assert_eq!(s.values().len(), 13);
        assert_eq!(s.fit(1.0), 360.0);
        assert_eq!(s.fit(361.0), 1800.0);
        assert_eq!(s.fit(5000.0), 21_600.0);
        assert_eq!(s.fit(86_401.0), 172_800.0);
        assert_eq!(s.fit(1e7), 1_080_000.0);
    }

    #[test]
    fn custom_segments_are_checked() {
        assert!(CpuSegments::Custom(vec![]).problems().len() == 1);
        assert!(!CpuSegments::Custom(vec![10.0, 5.0]).problems().is_empty());
        assert!(CpuSegments::Custom(vec![10.0, 50.0]).problems().is_empty());
    }

    #[test]
    fn identical_requirements_share_a_tq_and_sets_ignore_order() {
        let mut db = TaskQueueDb::new();
        assert_eq!(db.insert_job(&def(1, 500, vec![2, 1]), 10, 1), TqChange::Created(1));
        assert_eq!(db.insert_job(&def(1, 500, vec![1, 2, 2]), 11, 1), TqChange::Existing(1));
        assert_eq!(db.insert_job(&def(1, 5000, vec![1, 2]), 12, 1), TqChange::Created(2));
        assert_eq!(db.insert_job(&def(2, 500, vec![1, 2]), 13, 1), TqChange::Created(3));
        assert_eq!(db.len(), 3);
        assert_eq!(db.get(1).unwrap().n_jobs, 2);
        assert_eq!(db.waiting_jobs(), 4);
    }

    #[test]
    fn removing_the_last_job_deletes_the_tq_and_a_new_one_gets_a_new_id() {
        let mut db = TaskQueueDb::new();
        db.insert_job(&def(1, 500, vec![]), 1, 3);
        db.insert_job(&def(1, 500, vec![]), 2, 1);
        let tq = db.get(1).unwrap();
        assert_eq!(tq.sum_user_priority, 4);
        assert_eq!(tq.levels.len(), 2);
        assert_eq!(db.remove_job(1, 2, 1), Some(TqChange::Remains(1)));
        assert_eq!(db.remove_job(1, 2, 1), None, "already removed");
        assert_eq!(db.remove_job(1, 1, 3), Some(TqChange::Deleted(1)));
        assert!(db.is_empty());
        assert_eq!(db.insert_job(&def(1, 500, vec![]), 3, 1), TqChange::Created(2));
    }

    #[test]
    fn real_priority_mapping() {
        assert_eq!(real_priority(0), 1e-5);
        assert_eq!(real_priority(1), 1.0);
        assert_eq!(real_priority(9), 9.0);
        assert_eq!(real_priority(10), 1e6);
    }
}
