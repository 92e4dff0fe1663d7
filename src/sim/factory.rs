//! Pilot factories in the world (seed 003 §1-§3): each `factory[]` entry of a scenario
//! submits pilots to its site's CEs in place of the WMS's own submission there (DIRAC's
//! director and PanDA's Harvester skip those CEs), and its pilots fetch jobs from the WMS through
//! [`Wms::fetch_job`](crate::wms::Wms::fetch_job) — DIRAC's Matcher, PanDA's `getJob`.
//!
//! * **Generic pilots** (GPF): the Generator submits at rate Gp ([`Generator`]) each cycle. A
//!   pilot that reaches a worker node runs the pilot script (tp), asks for one job, and runs it
//!   (its fetch tpw, then the payload): `Tsw + tp + tpw + Tj` from submission to the job's end.
//!   A pilot that gets no job exits at once; one whose job ended exits.
//! * **Startd pilots** (SPF): the Generator keeps the standby count of [`StandbyController`]
//!   queued. A startd pilot holds `vms` job slots of its CE for its lifetime (drawn from the
//!   factory's distribution, capped at the CE's walltime), runs the pilot script every
//!   `pilot_interval_s` ([`StartdPilot`]), and each run that finds a free VM asks, tp' later, for
//!   a job of the kind the policy says. Jobs on VMs run at the rates [`StartdPilot::rates`] gives
//!   (a background job suspended while a foreground job runs): each job's remaining work is kept
//!   here and its end rescheduled at every change. At removal its jobs are requeued in their WMS
//!   or killed.
//!
//! Everything here is driven by `Event::Factory` timers and the grid's pilot transitions; the
//! pure decisions are `crate::factory`'s. Randomness: one stream per factory, keyed by its
//! identity (`factory:<site>:<PanDA queue or DIRAC>:<CEs>/lifetime`, see
//! [`FactoryConfig::identity`]), so that reordering or adding factories never changes the
//! draws of another (DESIGN.md, "Determinism").

use std::collections::BTreeMap;

use super::world::{Core, Event, RunEnd, World};
use crate::engine::distribution::Distribution;
use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::factory::generic::{Generator, Observed};
use crate::factory::standby::{Estimates, StandbyController, StandbyObservation};
use crate::factory::startd::{self, StartdAction, StartdPilot, StartdSettings};
use crate::grid::{PilotShape, PilotStatus};
use crate::ids::{CeId, JobId, PilotId, WmsId, job_index};
use crate::scenario::Scenario;
use crate::scenario::factory::FactoryConfig;
use crate::wms::{Ctx, FetchRequest, PilotNews};
use crate::workload::JobKind;

/// Event kinds (`Event::Factory::kind`); the id is the factory's index for [`CYCLE`], the
/// pilot's id otherwise.
const CYCLE: u16 = 1;
const GENERIC_ASK: u16 = 2;
const STARTD_RUN: u16 = 3;
const STARTD_REMOVE: u16 = 4;
/// `STARTD_FETCH + vm`: the pilot script run for VM `vm` asks for its job.
const STARTD_FETCH: u16 = 64;

/// What a factory did, for `summary.json` (`factory[i]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct FactoryStats {
    /// Pilots the Generator submitted to the CEs (the head node's load).
    pub pilots_submitted: u64,
    /// Submissions the CEs refused (their queues full).
    pub pilots_refused: u64,
    pub pilots_started: u64,
    /// Generic pilots that found no job and exited.
    pub pilots_without_job: u64,
    /// Jobs started in its pilots.
    pub jobs_started: u64,
    /// Jobs that finished (Done) in its pilots.
    pub jobs_done: u64,
    /// Jobs that failed in its pilots (their own failure, the walltime, or a removal that kills).
    pub jobs_failed: u64,
    /// Jobs given back to the WMS (removal with `Requeue`, or preemption).
    pub jobs_requeued: u64,
    /// Startd pilots: runs of the pilot script, runs that found no free VM, fetches without job.
    pub pilot_runs: u64,
    pub empty_pilot_runs: u64,
    pub empty_fetches: u64,
    /// Background jobs suspended / preempted by a foreground job.
    pub suspensions: u64,
    pub preemptions: u64,
    /// Suspended time of the jobs that left its VMs (finished, requeued or killed), seconds.
    pub suspended_s: f64,
    /// Startd pilots removed by the batch system.
    pub removals: u64,
    /// Time its pilots' slots ran a job (start → end, requeue or kill; suspended time
    /// included), seconds; `summary.json` adds the jobs still running at the end.
    pub busy_s: f64,
    /// Σ over Generator cycles of the standby startd pilots queued, and the cycles: their mean.
    pub standby_sum: u64,
    pub cycles: u64,
}

