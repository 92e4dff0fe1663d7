//! The world: all simulation state, the only place where time passes. Events become calls of
//! the grid state machine ([`Grid`]) and of the WMS instances ([`Wms`]); the world applies
//! what they decide and schedules what follows (DESIGN.md, "Layers").

use std::collections::VecDeque;

use crate::engine::staged::BATCH;
use crate::engine::{Digest, RngStreams, SimDuration, SimRng, SimTime, StagedQueue, dist};
use crate::grid::network::{Completion, LinkEvent, Network, TransferId};
use crate::grid::storage::Storages;
use crate::grid::{Grid, PilotStatus, Transition};
use crate::ids::{JobId, PilotId, WmsId, job_index};
use crate::metrics::recorder::{GpuSample, Recorder};
use crate::scenario::Scenario;
use crate::wms::provision::{Provisioner, RunEnd};
use crate::wms::{self, Answer, PilotNews, Timer, Wms};
use crate::workload::{Accounting, Job, JobSpec, JobStatus, ShareEntities, StreamInfo};

use super::arrivals::Arrivals;

/// What can happen. Each event is folded into the run digest as `(time, code, id)`; the codes
/// below are the world's, a WMS timer's code is its own `kind` (plus `wms << 16` for the
/// second and later instances).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A job is submitted to its WMS (code 1).
    JobArrival(JobId),
    /// A WMS timer fires (its own kind). Flattened so that an event fits in 8 bytes.
    Wms { wms: WmsId, kind: u16, id: u32 },
    /// Metrics are sampled (code 4).
    Sample,
    /// A pilot leaves the middleware and reaches its CE's batch queue (code 5).
    PilotReachesBatch(PilotId),
    /// The middleware aborts a pilot (code 6).
    PilotAborted(PilotId),
    /// A running pilot asks its WMS for work (code 8).
    PilotAsks(PilotId),
    /// A job running in a pilot ends (code 9; its pilot is the job's).
    JobEnd(JobId),
    /// The accounting takes a snapshot of usage (code 10).
    AccountingSnapshot,
    /// A link's next transfer may be done (code 11; stale unless `epoch` is the link's live one).
    Link { link: u32, epoch: u16 },
    /// A provisioner's timer (`wms::provision`: its own `kind` and `id`); code
    /// `(PROVISIONER_CODE + owner) << 16 | kind`.
    Provisioner { owner: u8, kind: u16, id: u32 },
}

/// The digest code of the first provisioner's timers, above any WMS timer code
/// (`wms << 16 | kind`).
const PROVISIONER_CODE: u64 = 0xFF;

impl Event {
    /// A stable code and id for the event digest; a job's end is digested by its pilot.
    fn digest_words(self, jobs: &[Job]) -> (u64, u64) {
        match self {
            Event::JobArrival(j) => (1, u64::from(j)),
            Event::Wms { wms, kind, id } => (u64::from(wms) << 16 | u64::from(kind), u64::from(id)),
            Event::Sample => (4, 0),
            Event::PilotReachesBatch(p) => (5, u64::from(p)),
            Event::PilotAborted(p) => (6, u64::from(p)),
            Event::PilotAsks(p) => (8, u64::from(p)),
            // A stale end (of a run that was requeued) may find the job without a pilot.
            Event::JobEnd(j) => (9, jobs[job_index(j)].pilot().map_or(0, u64::from)),
            Event::AccountingSnapshot => (10, 0),
            Event::Link { link, .. } => (11, u64::from(link)),
            Event::Provisioner { owner, kind, id } => {
                ((PROVISIONER_CODE + u64::from(owner)) << 16 | u64::from(kind), u64::from(id))
            }
        }
    }
}

const _: () = assert!(std::mem::size_of::<Event>() == 8, "queue entries stay 16 bytes");

/// The digest codes of the world's own events, which a WMS timer kind must not reuse.
pub const WORLD_CODES: [u16; 8] = [1, 4, 5, 6, 8, 9, 10, 11];

