//! The PanDA WMS on the WMS boundary (seed 004, reference `panda.md` §1–§8).
//!
//! PanDA *pushes* jobs to PanDA queues (PQs) by brokerage, and pilots *pull* inside a queue:
//!
//! ```text
//! task arrives ──► JEDI TaskBroker (every agents.task_brokerage_s): panda::task_broker → nucleus
//!   (analysis tasks skip this)                         pending → retried after 30 min
//! JEDI JobGenerator (every agents.job_generation_s), per gshare leaf × resource type:
//!   panda::gshare::throttle → how many jobs; panda::job_broker / panda::anal_broker → top-10 PQs;
//!   SitePicker.get_one_site_candidate per 25 jobs → each job `defined` at its PQ:
//!     input at the PQ's site → `activated`; else `assigned`, one transfer per input file over
//!     the network, `activated` when the last file arrived
//! Harvester (every harvester.lookupTime): panda::harvester::define_num_workers per PQ → pilots
//!   on the PQ's CEs through the grid's batch state machine; push mode (mapType OneToOne) makes
//!   one pilot per activated job it takes (`sent`/`starting`), none without a job
//! a running pilot asks its PQ: gshare dispatch order (sorted leaves, 10 % by age), then
//!   priority, then PandaID → `sent`/`starting`/`running` (the payload starts at once); a push
//!   pilot runs the job it was made for (`running`) and exits
//! payload ends: success → `transferring` (output to the nucleus over the network) → `finished`;
//!   failure → `failed`, and JEDI regenerates the chunk while attempts remain (maxAttempt)
//! copyArchive (every agents.copy_archive_s): panda::timeouts rules on every queued job;
//!   reassigned jobs are `closed` and their chunk regenerated (attempt + 1)
//! replayed record (panda.replay) ──► `defined` on its recorded PQ at its creation time, no
//!   brokerage: `activated` (direct input) or `assigned` while its input travels, then as above
//! ```
//!
//! The pure decisions are `crate::panda`'s; [`view`] builds their inputs from the scenario and a
//! snapshot of these tables. Each brokerage decision is kept ([`record`]) for `brokerage.parquet`
//! and `pilotsim explain`.

mod analysis;
mod daemon;
mod data;
mod dispatch;
mod jedi;
mod outputs;
mod pilots;
pub mod record;
pub mod replay;
mod setup;
pub mod tables;
pub mod view;

use crate::engine::{RngStreams, SimRng, SimTime};
use crate::grid::Grid;
use crate::grid::network::TransferId;
use crate::ids::{JobId, PilotId, WmsId};
use crate::metrics::ExtraColumn;
use crate::scenario::Scenario;
use crate::scenario::panda::PandaConfig;
use crate::wms::{Answer, Ctx, FetchRequest, PilotNews, Timer, Wms};
use crate::workload::{Job, ShareEntities, StreamInfo};

pub use setup::StreamShape;
use tables::Tables;

/// Timer kinds (digest codes; clear of the world's `sim::world::WORLD_CODES`).
const TASK_ARRIVAL: u16 = 200;
const TASK_BROKERAGE: u16 = 201;
const JOB_GENERATION: u16 = 202;
const HARVESTER: u16 = 203;
const COPY_ARCHIVE: u16 = 204;
const REPLAY_ARRIVAL: u16 = 205;
const ADDER: u16 = 206;

/// A PQ's Harvester workers: queued (submitted, waiting in the batch system) and running.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Workers {
    pub queued: u64,
    pub running: u64,
}

/// The snapshot the views read: the tables' counts, `laststart`, the grid's storage and
/// network, and Harvester's worker counts `queued`/`running`.
fn snapshot<'a>(
    tables: &'a Tables,
    last_start: &'a [Option<SimTime>],
    ctx: &'a dyn Ctx,
    queued: &'a [crate::panda::harvester::config::WorkerCounts],
    running: &'a [crate::panda::harvester::config::WorkerCounts],
) -> view::Dynamic<'a> {
    view::Dynamic {
        now: ctx.now(),
        queue_jobs: &tables.counts,
        queue_gshare_jobs: &tables.leaf_counts,
        storages: ctx.storages(),
        network: ctx.network(),
        last_start,
        workers_queued: queued,
        workers_running: running,
    }
}

