//! The WMS boundary (DESIGN.md "Layers"): how a workload management system
//! plugs into the world, in the style of DSLab's scheduler callbacks.
//!
//! A WMS receives news through the [`Wms`] callbacks — a job was submitted to it, one of its
//! pilots started or ended, a pilot asks for work, a job ended, one of its timers fired — and
//! acts through a [`Ctx`]: read-only views of the grid, the jobs and the accounting, and the
//! actions "submit a pilot of a shape to a CE", "cancel a pilot", "set a timer". The answer to
//! a pilot asking for work is an [`Answer`]: run this job, wait, or exit. The world applies
//! every action; no WMS touches the event queue, and several WMS instances can share one grid,
//! each owning its pilots and jobs.
//!
//! Actions take effect at once and return their outcome (the new pilot's id, or the CE's
//! refusal) rather than being collected and applied after the callback: a director choosing CEs
//! for forty pilots must see each submission in the CE's counts before choosing the next, and
//! learns a refusal at once, as DIRAC's director learns it from the CE's answer. News that an
//! action causes (a cancelled pilot ended) is delivered after the callback returns, never
//! re-entrantly.
//!
//! Implementations: [`dirac`] (the DIRAC WMS calling the pure `crate::dirac` modules),
//! [`panda`] (PanDA's server agents and Harvester over the pure `crate::panda` modules) and
//! [`push`] (a minimal push WMS that proves the boundary). Beside the WMSs, a
//! [`provision::Provisioner`] owns pilots and runs their jobs, fetched from a WMS through
//! [`Wms::fetch_job`]: the pilot factories of seed 003 ([`factories`]).

pub mod dirac;
pub mod factories;
pub mod panda;
pub mod provision;
pub mod push;

use crate::engine::{SimDuration, SimTime};
use crate::grid::network::{Network, TransferError, TransferId};
use crate::grid::storage::{StorageError, StorageId, Storages};
use crate::grid::{Grid, PilotShape, PilotStatus, Refusal};
use crate::ids::SiteId;
use crate::ids::{CeId, JobId, PilotId};
use crate::metrics::ExtraColumn;
use crate::workload::{Accounting, Job, ShareEntities, StreamInfo};

/// A timer a WMS set for itself: its own `kind` (an agent) and `id` (what it concerns).
///
/// The kind is also the event's code in the run digest, so it must not collide with the
/// world's own codes (1, 4, 5, 6, 8, 9, 10; `sim::world::WORLD_CODES`, checked in debug builds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timer {
    pub kind: u16,
    pub id: u32,
}

/// What a pilot asking for work is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Run this job (it must be Waiting and belong to this WMS).
    Run(JobId),
    /// Ask again after this long (capped at the pilot's walltime by the batch system).
    Wait(SimDuration),
    /// Exit: the pilot ends Done and frees its slots.
    Exit,
}

/// News about a pilot, delivered to the WMS that owns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PilotNews {
    /// It took its slots on the worker node.
    Started,
    /// It ended (Done, Aborted by the middleware, Failed at start, Cancelled).
    Ended(PilotStatus),
}

/// A pilot factory's pilot asks the WMS for one job (seed 003: the generic pilot script
/// "retrieves analysis or production jobs from Panda server"; run by a startd pilot for one of
/// its VMs). The factory, not the WMS, owns the pilot: the WMS answers as its dispatcher does
/// (DIRAC's Matcher for a generic pilot at the pilot's CE, PanDA's `getJob` for the factory's
/// queue) and the world starts the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchRequest<'a> {
    /// The running grid pilot that asks (its CE is where the job would run).
    pub pilot: PilotId,
    /// Cores free for the job (one VM's, for a startd pilot).
    pub cores: u32,
    /// The PanDA queue the factory serves (`factory[].queue`); `None` for DIRAC.
    pub queue: Option<&'a str>,
    /// Only a job of this kind (a startd pilot keeping a VM for analysis); `None`: any.
    pub only: Option<crate::workload::JobKind>,
}

