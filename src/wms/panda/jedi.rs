//! JEDI: task brokerage to nuclei and job generation (throttle, job brokerage, splitting).
//!
//! - **TaskBroker** (every `agents.task_brokerage_s`): each production task in `assigning`
//!   whose retry time has come goes through `panda::task_broker::do_brokerage` (inputs from
//!   `view::prod`); assigned → its nucleus, the task's RW added to the nucleus' `prioRW`;
//!   pending → retried after `PENDING_RETRY_S` (30 min).
//! - **JobGenerator** (every `agents.job_generation_s`): per gshare leaf × resource type,
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

use std::collections::BTreeMap;

use crate::engine::{SimDuration, SimTime};
use crate::panda::gshare::{ThrottleInput, ThrottleKey, ThrottleVerdict, throttle};
use crate::panda::job_broker::{Candidate, JobCounts, SitePicker};
use crate::panda::task_broker::{self, Brokerage, PrioRw};
use crate::panda::timeouts::JobStatus as PStatus;
use crate::wms::Ctx;

use super::PandaWms;
use super::record::DecisionKind;
use super::tables::{PJob, StatusTimes, TaskStatus};
use super::view::prod::{Chunk, JobQuery, ProdDynamic, TaskArgs};

/// `nSubChunks` of JobSplitter: jobs per site pick (JobSplitter L110-230).
pub const N_SUB_CHUNKS: u64 = 25;
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

impl PandaWms {
    /// A task arrives: production tasks wait for task brokerage, analysis tasks for the next
    /// job generation.
    pub(super) fn task_arrived(&mut self, ctx: &mut dyn Ctx, id: u32) {
        let analysis = self.statics.shapes[usize::from(self.tables.tasks[id as usize].stream)].analysis;
        let t = &mut self.tables.tasks[id as usize];
        t.retry_at = ctx.now();
        if analysis {
            t.status = TaskStatus::Running;
            self.generating.push(id);
        } else {
            t.status = TaskStatus::Assigning;
            self.assigning.push(id);
        }
    }

    /// The remaining RW of running production task `id` (events not yet generated × cpuTime)
    /// and its nucleus.
    fn remaining_rw(&self, id: u32) -> Option<(usize, f64)> {
        let t = &self.tables.tasks[id as usize];
        let (n, cfg) = (t.nucleus?, self.cfg.tasks.get(usize::from(t.stream))?);
        let shape = &self.statics.shapes[usize::from(t.stream)];
        let used = u64::from(t.n_jobs - t.ungenerated) * shape.events_per_job;
        Some((usize::from(n), crate::wms::panda::view::prod::task_rw(cfg, used)))
    }

    /// `fullRW` per nucleus (every running production task) and, per gshare leaf, the
    /// `prioRW` table for the priorities in `prios`: RW of the leaf's tasks with
    /// `currentPriority ≥ p` (`calculateWorldRWwithPrio_JEDI`, reference §1 "Definitions").
    fn rw_tables(&self, prios: &[(u16, i64)]) -> (Vec<f64>, BTreeMap<u16, PrioRw>) {
        let nn = self.cfg.nuclei.len();
        let mut full = vec![0.0; nn];
        let mut tables: BTreeMap<u16, PrioRw> = BTreeMap::new();
        for &(leaf, p) in prios {
            tables.entry(leaf).or_default().entry(p).or_insert_with(|| vec![0.0; nn]);
        }
        for &id in &self.generating {
            let Some((n, rw)) = self.remaining_rw(id) else { continue };
            full[n] += rw;
            let t = &self.tables.tasks[id as usize];
            let leaf = self.statics.shapes[usize::from(t.stream)].leaf;
            if let Some(table) = tables.get_mut(&leaf) {
                for (_, v) in table.range_mut(..=t.priority) {
                    v[n] += rw;
                }
            }
        }
        (full, tables)
    }

