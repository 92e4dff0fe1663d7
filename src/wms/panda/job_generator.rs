//! JEDI's JobGenerator (every `agents.job_generation_s`): throttle, job brokerage, splitting.
//!
//! - Per gshare leaf × resource type,
//!   `panda::gshare::throttle` on the leaf's job counts gives how many jobs may be generated
//!   (`maxNumJobs`; an unthrottled share: one bunch, `nJobsInBunch`); tasks are taken by
//!   `currentPriority` then `jediTaskID`. Each task's bunch is brokered once
//!   (`panda::job_broker` for production, `panda::anal_broker` for analysis), then split:
//!   `SitePicker::get_one_site_candidate` chooses a PQ for every `nSubChunks` = 25 jobs
//!   (reference §2 "Top-10"). No candidate: the task waits 1 h (production, seed) or 20 min
//!   (analysis, reference §4) before its next brokerage.
//!
//! Resource types are ATLAS's by the jobs' cores (`SCORE` for 1 core, `MCORE` otherwise); the
//! throttle's counts are those of the whole leaf (the model's leaves rarely mix both).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::panda::gshare::{ThrottleInput, ThrottleKey, ThrottleVerdict, throttle};
use crate::panda::job_broker::{Candidate, JobCounts, SitePicker};
use crate::panda::timeouts::JobStatus as PStatus;
use crate::scenario::Scenario;
use crate::wms::Ctx;

use super::anal_brokerage::AnalBrokerage;
use super::db::{Db, snapshot};
use super::ddm::Ddm;
use super::record::{DecisionKind, Placement};
use super::setup::Statics;
use super::tables::{PJob, StatusTimes, Task, TaskStatus};
use super::view::prod::{BrokerQueue, Chunk, JobQuery, ProdDynamic};

/// `nSubChunks` of JobSplitter: jobs per site pick (JobSplitter L110-230).
const N_SUB_CHUNKS: u64 = 25;
/// Production tasks without a PQ wait this long (seed: "pending for 1 hour").
const PROD_PENDING: SimDuration = SimDuration::from_secs(crate::panda::job_broker::PENDING_RETRY_S);

/// Running, starting, not-run (assigned + activated + starting) and defined of `c`.
fn throttle_input(c: &JobCounts) -> ThrottleInput {
    ThrottleInput {
        n_running: c.running,
        n_not_run: c.assigned + c.activated + c.starting,
        n_defined: c.defined,
        ..ThrottleInput::default()
    }
}

/// The JobGenerator's own state.
pub struct JobGenerator {
    /// Tasks generating or running jobs, in the order they came (the TaskBroker sums their
    /// work in this order), and the tasks done since the last prune (every [`PRUNE_EVERY`]
    /// cycles): [`Self::generating`] leaves those out.
    generating: Vec<u32>,
    /// The same tasks by throttle group (gshare leaf × multi-core, index `2 × leaf + multi`),
    /// each in the order a cycle takes them: `currentPriority` descending, then `jediTaskID`
    /// (a task's priority does not change). A cycle merges the groups in that order and drops a
    /// group once its budget is spent: its other tasks would be passed over one by one.
    groups: Vec<Vec<TaskKey>>,
    /// Cycles run (finished tasks leave `groups` every [`PRUNE_EVERY`] cycles).
    cycles: u64,
    /// Analysis brokerage, with its per-cycle snapshot.
    anal: AnalBrokerage,
    /// The job broker's queue buffer, refilled every brokerage.
    queue_buf: Vec<BrokerQueue>,
    /// `get_one_site_candidate`'s draws.
    rng_site_pick: SimRng,
}

impl JobGenerator {
    pub fn new(scenario: &Scenario, rngs: &RngStreams) -> Self {
        JobGenerator {
            generating: Vec::new(),
            groups: Vec::new(),
            cycles: 0,
            anal: AnalBrokerage::new(scenario, rngs),
            queue_buf: Vec::new(),
            rng_site_pick: rngs.stream("panda/job_broker/site_pick"),
        }
    }