/// Where a running pilot stands with its WMS.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct AskState {
    /// A `PilotAsks` event is scheduled (one at a time, however many jobs end meanwhile).
    pending: bool,
    /// Told to exit (or answered wrongly): it ends when its last job ends, asking no more.
    exiting: bool,
    /// The provisioner that owns it, plus one (0: its WMS submitted it and talks to it).
    pub(super) owner: u8,
    /// What its last `RunEnd::Fixed` run spends before the payload (a generic factory pilot's
    /// job fetch; zero for a WMS's pilot): a run ended sooner than this plus its CPU work was
    /// cut at the walltime.
    lead: SimDuration,
}

/// News waiting to be delivered to a WMS once the current callback has returned.
#[derive(Debug, Clone, Copy)]
enum News {
    Pilot(PilotId, PilotNews),
    /// About a provisioner's pilot: for the provisioner (`owner`), not the WMS.
    OwnedPilot(u8, PilotId, PilotNews),
    JobEnded(PilotId, JobId),
    TransferDone(TransferId),
}

/// The state every WMS sees through its [`Ctx`], and the event queue only the world touches.
pub struct Core {
    pub queue: StagedQueue<Event>,
    pub grid: Grid,
    /// Every job, by `ids::job_index`.
    pub jobs: Vec<Job>,
    pub accounting: Accounting,
    pub recorder: Recorder,
    pub entities: ShareEntities,
    /// Every job stream (the scenario's, then the WMSs' own; `Job::stream` indexes it).
    pub streams: Vec<StreamInfo>,
    /// The grid's links and transfers.
    pub network: Network,
    /// The grid's storage endpoints.
    pub storages: Storages,
    /// The WMS that started each transfer, by `TransferId`.
    pub(super) transfer_owner: Vec<WmsId>,
    completions: Vec<Completion>,
    pub digest: Digest,
    pub events: u64,
    /// Internal errors (a WMS answering with a job it cannot run): reported as violations.
    pub violations: Vec<String>,
    pub(super) now: SimTime,
    /// The WMS whose callback is running.
    pub(super) caller: WmsId,
    /// The world's own state of each pilot's conversation with its WMS, by pilot id.
    pub(super) asks: Vec<AskState>,
    pub(super) transitions: Vec<Transition>,
    news: VecDeque<(WmsId, News)>,
    job_failure: Vec<SimRng>,
    sample_interval: SimDuration,
    /// The grid declares GPUs: samples record their use.
    gpu_inventory: bool,
    /// GPUs each job of a stream holds (`StreamInfo::gpus`), apart: read at every job's start
    /// and end, where the whole `StreamInfo` would cost a cache line of names.
    stream_gpus: Vec<u32>,
    accounting_period: Option<SimDuration>,
    /// When provisioners run (jobs may be requeued, or change speed): the planned end of
    /// each job's current run, by `job_index`; a `JobEnd` at another time is stale.
    planned_end: Option<Vec<SimTime>>,
    /// Jobs submitted to each WMS so far (what a provisioner sees arrive).
    pub submitted_per_wms: Vec<u64>,
    /// The scenario's job arrivals not yet handled, kept out of the event queue.
    arrivals: Arrivals,
}

/// All state of a run.
pub struct World {
    pub scenario: Scenario,
    pub core: Core,
    pub wms: Vec<Box<dyn Wms>>,
    /// Who provisions pilots beside the WMSs' own agents (`wms::provision::Provisioner`).
    pub provisioners: Vec<Box<dyn Provisioner>>,
}