/// How one factory submits.
pub(super) enum Mode {
    Generic(Generator),
    Startd { settings: StartdSettings, standby: StandbyController, lifetime: Distribution },
}

impl Factory {
    /// True for a Startd-based Pilot Factory.
    pub fn is_startd(&self) -> bool {
        matches!(self.mode, Mode::Startd { .. })
    }
}

/// One factory's state.
pub struct Factory {
    pub cfg: FactoryConfig,
    /// The WMS its pilots fetch jobs from.
    wms: WmsId,
    pub(super) ces: Vec<CeId>,
    /// The CE the next submission tries first (round robin).
    next_ce: usize,
    pub(super) mode: Mode,
    /// tp, tpw.
    pub(super) steps: (SimDuration, SimDuration),
    last_cycle: SimTime,
    /// Jobs submitted to its WMS, and ended in its pilots, at the last cycle (for the rates).
    seen_submitted: u64,
    seen_ended: u64,
    seen_removals: u64,
    rng: SimRng,
    /// Its pilots not started / holding a slot.
    queued: u32,
    running: u32,
    pub stats: FactoryStats,
}

/// A startd pilot holding its slot.
struct Startd {
    factory: u16,
    pilot: StartdPilot,
}

/// A job on a startd pilot's VM: where it runs and its remaining work.
#[derive(Debug, Clone, Copy)]
struct Clock {
    vm: u16,
    /// Milliseconds of work left at rate 1, as of `since`.
    work_ms: f64,
    rate: f64,
    since: SimTime,
}

/// Every factory of the world, their startd pilots and the clocks of the jobs on their VMs.
#[derive(Default)]
pub struct Factories {
    pub list: Vec<Factory>,
    /// The factory owning each pilot, by pilot id (kept after the pilot ends, for the outputs).
    pub(super) owner: Vec<Option<u32>>,
    startds: BTreeMap<PilotId, Startd>,
    clocks: BTreeMap<JobId, Clock>,
    /// Every startd Generator cycle, in time order (`factory_cycles.parquet`).
    pub(super) cycles: Vec<CycleRow>,
}

/// One startd Generator cycle: what its standby policy saw and decided.
#[derive(Debug, Clone, Copy)]
pub(super) struct CycleRow {
    pub time: SimTime,
    pub factory: u32,
    pub obs: StandbyObservation,
    /// The policy's standby target, and the standby pilots queued after the cycle's submissions.
    pub target: u32,
    pub standby: u32,
    /// The adaptive controller's estimates after the cycle.
    pub estimates: Option<Estimates>,
}