/// The PanDA WMS instance of a world.
pub struct PandaWms {
    cfg: PandaConfig,
    /// Static facts of the scenario the agents read (queues' CEs and sites, stream shapes).
    statics: setup::Statics,
    /// The inputs of production task and job brokerage.
    prod_view: view::prod::ProdView,
    /// The inputs of analysis brokerage.
    anal_view: view::anal::AnalView,
    /// getJob requests and job starts per PQ over the last hours (analysis brokerage's inputs).
    gets: analysis::Activity,
    starts: analysis::Activity,
    /// Analysis brokerage's snapshot of the current JobGenerator cycle.
    anal_cache: Option<analysis::AnalCache>,
    /// The inputs of Harvester's decisions.
    harvest_view: view::harvester::HarvesterView,
    /// Per PQ, the counts (activated, queued n/cores, running n/cores) of its last Harvester
    /// cycle if that cycle submitted nothing (pull mode): the same counts decide the same.
    harvest_idle: Vec<Option<pilots::IdleKey>>,
    /// PQs a pilot factory feeds (`factory[].queue`, seed 003): Harvester submits no workers
    /// there.
    factory_queue: Vec<bool>,
    /// The world stream of PanDA stream `k` is `first_stream + k`.
    first_stream: u32,
    tables: Tables,
    /// Task arrival times of each task (task index order), set at start.
    arrivals: Vec<SimTime>,
    /// The replayed jobs in creation order (`panda.replay`), and the task of the first replay
    /// stream (stream `k`'s is `first_replay_task + k`, after every real task).
    replay: Vec<replay::ReplayJob>,
    first_replay_task: u32,
    /// Production tasks waiting for a nucleus.
    assigning: Vec<u32>,
    /// Tasks generating or running jobs.
    generating: Vec<u32>,
    /// JEDI's jobs not yet final (pruned by copyArchive); replayed jobs are not in it.
    live: Vec<u32>,
    /// The PQ and CE (index in its `harvest_view.queues[q].ces`) of each of its pilots, by `PilotId`
    /// (`u16::MAX`: another WMS's pilot).
    pilot_queue: Vec<u16>,
    pilot_ce: Vec<u16>,
    /// Push mode (`pilots`): the job (index) each worker was made for until its pilot runs it,
    /// by `PilotId` (`pilots::NO_JOB`: none), and the worker of each such job.
    pilot_job: Vec<u32>,
    job_worker: std::collections::BTreeMap<u32, PilotId>,
    workers: Vec<Workers>,
    /// Workers per PQ and CE (the CE weighting's statistics).
    ce_workers: Vec<Vec<Workers>>,
    /// `laststart` of each PQ: when a job last started there.
    last_start: Vec<Option<SimTime>>,
    /// Jobs in `holding`, in the order their pilots reported (an Adder cycle is set while any).
    holding: Vec<u32>,
    /// The job each of its transfers carries, by `TransferId` (`u32::MAX` for none).
    transfer_job: Vec<u32>,
    /// Dispatch order of the gshare leaves (indices) and when it was computed.
    leaf_rank: Vec<usize>,
    ranks_at: Option<SimTime>,
    /// The job broker's queue buffer, refilled every brokerage.
    queue_buf: Vec<view::prod::BrokerQueue>,
    pub record: record::Records,
    pub data: data::DataCounters,
    pub daemon: daemon::DaemonCounters,
    pub harvester: pilots::HarvesterCounters,
    rng_task_broker: SimRng,
    rng_site_pick: SimRng,
    rng_anal: SimRng,
    rng_dispatch: SimRng,
    rng_harvester: SimRng,
}

