//! The production views: the inputs of production **task brokerage** (`panda::task_broker`:
//! [`DdmEndpoint`]s, [`NucleusSpec`]s, the [`TaskSpec`] of one task of a production stream) and
//! of production **job brokerage** (`panda::job_broker`: the [`BrokerTask`] of a task with its
//! nucleus, or in hint mode without one, and one [`BrokerQueue`] per production PQ), built from
//! the scenario's `panda` section and a snapshot of the run ([`Dynamic`](super::Dynamic) + [`ProdDynamic`]).
//!
//! [`ProdView::new`] resolves everything static once (names to indices, `astorages` to endpoint
//! ids, the storage site and the network link of every (PQ, nucleus), the parsed
//! `fairsharepolicy`, the `panda::arch` verdict of every (stream, PQ), the replicas and the job
//! geometry of every stream, a template [`BrokerQueue`] per PQ). A brokerage cycle then only
//! reads numbers: [`ProdView::fill_queues`] refreshes a caller-owned buffer in place (no string
//! lookup, no allocation once the buffer exists, no hashing anywhere).
//!
//! # Where PanDA takes each input (reference `panda.md` §1–§3; panda-server 1.0.4)
//!
//! * **Endpoints** (`ATLAS_PANDA.DDM_ENDPOINT`, filled by `Configurator.process_site_dumps`
//!   L273-332 with `GB = 1024³`, `space_usable` = free + expired − min_free − unavailable in
//!   `entity_module.py` L2053): GB of 1024³ bytes; `space_free` = total − used,
//!   `space_expired` = the scenario's `expired_tb` (part of the used space, capped at it),
//!   min_free and unavailable 0 (not modelled). An endpoint without a capacity has no usage row
//!   in Rucio: every space column is 0, as PanDA reads NULL (`or 0`, L2053, L2084).
//! * **PQ endpoints** (`Configurator.get_panda_ddm_relations` L384-475, `entity_module.py`
//!   L2080-2104): inputs are the `astorages` `read_lan` storages, outputs the `write_lan` ones,
//!   the default output the first `write_lan` one (`order_write == 1`); the old roles `pr`/`pw`
//!   are ignored as in the Configurator. The storage check keeps `type == "DATADISK"` endpoints
//!   (AtlasProdJobBroker L1017): the model's disk storages.
//! * **Network** (`getNetworkMetrics` / `getBackloggedNuclei`, entity_module L3599-3683): the
//!   matrix rows to a nucleus are the scenario links into its site (its LAN included, the
//!   same-site row); `Network::queued_to(site)` is their sum, which is both the task broker's
//!   `Σ Production Output_queued` and the job broker's `networkMap["total"][…_queued]`. A PQ's link is the one from the site of its
//!   default output endpoint (`getPandaSiteToOutputStorageSiteMapping`, L3686-3712) to the
//!   nucleus site, observed now (`Network::observe`: queued files, FTS Mbps 1h/1d/1w, CRIC
//!   closeness); no scenario link = no matrix row ([`Link::Unknown`]). The model has one
//!   transfer activity, so every queued file counts as `Production Output`.
//!
//! The decisions this module makes where the model and PanDA differ are listed on the fields
//! they fill (the docs of [`ProdView::task_spec`], [`ProdView::nuclei`],
//! [`ProdView::broker_task`] and [`ProdView::fill_queues`]); in short: the model has no release
//! (`transHome`), no event service, no merge jobs, no jumbo jobs, no diskIO, no job cloning, no
//! pre-assignment and no parent tasks.

mod job;
mod statics;
mod task;

#[cfg(test)]
mod tests;

use crate::panda::job_broker::{JobBrokerParams, JobCounts};
use crate::panda::task_broker::{TaskBrokerVariant, TaskBrokerageParams};
use crate::scenario::Scenario;