impl Factories {
    /// The factories of a validated scenario; `wms_names` are the world's WMS instances
    /// (`dirac`, `panda`). A factory names a PanDA queue to serve PanDA, none to serve DIRAC.
    pub fn new(scenario: &Scenario, wms_names: &[&str], rngs: &RngStreams) -> Self {
        let mut list = Vec::new();
        for cfg in &scenario.factory {
            let want = if cfg.target().2.is_some() { "panda" } else { "dirac" };
            let Some(wms) = wms_names.iter().position(|n| *n == want) else { continue };
            let mode = match (cfg.generator_settings(), cfg) {
                (Some(g), _) => Generator::new(&g).ok().map(Mode::Generic),
                (None, FactoryConfig::Startd { standby, lifetime, .. }) => {
                    let settings = cfg.startd_settings().expect("a startd factory");
                    StandbyController::new(standby).ok().map(|standby| Mode::Startd {
                        settings,
                        standby,
                        lifetime: lifetime.clone(),
                    })
                }
                (None, FactoryConfig::Generic { .. }) => None,
            };
            let Some(mode) = mode else { continue }; // validation refuses these settings
            list.push(Factory {
                cfg: cfg.clone(),
                wms: wms as WmsId,
                ces: cfg.ce_ids(&scenario.sites),
                next_ce: 0,
                mode,
                steps: cfg.steps(),
                last_cycle: SimTime::ZERO,
                seen_submitted: 0,
                seen_ended: 0,
                seen_removals: 0,
                rng: rngs.stream(&format!("factory:{}/lifetime", cfg.identity(&scenario.sites))),
                queued: 0,
                running: 0,
                stats: FactoryStats::default(),
            });
        }
        Factories { list, ..Default::default() }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// What a job's run in a pilot of factory `owner` (an [`AskState::factory`], 0 for none)
    /// spends in its slot before the payload: a generic pilot's job fetch tpw, which
    /// [`RunEnd::Fixed`] schedules before the CPU work. A startd pilot's jobs (ended by their
    /// clocks) and WMS pilots have none.
    ///
    /// [`AskState::factory`]: super::world::AskState
    pub(super) fn fetch_lead(&self, owner: u16) -> SimDuration {
        let f = usize::from(owner).checked_sub(1).and_then(|i| self.list.get(i));
        match f {
            Some(f) if !f.is_startd() => f.steps.1,
            _ => SimDuration::ZERO,
        }
    }

    /// At time 0: every Generator's first cycle.
    pub(super) fn start(&self, core: &mut Core) {
        for i in 0..self.list.len() {
            core.queue.push(SimTime::ZERO, Event::Factory { kind: CYCLE, id: i as u32 });
        }
    }

    /// The factory (index) owning pilot `p`, if any.
    fn of_pilot(core: &Core, p: PilotId) -> Option<usize> {
        core.asks.get(p as usize).and_then(|a| usize::from(a.factory).checked_sub(1))
    }
}

impl World {
    /// A factory event fired.
    pub(super) fn factory_event(&mut self, kind: u16, id: u32) {
        match kind {
            CYCLE => self.factory_cycle(id as usize),
            GENERIC_ASK => self.generic_asks(id),
            STARTD_RUN => self.startd_run(id),
            STARTD_REMOVE => self.startd_remove(id),
            k if k >= STARTD_FETCH => self.startd_fetch(id, usize::from(k - STARTD_FETCH)),
            k => self.core.violations.push(format!("unknown factory event kind {k}")),
        }
    }

    /// The Generator's cycle: submit what its policy says, then the next cycle.
    fn factory_cycle(&mut self, i: usize) {
        let now = self.core.now();
        let f = &mut self.factories.list[i];
        let elapsed = now - f.last_cycle;
        f.last_cycle = now;
        let submitted = self.core.submitted_per_wms[f.wms as usize];
        let arrived = submitted - f.seen_submitted;
        f.seen_submitted = submitted;
        let observed = Observed { queued: f.queued, running: f.running };
        // A startd cycle's record waits for its submissions (`standby` is counted after them).
        let mut row = None;
        let n = if let Mode::Generic(g) = &mut f.mode {
            g.cycle(elapsed, observed).pilots
        } else {
            let queue = f.cfg.target().2.map(str::to_owned);
            let queued_jobs = self.wms[f.wms as usize].queued_jobs(queue.as_deref());
            let pool = f.nodes(&self.core.grid);
            let idle_vms = self
                .factories
                .startds
                .values()
                .filter(|s| usize::from(s.factory) == i)
                .map(|s| s.pilot.free_vms() as u32)
                .sum();
            let f = &mut self.factories.list[i];
            let Mode::Startd { settings, standby, .. } = &mut f.mode else { unreachable!("not generic") };
            standby.observe_arrivals(arrived, elapsed);
            standby.observe_removals(
                f.stats.removals - f.seen_removals,
                f.running + (f.stats.removals - f.seen_removals) as u32,
                elapsed,
            );
            f.seen_removals = f.stats.removals;
            let ended = f.stats.jobs_done + f.stats.jobs_failed;
            standby.observe_job_ends(ended - f.seen_ended, elapsed);
            f.seen_ended = ended;
            let obs = StandbyObservation {
                queued_jobs,
                running_startds: f.running,
                queued_startds: f.queued,
                idle_vms,
                vms_per_startd: settings.vms,
                pool_startds: pool,
            };
            let target = standby.target(&obs);
            let estimates = standby.estimates();
            row = Some(CycleRow { time: now, factory: i as u32, obs, target, standby: 0, estimates });
            target.saturating_sub(obs.queued_startds)
        };
        let f = &mut self.factories.list[i];
        f.stats.cycles += 1;
        f.stats.standby_sum += u64::from(f.queued);
        let cycle = f.cfg.cycle();
        self.submit_factory_pilots(i, n);
        if let Some(row) = row {
            let standby = self.factories.list[i].queued;
            self.factories.cycles.push(CycleRow { standby, ..row });
        }
        self.core.queue.push(now + cycle, Event::Factory { kind: CYCLE, id: i as u32 });
    }

