//! Views: what the PanDA WMS hands to the pure decision modules of `crate::panda`, built from
//! the scenario's `panda` section (static: queues, nuclei, storages, streams) and a
//! [`Dynamic`] snapshot of the run (job counts, storage, network, workers).
//!
//! Each view is a pure function of those inputs: no clock, no event queue, no randomness, so
//! that "why did this job go there?" can be answered by rebuilding the same inputs. Indices are
//! the scenario's: a queue is its index in `panda.queues`, a nucleus its index in
//! `panda.nuclei`, a storage its `grid::storage::StorageId` (index in `storages`), a site its
//! index in `sites`, a gshare leaf its index in `panda::gshare::leaves(&panda.gshares)`.

pub mod anal;
pub mod anal_cycle;
pub mod anal_data;
pub mod ce_choice;
pub mod dynamic;
pub mod harvester;
pub mod prod;
#[cfg(test)]
pub(crate) mod testing;

pub use dynamic::Dynamic;