    /// One TaskBroker cycle.
    pub(super) fn task_brokerage(&mut self, ctx: &mut dyn Ctx) {
        let now = ctx.now();
        let due: Vec<u32> =
            self.assigning.iter().copied().filter(|&id| self.tables.tasks[id as usize].retry_at <= now).collect();
        if due.is_empty() {
            return;
        }
        let prios: Vec<(u16, i64)> = due
            .iter()
            .map(|&id| {
                let t = &self.tables.tasks[id as usize];
                (self.statics.shapes[usize::from(t.stream)].leaf, t.priority)
            })
            .collect();
        let (rw, mut prio_tables) = self.rw_tables(&prios);
        let (queued, running) = self.worker_counts();
        let (mut assigned, mut pending) = (Vec::new(), Vec::new());
        {
            let d = super::snapshot(&self.tables, &self.last_start, ctx, &queued, &running);
            let p = ProdDynamic { nucleus_rw: &rw, rt_jobs: Some(&self.tables.rt_counts), ..ProdDynamic::default() };
            for id in due {
                let t = &self.tables.tasks[id as usize];
                let k = usize::from(t.stream);
                let args = TaskArgs {
                    task_no: t.task_no,
                    assigning_for_s: Some((now - t.arrived).as_secs_f64()),
                    current_priority: t.priority,
                };
                let Some(view) = self.prod_view.task_brokerage(k, args, &d, &p) else { continue };
                let leaf = self.statics.shapes[k].leaf;
                let prio_rw = prio_tables.get(&leaf).and_then(|m| m.get(&t.priority)).cloned().unwrap_or_default();
                let b = task_broker::do_brokerage(
                    &view.input(&prio_rw),
                    self.prod_view.task_brokerage_params(),
                    self.prod_view.task_broker_variant(),
                    &mut self.rng_task_broker,
                );
                let dec = self.record.decision(now, DecisionKind::Task, id);
                for s in b.skipped() {
                    self.record.skipped(dec, s.name, format_args!("{:?}", s.reason.stage()), &s.reason, false);
                }
                match &b {
                    Brokerage::Assigned(a) => {
                        for c in &a.candidates {
                            self.record.weighed(dec, c.name, c.weight, c.nucleus == a.nucleus);
                        }
                    }
                    Brokerage::Preset { nucleus } => {
                        self.record.weighed(dec, &self.cfg.nuclei[*nucleus].site, 0.0, true);
                    }
                    Brokerage::Pending(pending) => {
                        self.record.set_pending(dec, &pending.reason.to_string());
                    }
                }
                match b.chosen() {
                    Some(n) => {
                        // The live feedback: later tasks of this cycle see the assignment.
                        let task_rw = self.prod_view.task_rw(k, 0).unwrap_or(0.0);
                        if let Some(m) = prio_tables.get_mut(&leaf) {
                            task_broker::record_assignment(m, n, args.current_priority, task_rw);
                        }
                        assigned.push((id, n));
                    }
                    None => pending.push(id),
                }
            }
        }
        for id in pending {
            self.tables.tasks[id as usize].retry_at = now + SimDuration::from_secs(task_broker::PENDING_RETRY_S);
        }
        for (id, n) in assigned {
            let t = &mut self.tables.tasks[id as usize];
            t.nucleus = Some(n as u16);
            t.status = TaskStatus::Running;
            t.retry_at = now;
            self.assigning.retain(|&x| x != id);
            self.generating.push(id);
        }
    }

    /// Harvester's worker counts per PQ as the views (and `get_worker_limits`) read them:
    /// queued and running, with cores at the PQ's pilot size.
    pub(super) fn worker_counts(
        &self,
    ) -> (Vec<crate::panda::harvester::config::WorkerCounts>, Vec<crate::panda::harvester::config::WorkerCounts>) {
        use crate::panda::harvester::config::WorkerCounts;
        let c = |q: usize, n: u64| WorkerCounts { n, core: n * u64::from(self.cfg.queues[q].cores()), mem: 0 };
        (
            self.workers.iter().enumerate().map(|(q, w)| c(q, w.queued)).collect(),
            self.workers.iter().enumerate().map(|(q, w)| c(q, w.running)).collect(),
        )
    }

