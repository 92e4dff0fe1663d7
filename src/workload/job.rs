//! A job's life in the simulation: what a WMS's job database would record, in neutral terms.
//! Where a WMS keeps a job while it waits (a DIRAC task queue) is in that WMS's own tables.

use crate::engine::{OptTime, SimTime};
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

/// One job: 64 bytes on one cache line (issue 13: at 10⁷ jobs the table is 640 MB and a job's
/// end reads its record from main memory; at 80 bytes every record spanned two lines). The
/// times, the CE and the pilot that are not known yet are stored as a sentinel
/// ([`OptTime`], `u32::MAX`) instead of an `Option`, which would double their size; the
/// accessors give them as `Option`s.
#[derive(Debug, Clone)]
#[repr(align(64))]
pub struct Job {
    pub id: JobId,
    /// Index of its stream.
    pub stream: u32,
    pub submitted: SimTime,
    /// Actual CPU work, normalised seconds.
    pub cpu_work: f64,
    /// When a pilot matched it (it starts at once).
    matched: OptTime,
    ended: OptTime,
    /// CE index and pilot that ran it (`u32::MAX`: none yet).
    ce: u32,
    pilot: u32,
    /// Cores it needs (1 for every job stream today).
    pub cores: u32,
    /// The WMS instance it was submitted to.
    pub wms: WmsId,
    pub status: JobStatus,
    /// Its WMS knows it fails when its run ends, whatever its stream's failure probability (a
    /// replayed PanDA record whose job failed, `Ctx::set_failing`).
    pub fails: bool,
}

const _: () = assert!(size_of::<Job>() == 64, "a job record is one cache line");

/// `u32::MAX` stands for none.
fn opt_u32(v: Option<u32>) -> u32 {
    v.map_or(u32::MAX, |x| {
        debug_assert!(x != u32::MAX, "u32::MAX is not an id");
        x
    })
}

impl Job {
    /// A job submitted at `submitted` that has not run: status Pending, no match, end, CE
    /// nor pilot, not marked failing.
    pub fn new(id: JobId, stream: u32, submitted: SimTime, cpu_work: f64, cores: u32, wms: WmsId) -> Self {
        Job {
            id,
            stream,
            submitted,
            cpu_work,
            matched: OptTime::NONE,
            ended: OptTime::NONE,
            ce: u32::MAX,
            pilot: u32::MAX,
            cores,
            wms,
            status: JobStatus::Pending,
            fails: false,
        }
    }

    /// When a pilot matched it (it starts at once).
    pub fn matched(&self) -> Option<SimTime> {
        self.matched.get()
    }

    pub fn set_matched(&mut self, t: Option<SimTime>) {
        self.matched = OptTime::new(t);
    }

    /// When it ended (done, failed or cancelled).
    pub fn ended(&self) -> Option<SimTime> {
        self.ended.get()
    }

    pub fn set_ended(&mut self, t: Option<SimTime>) {
        self.ended = OptTime::new(t);
    }

    /// The CE that ran it (or runs it).
    pub fn ce(&self) -> Option<CeId> {
        (self.ce != u32::MAX).then_some(self.ce)
    }

    pub fn set_ce(&mut self, c: Option<CeId>) {
        self.ce = opt_u32(c);
    }

    /// The pilot that ran it (or runs it).
    pub fn pilot(&self) -> Option<PilotId> {
        (self.pilot != u32::MAX).then_some(self.pilot)
    }

    pub fn set_pilot(&mut self, p: Option<PilotId>) {
        self.pilot = opt_u32(p);
    }

    /// Waiting time from submission to match, in seconds.
    pub fn wait_s(&self) -> Option<f64> {
        self.matched().map(|m| (m - self.submitted).as_secs_f64())
    }
}
