//! Harvester: every `lookupTime` (60 s), per PQ, `define_num_workers` decides how many workers
//! (pilots) to submit and the HTCondor submitter's CE weighting spreads them over the PQ's CEs
//! (reference §8, `view::harvester`). The workers are pilots on the grid's CEs, through the same
//! batch state machine as DIRAC's; their counts (queued = submitted + waiting in the batch
//! system, running) are kept per PQ and per CE from the pilots' news.
//!
//! **Pull and push** (reference §8 "Loop": the submitter makes `nNewWorkers + nReady` workers,
//! "mapType NoJob = empty pilots; OneToOne/MultiJobs/MultiWorkers fetch job chunks";
//! `submitter.py`, `get_job_chunks_for_workers`):
//!
//! - `mapType: NoJob` (pull): `n_new` empty workers; each pilot asks PanDA for jobs
//!   (`getJob`, `dispatch`) when it starts.
//! - `mapType: OneToOne` (push, Harvester's default): one worker per job chunk of one job, and
//!   Harvester has no more chunks than the PQ has jobs for it. Harvester's job fetcher and the
//!   submitter are taken as one step: the submitter takes up to `n_new` of the PQ's activated
//!   jobs in the dispatcher's order (`getJob`: `sent`; the fetcher's request, one per cycle, is
//!   the PQ's `SiteData` getJob count, job or not) and submits one worker for each, shaped by its job (`SimpleWorkerMaker.make_worker` with
//!   jobs: the job's `coreCount`); a worker the CE accepts is bound to its job, which becomes
//!   `starting` (`WorkSpec.convert_to_job_status`: submitted → `starting`). No activated job:
//!   no worker. The worker's pilot runs that job when it starts, and only that job
//!   (`dispatch`). A worker the CE refuses takes no job: the job stays `activated`, as Harvester
//!   keeps a job whose submission failed for its next attempt.
//! - A worker that ends without running its job (aborted by the middleware, failed at start,
//!   cancelled) fails the job (`convert_to_job_status`: failed/cancelled worker → job
//!   `failed`, propagated to PanDA), and JEDI retries its chunk while `maxAttempt` allows; a
//!   replayed job (`panda.replay`, its fate in its record) goes back to `activated` instead.
//!   While its worker waits the job is `starting` with a fresh row (Harvester's propagator
//!   heartbeats it), so copyArchive's `sent` and heartbeat rules leave it alone; a rule that
//!   closes a `starting` job (reassignment) also kills its worker (`daemon`).
//! - `MultiJobs` and `MultiWorkers` are refused by validation (not modelled).
//!
//! The CE weighting's six-hour throughput history (`get_worker_ce_backend_throughput`) is not
//! kept: every CE has the same throughput term, so the weights follow the CEs' queued and
//! running workers only. Worker core counts (`nQueue` cores) are the PQ's `corecount` per
//! worker, exact when the PQ's jobs have its core count.

use crate::grid::PilotShape;
use crate::ids::PilotId;
use crate::panda::harvester::config::MapType;
use crate::panda::timeouts::JobStatus as PStatus;
use crate::wms::{Ctx, PilotNews};

use super::PandaWms;
use super::dispatch::Room;
use super::tables::TaskStatus;
use super::view::ce_choice::CeWorkerStats;
use super::view::harvester::HarvesterDynamic;

/// What a self-mode PQ's Harvester decision depends on that changes: activated jobs, queued
/// workers (and cores), running workers (and cores).
pub type IdleKey = (u64, u64, u64, u64, u64);

/// No job bound to a pilot (`PandaWms::pilot_job`).
pub(super) const NO_JOB: u32 = u32::MAX;

/// What Harvester did over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HarvesterCounters {
    pub cycles: u64,
    /// Workers submitted (pilots the CEs accepted).
    pub submitted: u64,
    /// Workers a CE refused (its queue limits).
    pub refused: u64,
    /// Workers decided but not placed (no CE with weight).
    pub unplaced: u64,
    /// Push mode: workers decided but not made, the PQ having no activated job for them.
    pub no_job: u64,
    /// Push mode: jobs whose worker ended before running them.
    pub lost_jobs: u64,
}

impl PandaWms {
    /// Harvester's `mapType` of PQ `q` is a push one (workers made from jobs).
    pub(super) fn push_queue(&self, q: usize) -> bool {
        self.harvest_view.queues.get(q).is_some_and(|hq| hq.config.map_type != MapType::NoJob)
    }