impl World {
    /// Build the world at time 0: every job arrival scheduled, each WMS started, sampling
    /// and accounting snapshots scheduled.
    pub fn new(scenario: Scenario, specs: Vec<JobSpec>, setup: wms::Setup, rngs: &RngStreams) -> Self {
        let queue = StagedQueue::new();
        let jobs: Vec<Job> = specs
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let id = i as JobId + 1;
                Job::new(id, s.stream, s.submitted, s.cpu_work, 1, setup.streams[s.stream as usize].wms)
            })
            .collect();
        let warmup = SimTime::ZERO + SimDuration::from_secs_f64(scenario.output.warmup_s);
        let n = setup.entities.defs.len();
        // Validation refuses the scenarios these would reject (unknown sites, duplicate links,
        // bad sizes), so the fallbacks are never taken for a valid scenario.
        let network = Network::from_sites(&scenario.sites, &scenario.network).unwrap_or_default();
        let site_names: Vec<&str> = scenario.sites.iter().map(|s| s.name.as_str()).collect();
        let storages = Storages::new(&site_names, &scenario.storages).unwrap_or_default();
        let arrivals = Arrivals::new(&jobs);
        let core = Core {
            arrivals,
            queue,
            grid: Grid::new(&scenario.sites, rngs),
            jobs,
            accounting: Accounting::new(n),
            recorder: Recorder::new(setup.entities.defs.clone(), warmup),
            entities: setup.entities,
            network,
            storages,
            transfer_owner: Vec::new(),
            completions: Vec::new(),
            digest: Digest::new(),
            events: 0,
            violations: Vec::new(),
            now: SimTime::ZERO,
            caller: 0,
            asks: Vec::new(),
            transitions: Vec::new(),
            news: VecDeque::new(),
            job_failure: setup.streams.iter().map(|w| rngs.stream(&format!("workload:{}/failure", w.name))).collect(),
            stream_gpus: setup.streams.iter().map(|s| s.gpus).collect(),
            streams: setup.streams,
            sample_interval: SimDuration::from_secs_f64(scenario.output.sample_interval_s),
            gpu_inventory: scenario.sites.iter().flat_map(|s| &s.ces).any(|c| !c.gpus.is_empty()),
            accounting_period: setup.accounting_period,
            planned_end: None,
            submitted_per_wms: vec![0; setup.instances.len()],
        };
        let mut world = Self { scenario, core, wms: setup.instances, provisioners: setup.provisioners };
        if !world.provisioners.is_empty() {
            world.core.planned_end = Some(Vec::new());
            world.start_provisioners();
        }
        for w in 0..world.wms.len() {
            world.core.caller = w as WmsId;
            world.wms[w].start(&mut world.core);
        }
        world.core.queue.push(SimTime::ZERO, Event::Sample);
        if world.core.accounting_period.is_some() {
            world.core.queue.push(SimTime::ZERO, Event::AccountingSnapshot);
        }
        world
    }

    /// Process every event up to and including `until`.
    pub fn run_until(&mut self, until: SimTime) {
        while let Some((now, ev)) = self.core.next_event(until) {
            // A batch, when events are dense enough that their records may be far in memory
            // (a few staged at a time are a small grid's, whose tables are in cache).
            let staged = self.core.queue.take_staged();
            if staged >= BATCH / 2 {
                self.prefetch_staged(staged);
            }
            let (code, id) = ev.digest_words(&self.core.jobs);
            self.core.digest.write_u64(now.as_millis());
            self.core.digest.write_u64(code << 32 | id);
            self.core.events += 1;
            self.core.now = now;
            self.handle(now, ev);
            self.deliver_news();
        }
    }

    fn handle(&mut self, now: SimTime, ev: Event) {
        let core = &mut self.core;
        match ev {
            Event::JobArrival(j) => {
                let job = &mut core.jobs[job_index(j)];
                job.status = JobStatus::Waiting;
                let (w, stream) = (job.wms, job.stream as usize);
                core.recorder.job_waiting(core.entities.of_stream[stream]);
                core.submitted_per_wms[w as usize] += 1;
                core.caller = w;
                self.wms[w as usize].job_submitted(core, j);
            }
            Event::Wms { wms, kind, id } => {
                core.caller = wms;
                self.wms[wms as usize].timer(core, Timer { kind, id });
            }
            Event::Sample => {
                let counts = core.grid.counts();
                core.recorder.sample(now, counts);
                if core.gpu_inventory {
                    let (held, used) = core.grid.gpus.usage();
                    core.recorder.gpu_samples.push(GpuSample { time: now, held, used });
                }
                core.queue.push(now + core.sample_interval, Event::Sample);
            }
            Event::PilotReachesBatch(p) => {
                core.grid.reaches_batch(now, p, &mut core.transitions);
                core.apply_transitions();
            }
            Event::PilotAborted(p) => {
                core.grid.abort(now, p, &mut core.transitions);
                core.apply_transitions();
            }
            Event::PilotAsks(p) => {
                self.core.asks[p as usize].pending = false;
                self.pilot_asks(p);
            }
            Event::JobEnd(j) => self.job_end(j),
            Event::AccountingSnapshot => {
                core.accounting.snapshot(now);
                let period = core.accounting_period.expect("scheduled only with a period");
                core.queue.push(now + period, Event::AccountingSnapshot);
            }
            Event::Link { link, epoch } => {
                let next = core.network.advance(now, link, epoch, &mut core.completions);
                core.schedule_link(next);
                for c in core.completions.drain(..) {
                    let owner = core.transfer_owner[c.transfer as usize];
                    core.news.push_back((owner, News::TransferDone(c.transfer)));
                }
            }
            Event::Provisioner { owner, kind, id } => self.provisioner_timer(owner, Timer { kind, id }),
        }
    }

    /// Deliver the news the last event caused, in order, until there is none.
    fn deliver_news(&mut self) {
        while let Some((w, news)) = self.core.news.pop_front() {
            self.core.caller = w;
            let wms = &mut self.wms[w as usize];
            match news {
                News::Pilot(p, n) => wms.pilot_news(&mut self.core, p, n),
                News::OwnedPilot(o, p, n) => self.owned_pilot_news(o, p, n),
                News::JobEnded(p, j) => wms.job_ended(&mut self.core, p, j),
                News::TransferDone(t) => wms.transfer_done(&mut self.core, t),
            }
        }
    }

    /// A running pilot with free cores asks its WMS for work until it is full, told to wait
    /// (one pending ask at a time), or told to exit. At its walltime limit the batch system
    /// ends it without asking; an exiting pilot ends when its last job ends.
    fn pilot_asks(&mut self, p: PilotId) {
        let now = self.core.now;
        loop {
            let pilot = self.core.grid.pilot(p);
            let ask = self.core.asks[p as usize];
            if pilot.status != PilotStatus::Running || pilot.free_cores == 0 || ask.pending {
                return;
            }
            if ask.exiting || now >= self.core.grid.walltime_limit(p) {
                if pilot.running.is_empty() {
                    self.core.grid.end(now, p, PilotStatus::Done, &mut self.core.transitions);
                    self.core.apply_transitions();
                }
                return;
            }
            let w = pilot.wms;
            self.core.caller = w;
            let answer = self.wms[w as usize].pilot_asks(&mut self.core, p);
            if self.core.grid.pilot(p).status != PilotStatus::Running {
                return; // the WMS cancelled it while answering
            }
            match answer {
                Answer::Run(j) => {
                    if !self.core.start_job(p, j) {
                        self.core.asks[p as usize].exiting = true; // a violation is recorded
                    }
                }
                Answer::Wait(d) if d == SimDuration::ZERO => {
                    self.core.violations.push(format!("pilot {p} was told to wait 0 ms (it would ask for ever)"));
                    self.core.asks[p as usize].exiting = true;
                }
                Answer::Wait(d) => {
                    // Never past the walltime limit, where the batch system ends the pilot.
                    let wake = (now + d).min(self.core.grid.walltime_limit(p));
                    self.core.queue.push(wake, Event::PilotAsks(p));
                    self.core.asks[p as usize].pending = true;
                    return;
                }
                Answer::Exit => self.core.asks[p as usize].exiting = true,
            }
        }
    }

    fn job_end(&mut self, j: JobId) {
        let core = &mut self.core;
        let now = core.now;
        if core.planned_end.as_ref().is_some_and(|e| e.get(job_index(j)) != Some(&now)) {
            return; // a run requeued or slowed down since this end was planned
        }
        let job = &core.jobs[job_index(j)];
        let Some(p) = job.pilot() else { return };
        if !core.grid.end_job(p, j, job.cores, core.stream_gpus[job.stream as usize]) {
            return; // killed with its pilot meanwhile
        }
        let stream = job.stream as usize;
        let power = core.grid.ces[job.ce().expect("ran somewhere") as usize].cpu_power;
        // The draw is made for every job, so a job its WMS marked failing draws like any other.
        let drawn = dist::bernoulli(&mut core.job_failure[stream], core.streams[stream].failure_probability);
        let job = &mut core.jobs[job_index(j)];
        let fails = drawn || job.fails;
        // Cut short at the walltime limit: its run (its lead, then its CPU work) is not done.
        let run = core.asks[p as usize].lead + SimDuration::from_secs_f64(job.cpu_work / power);
        let killed = now - job.matched().expect("started") < run;
        job.status = if fails || killed { JobStatus::Failed } else { JobStatus::Done };
        job.set_ended(Some(now));
        let w = job.wms;
        core.job_stopped(now, j);
        core.caller = w;
        self.wms[w as usize].job_ended(core, p, j);
        if let Some(owner) = core.asks[p as usize].owner.checked_sub(1) {
            self.owned_job_ended(owner, p, j);
        } else {
            // The pilot asks for more work at once (DIRAC's filling mode).
            self.pilot_asks(p);
        }
    }
}

