//! Pilots: batch jobs on a CE that hold one or more slots and run jobs. Neutral: which WMS
//! submitted a pilot is its `wms`; what that WMS attaches to it (DIRAC's task queue, its
//! generic or private identity) lives in the WMS's own tables.

use crate::engine::{OptTime, SimTime};
use crate::ids::{CeId, JobId, PilotId, WmsId};

/// Pilot states (DIRAC's PilotStatus names, reference `dirac.md` §4.3; every WMS's pilots
/// go through the same batch life cycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PilotStatus {
    /// Handed to the middleware.
    Submitted,
    /// In the CE's batch queue.
    Waiting,
    /// Holding its slots.
    Running,
    /// Ended normally (it exited, or the batch system ended it at its walltime).
    Done,
    /// Aborted by the middleware before it ran.
    Aborted,
    /// Failed on the worker node as it started.
    Failed,
    /// Cancelled by its WMS (for DIRAC: `PilotStalledDays` still waiting).
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

    /// Submitted or Waiting: not started, not ended.
    pub fn is_waiting(self) -> bool {
        matches!(self, PilotStatus::Submitted | PilotStatus::Waiting)
    }
}

/// What a WMS asks a CE to run: the size of the batch job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PilotShape {
    /// Slots (cores) the pilot holds while it runs; its jobs share them.
    pub cores: u32,
    /// GPUs it holds beside them (0: a CPU pilot), all from one node (`super::gpu`).
    pub gpus: u32,
    /// The CE's GPU inventory entries it accepts (bit k: entry k); 0 accepts any.
    pub gpu_kinds: u32,
}

impl PilotShape {
    /// A pilot of `cores` cores and no GPU.
    pub fn cpu(cores: u32) -> Self {
        Self { cores, gpus: 0, gpu_kinds: 0 }
    }
}

impl Default for PilotShape {
    fn default() -> Self {
        Self::cpu(1)
    }
}

/// One pilot: 64 bytes on one cache line (measured: a job's end and every pilot event read it
/// from a table of millions; at 96 bytes it spanned two lines). Its start and end are stored
/// as [`OptTime`]s, read through [`Pilot::started`] and [`Pilot::ended`].
#[derive(Debug, Clone)]
#[repr(align(64))]
pub struct Pilot {
    pub id: PilotId,
    pub ce: CeId,
    /// Slots it holds while running.
    pub cores: u32,
    /// Jobs it started.
    pub jobs_run: u32,
    /// Cores not used by its running jobs.
    pub free_cores: u32,
    /// The WMS instance that submitted it and answers its requests for work.
    pub wms: WmsId,
    pub status: PilotStatus,
    /// The middleware will leave it Waiting for ever.
    pub stuck: bool,
    pub submitted: SimTime,
    started: OptTime,
    ended: OptTime,
    /// The jobs it is running now, in start order.
    pub running: RunningJobs,
}

const _: () = assert!(size_of::<Pilot>() == 64, "a pilot record is one cache line");

impl Pilot {
    /// A pilot just submitted at `submitted` (status Submitted): no job, every core free.
    pub fn new(id: PilotId, ce: CeId, wms: WmsId, cores: u32, submitted: SimTime, stuck: bool) -> Self {
        Pilot {
            id,
            ce,
            cores,
            jobs_run: 0,
            free_cores: cores,
            wms,
            status: PilotStatus::Submitted,
            stuck,
            submitted,
            started: OptTime::NONE,
            ended: OptTime::NONE,
            running: RunningJobs::default(),
        }
    }

    /// When it started running (reached a batch slot).
    pub fn started(&self) -> Option<SimTime> {
        self.started.get()
    }

    /// It reached a batch slot at `t`.
    pub fn set_started(&mut self, t: SimTime) {
        self.started = OptTime::new(Some(t));
    }

    /// When it ended.
    pub fn ended(&self) -> Option<SimTime> {
        self.ended.get()
    }

    /// It ended at `t` (a pilot never un-ends).
    pub fn set_ended(&mut self, t: SimTime) {
        self.ended = OptTime::new(Some(t));
    }

    /// True if it runs job `j` now.
    pub fn runs(&self, j: JobId) -> bool {
        self.running.contains(j)
    }
}

/// The jobs a pilot runs, in start order: the first one inline, so that a single-core pilot
/// (every DIRAC pilot) never allocates nor follows a pointer at a job's start and end; the
/// others, of a multi-core pilot, in a boxed vector (16 bytes in all, so that a [`Pilot`] is
/// one cache line); `rest` is `None` whenever it would be empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunningJobs {
    first: Option<JobId>,
    #[expect(clippy::box_collection, reason = "8 bytes in the pilot's line where a Vec takes 24")]
    rest: Option<Box<Vec<JobId>>>,
}

impl RunningJobs {
    /// Add a job that started.
    pub fn push(&mut self, j: JobId) {
        if self.first.is_none() {
            self.first = Some(j);
        } else {
            self.rest.get_or_insert_default().push(j);
        }
    }

    /// Remove a job that ended; false if it was not running here.
    pub fn remove(&mut self, j: JobId) -> bool {
        let rest = self.rest.as_deref_mut();
        let found = if self.first == Some(j) {
            self.first = rest.map(|r| r.remove(0));
            true
        } else if let Some(r) = rest
            && let Some(i) = r.iter().position(|&x| x == j)
        {
            r.remove(i);
            true
        } else {
            false
        };
        if self.rest.as_ref().is_some_and(|r| r.is_empty()) {
            self.rest = None;
        }
        found
    }

    /// True if job `j` runs here.
    pub fn contains(&self, j: JobId) -> bool {
        self.first == Some(j) || self.rest().contains(&j)
    }

    /// Number of jobs running.
    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest().len()
    }

    /// True when no job runs.
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// The jobs, in start order.
    pub fn iter(&self) -> impl Iterator<Item = JobId> + '_ {
        self.first.into_iter().chain(self.rest().iter().copied())
    }

    fn rest(&self) -> &[JobId] {
        self.rest.as_deref().map_or(&[], |r| r.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::RunningJobs;

    #[test]
    fn running_jobs_keep_start_order() {
        let mut r = RunningJobs::default();
        assert!(r.is_empty() && !r.remove(1));
        for j in [4, 7, 9] {
            r.push(j);
        }
        assert_eq!((r.len(), r.contains(7), r.contains(5)), (3, true, false));
        assert!(r.remove(4));
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![7, 9]);
        assert!(r.remove(9) && r.remove(7) && r.is_empty());
        assert_eq!(r, RunningJobs::default(), "no empty vector is left behind");
        r.push(1);
        r.push(2);
        assert!(r.remove(1) && r.iter().eq([2]) && r.rest.is_none());
    }
}
