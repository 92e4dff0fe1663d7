//! Harvester on the provisioning boundary: every `lookupTime` (60 s), per PQ,
//! `define_num_workers` decides how many workers (pilots) to submit and the HTCondor submitter's
//! CE weighting spreads them over the PQ's CEs (reference §8, `view::harvester`). The workers are
//! pilots on the grid's CEs, through the same batch state machine as DIRAC's; their counts
//! (queued = submitted + waiting in the batch system, running) are kept per PQ (in PanDA's
//! worker table, `workers`, which brokerage reads) and per CE (Harvester's own, for the CE
//! weighting) from the pilots' news.
//!
//! Its cycle ([`Provisioning`]) reads, per PQ, the activated jobs and the workers queued and
//! running ([`HarvesterDemand`]) and submits [`Worker`]s. PanDA's side of the submission
//! ([`HarvesterSubmit`]) is the job fetcher and the worker maker: in push mode it takes the
//! worker's job from the dispatcher and shapes the worker from it.
//!
//! **Pull and push** (reference §8 "Loop": the submitter makes `nNewWorkers + nReady` workers,
//! "mapType NoJob = empty pilots; OneToOne/MultiJobs/MultiWorkers fetch job chunks";
//! `submitter.py`, `get_job_chunks_for_workers`):
//!
//! - `mapType: NoJob` (pull): `n_new` empty workers; each pilot asks PanDA for jobs
//!   (`getJob`, `dispatcher`) when it starts.
//! - `mapType: OneToOne` (push, Harvester's default): one worker per job chunk of one job, and
//!   Harvester has no more chunks than the PQ has jobs for it. Harvester's job fetcher and the
//!   submitter are taken as one step: the submitter takes up to `n_new` of the PQ's activated
//!   jobs in the dispatcher's order (`getJob`: `sent`; the fetcher's request, one per cycle, is
//!   the PQ's `SiteData` getJob count, job or not) and submits one worker for each, shaped by
//!   its job (`SimpleWorkerMaker.make_worker` with
//!   jobs: the job's `coreCount`); a worker the CE accepts is bound to its job, which becomes
//!   `starting` (`WorkSpec.convert_to_job_status`: submitted → `starting`). No activated job:
//!   no worker. The worker's pilot runs that job when it starts, and only that job
//!   (`dispatcher`). A worker the CE refuses takes no job: the job stays `activated`, as Harvester
//!   keeps a job whose submission failed for its next attempt.
//! - A worker that ends without running its job (aborted by the middleware, failed at start,
//!   cancelled) fails the job (`convert_to_job_status`: failed/cancelled worker → job
//!   `failed`, propagated to PanDA), and JEDI retries its chunk while `maxAttempt` allows; a
//!   replayed job (`panda.replay`, its fate in its record) goes back to `activated` instead.
//!   While its worker waits the job is `starting` with a fresh row (Harvester's propagator
//!   heartbeats it), so copyArchive's `sent` and heartbeat rules leave it alone; a rule that
//!   closes a `starting` job (reassignment) also kills its worker (`copy_archive`).
//! - `MultiJobs` and `MultiWorkers` are refused by validation (not modelled).
//!
//! The CE weighting's six-hour throughput history (`get_worker_ce_backend_throughput`) is not
//! kept: every CE has the same throughput term, so the weights follow the CEs' queued and
//! running workers only. Worker core counts (`nQueue` cores) are the PQ's `corecount` per
//! worker, exact when the PQ's jobs have its core count.

use crate::engine::{RngStreams, SimRng};
use crate::grid::{Grid, PilotShape, Refusal};
use crate::ids::{CeId, PilotId};
use crate::panda::harvester::QueueState;
use crate::panda::harvester::config::WorkerCounts;
use crate::panda::job_broker::JobCounts;
use crate::panda::timeouts::JobStatus as PStatus;
use crate::scenario::Scenario;
use crate::wms::provision::{Provisioning, Submit};
use crate::wms::{Ctx, PilotNews};

use super::db::Db;
use super::dispatcher::{Dispatcher, Room};
use super::setup::Statics;
use super::tables::TaskStatus;
use super::view::ce_choice::CeWorkerStats;
use super::view::harvester::{HarvesterDynamic, HarvesterView};
use super::workers::{WorkerTable, Workers};

/// What a self-mode PQ's Harvester decision depends on that changes: activated jobs, queued
/// workers and running workers (their cores are those times the PQ's worker cores).
type IdleKey = [u64; 3];

/// How Harvester treats a PQ at its cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QueueMode {
    /// A pilot factory submits there (`factory[].queue`, seed 003), not Harvester.
    Factory,
    /// `runMode` self: a cycle whose counts are those of an idle cycle is skipped.
    SelfMode,
    /// `runMode` slave (or no Harvester queue): decided every cycle.
    Always,
}

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

/// What Harvester reads of PanDA at a cycle, per PQ: the activated jobs
/// (`job_statistics_new.json`) and its workers queued and running (with cores at the PQ's
/// pilot size). PanDA keeps one and refills it at each cycle ([`Self::refill`]).
#[derive(Debug, Clone, Default)]
pub struct HarvesterDemand {
    pub activated: Vec<u64>,
    pub queued: Vec<WorkerCounts>,
    pub running: Vec<WorkerCounts>,
}

