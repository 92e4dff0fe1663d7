//! The state PanDA's agents share, as panda-server's agents share its database through the
//! TaskBuffer: the job and task tables ([`Tables`]), what the server records of each PQ's
//! pilots ([`SiteData`]), Harvester's workers ([`WorkerTable`]) and the brokerage decisions
//! ([`Records`]). Each agent keeps its own state in its own struct and reads and writes this one.

use crate::ids::JobId;
use crate::panda::harvester::config::WorkerCounts;
use crate::panda::timeouts::JobStatus as PStatus;
use crate::wms::Ctx;

use super::record::Records;
use super::site_data::SiteData;
use super::tables::Tables;
use super::view;
use super::workers::WorkerTable;

/// The snapshot the views read: the tables' counts, `laststart`, the grid's storage and
/// network, and the worker counts `queued`/`running` ([`WorkerTable::counts`]). It borrows the
/// tables and the site data only, so that an agent may record its decisions meanwhile.
pub fn snapshot<'a>(
    tables: &'a Tables,
    site: &'a SiteData,
    ctx: &'a dyn Ctx,
    queued: &'a [WorkerCounts],
    running: &'a [WorkerCounts],
) -> view::Dynamic<'a> {
    view::Dynamic {
        now: ctx.now(),
        queue_jobs: &tables.counts,
        queue_gshare_jobs: &tables.leaf_counts,
        storages: ctx.storages(),
        network: ctx.network(),
        last_start: &site.last_start,
        workers_queued: queued,
        workers_running: running,
    }
}

/// The shared state (module doc).
pub struct Db {
    pub tables: Tables,
    pub site: SiteData,
    pub workers: WorkerTable,
    pub record: Records,
}

impl Db {
    /// Close queued job `i`: its world job is cancelled.
    pub fn close(&mut self, ctx: &mut dyn Ctx, i: u32) {
        let job: JobId = self.tables.jobs[i as usize].job;
        ctx.cancel_job(job);
        self.tables.set_status(i, PStatus::Closed, ctx.now());
    }

    /// Job `i` (`starting`) runs now at its PQ: `laststart` and the job starts of `SiteData`.
    pub fn start_payload(&mut self, ctx: &dyn Ctx, i: u32) {
        let now = ctx.now();
        let q = usize::from(self.tables.jobs[i as usize].queue);
        self.tables.set_status(i, PStatus::Running, now);
        self.site.started(q, now);
    }
}
