//! Configuration of the grid model as written in a scenario file: sites, CEs, GPUs, links,
//! storage endpoints.

use serde::{Deserialize, Serialize};

use crate::engine::distribution::Distribution;

/// A grid site (DIRAC site name, e.g. `LCG.CERN.cern`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Site {
    /// Site name, unique in the scenario: DIRAC's site name (e.g. `LCG.CERN.cern`), which PanDA
    /// queues, factories, storages and network links name as their site.
    pub name: String,
    /// The site's computing elements, each with its batch queue (at least one).
    pub ces: Vec<Ce>,
}

/// A computing element with its batch queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ce {
    /// Grid CE name (the `GridCE` a job may require).
    pub name: String,
    /// Job slots (cores); a running pilot holds one.
    pub slots: u32,
    /// Memory per core in MB.
    #[serde(default = "default_memory_per_core_mb")]
    pub memory_per_core_mb: u32,
    /// Batch-queue wall-clock limit of a pilot, in seconds (default 48 h).
    #[serde(default = "default_max_walltime_s")]
    pub max_walltime_s: f64,
    /// CPU power factor: normalised CPU work delivered per wall-clock second (DIRAC's
    /// CPUNormalizationFactor). Job and task-queue CPU times are in these units.
    #[serde(default = "one")]
    pub cpu_power: f64,
    /// Platform (DIRAC `Platform`, LHCb's `LHCbPlatform` in seed 001).
    #[serde(default = "default_platform")]
    pub platform: String,
    /// Tags the CE offers (a task queue's tags must be a subset, reference §1.3 item 5).
    #[serde(default)]
    pub tags: Vec<String>,
    /// DIRAC `RequiredTag` of the CE queue: it accepts only task queues carrying all of these
    /// (reference §1.3 item 5); each must be one of `tags`. E.g. `["GPU"]` keeps a GPU queue for
    /// GPU jobs.
    #[serde(default)]
    pub required_tags: Vec<String>,
    /// GPU inventory, one entry per kind of GPU node.
    #[serde(default)]
    pub gpus: Vec<GpuInventory>,
    /// DIRAC `NumberOfGPUs` of the CE queue: GPUs each of DIRAC's pilots here asks the batch
    /// system for (SLURM's `--gpus-per-task`; default 0: CPU pilots, as HTCondorCE and ARC
    /// submit without a GPU request). At most the GPUs of one node of `gpus`.
    #[serde(default)]
    pub number_of_gpus: u32,
    /// Time a pilot spends in the middleware before it reaches the batch queue.
    #[serde(default = "default_pilot_wait")]
    pub pilot_wait: Distribution,
    /// Probability that a submitted pilot is aborted by the middleware.
    #[serde(default)]
    pub abort_probability: f64,
    /// Time from submission to the abort.
    #[serde(default = "default_abort_delay")]
    pub abort_delay: Distribution,
    /// Probability that a pilot stays Waiting for ever: the pathological middleware that
    /// `maxPilotWaitingHours` exists for (seed 000).
    #[serde(default)]
    pub stuck_probability: f64,
    /// Probability that a pilot fails as it starts on the worker node (a black-hole node).
    #[serde(default)]
    pub pilot_failure_probability: f64,
    /// `MaxWaitingJobs` of the CE queue (DIRAC CS `Resources/Sites/…/Queues/…`): the CE
    /// refuses a pilot while this many are already waiting (submitted, not started) there.
    /// None (default, as in seed 000's 2009 director): no cap.
    #[serde(default)]
    pub max_waiting_jobs: Option<u32>,
    /// `MaxTotalJobs` of the CE queue: the CE refuses a pilot while this many are waiting or
    /// running there. None (default): no cap.
    #[serde(default)]
    pub max_total_jobs: Option<u32>,
}

fn default_memory_per_core_mb() -> u32 {
    2000
}
fn default_max_walltime_s() -> f64 {
    172_800.0
}
fn one() -> f64 {
    1.0
}
fn default_platform() -> String {
    "x86_64-el9".into()
}
fn default_pilot_wait() -> Distribution {
    Distribution::Exponential { mean: 300.0 }
}
fn default_abort_delay() -> Distribution {
    Distribution::Fixed(600.0)
}