impl HarvesterDemand {
    /// The counts now: the PQs' `jobs` and `workers`.
    pub fn refill(&mut self, jobs: &[JobCounts], workers: &WorkerTable) {
        self.activated.clear();
        self.activated.extend(jobs.iter().map(|c| c.activated));
        workers.fill_counts(&mut self.queued, &mut self.running);
    }
}

/// A worker Harvester submits: for PQ `queue`, made from a job (`push`) or empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Worker {
    pub queue: u16,
    pub push: bool,
}

/// Why a worker was not submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotMade {
    /// Push mode: the PQ had no activated job the worker could take.
    NoJob,
    /// The CE refused the pilot.
    Refused(Refusal),
}

/// Harvester's own state.
pub struct Harvester {
    view: HarvesterView,
    /// Per PQ, the counts of its last cycle if that cycle submitted nothing (self mode): the
    /// same counts decide the same.
    idle: Vec<Option<IdleKey>>,
    /// Per PQ: a pilot factory's, self mode or decided every cycle.
    mode: Vec<QueueMode>,
    /// GPUs of a worker of each PQ.
    worker_gpus: Vec<u32>,
    /// PQs in push mode (`Statics::push`).
    push: Vec<bool>,
    /// Per PQ, the `QueueState` its decisions read, refilled with the counts at each cycle.
    states: Vec<Option<QueueState>>,
    /// The CE choice's draws.
    rng: SimRng,
    pub counters: HarvesterCounters,
    /// The CE (index in its PQ's `view.queues[q].ces`) of each worker, by `PilotId`.
    pilot_ce: Vec<u16>,
    /// Workers per PQ and CE (the CE weighting's statistics).
    ce_workers: Vec<Vec<Workers>>,
}

impl Harvester {
    /// Harvester of `scenario`'s PQs.
    pub fn new(scenario: &Scenario, st: &Statics, rngs: &RngStreams) -> Self {
        let view = HarvesterView::new(scenario);
        let nq = st.cfg.queues.len();
        let mode = (st.cfg.queues.iter().enumerate())
            .map(|(i, q)| {
                if scenario.factory.iter().any(|f| f.target().2 == Some(q.name.as_str())) {
                    QueueMode::Factory
                } else if view.queues.get(i).is_some_and(|hq| !hq.slave) {
                    QueueMode::SelfMode
                } else {
                    QueueMode::Always
                }
            })
            .collect();
        Harvester {
            ce_workers: view.queues.iter().map(|h| vec![Workers::default(); h.ces.len().max(1)]).collect(),
            states: (0..nq).map(|q| view.blank_state(q)).collect(),
            view,
            idle: vec![None; nq],
            mode,
            worker_gpus: st.cfg.queues.iter().map(|q| q.worker_gpus()).collect(),
            push: st.push.clone(),
            rng: rngs.stream("panda/harvester/ce"),
            counters: HarvesterCounters::default(),
            pilot_ce: Vec::new(),
        }
    }

    /// The PQs whose job fetcher asks PanDA for jobs every cycle (push PQs Harvester feeds):
    /// one getJob request each in the PQ's `SiteData`, job or not.
    pub fn fetching_queues(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.mode.len()).filter(|&q| self.mode[q] != QueueMode::Factory && self.push[q])
    }

    /// Keep the worker counts from a pilot's news: started (queued → running), ended (from
    /// running if it had started, else from queued). A push worker that ends with its job
    /// still bound never ran it.
    pub fn pilot_news(&mut self, db: &mut Db, ctx: &mut dyn Ctx, p: PilotId, news: PilotNews) {
        let Some(q) = db.workers.queue_of(p) else { return };
        let c = self.pilot_ce[p as usize] as usize;
        let started = ctx.grid().pilot(p).started().is_some();
        self.ce_workers[usize::from(q)][c].hear(news, started);
        db.workers.news(q, news, started);
        if let PilotNews::Ended(_) = news
            && let Some(i) = db.workers.unbind(p)
        {
            self.worker_lost(db, ctx, i);
        }
    }

    /// The worker of job `i` ended without running it: the job fails (JEDI retries its chunk)
    /// or, replayed, is activated again (module doc).
    fn worker_lost(&mut self, db: &mut Db, ctx: &mut dyn Ctx, i: u32) {
        let j = &db.tables.jobs[i as usize];
        if j.status != PStatus::Starting {
            return;
        }
        let (job, task) = (j.job, j.task);
        self.counters.lost_jobs += 1;
        if db.tables.tasks[task as usize].status == TaskStatus::Replay {
            db.tables.set_status(i, PStatus::Activated, ctx.now());
            return;
        }
        ctx.cancel_job(job);
        db.tables.set_status(i, PStatus::Failed, ctx.now());
        db.tables.retry_or_fail(i);
    }

    /// Worker `p` went to the `ce_idx`-th CE of PQ `q`.
    fn own(&mut self, p: PilotId, q: usize, ce_idx: u16) {
        let k = p as usize;
        if self.pilot_ce.len() <= k {
            self.pilot_ce.resize(k + 1, 0);
        }
        self.pilot_ce[k] = ce_idx;
        self.ce_workers[q][usize::from(ce_idx)].queued += 1;
    }
}