    /// Submit `n` pilots of factory `i`, round robin over its CEs; a CE that refuses is skipped
    /// for the rest of the cycle.
    fn submit_factory_pilots(&mut self, i: usize, n: u32) {
        let f = &mut self.factories.list[i];
        let cores = match &f.mode {
            Mode::Generic(_) => 1,
            Mode::Startd { settings, .. } => settings.vms,
        };
        let mut open: Vec<CeId> = f.ces.clone();
        self.core.caller = f.wms;
        for _ in 0..n {
            if open.is_empty() {
                break;
            }
            let f = &mut self.factories.list[i];
            let k = f.next_ce % open.len();
            let ce = open[k];
            match crate::wms::Ctx::submit_pilot(&mut self.core, ce, PilotShape::cpu(cores)) {
                Ok(p) => {
                    self.core.asks[p as usize].factory = i as u16 + 1;
                    let owner = &mut self.factories.owner;
                    if owner.len() <= p as usize {
                        owner.resize(p as usize + 1, None);
                    }
                    owner[p as usize] = Some(i as u32);
                    let f = &mut self.factories.list[i];
                    f.next_ce = k + 1;
                    f.queued += 1;
                    f.stats.pilots_submitted += 1;
                }
                Err(_) => {
                    f.stats.pilots_refused += 1;
                    open.remove(k);
                }
            }
        }
    }

    /// News of a factory pilot: it started (a generic pilot runs its script; a startd pilot
    /// takes its slot) or ended.
    pub(super) fn factory_pilot_news(&mut self, p: PilotId, news: PilotNews) {
        let Some(i) = Factories::of_pilot(&self.core, p) else { return };
        let now = self.core.now();
        let f = &mut self.factories.list[i];
        match news {
            PilotNews::Started => {
                f.queued -= 1;
                f.running += 1;
                f.stats.pilots_started += 1;
                let submitted = self.core.grid.pilot(p).submitted;
                let pool = f.nodes(&self.core.grid);
                match &mut f.mode {
                    Mode::Generic(_) => {
                        let at = (now + f.steps.0).min(self.core.grid.walltime_limit(p));
                        self.core.queue.push(at, Event::Factory { kind: GENERIC_ASK, id: p });
                    }
                    Mode::Startd { settings, standby, lifetime } => {
                        // Tsw is the batch system's latency: a pilot that also waited for a
                        // vacancy in a full pool would teach the controller its own backlog.
                        if f.running < pool {
                            standby.observe_queue_wait(now - submitted);
                        }
                        let life = startd::draw_lifetime(lifetime, &mut f.rng);
                        let limit = self.core.grid.walltime_limit(p);
                        let life = life.min(limit - now);
                        let Ok(pilot) = StartdPilot::new(settings.clone(), now, life) else {
                            self.core.violations.push(format!("startd pilot {p}: bad settings"));
                            return;
                        };
                        let (run, removal) = (pilot.next_pilot_run(), pilot.removal_at());
                        self.factories.startds.insert(p, Startd { factory: i as u16, pilot });
                        self.core.queue.push(removal, Event::Factory { kind: STARTD_REMOVE, id: p });
                        if run < removal {
                            self.core.queue.push(run, Event::Factory { kind: STARTD_RUN, id: p });
                        }
                    }
                }
            }
            PilotNews::Ended(_) => {
                self.factories.startds.remove(&p); // ended otherwise than by its removal
                let f = &mut self.factories.list[i];
                if self.core.grid.pilot(p).started().is_some() {
                    f.running -= 1;
                } else {
                    f.queued -= 1;
                }
            }
        }
    }

    /// The fetch request of factory `i`'s pilot `p` for `cores`, of kind `only`.
    fn fetch(&mut self, i: usize, p: PilotId, cores: u32, only: Option<JobKind>) -> Option<JobId> {
        let f = &self.factories.list[i];
        let w = f.wms;
        let queue = f.cfg.target().2.map(str::to_owned);
        let req = FetchRequest { pilot: p, cores, queue: queue.as_deref(), only };
        self.core.caller = w;
        let j = self.wms[w as usize].fetch_job(&mut self.core, &req)?;
        let job = &self.core.jobs[job_index(j)];
        if job.wms != w || job.status != crate::workload::JobStatus::Waiting {
            self.core.violations.push(format!("factory pilot {p} was given job {j}, which it cannot run"));
            return None;
        }
        Some(j)
    }

