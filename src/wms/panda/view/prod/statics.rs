//! The static part of the production views: [`ProdView`] and what it holds, every name resolved
//! to an index once, every per-(stream, PQ) verdict computed once (`ProdView::new`, built by
//! `build`).

use std::cell::RefCell;

use crate::grid::config::StorageStatus;
use crate::grid::network::LinkId;
use crate::panda::job_broker::BrokerQueue;
use crate::panda::job_broker::JobBrokerParams;
use crate::panda::task_broker::{BareNucleus, NucleusState, Role};
use crate::panda::task_broker::{TaskBrokerVariant, TaskBrokerageParams};
use crate::scenario::Scenario;
use crate::scenario::panda::ProductionStream;

/// `MAX_MISSING_INPUT_FILES` default (AtlasProdJobBroker L163-165): a replica missing at most
/// this many files is regarded as complete.
pub const MAX_MISSING_INPUT_FILES: u64 = 10;
/// `MIN_INPUT_COMPLETENESS` default, % (L166-168).
pub const MIN_INPUT_COMPLETENESS: f64 = 90.0;

/// A storage endpoint's static description.
#[derive(Debug, Clone)]
pub(super) struct StorageStatic {
    pub name: String,
    pub tape: bool,
    pub read_lan: StorageStatus,
    pub write_lan: StorageStatus,
    pub read_wan: StorageStatus,
    pub write_wan: StorageStatus,
    /// The scenario's `expired_tb` in bytes.
    pub expired_bytes: u64,
}

/// A nucleus (or satellite) entry of `panda.nuclei`.
#[derive(Debug, Clone)]
pub(super) struct NucleusStatic {
    /// Its grid site name (the nucleus name).
    pub name: String,
    pub site: Option<u32>,
    pub state: NucleusState,
    pub role: Role,
    pub bare: Option<BareNucleus>,
    /// `output_storages` by token class, as storage ids.
    pub output: Vec<Option<usize>>,
    /// `input_storages` as storage ids.
    pub input: Vec<usize>,
    /// Positions (among production PQs) of the PQs at its site (`allPandaSites`).
    pub pqs: Vec<usize>,
}

/// A production PQ, resolved.
#[derive(Debug, Clone)]
pub(super) struct QueueStatic {
    /// Index in `panda.queues`.
    pub panda: usize,
    /// `read_lan` storages of disk kind (the `DATADISK` endpoints of the storage check).
    pub input_disk: Vec<usize>,
    /// `read_lan` storages, every kind (`ddm_endpoints_input`).
    pub input_all: Vec<usize>,
    /// `write_lan` storages of disk kind.
    pub output_disk: Vec<usize>,
    /// The first `write_lan` storage (`ddm_output["default"]`).
    pub default_out: Option<usize>,
    /// Site of the default output storage (`storageMapping[PQ]["default"]`).
    pub out_site: Option<u32>,
    /// CRIC `capability == ucore`, `corecount`, `maxrss`, `minrss` (for the pseudo-queue).
    pub ucore: bool,
    pub corecount: Option<u32>,
    pub maxrss: u64,
    pub minrss: u64,
    /// Hint mode (`sites_in_nucleus` = every PQ of every `Role::Nucleus` nucleus).
    pub in_any_nucleus: bool,
    /// Hint mode `getSitesShareDDM` against the first PQ of the first nucleus.
    pub hint_shares: bool,
    /// Per nucleus: the scenario link from `out_site` to the nucleus site.
    pub links: Vec<Option<LinkId>>,
    /// Per nucleus: the PQ is at the nucleus site (`allPandaSites`).
    pub in_nucleus: Vec<bool>,
    /// Per nucleus: `getSitesShareDDM(first PQ of the nucleus, output_share=True)` lists it.
    pub shares: Vec<bool>,
    /// Harvester's `mapType` is a push one (not `NoJob`).
    pub push: bool,
}

/// One replica of a stream dataset.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReplicaStatic {
    pub storage: usize,
    /// Files present: `⌊fraction × files⌋`, all of them for `fraction ≥ 1`.
    pub found: u64,
    /// Bytes of those files.
    pub bytes: u64,
    /// `fraction ≥ 1`.
    pub complete: bool,
    /// Share of the dataset's files present, in [0, 1].
    pub share: f64,
}

/// One input dataset of a stream.
#[derive(Debug, Clone)]
pub(super) struct DatasetStatic {
    pub prefix: String,
    pub master: bool,
    pub files: u64,
    /// `size_gb × 10⁹`.
    pub bytes: u64,
    pub replicas: Vec<ReplicaStatic>,
}

impl DatasetStatic {
    pub fn bytes_per_file(&self) -> f64 {
        if self.files == 0 { 0.0 } else { self.bytes as f64 / self.files as f64 }
    }
}