impl Provisioning for Harvester {
    type Demand<'a> = &'a HarvesterDemand;
    type Ticket = Worker;
    type Refused = NotMade;
    type Report = ();

    /// One cycle over every PQ, in scenario order: first every PQ's decision and plan, then
    /// the submissions.
    fn cycle(&mut self, d: &HarvesterDemand, submit: &mut dyn Submit<Worker, NotMade>) {
        self.counters.cycles += 1;
        let mut plans = Vec::new();
        let h = HarvesterDynamic::default();
        for q in 0..d.activated.len() {
            let (activated, queued, running) = (d.activated[q], d.queued[q], d.running[q]);
            // define_num_workers is a pure function of the PQ's state: a self-mode PQ whose
            // counts are those of its last cycle that made nothing makes nothing again.
            let key = [activated, queued.n, running.n];
            let mode = self.mode[q];
            match mode {
                QueueMode::Factory => continue, // a pilot factory submits there, not Harvester
                QueueMode::SelfMode if self.idle[q] == Some(key) => continue,
                QueueMode::SelfMode | QueueMode::Always => {}
            }
            let self_mode = mode == QueueMode::SelfMode;
            let Some(state) = self.states.get_mut(q).and_then(Option::as_mut) else { continue };
            self.view.count_state(q, state, activated, queued, running, &h);
            let Ok(mut decision) = self.view.decide(q, state) else { continue };
            if self.push[q] {
                // One worker per activated job: the rows (in order) get at most as many.
                let mut jobs = activated;
                for row in &mut decision.rows {
                    let n = row.n_new_workers.min(jobs);
                    self.counters.no_job += row.n_new_workers - n;
                    row.n_new_workers = n;
                    jobs -= n;
                }
            }
            if decision.rows.iter().all(|r| r.n_new_workers == 0) {
                self.idle[q] = self_mode.then_some(key);
                continue;
            }
            self.idle[q] = None;
            let stats: Vec<CeWorkerStats> = self.ce_workers[q]
                .iter()
                .map(|w| CeWorkerStats { submitted: w.queued, running: w.running, ..Default::default() })
                .collect();
            plans.push((q, self.view.pilot_plan(q, &decision, &stats, &mut self.rng)));
        }
        for (q, plan) in plans {
            self.counters.unplaced += plan.unplaced;
            let worker = Worker { queue: q as u16, push: self.push[q] };
            for b in &plan.batches {
                let ce_idx = self.view.queues[q].ces.iter().position(|&c| c == b.ce).unwrap_or(0);
                let shape = PilotShape { gpus: self.worker_gpus[q], ..PilotShape::cpu(b.cores.max(1)) };
                for _ in 0..b.count {
                    match submit.submit(b.ce as CeId, shape, worker) {
                        Ok(p) => {
                            self.own(p, q, ce_idx as u16);
                            self.counters.submitted += 1;
                        }
                        Err(NotMade::NoJob) => break,
                        Err(NotMade::Refused(_)) => {
                            self.counters.refused += 1;
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// PanDA's side of Harvester's submissions: the job fetcher and the worker maker. A push
/// worker takes the PQ's next job in the dispatcher's order (`sent`), is shaped by it (its
/// `coreCount`) and, once its CE accepts it, is bound to it (`starting`); a worker the CE
/// refuses takes no job.
pub struct HarvesterSubmit<'a> {
    pub ctx: &'a mut dyn Ctx,
    pub st: &'a Statics,
    pub db: &'a mut Db,
    pub dispatcher: &'a mut Dispatcher,
}

impl Submit<Worker, NotMade> for HarvesterSubmit<'_> {
    fn now(&self) -> crate::engine::SimTime {
        self.ctx.now()
    }

    fn grid(&self) -> &Grid {
        self.ctx.grid()
    }

    fn submit(&mut self, ce: CeId, shape: PilotShape, w: Worker) -> Result<PilotId, NotMade> {
        let now = self.ctx.now();
        let job = if w.push {
            let room = Room::worker(shape.gpus);
            let i = self.dispatcher.pick_job(self.st, &self.db.tables, now, w.queue, room, None);
            Some(i.ok_or(NotMade::NoJob)?)
        } else {
            None
        };
        let shape = match job {
            Some(i) => PilotShape { cores: self.db.tables.jobs[i as usize].cores.max(1), ..shape },
            None => shape,
        };
        let p = self.ctx.submit_pilot(ce, shape).map_err(NotMade::Refused)?;
        self.db.workers.register(p, w.queue);
        if let Some(i) = job {
            // `sent` to Harvester, `starting` once its worker is submitted.
            self.db.tables.set_status(i, PStatus::Sent, now);
            self.db.tables.set_status(i, PStatus::Starting, now);
            self.db.workers.bind(p, i);
        }
        Ok(p)
    }
}
