//! The Adder (`add_main`, reference §6): a payload's end is reported by its pilot
//! (panda-server's `updateJob`), which puts the job in `holding`; the Adder's next cycle, on the
//! grid of `panda.agents.adder_s` from the start, makes each holding job `failed` (JEDI then
//! retries its chunk) or, its outputs registered, `transferring` towards the task's nucleus
//! (DDM) or `finished`.

use crate::engine::{SimDuration, SimTime};
use crate::ids::JobId;
use crate::panda::timeouts::JobStatus as PStatus;
use crate::wms::Ctx;
use crate::workload::JobStatus;

use super::db::Db;
use super::ddm::Ddm;
use super::setup::Statics;

/// The Adder's own state.
#[derive(Debug, Default)]
pub struct Adder {
    /// Jobs in `holding`, in the order their pilots reported (a cycle is set while any).
    holding: Vec<u32>,
}

impl Adder {
    /// The payload of world job `j` ended (the world says Done or Failed): the job is
    /// `holding`. A cycle with nothing to hold changes nothing, so only the cycles that find a
    /// holding job are run: the first job to hold gives the next tick of the `period` grid
    /// strictly after now, the time to set the next cycle at (a cycle takes every holding job,
    /// so a non-empty list always has its cycle set).
    pub fn update_job(&mut self, db: &mut Db, now: SimTime, period: SimDuration, j: JobId) -> Option<SimTime> {
        let i = db.tables.of_job(j)?;
        db.tables.set_status(i, PStatus::Holding, now);
        let next = self.holding.is_empty().then(|| {
            let period = period.as_millis();
            SimTime::from_millis((now.as_millis() / period + 1).saturating_mul(period))
        });
        self.holding.push(i);
        next
    }

    /// One cycle: each `holding` job, in the order its pilot reported.
    pub fn cycle(&mut self, st: &Statics, db: &mut Db, ddm: &mut Ddm, ctx: &mut dyn Ctx) {
        for i in std::mem::take(&mut self.holding) {
            if db.tables.jobs[i as usize].status == PStatus::Holding {
                add(st, db, ddm, ctx, i);
            }
        }
    }
}

/// The Adder's verdict on holding job `i`.
fn add(st: &Statics, db: &mut Db, ddm: &mut Ddm, ctx: &mut dyn Ctx, i: u32) {
    let j = db.tables.jobs[i as usize].job;
    let now = ctx.now();
    let ok = ctx.jobs()[crate::ids::job_index(j)].status == JobStatus::Done;
    if !ok {
        db.tables.set_status(i, PStatus::Failed, now);
        db.tables.retry_or_fail(i);
        return;
    }
    db.tables.set_status(i, PStatus::Transferring, now);
    ddm.send_output(st, db, ctx, i);
}