    /// Tasks generating or running jobs, in the order they came, as their status is at the
    /// call: the TaskBroker's RW counts running tasks, which `calculateWorldRWwithPrio_JEDI`
    /// reads when it runs (reference §1 "Definitions"), so a task done since the last cycle is
    /// left out.
    pub fn generating<'a>(&'a self, tasks: &'a [Task]) -> impl Iterator<Item = u32> + 'a {
        self.generating.iter().copied().filter(|&id| tasks[id as usize].status != TaskStatus::Done)
    }

    /// Tasks whose jobs are to be generated from now on (an analysis task that arrived, a
    /// production task brokered to a nucleus).
    pub fn add_tasks(&mut self, st: &Statics, tasks: &[Task], ids: impl IntoIterator<Item = u32>) {
        for id in ids {
            self.generating.push(id);
            let t = &tasks[id as usize];
            let g = group_of(st, t);
            if self.groups.len() <= g {
                self.groups.resize(g + 1, Vec::new());
            }
            let group = &mut self.groups[g];
            let key = (Reverse(t.priority), id);
            let at = group.binary_search(&key).unwrap_or_else(|at| at);
            debug_assert!(group.get(at) != Some(&key), "task {id} added twice");
            group.insert(at, key);
        }
    }

    /// One cycle.
    pub fn cycle(&mut self, st: &Statics, db: &mut Db, ddm: &mut Ddm, ctx: &mut dyn Ctx) {
        let now = ctx.now();
        self.anal.new_cycle();
        let tasks = &db.tables.tasks;
        self.cycles += 1;
        if self.cycles % PRUNE_EVERY == 0 {
            self.generating.retain(|&id| tasks[id as usize].status != TaskStatus::Done);
            for group in &mut self.groups {
                group.retain(|&(_, id)| tasks[id as usize].status != TaskStatus::Done);
            }
        }
        // The tasks with jobs to generate now, in cycle order: a merge of the groups' heads.
        // Nothing a cycle does changes another task's jobs to generate or its retry time, so
        // each head is found when its group comes up.
        let groups = std::mem::take(&mut self.groups);
        let mut next = vec![0; groups.len()];
        let mut heads = BinaryHeap::new();
        for g in 0..groups.len() {
            if let Some(key) = next_eligible(&groups[g], &mut next[g], tasks, now) {
                heads.push(Reverse((key, g)));
            }
        }
        #[cfg(debug_assertions)]
        let (full_order, mut taken) = (cycle_order(self.generating(tasks), tasks, now), Vec::new());
        if heads.is_empty() {
            self.groups = groups;
            return;
        }
        // Budget per (leaf, multi-core): the throttle on the leaf's counts over every PQ.
        let n_leaves = st.leaves.len();
        let mut leaf_counts = vec![JobCounts::default(); n_leaves];
        for lc in &db.tables.leaf_counts {
            for (l, c) in lc.iter().enumerate() {
                let s = &mut leaf_counts[l];
                s.defined += c.defined;
                s.assigned += c.assigned;
                s.activated += c.activated;
                s.starting += c.starting;
                s.running += c.running;
            }
        }
        let mut budget: Vec<[Option<i64>; 2]> = vec![[None, None]; n_leaves];
        while let Some(Reverse(((_, id), g))) = heads.pop() {
            #[cfg(debug_assertions)]
            taken.push(id);
            let k = usize::from(db.tables.tasks[id as usize].stream);
            let (leaf, multi) = (g / 2, g % 2);
            let left = *budget[leaf][multi].get_or_insert_with(|| {
                let l = &st.leaves[leaf];
                let key =
                    ThrottleKey { work_queue: &l.name, resource_type: if multi == 1 { "MCORE" } else { "SCORE" } };
                let d = throttle(&st.cfg.gdpconfig.throttle, &key, l.throttled, &throttle_input(&leaf_counts[leaf]));
                match d.verdict {
                    ThrottleVerdict::Pass { max_num_jobs, .. } => max_num_jobs.unwrap_or(d.n_jobs_in_bunch),
                    ThrottleVerdict::PriorityFloor { .. } | ThrottleVerdict::Skip(_) => 0,
                }
            });
            if left <= 0 {
                continue; // the group is spent: its other tasks are passed over
            }
            let want = i64::from(db.tables.tasks[id as usize].to_generate()).min(left) as u64;
            let analysis = st.shapes[k].analysis;
            let placement = if analysis {
                self.anal.broker(st, db, ctx, id, want)
            } else {
                self.broker_production(st, db, ctx, id, want)
            };
            let made = match placement {
                Some(mut p) => {
                    let made = self.split(st, db, ddm, ctx, id, want, &mut p);
                    if analysis {
                        // `getSitesUsedByTask_JEDI`: the PQs the task's jobs were brokered to.
                        let t = &mut db.tables.tasks[id as usize];
                        for &q in &p.to_queue {
                            if !t.used_queues.contains(&q) {
                                t.used_queues.push(q);
                            }
                        }
                    }
                    made
                }
                None => 0,
            };
            if let Some(b) = budget[leaf][multi].as_mut() {
                *b -= made as i64;
            }
            leaf_counts[leaf].defined += made;
            if let Some(key) = next_eligible(&groups[g], &mut next[g], &db.tables.tasks, now) {
                heads.push(Reverse((key, g)));
            }
        }
        // What the groups passed over is exactly what a spent budget would have skipped.
        #[cfg(debug_assertions)]
        {
            let mut rest = taken.iter().peekable();
            for id in full_order {
                if rest.peek() == Some(&&id) {
                    rest.next();
                    continue;
                }
                let g = group_of(st, &db.tables.tasks[id as usize]);
                let b = budget[g / 2][g % 2];
                assert!(b.is_some_and(|b| b <= 0), "task {id} passed over with budget {b:?}");
            }
            assert!(rest.next().is_none(), "a task taken out of cycle order");
        }
        self.groups = groups;
    }