/// What a WMS sees of the world and how it acts on it.
pub trait Ctx {
    /// The current simulated time.
    fn now(&self) -> SimTime;
    /// The grid: CEs, their state, every pilot.
    fn grid(&self) -> &Grid;
    /// Every job (index with `ids::job_index`).
    fn jobs(&self) -> &[Job];
    /// Usage per share entity, fed by the simulation.
    fn accounting(&self) -> &Accounting;
    /// Submit a pilot of this shape to CE `ce`; its id, or the CE's refusal.
    fn submit_pilot(&mut self, ce: CeId, shape: PilotShape) -> Result<PilotId, Refusal>;
    /// Cancel one of its pilots (waiting, or running with its jobs); false if it had ended.
    fn cancel_pilot(&mut self, p: PilotId) -> bool;
    /// Call [`Wms::timer`] with `timer` at time `at` (not before now).
    fn set_timer(&mut self, at: SimTime, timer: Timer);
    /// Create a job of stream `stream` (one this WMS declared in its [`Setup`]), submitted now
    /// and Waiting: a WMS that makes its jobs itself (PanDA splitting a task) calls this. `cpu_work`
    /// is normalised seconds per core: the job runs `cpu_work / cpu_power` on a CE, holding `cores`.
    fn create_job(&mut self, stream: u32, cpu_work: f64, cores: u32) -> JobId;
    /// Job `j` of this WMS, still Waiting, fails when its run ends, whatever its stream's failure
    /// probability (PanDA replaying a record whose job failed). False if it was not Waiting or not
    /// this WMS's.
    fn set_failing(&mut self, j: JobId) -> bool;
    /// End a Waiting job of this WMS that will never run (PanDA's `closed`/`cancelled`): it
    /// becomes Cancelled. False if it was not Waiting or not this WMS's.
    fn cancel_job(&mut self, j: JobId) -> bool;
    /// The grid's links and their transfers.
    fn network(&self) -> &Network;
    /// Send `bytes` from site `from` to site `to` over their link (the LAN when `from == to`);
    /// [`Wms::transfer_done`] is called when it arrives. An error if the scenario has no such link.
    fn start_transfer(&mut self, from: SiteId, to: SiteId, bytes: u64) -> Result<TransferId, TransferError>;
    /// Cancel one of its transfers that is not done (its job was killed); false if it was done.
    fn cancel_transfer(&mut self, t: TransferId) -> bool;
    /// The grid's storage endpoints.
    fn storages(&self) -> &Storages;
    /// Take `bytes` of space on an endpoint (a write that does not fit is refused).
    fn reserve_storage(&mut self, id: StorageId, bytes: u64) -> Result<(), StorageError>;
    /// Free `bytes` of space on an endpoint.
    fn release_storage(&mut self, id: StorageId, bytes: u64) -> Result<(), StorageError>;
}

