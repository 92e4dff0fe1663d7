//! Pilot factories (seed 003 §1-§3), a [`Provisioner`]: each `factory[]` entry of a scenario
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
//! Everything here is driven by the provisioner's timers and its pilots' news; the pure
//! decisions are `crate::factory`'s, the startd VMs' clocks are in `startd_vms`. Randomness: one stream per factory, keyed by its
//! identity (`factory:<site>:<PanDA queue or DIRAC>:<CEs>/lifetime`, see
//! [`FactoryConfig::identity`]), so that reordering or adding factories never changes the
//! draws of another (DESIGN.md, "Determinism").

use std::collections::BTreeMap;

use super::provision::{Provisioner, Provisioning, RunCtx, RunEnd};
use super::{FetchRequest, PilotNews, Timer};
use crate::engine::distribution::Distribution;
use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::factory::generic::Generator;
use crate::factory::standby::{Estimates, StandbyController, StandbyObservation};
use crate::factory::startd::StartdSettings;
use crate::grid::{Grid, PilotStatus};
use crate::ids::{CeId, JobId, PilotId, WmsId, job_index};
use crate::metrics::{ExtraColumn, Table};
use crate::scenario::Scenario;
use crate::scenario::factory::FactoryConfig;
use crate::workload::{Job, JobKind, JobStatus, StreamInfo};

mod generator;
mod startd_vms;
pub mod summary;

pub use generator::Demand;
use generator::Owned;

/// Timer kinds; the id is the factory's index for [`CYCLE`], the pilot's id otherwise.
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

/// Every factory of the world, their startd pilots and the clocks of the jobs on their VMs.
#[derive(Default)]
pub struct Factories {
    pub list: Vec<Factory>,
    /// The factory owning each pilot, by pilot id (kept after the pilot ends, for the outputs).
    pub(super) owner: Vec<Option<u32>>,
    startds: BTreeMap<PilotId, startd_vms::Startd>,
    clocks: BTreeMap<JobId, startd_vms::Clock>,
    /// Every startd Generator cycle, in time order (`factory_cycles.parquet`).
    pub(super) cycles: Vec<CycleRow>,
}

/// One startd Generator cycle: what its standby policy saw and decided.
#[derive(Debug, Clone, Copy)]
pub struct CycleRow {
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

    /// The factory (index) owning pilot `p`, if any.
    fn of_pilot(&self, p: PilotId) -> Option<usize> {
        self.owner.get(p as usize).copied().flatten().map(|i| i as usize)
    }

    /// Factory `i`'s Generator cycle ([`Provisioning::cycle`]), then the next one.
    fn cycle(&mut self, ctx: &mut dyn RunCtx, i: usize) {
        let now = ctx.now();
        let f = &self.list[i];
        // Only a startd factory's standby policy reads the queued jobs and the idle VMs.
        let startd = f.is_startd().then(|| (ctx.queued_jobs(f.wms, f.cfg.target().2), self.idle_vms(i)));
        let demand = Demand { submitted: ctx.jobs_submitted(f.wms), startd };
        let cycle = f.cfg.cycle();
        let mut submit = Owned { ctx: &mut *ctx, owner: &mut self.owner, factory: i as u32, wms: f.wms };
        if let Some(row) = self.list[i].cycle(demand, &mut submit) {
            self.cycles.push(CycleRow { factory: i as u32, ..row });
        }
        ctx.set_timer(now + cycle, Timer { kind: CYCLE, id: i as u32 });
    }

    /// The fetch request of factory `i`'s pilot `p` for `cores`, of kind `only`.
    fn fetch(&self, ctx: &mut dyn RunCtx, i: usize, p: PilotId, cores: u32, only: Option<JobKind>) -> Option<JobId> {
        let f = &self.list[i];
        let req = FetchRequest { pilot: p, cores, queue: f.cfg.target().2, only };
        let j = ctx.fetch_job(f.wms, &req)?;
        let job = &ctx.jobs()[job_index(j)];
        if job.wms != f.wms || job.status != JobStatus::Waiting {
            ctx.violation(format!("factory pilot {p} was given job {j}, which it cannot run"));
            return None;
        }
        Some(j)
    }