impl Core {
    /// The next event at or before `until`: the next arrival if it is no later than the
    /// queue's first event (arrivals were the first events pushed, so they win ties), else the
    /// queue's.
    fn next_event(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        // The queue's first time, read once per event (`pop_until` would read it again).
        let queued = self.queue.peek_time().filter(|&q| q <= until);
        match self.arrivals.peek(&self.jobs) {
            Some((t, id)) if t <= until && queued.is_none_or(|q| t <= q) => {
                self.arrivals.advance();
                Some((t, Event::JobArrival(id)))
            }
            _ => queued.and_then(|_| self.queue.pop()),
        }
    }

    /// Schedule a link's new next event, if it has one.
    pub(super) fn schedule_link(&mut self, ev: Option<LinkEvent>) {
        if let Some(e) = ev {
            self.queue.push(e.at.max(self.now), Event::Link { link: e.link, epoch: e.epoch });
        }
    }

    /// The cores and GPUs job `j` holds while it runs.
    fn job_size(&self, j: JobId) -> (u32, u32) {
        let job = &self.jobs[job_index(j)];
        (job.cores, self.stream_gpus[job.stream as usize])
    }

    /// Start job `j` in pilot `p` now; false (and a violation) if the WMS's answer was wrong.
    fn start_job(&mut self, p: PilotId, j: JobId) -> bool {
        self.start_run(p, j, RunEnd::Fixed(SimDuration::ZERO))
    }

