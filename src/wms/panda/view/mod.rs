//! Views: what the PanDA WMS hands to the pure decision modules of `crate::panda`, built from
//! the scenario's `panda` section (static: queues, nuclei, storages, streams) and a
//! [`Dynamic`] snapshot of the run (job counts, storage, network, workers).
//!
//! Each view is a pure function of those inputs: no clock, no event queue, no randomness, so
//! that "why did this job go there?" can be answered by rebuilding the same inputs. Indices are
//! the scenario's: a queue is its index in `panda.queues`, a nucleus its index in
//! `panda.nuclei`, a storage its `grid::storage::StorageId` (index in `storages`), a site its
//! index in `sites`, a gshare leaf its index in `panda::gshare::leaves(&panda.gshares)`.

use crate::engine::SimTime;
use crate::grid::network::Network;
use crate::grid::storage::Storages;
use crate::panda::harvester::config::WorkerCounts;
use crate::panda::job_broker::JobCounts;

pub mod anal;
pub mod anal_cycle;
pub mod anal_data;
pub mod ce_choice;
pub mod harvester;
pub mod prod;
#[cfg(test)]
pub(crate) mod testing;

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