    /// A generic pilot ran its script: it asks for one job and runs it, or exits.
    fn generic_asks(&mut self, ctx: &mut dyn RunCtx, p: PilotId) {
        let Some(i) = self.of_pilot(p) else { return };
        if ctx.grid().pilot(p).status != PilotStatus::Running {
            return;
        }
        let cores = ctx.grid().pilot(p).free_cores;
        match self.fetch(ctx, i, p, cores, None) {
            Some(j) => {
                let tpw = self.list[i].steps.1;
                if ctx.start_run(p, j, RunEnd::Fixed(tpw)) {
                    self.list[i].stats.jobs_started += 1;
                }
            }
            None => {
                self.list[i].stats.pilots_without_job += 1;
                ctx.end_pilot(p);
            }
        }
    }

    /// Job `j` leaves a slot of factory `i`'s pilot now: count the time it held it.
    fn count_busy(&mut self, ctx: &dyn RunCtx, i: usize, j: JobId) {
        if let Some(m) = ctx.jobs()[job_index(j)].matched() {
            self.list[i].stats.busy_s += (ctx.now() - m).as_secs_f64();
        }
    }
}

impl Provisioner for Factories {
    /// At time 0: every Generator's first cycle.
    fn start(&mut self, ctx: &mut dyn RunCtx) {
        for i in 0..self.list.len() {
            ctx.set_timer(SimTime::ZERO, Timer { kind: CYCLE, id: i as u32 });
        }
    }

    fn timer(&mut self, ctx: &mut dyn RunCtx, timer: Timer) {
        let (kind, id) = (timer.kind, timer.id);
        match kind {
            CYCLE => self.cycle(ctx, id as usize),
            GENERIC_ASK => self.generic_asks(ctx, id),
            STARTD_RUN => self.startd_run(ctx, id),
            STARTD_REMOVE => self.startd_remove(ctx, id),
            k if k >= STARTD_FETCH => self.startd_fetch(ctx, id, usize::from(k - STARTD_FETCH)),
            k => ctx.violation(format!("unknown factory timer kind {k}")),
        }
    }

    /// A generic pilot that started runs its script; a startd pilot takes its slot. An ended
    /// pilot leaves the counts.
    fn pilot_news(&mut self, ctx: &mut dyn RunCtx, p: PilotId, news: PilotNews) {
        let Some(i) = self.of_pilot(p) else { return };
        let now = ctx.now();
        let f = &mut self.list[i];
        match news {
            PilotNews::Started => {
                f.queued -= 1;
                f.running += 1;
                f.stats.pilots_started += 1;
                if let Mode::Generic(_) = f.mode {
                    let at = (now + f.steps.0).min(ctx.grid().walltime_limit(p));
                    ctx.set_timer(at, Timer { kind: GENERIC_ASK, id: p });
                } else {
                    self.startd_started(ctx, i, p);
                }
            }
            PilotNews::Ended(_) => {
                self.startds.remove(&p); // ended otherwise than by its removal
                if ctx.grid().pilot(p).started().is_some() {
                    f.running -= 1;
                } else {
                    f.queued -= 1;
                }
            }
        }
    }

    /// A job ended (Done or Failed) in factory pilot `p`: a generic pilot exits; a startd
    /// pilot's VM is free, and background jobs resume if it was the last foreground job.
    fn job_ended(&mut self, ctx: &mut dyn RunCtx, p: PilotId, j: JobId) {
        let Some(i) = self.of_pilot(p) else { return };
        let done = ctx.jobs()[job_index(j)].status == JobStatus::Done;
        self.count_busy(ctx, i, j);
        let stats = &mut self.list[i].stats;
        if done {
            stats.jobs_done += 1;
        } else {
            stats.jobs_failed += 1;
        }
        match self.clocks.remove(&j) {
            Some(clock) => self.startd_job_ended(ctx, i, p, clock),
            None => ctx.end_pilot(p), // a generic pilot runs one job
        }
    }

    fn pilot_columns(&self, grid: &Grid) -> Vec<ExtraColumn> {
        vec![self.pilot_column(grid)]
    }

    fn tables(&self) -> Vec<Table> {
        self.cycles_table().into_iter().collect()
    }

    fn summaries(&self, grid: &Grid, jobs: &[Job], streams: &[StreamInfo], end: SimTime) -> Vec<serde_json::Value> {
        let all = self.summary(grid, jobs, streams, end);
        all.into_iter().map(|f| serde_json::to_value(f).unwrap_or_default()).collect()
    }
}
#[cfg(test)]
mod tests;