/// How a stream's tasks are split into jobs (`getMaxAtomSize`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Geometry {
    /// Index of the master dataset, if any.
    pub master: Option<usize>,
    /// Events of one job: `nEventsPerJob`, else those of one master file, else `nEvents`.
    pub events_per_job: f64,
    /// Events of one master file (`nEvents / files`; 0 without input).
    pub events_per_file: f64,
}

/// The input completeness of a stream (the job broker's dataset-completeness step,
/// AtlasProdJobBroker L318-383 with `get_sites_with_data`, AtlasBrokerUtils L118-272).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Completeness {
    /// Complete replicas can be sent out over WAN (`remote_source_available`): false when a
    /// dataset's complete replicas are readable only over LAN.
    pub remote_source_available: bool,
    /// Storages holding a (regarded-as-)complete replica of every dataset
    /// (`complete_replica_locations`, intersected over datasets), ascending.
    pub complete_locations: Vec<usize>,
    /// The job broker stops here for the whole task (`retTmpError`): a dataset (not being
    /// pre-staged) has no complete replica at an online endpoint, or only at endpoints where
    /// neither `read_lan` nor `read_wan` is ON. `None` when brokerage can proceed.
    pub error: Option<String>,
}

/// ATLAS's resource types (`ResourceSpec.atlas_defaults`): SCORE (1 core, ≤ 2000 MB/core),
/// SCORE_HIMEM, MCORE (≥ 2 cores), MCORE_HIMEM (> 2000 MB/core).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ResourceType {
    Score,
    ScoreHimem,
    Mcore,
    McoreHimem,
}

impl ResourceType {
    /// JEDI's `resource_type` of a task: cores and `ramCount` in MB per core (0 = unset).
    pub fn of(core_count: u32, ram_per_core_mb: f64) -> Self {
        let himem = ram_per_core_mb > crate::panda::harvester::resource::HIMEM_THRESHOLD;
        match (core_count > 1, himem) {
            (false, false) => ResourceType::Score,
            (false, true) => ResourceType::ScoreHimem,
            (true, false) => ResourceType::Mcore,
            (true, true) => ResourceType::McoreHimem,
        }
    }

    /// Index in the `[JobCounts; 4]` of `ProdDynamic::rt_jobs`.
    pub fn index(self) -> usize {
        self as usize
    }

    /// PanDA's name.
    pub fn name(self) -> &'static str {
        match self {
            ResourceType::Score => "SCORE",
            ResourceType::ScoreHimem => "SCORE_HIMEM",
            ResourceType::Mcore => "MCORE",
            ResourceType::McoreHimem => "MCORE_HIMEM",
        }
    }
}

/// A production stream, resolved.
#[derive(Debug, Clone)]
pub(super) struct StreamStatic {
    /// The stream as the scenario writes it.
    pub cfg: ProductionStream,
    pub leaf: Option<usize>,
    pub resource_type: ResourceType,
    /// SW/HW verdict per production PQ (position).
    pub software: Vec<Result<(), String>>,
    pub datasets: Vec<DatasetStatic>,
    pub geometry: Geometry,
    pub completeness: Completeness,
}

/// Everything static of the production views, built once from a validated scenario.
#[derive(Debug, Clone)]
pub struct ProdView {
    pub(super) storages: Vec<StorageStatic>,
    pub(super) nuclei: Vec<NucleusStatic>,
    /// Production PQs (`QueueKind::production()`), in `panda.queues` order.
    pub(super) queues: Vec<QueueStatic>,
    /// The [`BrokerQueue`] of each production PQ with every static field filled.
    pub(super) template: Vec<BrokerQueue>,
    pub(super) streams: Vec<StreamStatic>,
    /// `nucleus_with_storages_unwritable_over_wan` (AtlasProdJobBroker L258-267): the
    /// `Role::Nucleus` nuclei whose default output endpoint has `write_wan` OFF/TEST.
    pub(super) unwritable_nuclei: Vec<usize>,
    pub(super) job_params: JobBrokerParams,
    pub(super) task_params: TaskBrokerageParams,
    pub(super) task_variant: TaskBrokerVariant,
    /// [`ProdView::job_check`]'s queue buffer, refilled in place by `fill_queues` at every task
    /// brokerage instead of cloned from `template` (with its strings) each time.
    pub(super) job_check_queues: RefCell<Vec<BrokerQueue>>,
}

impl ProdView {
    /// Resolves the scenario's `panda` section (an empty view without one). Never panics: a
    /// name that does not resolve (impossible after `scenario::validate`) is skipped and reads
    /// as "no such thing", as PanDA reads a name missing from its dictionaries.
    pub fn new(s: &Scenario) -> Self {
        super::build::build(s)
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