impl PandaWms {
    /// The PanDA WMS of `scenario` as instance `wms`, its streams numbered from `first_stream`:
    /// the instance, its share entities (one group per gshare leaf, targets the leaves'
    /// normalised percentages) and its job streams (one per task stream).
    pub fn new(
        scenario: &Scenario,
        cfg: &PandaConfig,
        wms: WmsId,
        first_stream: u32,
        rngs: &RngStreams,
    ) -> (Self, ShareEntities, Vec<StreamInfo>) {
        let mut statics = setup::Statics::new(scenario, cfg);
        let replay = replay::replay_jobs(scenario, cfg);
        for (k, r) in statics.shapes[statics.first_replay..].iter_mut().enumerate() {
            let mine: Vec<f64> = replay.iter().filter(|j| usize::from(j.stream) == k).map(|j| j.cpu_work).collect();
            r.n_jobs = mine.len() as u32;
            r.cpu_work = if mine.is_empty() { 0.0 } else { mine.iter().sum::<f64>() / mine.len() as f64 };
        }
        let (entities, streams) = setup::entities_and_streams(&statics, wms);
        let nq = cfg.queues.len();
        let n_leaves = statics.leaves.len();
        let arrival_rng = |name: &str| rngs.stream(&format!("panda:{name}/arrival"));
        let mut arrivals = Vec::new();
        let mut tasks = Vec::new();
        for (k, shape) in statics.shapes[..statics.first_replay].iter().enumerate() {
            let times = crate::workload::arrivals(&shape.arrival, shape.count, &mut arrival_rng(&shape.name));
            for (no, t) in times.into_iter().enumerate() {
                arrivals.push(t);
                tasks.push(setup::new_task(k as u16, no as u32, t, shape));
            }
        }
        // One synthetic task per replay stream, after every real task (distinct jediTaskIDs).
        let first_replay_task = tasks.len() as u32;
        for (k, r) in cfg.replay.iter().enumerate() {
            let shape = &statics.shapes[statics.first_replay + k];
            let first = replay.iter().find(|j| usize::from(j.stream) == k).map_or(SimTime::ZERO, |j| j.at);
            let nucleus = r.nucleus.as_ref().and_then(|n| cfg.nuclei.iter().position(|x| &x.site == n));
            tasks.push(setup::replay_task(
                (statics.first_replay + k) as u16,
                shape.n_jobs,
                nucleus.map(|n| n as u16),
                first,
            ));
        }
        let mut tables = Tables::new(nq, n_leaves);
        tables.tasks = tasks;
        let harvest_view = view::harvester::HarvesterView::new(scenario);
        let ce_workers = harvest_view.queues.iter().map(|h| vec![Workers::default(); h.ces.len().max(1)]).collect();
        let me = Self {
            cfg: cfg.clone(),
            prod_view: view::prod::ProdView::new(scenario),
            harvest_view,
            anal_view: view::anal::AnalView::new(scenario),
            harvest_idle: vec![None; nq],
            factory_queue: cfg
                .queues
                .iter()
                .map(|q| scenario.factory.iter().any(|f| f.target().2 == Some(q.name.as_str())))
                .collect(),
            gets: analysis::Activity::new(nq),
            starts: analysis::Activity::new(nq),
            anal_cache: None,
            first_stream,
            tables,
            arrivals,
            replay,
            first_replay_task,
            assigning: Vec::new(),
            generating: Vec::new(),
            live: Vec::new(),
            pilot_queue: Vec::new(),
            pilot_ce: Vec::new(),
            pilot_job: Vec::new(),
            job_worker: std::collections::BTreeMap::new(),
            workers: vec![Workers::default(); nq],
            ce_workers,
            last_start: vec![None; nq],
            transfer_job: Vec::new(),
            leaf_rank: (0..n_leaves).collect(),
            ranks_at: None,
            queue_buf: Vec::new(),
            holding: Vec::new(),
            record: record::Records::default(),
            data: data::DataCounters::default(),
            daemon: daemon::DaemonCounters::default(),
            harvester: pilots::HarvesterCounters::default(),
            rng_task_broker: rngs.stream("panda/task_broker"),
            rng_site_pick: rngs.stream("panda/job_broker/site_pick"),
            rng_anal: rngs.stream("panda/anal_broker"),
            rng_dispatch: rngs.stream("panda/dispatch"),
            rng_harvester: rngs.stream("panda/harvester/ce"),
            statics,
        };
        (me, entities, streams)
    }

    /// The tables (for outputs and tests).
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    fn corepower(&self, q: u16) -> f64 {
        self.cfg.queues[q as usize].corepower
    }

    fn every(&self, ctx: &mut dyn Ctx, kind: u16, period: crate::engine::Period) {
        let next = ctx.now() + period.duration();
        ctx.set_timer(next, Timer { kind, id: 0 });
    }
}

impl Wms for PandaWms {
    fn name(&self) -> &str {
        "panda"
    }