    /// One Harvester cycle over every PQ, in scenario order.
    pub(super) fn harvester_cycle(&mut self, ctx: &mut dyn Ctx) {
        self.harvester.cycles += 1;
        let nq = self.cfg.queues.len();
        let (queued, running) = self.worker_counts();
        let mut plans = Vec::new();
        {
            let d = super::snapshot(&self.tables, &self.last_start, ctx, &queued, &running);
            let h = HarvesterDynamic::default();
            for q in 0..nq {
                if self.factory_queue[q] {
                    continue; // a pilot factory submits there, not Harvester
                }
                if self.push_queue(q) {
                    // Harvester's job fetcher asks PanDA for the PQ's jobs every cycle: one
                    // getJob request in the PQ's `SiteData`, job or not.
                    self.gets.add(q, ctx.now());
                }
                // define_num_workers is a pure function of the PQ's state: a self-mode PQ whose
                // counts are those of its last cycle that made nothing makes nothing again.
                let key = (self.tables.counts[q].activated, queued[q].n, queued[q].core, running[q].n, running[q].core);
                let self_mode = self.harvest_view.queues.get(q).is_some_and(|hq| !hq.slave);
                if self_mode && self.harvest_idle[q] == Some(key) {
                    continue;
                }
                let Some(state) = self.harvest_view.queue_state(q, &d, &h) else { continue };
                let Ok(mut decision) = self.harvest_view.decide(q, &state) else { continue };
                if self.push_queue(q) {
                    // One worker per activated job: the rows (in order) get at most as many.
                    let mut jobs = self.tables.counts[q].activated;
                    for row in &mut decision.rows {
                        let n = row.n_new_workers.min(jobs);
                        self.harvester.no_job += row.n_new_workers - n;
                        row.n_new_workers = n;
                        jobs -= n;
                    }
                }
                if decision.rows.iter().all(|r| r.n_new_workers == 0) {
                    self.harvest_idle[q] = self_mode.then_some(key);
                    continue;
                }
                self.harvest_idle[q] = None;
                let stats: Vec<CeWorkerStats> = self.ce_workers[q]
                    .iter()
                    .map(|w| CeWorkerStats { submitted: w.queued, running: w.running, ..Default::default() })
                    .collect();
                plans.push((q, self.harvest_view.pilot_plan(q, &decision, &stats, &mut self.rng_harvester)));
            }
        }
        for (q, plan) in plans {
            self.harvester.unplaced += plan.unplaced;
            let push = self.push_queue(q);
            let worker_gpus = self.cfg.queues[q].worker_gpus();
            for b in &plan.batches {
                let ce_idx = self.harvest_view.queues[q].ces.iter().position(|&c| c == b.ce).unwrap_or(0);
                for _ in 0..b.count {
                    // Push: the job first (there is one for each worker of the plan).
                    let job = if push {
                        match self.pick_job(ctx, q as u16, Room::worker(worker_gpus), None) {
                            Some(i) => Some(i),
                            None => break,
                        }
                    } else {
                        None
                    };
                    let cores = job.map_or(b.cores, |i| self.tables.jobs[i as usize].cores).max(1);
                    let shape = PilotShape { gpus: worker_gpus, ..PilotShape::cpu(cores) };
                    match ctx.submit_pilot(b.ce as u32, shape) {
                        Ok(p) => {
                            self.own_pilot(p, q as u16, ce_idx as u16);
                            self.harvester.submitted += 1;
                            if let Some(i) = job {
                                self.bind(ctx, p, i);
                            }
                        }
                        Err(_) => {
                            self.harvester.refused += 1;
                            break;
                        }
                    }
                }
            }
        }
    }

    /// Push mode: job `i` (activated) goes with worker `p`: `sent` to Harvester, `starting` once
    /// its worker is submitted.
    fn bind(&mut self, ctx: &mut dyn Ctx, p: PilotId, i: u32) {
        let now = ctx.now();
        let q = self.tables.jobs[i as usize].queue;
        let cp = self.corepower(q);
        self.tables.set_status(i, PStatus::Sent, now, cp);
        self.tables.set_status(i, PStatus::Starting, now, cp);
        self.pilot_job[p as usize] = i;
        self.job_worker.insert(i, p);
    }

    /// The job bound to pilot `p`, unbound (push mode).
    pub(super) fn unbind(&mut self, p: PilotId) -> Option<u32> {
        let slot = self.pilot_job.get_mut(p as usize)?;
        let i = std::mem::replace(slot, NO_JOB);
        (i != NO_JOB).then(|| {
            self.job_worker.remove(&i);
            i
        })
    }

    /// The worker of job `i` ended without running it: the job fails (JEDI retries its chunk)
    /// or, replayed, is activated again (module doc).
    fn worker_lost(&mut self, ctx: &mut dyn Ctx, i: u32) {
        let j = &self.tables.jobs[i as usize];
        if j.status != PStatus::Starting {
            return;
        }
        let (job, q, task) = (j.job, j.queue, j.task);
        let cp = self.corepower(q);
        self.harvester.lost_jobs += 1;
        if self.tables.tasks[task as usize].status == TaskStatus::Replay {
            self.tables.set_status(i, PStatus::Activated, ctx.now(), cp);
            return;
        }
        ctx.cancel_job(job);
        self.tables.set_status(i, PStatus::Failed, ctx.now(), cp);
        self.retry_or_fail(i);
    }

    fn own_pilot(&mut self, p: PilotId, q: u16, ce_idx: u16) {
        let k = p as usize;
        if self.pilot_queue.len() <= k {
            self.pilot_queue.resize(k + 1, u16::MAX);
            self.pilot_ce.resize(k + 1, 0);
            self.pilot_job.resize(k + 1, NO_JOB);
        }
        self.pilot_queue[k] = q;
        self.pilot_ce[k] = ce_idx;
        self.workers[q as usize].queued += 1;
        self.ce_workers[q as usize][ce_idx as usize].queued += 1;
    }

    /// Keep the worker counts from a pilot's news: started (queued → running), ended (from
    /// running if it had started, else from queued). A push worker that ends with its job
    /// still bound never ran it.
    pub(super) fn pilot_news_of(&mut self, ctx: &mut dyn Ctx, p: PilotId, news: PilotNews) {
        let Some(&q) = self.pilot_queue.get(p as usize).filter(|&&q| q != u16::MAX) else { return };
        let c = self.pilot_ce[p as usize] as usize;
        let started = ctx.grid().pilot(p).started().is_some();
        let (w, cw) = (&mut self.workers[q as usize], &mut self.ce_workers[q as usize][c]);
        for x in [w, cw] {
            match news {
                PilotNews::Started => {
                    x.queued -= 1;
                    x.running += 1;
                }
                PilotNews::Ended(_) if started => x.running -= 1,
                PilotNews::Ended(_) => x.queued -= 1,
            }
        }
        if let PilotNews::Ended(_) = news
            && let Some(i) = self.unbind(p)
        {
            self.worker_lost(ctx, i);
        }
    }
}