pub use crate::panda::job_broker::{BrokerQueue, BrokerTask};
pub use crate::panda::network::Link;
pub use crate::panda::task_broker::{BrokerageInput, DdmEndpoint, NucleusSpec, TaskSpec};
pub use job::{Chunk, JobQuery, hint_survivors, is_ups_queue, pseudo_queue_limits};
pub use statics::{Completeness, ResourceType};
pub use task::{TaskArgs, TaskBrokerageView, task_rw};

use statics::{NucleusStatic, QueueStatic, StorageStatic, StreamStatic};

/// Dynamic inputs of the production views that [`Dynamic`](super::Dynamic) does not carry, filled by the PanDA
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
    /// `rt` ([`ResourceType::index`]): `getJobStatisticsByResourceTypeSite(workQueue)` (L1717).
    /// `None` → no per-resource-type statistics: `BrokerQueue::rt_counts` is `None` (the
    /// `-cap_rt` rule and the UCORE caps then see no queue, as PanDA does for a PQ absent from
    /// that table).
    pub rt_jobs: Option<&'a [Vec<[JobCounts; 4]>]>,
}

/// Everything static of the production views, built once from a validated scenario.
#[derive(Debug, Clone)]
pub struct ProdView {
    storages: Vec<StorageStatic>,
    nuclei: Vec<NucleusStatic>,
    /// Production PQs (`QueueKind::production()`), in `panda.queues` order.
    queues: Vec<QueueStatic>,
    /// The [`BrokerQueue`] of each production PQ with every static field filled.
    template: Vec<BrokerQueue>,
    streams: Vec<StreamStatic>,
    /// `nucleus_with_storages_unwritable_over_wan` (AtlasProdJobBroker L258-267): the
    /// `Role::Nucleus` nuclei whose default output endpoint has `write_wan` OFF/TEST.
    unwritable_nuclei: Vec<usize>,
    job_params: JobBrokerParams,
    task_params: TaskBrokerageParams,
    task_variant: TaskBrokerVariant,
}

impl ProdView {
    /// Resolves the scenario's `panda` section (an empty view without one). Never panics: a
    /// name that does not resolve (impossible after `scenario::validate`) is skipped and reads
    /// as "no such thing", as PanDA reads a name missing from its dictionaries.
    pub fn new(s: &Scenario) -> Self {
        statics::build(s)
    }

    /// Index in `panda.queues` of each production PQ: entry `i` is the PQ of `BrokerQueue` `i`
    /// (and of `Candidate::queue == i`, `Skip::queue == i` in the job broker's result).
    pub fn production_queues(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.queues.iter().map(|q| q.panda)
    }

    /// Position among the production PQs of the PQ at `panda.queues[queue]`, if production.
    pub fn production_position(&self, queue: usize) -> Option<usize> {
        self.queues.iter().position(|q| q.panda == queue)
    }

    /// The job broker's gdpconfig with the scenario's resolved variant
    /// (`PandaConfig::job_broker_params`), as used by the job check of task brokerage.
    pub fn job_broker_params(&self) -> &JobBrokerParams {
        &self.job_params
    }

    /// The task broker's gdpconfig (`gdpconfig.task_brokerage`).
    pub fn task_brokerage_params(&self) -> &TaskBrokerageParams {
        &self.task_params
    }

    /// The task broker's resolved variant.
    pub fn task_broker_variant(&self) -> TaskBrokerVariant {
        self.task_variant
    }

    /// Input completeness of stream `stream`'s datasets (computed once; `None` for an unknown
    /// stream).
    pub fn completeness(&self, stream: usize) -> Option<&Completeness> {
        self.streams.get(stream).map(|s| &s.completeness)
    }

    /// The resource type of stream `stream`'s jobs (`None` for an unknown stream).
    pub fn resource_type(&self, stream: usize) -> Option<ResourceType> {
        self.streams.get(stream).map(|s| s.resource_type)
    }

    /// The gshare leaf index of stream `stream` (`None` if unknown or not a leaf).
    pub fn gshare_leaf(&self, stream: usize) -> Option<usize> {
        self.streams.get(stream).and_then(|s| s.leaf)
    }
}