    /// Schedule job `j`'s end at `at` (the only live end of its run).
    pub(super) fn push_job_end(&mut self, j: JobId, at: SimTime) {
        if let Some(ends) = &mut self.planned_end {
            let i = job_index(j);
            if ends.len() <= i {
                ends.resize(i + 1, SimTime::ZERO);
            }
            ends[i] = at;
        }
        self.queue.push(at, Event::JobEnd(j));
    }

    /// Void job `j`'s planned end (its run is suspended, or was requeued).
    pub(super) fn void_job_end(&mut self, j: JobId) {
        if let Some(e) = self.planned_end.as_mut().and_then(|e| e.get_mut(job_index(j))) {
            *e = SimTime(u64::MAX);
        }
    }

    /// Running job `j` of pilot `p` goes back to Waiting (its progress lost): the accounting
    /// and the recorder see it stop and queue again. Its WMS is told by the caller.
    pub(super) fn requeue_job(&mut self, p: PilotId, j: JobId) {
        let now = self.now;
        let (cores, gpus) = self.job_size(j);
        if !self.grid.end_job(p, j, cores, gpus) {
            return;
        }
        self.job_stopped(now, j);
        self.void_job_end(j);
        let job = &mut self.jobs[job_index(j)];
        job.status = JobStatus::Waiting;
        job.set_matched(None);
        job.set_ce(None);
        job.set_pilot(None);
        let e = self.entities.of_stream[job.stream as usize];
        self.recorder.job_waiting(e);
    }

    /// Running job `j` of pilot `p` is killed now (its startd pilot removed): Failed, and its
    /// WMS hears it ended.
    pub(super) fn kill_job(&mut self, p: PilotId, j: JobId) {
        let (cores, gpus) = self.job_size(j);
        if !self.grid.end_job(p, j, cores, gpus) {
            return;
        }
        self.void_job_end(j);
        self.transitions.push(Transition::JobKilled(p, j));
        self.apply_transitions();
    }

