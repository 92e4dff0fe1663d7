//! Every factory of a world as one [`Provisioner`]: the Generators' cycles, the generic pilots'
//! job fetch, their pilots' news and the jobs they run.

use std::collections::BTreeMap;

use crate::engine::{RngStreams, SimTime};
use crate::factory::generic::Generator;
use crate::factory::standby::StandbyController;
use crate::grid::{Grid, PilotStatus};
use crate::ids::{JobId, PilotId, WmsId, job_index};
use crate::metrics::{ExtraColumn, Table};
use crate::scenario::Scenario;
use crate::scenario::factory::FactoryConfig;
use crate::wms::provision::{Provisioner, Provisioning, RunCtx, RunEnd};
use crate::wms::{FetchRequest, PilotNews, Timer};
use crate::workload::{Job, JobKind, JobStatus, StreamInfo};

use super::factory::{CycleRow, Factory, FactoryStats, Mode};
use super::generator::{Demand, Owned};
use super::startd_vms;

/// Timer kinds; the id is the factory's index for [`CYCLE`], the pilot's id otherwise.
pub(super) const CYCLE: u16 = 1;
pub(super) const GENERIC_ASK: u16 = 2;
pub(super) const STARTD_RUN: u16 = 3;
pub(super) const STARTD_REMOVE: u16 = 4;
/// `STARTD_FETCH + vm`: the pilot script run for VM `vm` asks for its job.
pub(super) const STARTD_FETCH: u16 = 64;

/// Every factory of the world, their startd pilots and the clocks of the jobs on their VMs.
#[derive(Default)]
pub struct Factories {
    pub list: Vec<Factory>,
    /// The factory owning each pilot, by pilot id (kept after the pilot ends, for the outputs).
    pub(super) owner: Vec<Option<u32>>,
    pub(super) startds: BTreeMap<PilotId, startd_vms::Startd>,
    pub(super) clocks: BTreeMap<JobId, startd_vms::Clock>,
    /// Every startd Generator cycle, in time order (`factory_cycles.parquet`).
    pub(super) cycles: Vec<CycleRow>,
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
    pub(super) fn of_pilot(&self, p: PilotId) -> Option<usize> {
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
    pub(super) fn fetch(
        &self,
        ctx: &mut dyn RunCtx,
        i: usize,
        p: PilotId,
        cores: u32,
        only: Option<JobKind>,
    ) -> Option<JobId> {
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
    pub(super) fn count_busy(&mut self, ctx: &dyn RunCtx, i: usize, j: JobId) {
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