    /// Job brokerage of `want` jobs of production task `id`: the candidates to split over, or
    /// `None` (the task pending, recorded).
    fn broker_production(&mut self, st: &Statics, db: &mut Db, ctx: &dyn Ctx, id: u32, want: u64) -> Option<Placement> {
        let now = ctx.now();
        let (k, nucleus, prio) = {
            let t = &db.tables.tasks[id as usize];
            (usize::from(t.stream), t.nucleus.map(usize::from), t.priority)
        };
        // The dataset-completeness step: a task-level temporary error before any PQ filter.
        if let Some(err) = st.prod_view.completeness(k).and_then(|c| c.error.clone()) {
            let dec = db.record.decision(now, DecisionKind::Job, id);
            db.record.set_pending(dec, &err);
            db.tables.tasks[id as usize].retry_at = now + PROD_PENDING;
            return None;
        }
        let (queued, running) = db.workers.counts();
        let query = JobQuery { stream: k, nucleus, current_priority: prio, chunk: Chunk { jobs: want, scout: false } };
        let (result, names) = {
            let d = snapshot(&db.tables, &db.site, ctx, &queued, &running);
            let p = ProdDynamic { rt_jobs: Some(&db.tables.rt_counts), ..ProdDynamic::default() };
            let task = st.prod_view.broker_task(&query, &d)?;
            st.prod_view.fill_queues(&query, &d, &p, &mut self.queue_buf);
            let r = crate::panda::job_broker::broker(&task, &self.queue_buf, st.prod_view.job_broker_params());
            let names: Vec<usize> = st.prod_view.production_queues().collect();
            (r, names)
        };
        let dec = db.record.decision(now, DecisionKind::Job, id);
        for s in &result.skipped {
            db.record.job_skipped(dec, &s.name, s.stage, &s.reason, s.temporary);
        }
        let cands: &[Candidate] = result.candidates();
        if cands.is_empty() {
            db.record.set_pending(dec, "no candidate PQ: pending for 1 hour");
            db.tables.tasks[id as usize].retry_at = now + PROD_PENDING;
            return None;
        }
        let rows: Vec<usize> =
            cands.iter().map(|c| db.record.weighed(dec, &self.queue_buf[c.queue].name, c.weight, false)).collect();
        let picker = SitePicker::from_candidates(cands);
        let to_queue: Vec<usize> = cands.iter().map(|c| names[c.queue]).collect();
        Some(Placement { decision: dec, picker, to_queue, rows })
    }

