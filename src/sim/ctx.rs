//! What a WMS sees of the world and how it acts on it: the world's [`Ctx`], on its [`Core`]
//! (the WMS boundary, `wms`). Actions take effect at once; the news they cause waits in the
//! core's queue until the callback returns.

use super::world::{AskState, Core, Event, WORLD_CODES};
use crate::engine::SimTime;
use crate::grid::network::{Network, TransferError, TransferId};
use crate::grid::storage::{StorageError, StorageId, Storages};
use crate::grid::{Grid, GridEvent, PilotShape, Refusal};
use crate::ids::{CeId, JobId, PilotId, SiteId};
use crate::wms::{Ctx, Timer};
use crate::workload::{Accounting, Job, JobStatus};

impl Ctx for Core {
    fn now(&self) -> SimTime {
        self.now
    }

    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    fn accounting(&self) -> &Accounting {
        &self.accounting
    }

    fn submit_pilot(&mut self, ce: CeId, shape: PilotShape) -> Result<PilotId, Refusal> {
        let (p, at, ev) = self.grid.submit(self.now, ce, self.caller, shape)?;
        self.asks.push(AskState::default());
        self.queue.push(
            at,
            match ev {
                GridEvent::PilotReachesBatch(p) => Event::PilotReachesBatch(p),
                GridEvent::PilotAborted(p) => Event::PilotAborted(p),
            },
        );
        Ok(p)
    }

    fn cancel_pilot(&mut self, p: PilotId) -> bool {
        if self.grid.pilots.get(p as usize).is_none_or(|x| x.wms != self.caller) {
            return false;
        }
        let cancelled = self.grid.cancel(self.now, p, &mut self.transitions);
        self.apply_transitions();
        cancelled
    }

    fn set_timer(&mut self, at: SimTime, timer: Timer) {
        debug_assert!(
            !WORLD_CODES.contains(&timer.kind),
            "timer kind {} is one of the world's digest codes",
            timer.kind
        );
        self.queue.push(at.max(self.now), Event::Wms { wms: self.caller, kind: timer.kind, id: timer.id });
    }

    fn create_job(&mut self, stream: u32, cpu_work: f64, cores: u32) -> JobId {
        let id = self.jobs.len() as JobId + 1;
        let wms = self.streams.get(stream as usize).map_or(self.caller, |s| s.wms);
        if wms != self.caller {
            self.violations
                .push(format!("WMS {} created job {id} in stream {stream}, which is WMS {wms}'s", self.caller));
        }
        let mut job = Job::new(id, stream, self.now, cpu_work, cores.max(1), self.caller);
        job.status = JobStatus::Waiting;
        self.jobs.push(job);
        self.recorder.job_waiting(self.entities.of_stream[stream as usize]);
        if let Some(n) = self.submitted_per_wms.get_mut(self.caller as usize) {
            *n += 1;
        }
        id
    }

    fn set_failing(&mut self, j: JobId) -> bool {
        let caller = self.caller;
        match (j as usize).checked_sub(1).and_then(|i| self.jobs.get_mut(i)) {
            Some(job) if job.wms == caller && job.status == JobStatus::Waiting => {
                job.fails = true;
                true
            }
            _ => false,
        }
    }

    fn cancel_job(&mut self, j: JobId) -> bool {
        let caller = self.caller;
        let Some(job) = (j as usize).checked_sub(1).and_then(|i| self.jobs.get_mut(i)) else { return false };
        if job.wms != caller || job.status != JobStatus::Waiting {
            return false;
        }
        job.status = JobStatus::Cancelled;
        job.set_ended(Some(self.now));
        let e = self.entities.of_stream[job.stream as usize];
        self.recorder.job_left_waiting(e);
        true
    }

    fn network(&self) -> &Network {
        &self.network
    }

    fn start_transfer(&mut self, from: SiteId, to: SiteId, bytes: u64) -> Result<TransferId, TransferError> {
        let link = self.network.link(from, to).ok_or(TransferError::NoRoute { from, to })?;
        let (t, ev) = self.network.submit(self.now, link, bytes)?;
        debug_assert_eq!(t as usize, self.transfer_owner.len());
        self.transfer_owner.push(self.caller);
        self.schedule_link(ev);
        Ok(t)
    }

    fn cancel_transfer(&mut self, t: TransferId) -> bool {
        if self.transfer_owner.get(t as usize) != Some(&self.caller) {
            return false;
        }
        match self.network.cancel(self.now, t) {
            Ok(ev) => {
                self.schedule_link(ev);
                true
            }
            Err(_) => false,
        }
    }

    fn storages(&self) -> &Storages {
        &self.storages
    }

    fn reserve_storage(&mut self, id: StorageId, bytes: u64) -> Result<(), StorageError> {
        self.storages.reserve(id, bytes)
    }

    fn release_storage(&mut self, id: StorageId, bytes: u64) -> Result<(), StorageError> {
        self.storages.release(id, bytes)
    }
}