    /// A generic pilot ran its script: it asks for one job and runs it, or exits.
    fn generic_asks(&mut self, p: PilotId) {
        let Some(i) = Factories::of_pilot(&self.core, p) else { return };
        if self.core.grid.pilot(p).status != PilotStatus::Running {
            return;
        }
        let cores = self.core.grid.pilot(p).free_cores;
        match self.fetch(i, p, cores, None) {
            Some(j) => {
                let tpw = self.factories.list[i].steps.1;
                if self.core.start_run(p, j, RunEnd::Fixed(tpw)) {
                    self.factories.list[i].stats.jobs_started += 1;
                }
            }
            None => {
                self.factories.list[i].stats.pilots_without_job += 1;
                self.end_factory_pilot(p);
            }
        }
    }

    /// A factory pilot exits (its slot goes to the next pilot in the batch queue).
    fn end_factory_pilot(&mut self, p: PilotId) {
        let now = self.core.now();
        self.core.grid.end(now, p, PilotStatus::Done, &mut self.core.transitions);
        self.core.apply_transitions();
    }

    /// A job ended (Done or Failed) in factory pilot `p`: a generic pilot exits; a startd
    /// pilot's VM is free, and background jobs resume if it was the last foreground job.
    pub(super) fn factory_job_ended(&mut self, p: PilotId, j: JobId) {
        let Some(i) = Factories::of_pilot(&self.core, p) else { return };
        let done = self.core.jobs[job_index(j)].status == crate::workload::JobStatus::Done;
        self.count_busy(i, j);
        let stats = &mut self.factories.list[i].stats;
        if done {
            stats.jobs_done += 1;
        } else {
            stats.jobs_failed += 1;
        }
        let Some(clock) = self.factories.clocks.remove(&j) else {
            self.end_factory_pilot(p); // a generic pilot runs one job
            return;
        };
        let now = self.core.now();
        let Some(s) = self.factories.startds.get_mut(&p) else { return };
        match s.pilot.job_ended(now, usize::from(clock.vm)) {
            Ok((finished, actions)) => {
                self.factories.list[i].stats.suspended_s += finished.suspended.as_secs_f64();
                self.apply_startd(i, p, &actions);
            }
            Err(e) => self.core.violations.push(format!("startd pilot {p}: {e}")),
        }
    }

    /// Job `j` leaves a slot of factory `i`'s pilot now: count the time it held it.
    fn count_busy(&mut self, i: usize, j: JobId) {
        if let Some(m) = self.core.jobs[job_index(j)].matched() {
            self.factories.list[i].stats.busy_s += (self.core.now() - m).as_secs_f64();
        }
    }

    /// The startd pilot's script runs: it takes a free VM and asks for a job tp' later, or
    /// exits at once; the next run is set.
    fn startd_run(&mut self, p: PilotId) {
        let now = self.core.now();
        let Some(s) = self.factories.startds.get_mut(&p) else { return };
        let i = usize::from(s.factory);
        let action = s.pilot.pilot_run(now);
        let (next, removal) = (s.pilot.next_pilot_run(), s.pilot.removal_at());
        if next < removal {
            self.core.queue.push(next, Event::Factory { kind: STARTD_RUN, id: p });
        }
        let f = &mut self.factories.list[i];
        f.stats.pilot_runs += 1;
        match action {
            Ok(StartdAction::RequestJob { vm, .. }) => {
                let at = now + f.steps.0;
                self.core.queue.push(at, Event::Factory { kind: STARTD_FETCH + vm as u16, id: p });
            }
            Ok(_) => f.stats.empty_pilot_runs += 1,
            Err(e) => self.core.violations.push(format!("startd pilot {p}: {e}")),
        }
    }