/// One kind of GPU node at a CE (used by PanDA's architecture matching).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuInventory {
    /// GPU vendor as a pilot on the node reports it (e.g. `NVIDIA`), matched by a PanDA task's
    /// `gpu_spec.vendor` regexp, case-insensitively (reference panda.md §5).
    pub vendor: String,
    /// GPU model as a pilot on the node reports it (e.g. `NVIDIA A100-SXM4-40GB`), matched by a
    /// PanDA task's `gpu_spec.model` regexp (reference panda.md §5); the outputs' `gpu_model`.
    pub model: String,
    /// Memory of one GPU, in MB (at least 1): PanDA's worker-node `vram`, which a task's
    /// `gpu_spec.vram` constraint (e.g. `>=40960`) must hold for (reference panda.md §5).
    pub vram_mb: u32,
    /// CUDA toolkit version of the nodes (e.g. `12.2`): PanDA's worker-node `framework_version`,
    /// checked against a task's `gpu_spec.version`; default empty (not reported: a version
    /// requirement fails).
    #[serde(default)]
    pub cuda_version: String,
    /// GPU kernel driver version of the nodes (e.g. `575.57.08`), checked against a task's
    /// `gpu_spec.driver_version`; default empty (not reported: a driver requirement fails).
    #[serde(default)]
    pub driver_version: String,
    /// GPU generation (e.g. `Ampere`, `Hopper`): PanDA's worker-node `architecture`, matched
    /// exactly against a task's `gpu_spec.microarchitecture`; default empty (not reported).
    #[serde(default)]
    pub microarchitecture: String,
    /// GPUs in one node of this kind (at least 1): the most a pilot may ask for from this kind
    /// (PanDA's `gpus_per_host`).
    pub gpus_per_node: u32,
    /// Number of such nodes.
    #[serde(default = "one_u32")]
    pub nodes: u32,
}

fn one_u32() -> u32 {
    1
}

/// A directed network link between two sites (the fields of the network matrix, e.g.
/// `traces/panda_cgsim/site_conn_info.json`); a link from a site to itself is its LAN. The
/// run-time model is [`super::network::Network`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// Source site of the link (`sites[].name`; `SRC` of a `SRC:DST` entry of
    /// `site_conn_info.json`).
    pub from: String,
    /// Destination site of the link (`sites[].name`; `DST` of a `SRC:DST` entry); equal to
    /// `from` for the site's LAN.
    pub to: String,
    /// Bandwidth our transfers share, in Mbps (10⁶ bit/s); must be positive.
    pub bandwidth_mbps: f64,
    /// One-way latency in ms, added once to every transfer (rounded up to the ms).
    #[serde(default)]
    pub latency_ms: f64,
    /// CRIC closeness, 0 (same site) to 11 (farthest).
    #[serde(default)]
    pub closeness: u8,
    /// Files the rest of the grid keeps queued on the link: a constant background backlog,
    /// counted in the link's queued files (and the destination's) for the whole run; it takes
    /// none of the bandwidth (see [`super::network`]).
    #[serde(default)]
    pub queued_files: u64,
    /// FTS's limit of concurrent (active) transfers on the link; more wait in a FIFO queue.
    /// None (default): [`super::network::DEFAULT_MAX_ACTIVE`] = 60, FTS3's
    /// `DEFAULT_MAX_ACTIVE_PER_LINK`. Must be at least 1.
    #[serde(default)]
    pub max_active_transfers: Option<u32>,
}

/// Whether a storage endpoint is disk or tape (Rucio RSE type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum StorageKind {
    #[default]
    Disk,
    Tape,
}

/// A storage endpoint (a Rucio RSE such as `AGLT2_DATADISK`) at a site, as in
/// `traces/panda_cgsim/site_info.json`: sizes in TB (10¹² bytes) in the file, bytes in the
/// model ([`super::storage::Storages`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    /// RSE name, unique in the scenario.
    pub name: String,
    /// The site it belongs to.
    pub site: String,
    /// Disk (default) or tape.
    #[serde(default)]
    pub kind: StorageKind,
    /// Capacity in TB. None: unlimited (a tape library, or a size CRIC does not report:
    /// `site_info.json` gives 0 for every tape RSE, which an import reads as None).
    #[serde(default)]
    pub total_tb: Option<f64>,
    /// Space already used at the start, in TB (default 0).
    #[serde(default)]
    pub used_tb: f64,
    /// Space held by expired (deletable secondary) data, in TB, part of `used_tb` (default 0;
    /// PanDA's `space_expired`, which task brokerage counts as free: reference `panda.md` §1).
    #[serde(default)]
    pub expired_tb: f64,
    /// Status of reads from worker nodes at the same site (CRIC `read_lan`; default ON).
    #[serde(default)]
    pub read_lan: StorageStatus,
    /// Status of writes from worker nodes at the same site (CRIC `write_lan`; default ON).
    #[serde(default)]
    pub write_lan: StorageStatus,
    /// Status of reads by other sites over the WAN (CRIC `read_wan`; default ON).
    #[serde(default)]
    pub read_wan: StorageStatus,
    /// Status of writes from other sites over the WAN (CRIC `write_wan`; default ON).
    #[serde(default)]
    pub write_wan: StorageStatus,
}

/// Status of one access path of a storage endpoint (CRIC/Rucio `read_lan`, `write_wan`, …):
/// `ON` (default), `OFF`, or `TEST`; PanDA treats `OFF` and `TEST` alike as a downtime
/// (`DOWNTIME_STATUSES`, reference `panda.md` §1–§2). The grid model itself does not read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum StorageStatus {
    #[default]
    #[serde(rename = "ON")]
    On,
    #[serde(rename = "OFF")]
    Off,
    #[serde(rename = "TEST")]
    Test,
}

impl StorageStatus {
    /// In PanDA's `DOWNTIME_STATUSES` (`OFF`, `TEST`).
    pub fn is_downtime(self) -> bool {
        self != StorageStatus::On
    }
}