/// A workload management system driving pilots and jobs on the shared grid. `Any` lets a
/// caller that knows the concrete type read its tables (`&dyn Wms` upcasts to `&dyn Any`).
pub trait Wms: std::any::Any {
    /// A short name for outputs (`dirac`, `panda`).
    fn name(&self) -> &str;
    /// At time 0, before any event: set the first timers.
    fn start(&mut self, ctx: &mut dyn Ctx);
    /// Job `j` was submitted to this WMS (it is Waiting).
    fn job_submitted(&mut self, ctx: &mut dyn Ctx, j: JobId);
    /// One of its timers fired.
    fn timer(&mut self, ctx: &mut dyn Ctx, timer: Timer);
    /// News about one of its pilots.
    fn pilot_news(&mut self, ctx: &mut dyn Ctx, p: PilotId, news: PilotNews);
    /// Pilot `p` (running, with free cores) asks for work.
    fn pilot_asks(&mut self, ctx: &mut dyn Ctx, p: PilotId) -> Answer;
    /// A hint: pilot `p` will ask for work or end a job soon; start loading what this WMS
    /// keeps about it ([`crate::engine::prefetch`]). It must not change anything.
    fn prefetch_pilot(&self, _p: PilotId) {}
    /// Job `j` ended in pilot `p` (Done, Failed, or killed with its pilot). The pilot asks for
    /// work next if it is still running.
    fn job_ended(&mut self, _ctx: &mut dyn Ctx, _p: PilotId, _j: JobId) {}
    /// A pilot factory's pilot asks for a job ([`FetchRequest`]): the job to run there now
    /// (Waiting and this WMS's; the world starts it), or `None`. A WMS that serves no factory
    /// keeps the default.
    fn fetch_job(&mut self, _ctx: &mut dyn Ctx, _req: &FetchRequest) -> Option<JobId> {
        None
    }
    /// Jobs waiting for a pilot of PanDA queue `queue` (DIRAC: `None`, every waiting job): what a
    /// pilot factory's Generator sees of the demand (seed 003 §3).
    fn queued_jobs(&self, _queue: Option<&str>) -> u64 {
        0
    }
    /// Job `j`, which had started, is Waiting again (a startd pilot removed or a background job
    /// preempted, seed 003 §2): put it back in the queue it is matched from.
    fn job_requeued(&mut self, ctx: &mut dyn Ctx, j: JobId) {
        self.job_submitted(ctx, j);
    }
    /// One of its transfers arrived.
    fn transfer_done(&mut self, _ctx: &mut dyn Ctx, _t: TransferId) {}
    /// Extra columns of `jobs.parquet` (one value per job, `None` for others' jobs).
    fn job_columns(&self, _jobs: &[Job]) -> Vec<ExtraColumn> {
        Vec::new()
    }
    /// Extra columns of `pilots.parquet` (one value per pilot, `None` for others' pilots).
    fn pilot_columns(&self, _grid: &Grid) -> Vec<ExtraColumn> {
        Vec::new()
    }
    /// Tables of its own for the outputs (PanDA: `brokerage`).
    fn tables(&self) -> Vec<crate::metrics::Table> {
        Vec::new()
    }
    /// Its own section of `summary.json`, if any.
    fn summary(&self, _jobs: &[Job]) -> Option<serde_json::Value> {
        None
    }
    /// Violations of the WMS's own invariants at the end of a run.
    fn check_invariants(&self, _jobs: &[Job]) -> Vec<String> {
        Vec::new()
    }
}

/// The WMS instances of a world and what they decide about it.
pub struct Setup {
    pub instances: Vec<Box<dyn Wms>>,
    /// The share entities and the entities of each job stream.
    pub entities: ShareEntities,
    /// Every job stream: the scenario's `workload` streams first (their jobs arrive by the
    /// world's `JobArrival` events), then the streams the WMSs declare for the jobs they create
    /// themselves ([`Ctx::create_job`]). Each names the instance its jobs belong to.
    pub streams: Vec<StreamInfo>,
    /// Take accounting snapshots this often (DIRAC's `UpdateHistoryPeriod`), if any WMS reads
    /// usage history.
    pub accounting_period: Option<SimDuration>,
    /// Who provisions pilots beside the WMSs' own agents ([`provision::Provisioner`]): the
    /// scenario's pilot factories.
    pub provisioners: Vec<Box<dyn provision::Provisioner>>,
}

/// The WMS instances a scenario's sections describe: `dirac` (instance 0 when present, owning
/// the `workload` streams), then `panda` (owning the streams of its tasks).
pub fn setup(scenario: &crate::scenario::Scenario, rngs: &crate::engine::RngStreams) -> Setup {
    let mut instances: Vec<Box<dyn Wms>> = Vec::new();
    let mut entities = ShareEntities::default();
    let mut accounting_period = None;
    let mut streams: Vec<StreamInfo> = Vec::new();
    if let Some(cfg) = &scenario.dirac {
        let (dirac, e) = dirac::DiracWms::new(scenario, cfg, rngs);
        accounting_period = dirac.accounting_period();
        entities = e;
        streams.extend(scenario.workload.iter().map(|w| StreamInfo::of_job_stream(w, 0)));
        instances.push(Box::new(dirac));
    }
    if let Some(cfg) = &scenario.panda {
        let wms = instances.len() as crate::ids::WmsId;
        let first_stream = streams.len() as u32;
        let (p, e, s) = panda::PandaWms::new(scenario, cfg, wms, first_stream, rngs);
        entities.append(e);
        streams.extend(s);
        instances.push(Box::new(p));
    }
    let names: Vec<&str> = instances.iter().map(|w| w.name()).collect();
    let factories = factories::Factories::new(scenario, &names, rngs);
    let mut provisioners: Vec<Box<dyn provision::Provisioner>> = Vec::new();
    if !factories.is_empty() {
        provisioners.push(Box::new(factories));
    }
    Setup { instances, entities, streams, accounting_period, provisioners }
}