    /// Make `want` jobs of task `id`, a PQ picked per `nSubChunks` jobs among the brokerage's
    /// candidates; jobs made.
    #[allow(clippy::too_many_arguments)]
    fn split(
        &mut self,
        st: &Statics,
        db: &mut Db,
        ddm: &mut Ddm,
        ctx: &mut dyn Ctx,
        id: u32,
        want: u64,
        p: &mut Placement,
    ) -> u64 {
        let now = ctx.now();
        let dec = p.decision;
        let mut made = 0;
        while made < want {
            let Some(pick) = p.picker.get_one_site_candidate(N_SUB_CHUNKS, &[], &mut self.rng_site_pick) else {
                break;
            };
            let q = p.to_queue[pick.index];
            let n = N_SUB_CHUNKS.min(want - made);
            for _ in 0..n {
                make_job(st, db, ddm, ctx, id, q as u16, dec, now);
                db.record.gave_job(p.rows[pick.index]);
            }
            made += n;
        }
        if made == 0 && db.record.decisions[dec as usize].pending.is_none() {
            // getOneSiteCandidate found no candidate that can accept jobs: JEDI tries again
            // at its next cycle.
            db.record.set_pending(dec, "no site candidate can accept jobs (nRunningJobsCap <= nQueuedJobs)");
        }
        made
    }
}

/// A task's place in the cycle order.
type TaskKey = (Reverse<i64>, u32);

/// Finished tasks leave the JobGenerator's task lists every this many cycles (until then they
/// are passed over: a finished task has no job to generate, and `generating` filters it out).
/// Pruning at every cycle was a pass over thousands of tasks: 6 % of the 2·10⁶-job week.
const PRUNE_EVERY: u64 = 64;

/// The throttle group of task `t`: `2 × gshare leaf + multi-core` (a cycle's budget is
/// `budget[g / 2][g % 2]`).
fn group_of(st: &Statics, t: &Task) -> usize {
    let shape = &st.shapes[usize::from(t.stream)];
    2 * usize::from(shape.leaf) + usize::from(shape.cores > 1)
}

/// The next task of `group` from position `*from` with jobs to generate at `now`; `*from`
/// moves past it.
fn next_eligible(group: &[TaskKey], from: &mut usize, tasks: &[Task], now: SimTime) -> Option<TaskKey> {
    while let Some(&key) = group.get(*from) {
        *from += 1;
        if tasks[key.1 as usize].ready(now) {
            return Some(key);
        }
    }
    None
}

/// The tasks of `generating` with jobs to generate at `now`, in cycle order (what the groups'
/// merge must take, but for the spent groups' tasks).
#[cfg(debug_assertions)]
fn cycle_order(generating: impl Iterator<Item = u32>, tasks: &[Task], now: SimTime) -> Vec<u32> {
    let mut order: Vec<u32> = generating.filter(|&id| tasks[id as usize].ready(now)).collect();
    order.sort_by_key(|&id| (Reverse(tasks[id as usize].priority), id));
    order
}

/// One job of task `id` at PQ `q`: created `defined`, then staged in.
#[allow(clippy::too_many_arguments)]
fn make_job(st: &Statics, db: &mut Db, ddm: &mut Ddm, ctx: &mut dyn Ctx, id: u32, q: u16, decision: u32, now: SimTime) {
    let t = &mut db.tables.tasks[id as usize];
    let attempt = match t.retries.pop() {
        Some(a) => a,
        None => {
            t.ungenerated -= 1;
            1
        }
    };
    let k = usize::from(t.stream);
    let priority = t.priority;
    let shape = &st.shapes[k];
    let job = ctx.create_job(st.first_stream + k as u32, shape.cpu_work, shape.cores);
    let i = db.tables.add(PJob {
        job,
        task: id,
        queue: q,
        leaf: shape.leaf,
        status: PStatus::Defined,
        rt: shape.rt,
        label: shape.label,
        attempt,
        priority,
        cores: shape.cores,
        creation: now,
        state_change: now,
        times: StatusTimes { defined: Some(now), ..StatusTimes::default() },
        input_bytes: shape.input_bytes,
        input_files: shape.input_files,
        files_in_flight: 0,
        output_bytes: shape.output_bytes,
        output_transfer: None,
        decision,
        record: None,
    });
    db.tables.live.push(i);
    ddm.stage_in(st, db, ctx, i);
}