    /// Start job `j` in pilot `p` now, its end scheduled as `end` says; false (and a violation)
    /// if the WMS's answer was wrong.
    pub(super) fn start_run(&mut self, p: PilotId, j: JobId, end: RunEnd) -> bool {
        let now = self.now;
        let Some(job) = (j as usize).checked_sub(1).and_then(|i| self.jobs.get(i)) else {
            self.violations.push(format!("pilot {p} was given job {j}, which does not exist"));
            return false;
        };
        if job.wms != self.caller {
            self.violations.push(format!("pilot {p} was given job {j}, which belongs to another WMS"));
            return false;
        }
        if job.status != JobStatus::Waiting {
            self.violations.push(format!("pilot {p} was given job {j}, which is {}", job.status.as_str()));
            return false;
        }
        let gpus = self.stream_gpus[job.stream as usize];
        if !self.grid.start_job(p, j, job.cores, gpus) {
            self.violations.push(format!("pilot {p} was given job {j} without room for it"));
            return false;
        }
        let c = self.grid.pilot(p).ce;
        let power = self.grid.ces[c as usize].cpu_power;
        let job = &mut self.jobs[job_index(j)];
        job.status = JobStatus::Running;
        job.set_matched(Some(now));
        job.set_ce(Some(c));
        job.set_pilot(Some(p));
        // A job longer than the pilot's remaining walltime (possible when its CPUTime is
        // above what the pilot has left) is killed by the batch system at the limit.
        let duration = SimDuration::from_secs_f64(job.cpu_work / power);
        let entities = self.entities.of_stream[job.stream as usize];
        self.accounting.job_started(now, entities);
        self.recorder.job_started(now, entities, job.cores, power);
        if let RunEnd::Fixed(extra) = end {
            self.asks[p as usize].lead = extra;
            let limit = self.grid.walltime_limit(p);
            self.push_job_end(j, (now + extra + duration).min(limit));
        }
        true
    }

    /// A running job stopped (its status is final): the accounting and the recorder learn it.
    fn job_stopped(&mut self, now: SimTime, j: JobId) {
        let job = &self.jobs[job_index(j)];
        let power = self.grid.ces[job.ce().expect("ran somewhere") as usize].cpu_power;
        let entities = self.entities.of_stream[job.stream as usize];
        self.accounting.job_ended(now, entities);
        self.recorder.job_ended(now, entities, job.cores, power);
    }

    /// Apply what the grid reported: a started pilot asks for work, news go to the owners, a
    /// job killed with its pilot fails.
    pub(super) fn apply_transitions(&mut self) {
        let now = self.now;
        for i in 0..self.transitions.len() {
            let t = self.transitions[i];
            match t {
                Transition::Started(p) if let Some(owner) = self.asks[p as usize].owner.checked_sub(1) => {
                    self.news.push_back((self.grid.pilot(p).wms, News::OwnedPilot(owner, p, PilotNews::Started)));
                }
                Transition::Started(p) => {
                    if self.grid.pilot(p).status == PilotStatus::Running {
                        self.queue.push(now, Event::PilotAsks(p));
                    }
                    self.news.push_back((self.grid.pilot(p).wms, News::Pilot(p, PilotNews::Started)));
                }
                Transition::Ended(p, status) => {
                    let news = PilotNews::Ended(status);
                    let n = if let Some(owner) = self.asks[p as usize].owner.checked_sub(1) {
                        News::OwnedPilot(owner, p, news)
                    } else {
                        News::Pilot(p, news)
                    };
                    self.news.push_back((self.grid.pilot(p).wms, n));
                }
                Transition::JobKilled(p, j) => {
                    let job = &mut self.jobs[job_index(j)];
                    job.status = JobStatus::Failed;
                    job.set_ended(Some(now));
                    self.job_stopped(now, j);
                    self.news.push_back((self.grid.pilot(p).wms, News::JobEnded(p, j)));
                }
            }
        }
        self.transitions.clear();
    }
}