    /// The pilot script run for `vm` asks the WMS for a job of the kind the startd wants; the
    /// job starts on the VM (its fetch tpw' counted in its run).
    fn startd_fetch(&mut self, p: PilotId, vm: usize) {
        let now = self.core.now();
        let Some(s) = self.factories.startds.get(&p) else { return };
        if s.pilot.is_removed() || self.core.grid.pilot(p).status != PilotStatus::Running {
            return;
        }
        let i = usize::from(s.factory);
        let request = match s.pilot.vms().get(vm) {
            Some(startd::Vm::Fetching(r)) => *r,
            _ => return,
        };
        let only = match request {
            startd::JobRequest::Any => None,
            startd::JobRequest::Only(k) => Some(k),
        };
        let job = self.fetch(i, p, 1, only);
        let kind = job.map(|j| self.core.streams[self.core.jobs[job_index(j)].stream as usize].kind);
        let s = self.factories.startds.get_mut(&p).expect("checked above");
        let fetched = s.pilot.job_fetched(now, vm, job.zip(kind));
        let f = &mut self.factories.list[i];
        let Some(j) = job else {
            f.stats.empty_fetches += 1;
            return;
        };
        let actions = match fetched {
            Ok(a) => a,
            Err(e) => {
                self.core.violations.push(format!("startd pilot {p}: {e}"));
                return;
            }
        };
        if !self.core.start_run(p, j, RunEnd::Managed) {
            return;
        }
        f.stats.jobs_started += 1;
        let c = self.core.grid.pilot(p).ce;
        let power = self.core.grid.ces[c as usize].cpu_power;
        let work = f.steps.1 + SimDuration::from_secs_f64(self.core.jobs[job_index(j)].cpu_work / power);
        let clock = Clock { vm: vm as u16, work_ms: work.as_millis() as f64, rate: 0.0, since: now };
        self.factories.clocks.insert(j, clock);
        self.apply_startd(i, p, &actions);
    }

    /// Apply what the startd decided (suspensions change only rates; a preempted job is
    /// requeued), then reschedule the ends of every job on its VMs from their new rates.
    fn apply_startd(&mut self, i: usize, p: PilotId, actions: &[StartdAction]) {
        for a in actions {
            match *a {
                StartdAction::Suspend { .. } => self.factories.list[i].stats.suspensions += 1,
                StartdAction::Preempt { job, suspended, .. } | StartdAction::Requeue { job, suspended, .. } => {
                    self.count_busy(i, job);
                    let stats = &mut self.factories.list[i].stats;
                    stats.suspended_s += suspended.as_secs_f64();
                    stats.jobs_requeued += 1;
                    if matches!(a, StartdAction::Preempt { .. }) {
                        stats.preemptions += 1;
                    }
                    self.factories.clocks.remove(&job);
                    self.core.requeue_job(p, job);
                    let w = self.core.jobs[job_index(job)].wms;
                    self.core.caller = w;
                    self.wms[w as usize].job_requeued(&mut self.core, job);
                }
                StartdAction::Kill { job, suspended, .. } => {
                    self.count_busy(i, job);
                    self.factories.list[i].stats.suspended_s += suspended.as_secs_f64();
                    self.factories.clocks.remove(&job);
                    self.factories.list[i].stats.jobs_failed += 1;
                    self.core.kill_job(p, job);
                }
                StartdAction::Resume { .. }
                | StartdAction::CancelFetch { .. }
                | StartdAction::EmptyPilotRun
                | StartdAction::RequestJob { .. } => {}
            }
        }
        let Some(s) = self.factories.startds.get(&p) else { return };
        if s.pilot.is_removed() {
            return;
        }
        let now = self.core.now();
        for r in s.pilot.rates() {
            let Some(c) = self.factories.clocks.get_mut(&r.job) else { continue };
            if c.rate == r.rate {
                continue;
            }
            c.work_ms = (c.work_ms - c.rate * (now.as_millis() - c.since.as_millis()) as f64).max(0.0);
            c.since = now;
            c.rate = r.rate;
            if r.rate > 0.0 {
                let at = now + SimDuration::from_millis((c.work_ms / r.rate).ceil() as u64);
                self.core.push_job_end(r.job, at);
            } else {
                self.core.void_job_end(r.job);
            }
        }
    }

    /// The batch system removes the startd pilot: its jobs are requeued or killed, then it ends.
    fn startd_remove(&mut self, p: PilotId) {
        let now = self.core.now();
        let Some(s) = self.factories.startds.get_mut(&p) else { return };
        let i = usize::from(s.factory);
        let actions = match s.pilot.remove(now) {
            Ok(a) => a,
            Err(e) => {
                self.core.violations.push(format!("startd pilot {p}: {e}"));
                return;
            }
        };
        self.apply_startd(i, p, &actions);
        self.factories.startds.remove(&p);
        let f = &mut self.factories.list[i];
        f.stats.removals += 1;
        // Jobs that ended at this very instant were taken off already; what is left is none.
        if self.core.grid.pilot(p).running.is_empty() {
            self.end_factory_pilot(p);
        } else {
            self.core.violations.push(format!("startd pilot {p} removed with jobs the startd did not know"));
        }
    }
}

#[cfg(test)]
#[path = "factory_tests.rs"]
mod tests;
