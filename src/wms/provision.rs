//! The provisioning boundary (DESIGN.md, "Layers": pilot provisioning is one boundary).
//!
//! Every pilot provisioner decides, at each of its cycles, what to submit where from what its WMS
//! and the grid show: [`Provisioning`]. DIRAC's TaskqueueDirector (`wms::dirac::director`) reads
//! the task queues; PanDA's Harvester (`wms::panda::harvester`) the activated jobs and its
//! workers per PanDA queue; a pilot factory (`wms::factories`) the jobs its WMS has queued for
//! it and its own pilots. Each submits through a [`Submit`], which records what the pilot is for
//! the moment the CE takes it (its ticket: DIRAC's task queue and pilot identity; Harvester's
//! PanDA queue, and in push mode the job the WMS gives the worker; a factory's pilot becomes
//! the factory's).
//!
//! Who owns the pilots differs. The director's are DIRAC's and Harvester's are PanDA's: the
//! world asks their WMS for their work, and the WMS runs the provisioner as one of its agents
//! (a WMS timer). A pilot factory's pilots are
//! the factory's: the factories are a [`Provisioner`], an actor of the world beside the WMSs,
//! which the world sends their pilots' news to, not to their WMS, and never asks their WMS for
//! work on their behalf. It fetches their jobs from the WMS itself
//! ([`RunCtx::fetch_job`], which is DIRAC's Matcher or PanDA's `getJob` behind
//! [`Wms::fetch_job`](super::Wms::fetch_job)) and decides how each job's run ends: after its
//! CPU work (plus a lead such as a pilot script's job fetch), or when the provisioner says
//! (a startd VM whose rate changes with suspension, seed 003 §2). The pilot factories of seed
//! 003 (`wms::factories`) are provisioners; the world runs them without naming them.
//!
//! Like a WMS, a provisioner acts through its context at once and hears the news its actions
//! cause after its callback returns. Its timers are its own (`kind`, `id`), folded into the run
//! digest above every WMS timer code.

use super::{FetchRequest, PilotNews, Timer};
use crate::engine::{SimDuration, SimTime};
use crate::grid::{Grid, PilotShape, Refusal};
use crate::ids::{CeId, JobId, PilotId, WmsId};
use crate::metrics::{ExtraColumn, Table};
use crate::workload::{Job, StreamInfo};

/// Where a provisioner's submissions go, and what it sees of the grid meanwhile. A submission
/// that is not made says why: the CE's refusal, or (`Refused`) what else the WMS's side of the
/// submission may refuse (a Harvester push worker without a job).
pub trait Submit<Ticket, Refused = Refusal> {
    /// The current simulated time.
    fn now(&self) -> SimTime;
    /// The grid: CEs, their state (each submission changes its CE's), every pilot.
    fn grid(&self) -> &Grid;
    /// Submit a pilot of `shape` to CE `ce`, for what `ticket` says; its id, or why not.
    fn submit(&mut self, ce: CeId, shape: PilotShape, ticket: Ticket) -> Result<PilotId, Refused>;
}

/// A pilot provisioner's cycle: what to submit where, from what its WMS and the grid show.
pub trait Provisioning {
    /// What it reads of its WMS at a cycle.
    type Demand<'a>;
    /// What its WMS (or the world) records about each pilot it submits.
    type Ticket;
    /// Why a submission was not made ([`Refusal`]: the CE's refusal).
    type Refused;
    /// What a cycle reports for the outputs (a startd Generator's standby record), if anything.
    type Report;
    /// One cycle: decide and submit. Submissions change the CEs' state at once, and a refusal
    /// is known at once, so a provisioner may choose each next CE from the last outcome.
    fn cycle(&mut self, demand: Self::Demand<'_>, submit: &mut dyn Submit<Self::Ticket, Self::Refused>)
    -> Self::Report;
}

/// How a started job's run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// After its CPU work at the CE's power, plus this long first (a generic factory pilot's
    /// job fetch), capped at the pilot's walltime.
    Fixed(SimDuration),
    /// When the provisioner sets its end ([`RunCtx::set_job_end`]): a startd pilot's VM, whose
    /// rate changes.
    Managed,
}