    /// One JobGenerator cycle.
    pub(super) fn job_generation(&mut self, ctx: &mut dyn Ctx) {
        let now = ctx.now();
        self.anal_cache = None;
        self.generating.retain(|&id| self.tables.tasks[id as usize].status != TaskStatus::Done);
        let mut order: Vec<u32> = self
            .generating
            .iter()
            .copied()
            .filter(|&id| {
                let t = &self.tables.tasks[id as usize];
                t.to_generate() > 0 && t.retry_at <= now
            })
            .collect();
        if order.is_empty() {
            return;
        }
        order.sort_by_key(|&id| (std::cmp::Reverse(self.tables.tasks[id as usize].priority), id));
        // Budget per (leaf, multi-core): the throttle on the leaf's counts over every PQ.
        let n_leaves = self.statics.leaves.len();
        let mut leaf_counts = vec![JobCounts::default(); n_leaves];
        for lc in &self.tables.leaf_counts {
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
        for id in order {
            let (k, leaf, multi) = {
                let t = &self.tables.tasks[id as usize];
                let shape = &self.statics.shapes[usize::from(t.stream)];
                (usize::from(t.stream), usize::from(shape.leaf), usize::from(shape.cores > 1))
            };
            let left = *budget[leaf][multi].get_or_insert_with(|| {
                let l = &self.statics.leaves[leaf];
                let key =
                    ThrottleKey { work_queue: &l.name, resource_type: if multi == 1 { "MCORE" } else { "SCORE" } };
                let d = throttle(&self.cfg.gdpconfig.throttle, &key, l.throttled, &throttle_input(&leaf_counts[leaf]));
                match d.verdict {
                    ThrottleVerdict::Pass { max_num_jobs, .. } => max_num_jobs.unwrap_or(d.n_jobs_in_bunch),
                    ThrottleVerdict::PriorityFloor { .. } | ThrottleVerdict::Skip(_) => 0,
                }
            });
            if left <= 0 {
                continue;
            }
            let want = i64::from(self.tables.tasks[id as usize].to_generate()).min(left) as u64;
            let made = if self.statics.shapes[k].analysis {
                self.generate_analysis(ctx, id, want)
            } else {
                self.generate_production(ctx, id, want)
            };
            if let Some(b) = budget[leaf][multi].as_mut() {
                *b -= made as i64;
            }
            leaf_counts[leaf].defined += made;
        }
    }

    /// Job brokerage of `want` jobs of production task `id`, then the split; jobs made.
    fn generate_production(&mut self, ctx: &mut dyn Ctx, id: u32, want: u64) -> u64 {
        let now = ctx.now();
        let (k, nucleus, prio) = {
            let t = &self.tables.tasks[id as usize];
            (usize::from(t.stream), t.nucleus.map(usize::from), t.priority)
        };
        // The dataset-completeness step: a task-level temporary error before any PQ filter.
        if let Some(err) = self.prod_view.completeness(k).and_then(|c| c.error.clone()) {
            let dec = self.record.decision(now, DecisionKind::Job, id);
            self.record.set_pending(dec, &err);
            self.tables.tasks[id as usize].retry_at = now + PROD_PENDING;
            return 0;
        }
        let (queued, running) = self.worker_counts();
        let query = JobQuery { stream: k, nucleus, current_priority: prio, chunk: Chunk { jobs: want, scout: false } };
        let (result, names) = {
            let d = super::snapshot(&self.tables, &self.last_start, ctx, &queued, &running);
            let p = ProdDynamic { rt_jobs: Some(&self.tables.rt_counts), ..ProdDynamic::default() };
            let Some(task) = self.prod_view.broker_task(&query, &d) else { return 0 };
            self.prod_view.fill_queues(&query, &d, &p, &mut self.queue_buf);
            let r = crate::panda::job_broker::broker(&task, &self.queue_buf, self.prod_view.job_broker_params());
            let names: Vec<usize> = self.prod_view.production_queues().collect();
            (r, names)
        };
        let dec = self.record.decision(now, DecisionKind::Job, id);
        for s in &result.skipped {
            self.record.skipped(dec, &s.name, format_args!("{:?}", s.stage), &s.reason, s.temporary);
        }
        let cands: &[Candidate] = result.candidates();
        if cands.is_empty() {
            self.record.set_pending(dec, "no candidate PQ: pending for 1 hour");
            self.tables.tasks[id as usize].retry_at = now + PROD_PENDING;
            return 0;
        }
        let rows: Vec<usize> =
            cands.iter().map(|c| self.record.weighed(dec, &self.queue_buf[c.queue].name, c.weight, false)).collect();
        let mut picker = SitePicker::from_candidates(cands);

        let to_queue: Vec<usize> = cands.iter().map(|c| names[c.queue]).collect();
        self.split(ctx, id, want, dec, &mut picker, &to_queue, &rows)
    }

    /// Make `want` jobs of task `id`, a PQ picked per `nSubChunks` jobs among the brokerage's
    /// candidates (`to_queue[c]` is candidate `c`'s PQ, `rows[c]` its row in the record).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn split(
        &mut self,
        ctx: &mut dyn Ctx,
        id: u32,
        want: u64,
        dec: u32,
        picker: &mut SitePicker,
        to_queue: &[usize],
        rows: &[usize],
    ) -> u64 {
        let now = ctx.now();
        let mut made = 0;
        while made < want {
            let Some(pick) = picker.get_one_site_candidate(N_SUB_CHUNKS, &[], &mut self.rng_site_pick) else { break };
            let q = to_queue[pick.index];
            let n = N_SUB_CHUNKS.min(want - made);
            for _ in 0..n {
                self.make_job(ctx, id, q as u16, dec, now);
                self.record.gave_job(rows[pick.index]);
            }
            made += n;
        }
        if made == 0 && self.record.decisions[dec as usize].pending.is_none() {
            // getOneSiteCandidate found no candidate that can accept jobs: JEDI tries again
            // at its next cycle.
            self.record.set_pending(dec, "no site candidate can accept jobs (nRunningJobsCap <= nQueuedJobs)");
        }
        made
    }

    /// One job of task `id` at PQ `q`: created `defined`, then staged in.
    fn make_job(&mut self, ctx: &mut dyn Ctx, id: u32, q: u16, decision: u32, now: SimTime) {
        let t = &mut self.tables.tasks[id as usize];
        let attempt = match t.retries.pop() {
            Some(a) => a,
            None => {
                t.ungenerated -= 1;
                1
            }
        };
        let k = usize::from(t.stream);
        let priority = t.priority;
        let shape = &self.statics.shapes[k];
        let job = ctx.create_job(self.first_stream + k as u32, shape.cpu_work, shape.cores);
        let i = self.tables.add(
            PJob {
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
            },
            self.cfg.queues[q as usize].corepower,
        );
        self.live.push(i);
        self.stage_in(ctx, i);
    }
}
