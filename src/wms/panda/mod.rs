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
//! Harvester (every harvester.lookupTime): crate::panda::harvester::define_num_workers per PQ
//!   → pilots on the PQ's CEs through the grid's batch state machine; push mode (mapType
//!   OneToOne) makes one pilot per activated job it takes (`sent`/`starting`), none without a job
//! a running pilot asks its PQ: gshare dispatch order (sorted leaves, 10 % by age), then
//!   priority, then PandaID → `sent`/`starting`/`running` (the payload starts at once); a push
//!   pilot runs the job it was made for (`running`) and exits
//! payload ends: `holding` until the Adder's next cycle (every agents.adder_s), then success →
//!   `transferring` (output to the nucleus over the network) → `finished`; failure → `failed`,
//!   and JEDI regenerates the chunk while attempts remain (maxAttempt)
//! copyArchive (every agents.copy_archive_s): panda::timeouts rules on every queued job;
//!   reassigned jobs are `closed` and their chunk regenerated (attempt + 1)
//! replayed record (panda.replay) ──► `defined` on its recorded PQ at its creation time, no
//!   brokerage: `activated` (direct input) or `assigned` while its input travels, then as above
//! ```
//!
//! Each agent is a struct of its own module that owns its state and code, as in panda-server:
//! [`task_broker::TaskBroker`], [`job_generator::JobGenerator`] (with analysis brokerage,
//! [`anal_brokerage`]), the [`dispatcher::Dispatcher`] (`getJob`), [`harvester::Harvester`] (on
//! the provisioning boundary, `wms::provision`), [`copy_archive::CopyArchive`] and the
//! [`adder::Adder`]; data movement is [`ddm::Ddm`]'s. What they share is [`db::Db`]: the job and
//! task tables, `SiteData`, Harvester's workers and the brokerage record, as panda-server's
//! agents share its database. `PandaWms` owns them and routes the world's callbacks and its
//! timers to them, with the two hand-overs between agents (a task's arrival to the TaskBroker
//! or the JobGenerator; PanDA's counts to Harvester, whose job fetcher's getJob requests it
//! records); no agent names it.
//!
//! The pure decisions are `crate::panda`'s; [`view`] builds their inputs from the scenario and a
//! snapshot of the tables. Each brokerage decision is kept ([`record`]) for `brokerage.parquet`
//! and `pilotsim explain`.

mod adder;
pub mod agent_times;
mod anal_brokerage;
mod copy_archive;
mod db;
mod ddm;
mod dispatcher;
mod harvester;
mod job_generator;
mod outputs;
pub mod record;
pub mod replay;
mod setup;
mod site_data;
pub mod tables;
mod task_broker;
pub mod view;
mod workers;

use crate::engine::{RngStreams, SimTime};
use crate::grid::Grid;
use crate::grid::network::TransferId;
use crate::ids::{JobId, PilotId, WmsId};
use crate::metrics::ExtraColumn;
use crate::panda::timeouts::JobStatus as PStatus;
use crate::scenario::Scenario;
use crate::scenario::panda::PandaConfig;
use crate::wms::provision::Provisioning;
use crate::wms::{Answer, Ctx, FetchRequest, PilotNews, Timer, Wms};
use crate::workload::{Job, ShareEntities, StreamInfo};

use agent_times::Agent;
pub use copy_archive::CopyArchiveCounters;
pub use ddm::DataCounters;
pub use harvester::HarvesterCounters;
pub use setup::StreamShape;
use tables::{Tables, TaskStatus};

/// Timer kinds (digest codes; clear of the world's `sim::world::WORLD_CODES`).
const TASK_ARRIVAL: u16 = 200;
const TASK_BROKERAGE: u16 = 201;
const JOB_GENERATION: u16 = 202;
const HARVESTER: u16 = 203;
const COPY_ARCHIVE: u16 = 204;
const REPLAY_ARRIVAL: u16 = 205;
const ADDER: u16 = 206;