/// What a provisioner sees of the world and how it acts on it.
pub trait RunCtx {
    /// The current simulated time.
    fn now(&self) -> SimTime;
    /// The grid: CEs, their state, every pilot.
    fn grid(&self) -> &Grid;
    /// Every job (index with `ids::job_index`).
    fn jobs(&self) -> &[Job];
    /// Every job stream (`Job::stream` indexes it).
    fn streams(&self) -> &[StreamInfo];
    /// Jobs submitted to WMS `wms` so far: what a factory's Generator sees arrive.
    fn jobs_submitted(&self, wms: WmsId) -> u64;
    /// Jobs waiting in WMS `wms` for a pilot of PanDA queue `queue` (DIRAC: `None`), as
    /// [`Wms::queued_jobs`](super::Wms::queued_jobs) reports them.
    fn queued_jobs(&self, wms: WmsId, queue: Option<&str>) -> u64;
    /// Submit a pilot of this shape to CE `ce` for WMS `wms`'s jobs, owned by this provisioner;
    /// its id, or the CE's refusal.
    fn submit_pilot(&mut self, wms: WmsId, ce: CeId, shape: PilotShape) -> Result<PilotId, Refusal>;
    /// Call [`Provisioner::timer`] with `timer` at time `at` (not before now).
    fn set_timer(&mut self, at: SimTime, timer: Timer);
    /// Ask WMS `wms` for a job for one of this provisioner's running pilots: a Waiting job of
    /// that WMS, or `None`.
    fn fetch_job(&mut self, wms: WmsId, req: &FetchRequest) -> Option<JobId>;
    /// Start job `j` (just fetched) in pilot `p` now, its end as `end` says; false (and a
    /// violation) if it cannot run there.
    fn start_run(&mut self, p: PilotId, j: JobId, end: RunEnd) -> bool;
    /// Job `j`'s run ends at `at` (a [`RunEnd::Managed`] run; replaces any end set before).
    fn set_job_end(&mut self, j: JobId, at: SimTime);
    /// Job `j`'s run has no end for now (suspended).
    fn void_job_end(&mut self, j: JobId);
    /// Running job `j` of pilot `p` goes back to Waiting in its WMS, its progress lost.
    fn requeue_job(&mut self, p: PilotId, j: JobId);
    /// Running job `j` of pilot `p` is killed now: Failed, and its WMS hears it ended.
    fn kill_job(&mut self, p: PilotId, j: JobId);
    /// Pilot `p` exits now (Done): its slot goes to the next pilot in the batch queue.
    fn end_pilot(&mut self, p: PilotId);
    /// Report an internal error (an answer that cannot be applied) as a run violation.
    fn violation(&mut self, message: String);
}

/// Who provisions pilots beside the WMSs' own agents, and runs their jobs.
pub trait Provisioner {
    /// At time 0, before any WMS starts: set the first timers.
    fn start(&mut self, ctx: &mut dyn RunCtx);
    /// One of its timers fired.
    fn timer(&mut self, ctx: &mut dyn RunCtx, timer: Timer);
    /// News about one of its pilots.
    fn pilot_news(&mut self, ctx: &mut dyn RunCtx, p: PilotId, news: PilotNews);
    /// Job `j` ended (Done or Failed) in its pilot `p`; its WMS has heard it already.
    fn job_ended(&mut self, ctx: &mut dyn RunCtx, p: PilotId, j: JobId);
    /// Extra columns of `pilots.parquet`.
    fn pilot_columns(&self, grid: &Grid) -> Vec<ExtraColumn>;
    /// Tables of its own for the outputs.
    fn tables(&self) -> Vec<Table>;
    /// Its entries of `summary.json`'s `factory` list (the key the pilot factories' summaries
    /// have always had), in scenario order.
    fn summaries(&self, grid: &Grid, jobs: &[Job], streams: &[StreamInfo], end: SimTime) -> Vec<serde_json::Value>;
}