    fn start(&mut self, ctx: &mut dyn Ctx) {
        for (i, &t) in self.arrivals.iter().enumerate() {
            ctx.set_timer(t, Timer { kind: TASK_ARRIVAL, id: i as u32 });
        }
        for (r, j) in self.replay.iter().enumerate() {
            ctx.set_timer(j.at, Timer { kind: REPLAY_ARRIVAL, id: r as u32 });
        }
        for kind in [TASK_BROKERAGE, JOB_GENERATION, HARVESTER, COPY_ARCHIVE] {
            ctx.set_timer(SimTime::ZERO, Timer { kind, id: 0 });
        }
    }

    fn job_submitted(&mut self, _ctx: &mut dyn Ctx, _j: JobId) {
        // PanDA's jobs are created by the WMS itself (Ctx::create_job), never by the world.
    }

    fn timer(&mut self, ctx: &mut dyn Ctx, timer: Timer) {
        let a = self.cfg.agents;
        match timer.kind {
            TASK_ARRIVAL => self.task_arrived(ctx, timer.id),
            REPLAY_ARRIVAL => self.replay_arrived(ctx, timer.id),
            ADDER => self.adder_cycle(ctx),
            TASK_BROKERAGE => {
                self.task_brokerage(ctx);
                self.every(ctx, TASK_BROKERAGE, a.task_brokerage_s);
            }
            JOB_GENERATION => {
                self.job_generation(ctx);
                self.every(ctx, JOB_GENERATION, a.job_generation_s);
            }
            HARVESTER => {
                self.harvester_cycle(ctx);
                self.every(ctx, HARVESTER, self.cfg.harvester.lookup_time);
            }
            COPY_ARCHIVE => {
                self.copy_archive(ctx);
                self.every(ctx, COPY_ARCHIVE, a.copy_archive_s);
            }
            _ => {}
        }
    }

    fn pilot_news(&mut self, ctx: &mut dyn Ctx, p: PilotId, news: PilotNews) {
        self.pilot_news_of(ctx, p, news);
    }

    fn pilot_asks(&mut self, ctx: &mut dyn Ctx, p: PilotId) -> Answer {
        self.dispatch(ctx, p)
    }

    fn job_ended(&mut self, ctx: &mut dyn Ctx, _p: PilotId, j: JobId) {
        self.payload_ended(ctx, j);
    }

    /// `activated` jobs of the queue (of every queue for `None`).
    fn queued_jobs(&self, queue: Option<&str>) -> u64 {
        let q = queue.and_then(|n| self.cfg.queues.iter().position(|x| x.name == n));
        let counts = &self.tables.counts;
        match q {
            Some(q) => counts[q].activated,
            None => counts.iter().map(|c| c.activated).sum(),
        }
    }

    fn fetch_job(&mut self, ctx: &mut dyn Ctx, req: &FetchRequest) -> Option<JobId> {
        self.fetch_for_factory(ctx, req)
    }

    /// A factory's startd pilot gave the running job back (removed, or the job preempted): it is
    /// `activated` at its queue again, as Condor requeues a vacated job (seed 003 §2).
    fn job_requeued(&mut self, ctx: &mut dyn Ctx, j: JobId) {
        let Some(i) = self.tables.of_job(j) else { return };
        let cp = self.corepower(self.tables.jobs[i as usize].queue);
        self.tables.set_status(i, crate::panda::timeouts::JobStatus::Activated, ctx.now(), cp);
    }

    fn transfer_done(&mut self, ctx: &mut dyn Ctx, t: TransferId) {
        self.transfer_arrived(ctx, t);
    }

    fn job_columns(&self, jobs: &[Job]) -> Vec<ExtraColumn> {
        outputs::job_columns(self, jobs)
    }

    fn pilot_columns(&self, grid: &Grid) -> Vec<ExtraColumn> {
        outputs::pilot_columns(self, grid)
    }

    fn tables(&self) -> Vec<crate::metrics::Table> {
        vec![outputs::brokerage_table(self)]
    }

    fn summary(&self, jobs: &[Job]) -> Option<serde_json::Value> {
        Some(outputs::summary(self, jobs))
    }

    fn check_invariants(&self, jobs: &[Job]) -> Vec<String> {
        outputs::check_invariants(self, jobs)
    }
}
