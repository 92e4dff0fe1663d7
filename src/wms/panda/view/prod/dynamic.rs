//! The dynamic inputs of the production views beyond the snapshot every view reads.

use crate::panda::job_broker::JobCounts;

/// Dynamic inputs of the production views that [`Dynamic`](crate::wms::panda::view::dynamic::Dynamic) does not carry, filled by the PanDA
/// WMS from its own tables. Every slice is indexed like `Dynamic` (queue = index in
/// `panda.queues`, nucleus = index in `panda.nuclei`); an empty (or short) slice reads as "the
/// WMS keeps no such table" and the documented fallback is used.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProdDynamic<'a> {
    /// `nucleus_rw[n]`: `fullRW` of nucleus `n` — Σ `(nEvents − nEventsUsed) × cpuTime` (HS06·s)
    /// over the production tasks assigned to it that are ready/scouting/running/pending with
    /// input left (`calculateWorldRWwithPrio_JEDI`, entity_module L3468-3532, no priority or
    /// work-queue restriction; reference §1 "Definitions"). Missing → 0 (no row).
    pub nucleus_rw: &'a [f64],
    /// `live_counts[q]`: jobs generated for PQ `q` earlier in this JEDI cycle and not yet in
    /// the job counts (`liveCounter`, AtlasProdJobBroker L1749). Missing → 0.
    pub live_counts: &'a [u64],
    /// `transferring_to_nucleus[q][n]`: transferring jobs of PQ `q` whose task's nucleus is `n`
    /// (`get_num_jobs_with_status_by_nucleus(vo, "transferring")`, L240); only the nuclei whose
    /// default output endpoint has `write_wan` in downtime are summed (L1317-1321). Missing → 0.
    pub transferring_to_nucleus: &'a [Vec<u64>],
    /// `cores_running[q]` / `cores_starting[q]`: Σ `num_of_cores` of the running / starting
    /// production jobs of PQ `q` (`get_core_statistics`, metrics_module L637-671; read only with
    /// `WORK_SHORTAGE`). Missing → the job count × the core count the PQ is brokered with (its
    /// pseudo-queue's for a UCORE PQ): every job is taken to hold that many cores.
    pub cores_running: &'a [f64],
    pub cores_starting: &'a [f64],
    /// `rt_jobs[q][leaf][rt]`: jobs of PQ `q` and gshare leaf `leaf` whose resource type is
    /// `rt` ([`ResourceType::index`](super::statics::ResourceType::index)): `getJobStatisticsByResourceTypeSite(workQueue)` (L1717).
    /// `None` → no per-resource-type statistics: `BrokerQueue::rt_counts` is `None` (the
    /// `-cap_rt` rule and the UCORE caps then see no queue, as PanDA does for a PQ absent from
    /// that table).
    pub rt_jobs: Option<&'a [Vec<[JobCounts; 4]>]>,
}