/// The PanDA WMS instance of a world: its agents and their shared state (module doc).
pub struct PandaWms {
    /// What every agent reads and none changes.
    st: setup::Statics,
    /// What the agents share.
    db: db::Db,
    task_broker: task_broker::TaskBroker,
    job_generator: job_generator::JobGenerator,
    dispatcher: dispatcher::Dispatcher,
    harvester: harvester::Harvester,
    /// What Harvester reads at a cycle, refilled each time.
    demand: harvester::HarvesterDemand,
    copy_archive: copy_archive::CopyArchive,
    adder: adder::Adder,
    ddm: ddm::Ddm,
    /// Task arrival times of each task (task index order), set at start.
    arrivals: Vec<SimTime>,
    /// The replayed jobs in creation order (`panda.replay`), and the task of the first replay
    /// stream (stream `k`'s is `first_replay_task + k`, after every real task).
    replay: Vec<replay::ReplayJob>,
    first_replay_task: u32,
    /// Wall time per agent, when asked (`examples/scale`).
    pub times: agent_times::AgentTimes,
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
        statics.first_stream = first_stream;
        let replay = replay::replay_jobs(scenario, cfg);
        for (k, r) in statics.shapes[statics.first_replay..].iter_mut().enumerate() {
            let mine: Vec<f64> = replay.iter().filter(|j| usize::from(j.stream) == k).map(|j| j.cpu_work).collect();
            r.n_jobs = mine.len() as u32;
            r.cpu_work = if mine.is_empty() { 0.0 } else { mine.iter().sum::<f64>() / mine.len() as f64 };
        }
        let (entities, streams) = setup::entities_and_streams(&statics, wms);
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
        let corepower = cfg.queues.iter().map(|q| q.corepower).collect();
        let max_attempt = statics.shapes.iter().map(|s| s.max_attempt).collect();
        let mut tables = Tables::new(corepower, n_leaves, max_attempt);
        tables.tasks = tasks;
        let nq = cfg.queues.len();
        let db = db::Db {
            tables,
            site: site_data::SiteData::new(nq),
            workers: workers::WorkerTable::new(cfg.queues.iter().map(|q| u64::from(q.cores())).collect()),
            record: record::Records::default(),
        };
        let me = Self {
            db,
            task_broker: task_broker::TaskBroker::new(rngs),
            job_generator: job_generator::JobGenerator::new(scenario, rngs),
            dispatcher: dispatcher::Dispatcher::new(n_leaves, rngs),
            harvester: harvester::Harvester::new(scenario, &statics, rngs),
            demand: harvester::HarvesterDemand::default(),
            copy_archive: copy_archive::CopyArchive::default(),
            adder: adder::Adder::default(),
            ddm: ddm::Ddm::default(),
            arrivals,
            replay,
            first_replay_task,
            times: agent_times::AgentTimes::default(),
            st: statics,
        };
        (me, entities, streams)
    }

    /// The job and task tables (for outputs and tests).
    pub fn tables(&self) -> &Tables {
        &self.db.tables
    }

    /// The brokerage decisions (`brokerage.parquet`).
    pub fn record(&self) -> &record::Records {
        &self.db.record
    }

    /// What the data path did.
    pub fn data_counters(&self) -> &DataCounters {
        &self.ddm.counters
    }

    /// What Harvester did.
    pub fn harvester_counters(&self) -> &HarvesterCounters {
        &self.harvester.counters
    }

    /// What copyArchive did.
    pub fn copy_archive_counters(&self) -> &CopyArchiveCounters {
        &self.copy_archive.counters
    }

    fn every(&self, ctx: &mut dyn Ctx, kind: u16, period: crate::engine::Period) {
        let next = ctx.now() + period.duration();
        ctx.set_timer(next, Timer { kind, id: 0 });
    }

    /// Task `id` arrives: a production task waits for the TaskBroker, an analysis task for the
    /// JobGenerator's next cycle.
    fn task_arrived(&mut self, ctx: &dyn Ctx, id: u32) {
        let analysis = self.st.shapes[usize::from(self.db.tables.tasks[id as usize].stream)].analysis;
        let t = &mut self.db.tables.tasks[id as usize];
        t.retry_at = ctx.now();
        if analysis {
            t.status = TaskStatus::Running;
            self.job_generator.add_tasks(&self.st, &self.db.tables.tasks, [id]);
        } else {
            t.status = TaskStatus::Assigning;
            self.task_broker.task_arrived(id);
        }
    }

    /// One Harvester cycle: its job fetcher's requests at the push PQs, then its decisions and
    /// submissions over what PanDA shows now.
    fn harvester_cycle(&mut self, ctx: &mut dyn Ctx) {
        let now = ctx.now();
        for q in self.harvester.fetching_queues() {
            self.db.site.gets.add(q, now);
        }
        self.demand.refill(&self.db.tables.counts, &self.db.workers);
        let mut submit =
            harvester::HarvesterSubmit { ctx, st: &self.st, db: &mut self.db, dispatcher: &mut self.dispatcher };
        self.harvester.cycle(&self.demand, &mut submit);
    }

    /// The pieces the outputs read.
    fn parts(&self) -> outputs::Parts<'_> {
        outputs::Parts {
            st: &self.st,
            db: &self.db,
            replay: &self.replay,
            data: &self.ddm.counters,
            copy_archive: &self.copy_archive.counters,
            harvester: &self.harvester.counters,
        }
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
        let t0 = self.times.start();
        let a = self.st.cfg.agents;
        let (st, db) = (&self.st, &mut self.db);
        let agent = match timer.kind {
            TASK_ARRIVAL => {
                self.task_arrived(ctx, timer.id);
                Agent::TaskBroker
            }
            REPLAY_ARRIVAL => {
                let rj = &self.replay[timer.id as usize];
                let task = self.first_replay_task + u32::from(rj.stream);
                replay::arrived(st, db, &mut self.ddm, ctx, rj, timer.id, task);
                Agent::Replay
            }
            ADDER => {
                self.adder.cycle(st, db, &mut self.ddm, ctx);
                Agent::Adder
            }
            TASK_BROKERAGE => {
                let generating: Vec<u32> = self.job_generator.generating(&db.tables.tasks).collect();
                let assigned = self.task_broker.cycle(st, db, &generating, ctx);
                self.job_generator.add_tasks(st, &db.tables.tasks, assigned);
                self.every(ctx, TASK_BROKERAGE, a.task_brokerage_s);
                Agent::TaskBroker
            }
            JOB_GENERATION => {
                self.job_generator.cycle(st, db, &mut self.ddm, ctx);
                self.every(ctx, JOB_GENERATION, a.job_generation_s);
                Agent::JobGenerator
            }
            HARVESTER => {
                self.harvester_cycle(ctx);
                self.every(ctx, HARVESTER, self.st.cfg.harvester.lookup_time);
                Agent::Harvester
            }
            COPY_ARCHIVE => {
                self.copy_archive.cycle(st, db, ctx);
                self.every(ctx, COPY_ARCHIVE, a.copy_archive_s);
                Agent::CopyArchive
            }
            _ => return,
        };
        self.times.stop(agent, t0);
    }

    fn pilot_news(&mut self, ctx: &mut dyn Ctx, p: PilotId, news: PilotNews) {
        let t0 = self.times.start();
        self.harvester.pilot_news(&mut self.db, ctx, p, news);
        self.times.stop(Agent::Harvester, t0);
    }

    fn pilot_asks(&mut self, ctx: &mut dyn Ctx, p: PilotId) -> Answer {
        let t0 = self.times.start();
        let answer = self.dispatcher.dispatch(&self.st, &mut self.db, ctx, p);
        self.times.stop(Agent::Dispatcher, t0);
        answer
    }

    /// The pilot's final `updateJob`: the job is `holding` until the Adder's next cycle.
    fn job_ended(&mut self, ctx: &mut dyn Ctx, _p: PilotId, j: JobId) {
        let t0 = self.times.start();
        let period = self.st.cfg.agents.adder_s.duration();
        if let Some(at) = self.adder.update_job(&mut self.db, ctx.now(), period, j) {
            ctx.set_timer(at, Timer { kind: ADDER, id: 0 });
        }
        self.times.stop(Agent::Adder, t0);
    }

    /// `activated` jobs of the queue (of every queue for `None`).
    fn queued_jobs(&self, queue: Option<&str>) -> u64 {
        let q = queue.and_then(|n| self.st.cfg.queues.iter().position(|x| x.name == n));
        let counts = &self.db.tables.counts;
        match q {
            Some(q) => counts[q].activated,
            None => counts.iter().map(|c| c.activated).sum(),
        }
    }

    fn fetch_job(&mut self, ctx: &mut dyn Ctx, req: &FetchRequest) -> Option<JobId> {
        self.dispatcher.fetch_for_factory(&self.st, &mut self.db, ctx, req)
    }

    /// A factory's startd pilot gave the running job back (removed, or the job preempted): it is
    /// `activated` at its queue again, as Condor requeues a vacated job (seed 003 §2).
    fn job_requeued(&mut self, ctx: &mut dyn Ctx, j: JobId) {
        let Some(i) = self.db.tables.of_job(j) else { return };
        self.db.tables.set_status(i, PStatus::Activated, ctx.now());
    }

    fn transfer_done(&mut self, ctx: &mut dyn Ctx, t: TransferId) {
        let t0 = self.times.start();
        self.ddm.transfer_arrived(&self.st, &mut self.db, ctx, t);
        self.times.stop(Agent::Transfers, t0);
    }

    fn job_columns(&self, jobs: &[Job]) -> Vec<ExtraColumn> {
        outputs::job_columns(&self.parts(), jobs)
    }

    fn pilot_columns(&self, grid: &Grid) -> Vec<ExtraColumn> {
        outputs::pilot_columns(&self.parts(), grid)
    }

    fn tables(&self) -> Vec<crate::metrics::Table> {
        vec![outputs::brokerage_table(&self.parts())]
    }

    fn summary(&self, jobs: &[Job]) -> Option<serde_json::Value> {
        Some(outputs::summary(&self.parts(), jobs))
    }

    fn check_invariants(&self, jobs: &[Job]) -> Vec<String> {
        outputs::check_invariants(&self.parts(), jobs)
    }
}
