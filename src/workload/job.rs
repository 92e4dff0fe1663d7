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

/// One job: 64 bytes on one cache line (measured: at 10⁷ jobs the table is 640 MB and a job's
/// end reads its record from main memory; at 80 bytes every record spanned two lines). The
/// times, the CE and the pilot that are not known yet are stored as a sentinel
/// ([`OptTime`], `OptId`) instead of an `Option`, which would double their size; the
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
    /// CE index and pilot that ran it.
    ce: OptId,
    pilot: OptId,
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

/// An id or none, in 4 bytes where `Option<u32>` takes 8: `u32::MAX`, never an id, stands
/// for none (as [`OptTime`] does for times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OptId(u32);

impl OptId {
    const NONE: OptId = OptId(u32::MAX);

    fn new(v: Option<u32>) -> Self {
        v.map_or(Self::NONE, |x| {
            debug_assert!(x != u32::MAX, "u32::MAX is not an id");
            OptId(x)
        })
    }

    fn get(self) -> Option<u32> {
        (self != Self::NONE).then_some(self.0)
    }
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
            ce: OptId::NONE,
            pilot: OptId::NONE,
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
        self.ce.get()
    }

    pub fn set_ce(&mut self, c: Option<CeId>) {
        self.ce = OptId::new(c);
    }

    /// The pilot that ran it (or runs it).
    pub fn pilot(&self) -> Option<PilotId> {
        self.pilot.get()
    }

    pub fn set_pilot(&mut self, p: Option<PilotId>) {
        self.pilot = OptId::new(p);
    }

    /// Waiting time from submission to match, in seconds.
    pub fn wait_s(&self) -> Option<f64> {
        self.matched().map(|m| (m - self.submitted).as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_ce_and_pilot_keep_every_id_and_none() {
        let mut j = Job::new(1, 0, SimTime::ZERO, 10.0, 1, 0);
        assert_eq!((j.ce(), j.pilot(), j.matched(), j.ended()), (None, None, None, None));
        for id in [0, 1, u32::MAX - 1] {
            j.set_ce(Some(id));
            j.set_pilot(Some(id));
            assert_eq!((j.ce(), j.pilot()), (Some(id), Some(id)));
        }
        j.set_ce(None);
        j.set_pilot(None);
        assert_eq!((j.ce(), j.pilot()), (None, None));
    }
}
