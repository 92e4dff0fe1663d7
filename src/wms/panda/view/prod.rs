//! The production views: the inputs of production **task brokerage** (`panda::task_broker`:
//! [`DdmEndpoint`]s, [`NucleusSpec`]s, the [`TaskSpec`] of one task of a production stream) and
//! of production **job brokerage** (`panda::job_broker`: the [`BrokerTask`] of a task with its
//! nucleus, or in hint mode without one, and one [`BrokerQueue`] per production PQ), built from
//! the scenario's `panda` section and a snapshot of the run ([`Dynamic`](super::dynamic::Dynamic) + [`ProdDynamic`]).
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

mod build;
mod dynamic;
mod job;
mod statics;
mod task;

#[cfg(test)]
mod tests;

pub use crate::panda::job_broker::{BrokerQueue, BrokerTask};
pub use crate::panda::network::Link;
pub use crate::panda::task_broker::{BrokerageInput, DdmEndpoint, NucleusSpec, TaskSpec};
pub use dynamic::ProdDynamic;
pub use job::{Chunk, JobQuery, hint_survivors, is_ups_queue, pseudo_queue_limits};
pub use statics::{Completeness, ProdView, ResourceType};
pub use task::{TaskArgs, TaskBrokerageView, task_rw};
