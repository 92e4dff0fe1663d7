//! Pilots: what the director submits and what a JobAgent runs in.

use crate::dirac::matcher::PilotIdentity;
use crate::dirac::taskqueue::{JobId, TqId};
use crate::engine::SimTime;

/// Pilot id, in submission order.
pub type PilotId = u32;

/// Pilot states (DIRAC's PilotStatus; reference §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PilotStatus {
    /// Handed to the middleware.
    Submitted,
    /// In the CE's batch queue.
    Waiting,
    /// Holding a slot.
    Running,
    /// Ended normally.
    Done,
    /// Aborted by the middleware before it ran.
    Aborted,
    /// Failed on the worker node as it started.
    Failed,
    /// Given up after `PilotStalledDays` still waiting.
    Cancelled,
}

impl PilotStatus {
    /// The DIRAC name.
    pub fn as_str(self) -> &'static str {
        match self {
            PilotStatus::Submitted => "Submitted",
            PilotStatus::Waiting => "Waiting",
            PilotStatus::Running => "Running",
            PilotStatus::Done => "Done",
            PilotStatus::Aborted => "Aborted",
            PilotStatus::Failed => "Failed",
            PilotStatus::Cancelled => "Cancelled",
        }
    }

    /// Submitted or Waiting: the states the director counts as waiting pilots.
    pub fn is_waiting(self) -> bool {
        matches!(self, PilotStatus::Submitted | PilotStatus::Waiting)
    }
}

/// One pilot.
#[derive(Debug, Clone)]
pub struct Pilot {
    pub id: PilotId,
    /// CE index.
    pub ce: u32,
    /// The task queue it was submitted for.
    pub tq: TqId,
    /// Generic, or private to an owner and group.
    pub identity: PilotIdentity,
    pub status: PilotStatus,
    pub submitted: SimTime,
    pub started: Option<SimTime>,
    pub ended: Option<SimTime>,
    /// Jobs it ran.
    pub jobs_run: u32,
    /// JobAgent cycles (match requests) made.
    pub cycles: u32,
    /// At most this many cycles (`-M`, generic pilots), if limited.
    pub max_cycles: Option<u32>,
    /// Consecutive failed matches.
    pub failed_matches: u32,
    /// The middleware will leave it Waiting for ever.
    pub stuck: bool,
    /// The job it is running.
    pub job: Option<JobId>,
}
