//! The snapshot of the run every view reads.

use crate::engine::SimTime;
use crate::grid::network::Network;
use crate::grid::storage::Storages;
use crate::panda::harvester::config::WorkerCounts;
use crate::panda::job_broker::JobCounts;

/// The run as the views read it at one instant; filled by the PanDA WMS from its own tables.
#[derive(Debug, Clone, Copy)]
pub struct Dynamic<'a> {
    pub now: SimTime,
    /// `queue_jobs[q]`: PanDA jobs of PQ `q` by status, every gshare together.
    pub queue_jobs: &'a [JobCounts],
    /// `queue_gshare_jobs[q][leaf]`: the same per gshare leaf (PanDA's `workQueue_tag` counts).
    pub queue_gshare_jobs: &'a [Vec<JobCounts>],
    /// Storage endpoints now (used bytes change as outputs arrive).
    pub storages: &'a Storages,
    /// Links now: `Network::observe(link, now)` gives the matrix row of a link.
    pub network: &'a Network,
    /// When a job last started at PQ `q` (`laststart`), `None` if never.
    pub last_start: &'a [Option<SimTime>],
    /// Harvester workers of PQ `q`: queued (submitted + waiting in the batch system), running.
    pub workers_queued: &'a [WorkerCounts],
    pub workers_running: &'a [WorkerCounts],
}
