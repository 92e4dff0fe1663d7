//! A job's life in the simulation: what a WMS's job database would record, in neutral terms.
//! Where a WMS keeps a job while it waits (a DIRAC task queue) is in that WMS's own tables.

use crate::engine::SimTime;
use crate::ids::{CeId, JobId, PilotId, WmsId};

/// Job states (DIRAC's JobStatus, reduced to what the model distinguishes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum JobStatus {
    /// Not submitted yet (its submission time is after the current time).
    Pending,
    /// Submitted to its WMS, waiting for a pilot (in DIRAC: in a task queue).
    Waiting,
    /// Matched by a pilot and running.
    Running,
    /// Finished successfully.
    Done,
    /// Finished with an application failure.
    Failed,
    /// Never ran: its WMS gave it up while it waited (PanDA's `closed`/`cancelled`).
    Cancelled,
}

impl JobStatus {
    /// The DIRAC name.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "Pending",
            JobStatus::Waiting => "Waiting",
            JobStatus::Running => "Running",
            JobStatus::Done => "Done",
            JobStatus::Failed => "Failed",
            JobStatus::Cancelled => "Cancelled",
        }
    }
}

/// One job.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: JobId,
    /// Index of its stream.
    pub stream: u32,
    pub submitted: SimTime,
    /// Actual CPU work, normalised seconds.
    pub cpu_work: f64,
    /// Cores it needs (1 for every job stream today).
    pub cores: u32,
    /// The WMS instance it was submitted to.
    pub wms: WmsId,
    pub status: JobStatus,
    /// When a pilot matched it (it starts at once).
    pub matched: Option<SimTime>,
    pub ended: Option<SimTime>,
    /// CE index and pilot that ran it.
    pub ce: Option<CeId>,
    pub pilot: Option<PilotId>,
    /// Its WMS knows it fails when its run ends, whatever its stream's failure probability (a
    /// replayed PanDA record whose job failed, `Ctx::set_failing`).
    pub fails: bool,
}

impl Job {
    /// Waiting time from submission to match, in seconds.
    pub fn wait_s(&self) -> Option<f64> {
        self.matched.map(|m| (m - self.submitted).as_secs_f64())
    }
}
