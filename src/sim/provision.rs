//! How the world runs its provisioners (`wms::provision`): their timers and their pilots' news
//! reach them here, and [`Runs`] is the context through which they act — submitting pilots they
//! own, fetching jobs from a WMS, starting, ending, requeueing and killing their jobs' runs.
//! The world knows a provisioner only by its index; a pilot's owner is `AskState::owner`.

use super::world::{Core, Event, World};
use crate::engine::SimTime;
use crate::grid::{Grid, PilotShape, PilotStatus, Refusal};
use crate::ids::{CeId, JobId, PilotId, WmsId, job_index};
use crate::wms::provision::{RunCtx, RunEnd};
use crate::wms::{Ctx, FetchRequest, PilotNews, Timer, Wms};
use crate::workload::{Job, StreamInfo};

/// The context of provisioner `owner`'s callbacks: the world's state and its WMSs.
pub(super) struct Runs<'a> {
    pub core: &'a mut Core,
    pub wms: &'a mut [Box<dyn Wms>],
    pub owner: u8,
}

impl RunCtx for Runs<'_> {
    fn now(&self) -> SimTime {
        Ctx::now(self.core)
    }

    fn grid(&self) -> &Grid {
        &self.core.grid
    }

    fn jobs(&self) -> &[Job] {
        &self.core.jobs
    }

    fn streams(&self) -> &[StreamInfo] {
        &self.core.streams
    }

    fn jobs_submitted(&self, wms: WmsId) -> u64 {
        self.core.submitted_per_wms[wms as usize]
    }

    fn queued_jobs(&self, wms: WmsId, queue: Option<&str>) -> u64 {
        self.wms[wms as usize].queued_jobs(queue)
    }

    fn submit_pilot(&mut self, wms: WmsId, ce: CeId, shape: PilotShape) -> Result<PilotId, Refusal> {
        self.core.caller = wms;
        let p = Ctx::submit_pilot(self.core, ce, shape)?;
        self.core.asks[p as usize].owner = self.owner + 1;
        Ok(p)
    }

    fn set_timer(&mut self, at: SimTime, timer: Timer) {
        let now = Ctx::now(self.core);
        self.core.queue.push(at.max(now), Event::Provisioner { owner: self.owner, kind: timer.kind, id: timer.id });
    }

    fn fetch_job(&mut self, wms: WmsId, req: &FetchRequest) -> Option<JobId> {
        self.core.caller = wms;
        self.wms[wms as usize].fetch_job(self.core, req)
    }

    fn start_run(&mut self, p: PilotId, j: JobId, end: RunEnd) -> bool {
        self.core.caller = self.core.grid.pilot(p).wms;
        self.core.start_run(p, j, end)
    }

    fn set_job_end(&mut self, j: JobId, at: SimTime) {
        self.core.push_job_end(j, at);
    }

    fn void_job_end(&mut self, j: JobId) {
        self.core.void_job_end(j);
    }

    fn requeue_job(&mut self, p: PilotId, j: JobId) {
        self.core.requeue_job(p, j);
        let w = self.core.jobs[job_index(j)].wms;
        self.core.caller = w;
        self.wms[w as usize].job_requeued(self.core, j);
    }

    fn kill_job(&mut self, p: PilotId, j: JobId) {
        self.core.kill_job(p, j);
    }

    fn end_pilot(&mut self, p: PilotId) {
        let now = Ctx::now(self.core);
        self.core.grid.end(now, p, PilotStatus::Done, &mut self.core.transitions);
        self.core.apply_transitions();
    }

    fn violation(&mut self, message: String) {
        self.core.violations.push(message);
    }
}

impl World {
    /// The context of provisioner `owner`'s callbacks.
    fn runs(&mut self, owner: u8) -> (&mut dyn crate::wms::provision::Provisioner, Runs<'_>) {
        let p = self.provisioners[owner as usize].as_mut();
        (p, Runs { core: &mut self.core, wms: &mut self.wms, owner })
    }

    /// At time 0, before the WMSs: every provisioner's first timers.
    pub(super) fn start_provisioners(&mut self) {
        for o in 0..self.provisioners.len() {
            let (p, mut ctx) = self.runs(o as u8);
            p.start(&mut ctx);
        }
    }

    /// One of provisioner `owner`'s timers fired.
    pub(super) fn provisioner_timer(&mut self, owner: u8, timer: Timer) {
        let (p, mut ctx) = self.runs(owner);
        p.timer(&mut ctx, timer);
    }

    /// News of a pilot provisioner `owner` owns.
    pub(super) fn owned_pilot_news(&mut self, owner: u8, pilot: PilotId, news: PilotNews) {
        let (p, mut ctx) = self.runs(owner);
        p.pilot_news(&mut ctx, pilot, news);
    }

    /// Job `j` ended in pilot `pilot` of provisioner `owner`.
    pub(super) fn owned_job_ended(&mut self, owner: u8, pilot: PilotId, j: JobId) {
        let (p, mut ctx) = self.runs(owner);
        p.job_ended(&mut ctx, pilot, j);
    }
}
